#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) in the sanitized tree (build-asan: clang, ASan + UBSan, the
# tree `scripts/test.sh --sanitize` tests), then runs each for a fixed time on a copy of its seed
# corpus; fails (exit 1) on any finding.
# Usage: fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   (default 20 s; targets: ttir spec npy views)
# Environment: FUZZ_BUILD_DIR (default build-asan), FUZZ_JOBS (build parallelism, default nproc).
# A long campaign is the same command with more seconds; see docs/reliability.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-20}
shift || true
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(ttir spec npy views)
build_dir=${FUZZ_BUILD_DIR:-$root/build-asan}

SECONDS=0
if [[ -f $build_dir/build.ninja ]] &&
  grep -q '^TTINTERP_FUZZ:BOOL=ON$' "$build_dir/CMakeCache.txt" 2>/dev/null; then
  # An existing tree keeps its configuration (CI's sanitized test run made it with -Werror).
  cmake --build "$build_dir" --target fuzz -j "${FUZZ_JOBS:-$(nproc)}"
else
  BUILD_JOBS=${FUZZ_JOBS:-$(nproc)} "$root/scripts/build.sh" --sanitize --build-dir "$build_dir" \
    --target fuzz
fi
echo "fuzz: build took ${SECONDS}s"

# Leaks count as findings; a sanitizer report ends the run with a stack trace.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for t in "${targets[@]}"; do
  binary=$build_dir/fuzz/fuzz_$t
  seeds=$root/fuzz/corpus/$t
  [[ -x $binary && -d $seeds ]] || { echo "fuzz: unknown target '$t'" >&2; exit 2; }
  work=$build_dir/fuzz-run/$t
  artifacts=$build_dir/fuzz-artifacts/$t
  rm -rf "$work" "$artifacts"
  mkdir -p "$work" "$artifacts"
  cp "$seeds"/* "$work"/
  dict=()
  [[ $t == ttir ]] && dict=(-dict="$root/fuzz/ttir.dict")
  [[ $t == spec ]] && dict=(-dict="$root/fuzz/spec.dict")
  log=$build_dir/fuzz-run/$t.log
  echo "fuzz: $t for ${seconds}s"
  status=0
  # -timeout: one input running this long is a finding (a hang), generous for a busy machine.
  # fuzz/regressions/<target>: inputs that once failed (read, never written to).
  regressions=()
  [[ -d $root/fuzz/regressions/$t ]] && regressions=("$root/fuzz/regressions/$t")
  "$binary" "${dict[@]}" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2560 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" "${regressions[@]}" >"$log" 2>&1 ||
    status=$?
  summary=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "  ${summary:-no progress line}; executions ${execs:-?}"
  if [[ $status -ne 0 || -n $(ls -A "$artifacts") ]]; then
    echo "fuzz: $t FOUND SOMETHING (exit $status); inputs in $artifacts, log $log" >&2
    grep -E 'ERROR|SUMMARY|invariant|runtime error|==[0-9]+==' "$log" | head -20 >&2 || true
    failed+=("$t")
  fi
done
echo "fuzz: done in ${SECONDS}s"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi
