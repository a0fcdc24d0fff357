#!/usr/bin/env bash
# Installs what is missing, builds ttinterp and runs the whole test suite.
# Usage: scripts/test.sh [--sanitize] [--werror]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$@"
build_dir=$root/build
[[ " $* " == *" --sanitize "* ]] && build_dir=$root/build-asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)"
