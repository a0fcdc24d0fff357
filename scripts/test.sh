#!/usr/bin/env bash
# Installs what is missing, builds ttinterp and runs the whole test suite: the C++ suites (ctest)
# and the Python package's (pytest, against the build tree).
# Usage: scripts/test.sh [--sanitize] [--werror]
#   --sanitize  clang's ASan + UBSan build (build-asan, which also holds the fuzz targets) of the
#               C++ suites only (the Python module would need the sanitizer runtimes preloaded into
#               Python)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$root/build
python=--python
if [[ " $* " == *" --sanitize "* ]]; then
  build_dir=$root/build-asan
  python=""
fi
"$root/scripts/build.sh" "$@" $python
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)"
if [[ -n $python ]]; then
  cd "$root"
  PYTHONPATH="$build_dir/python" TTINTERP_CLI="$build_dir/tools/ttinterp" \
    "$root/.venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
fi
