#!/usr/bin/env bash
# Installs what is missing, then configures and builds ttinterp into a build directory.
# Usage: scripts/build.sh [--sanitize] [--werror] [--python] [--build-dir DIR] [--target NAME]
#   --sanitize  clang with ASan + UBSan into build-asan: the C++ suites and the libFuzzer targets
#               (fuzz/) from one tree, so CI builds the sanitized code once for both
#   --python    also the Python package's native module (build/python), with .venv set up by
#               scripts/setup-python.sh (Triton, torch, nanobind from PyPI); a tree configured
#               so keeps it without the flag
#   --target    build only that target (default: all)
# Environment: BUILD_JOBS (build parallelism, default nproc; fuzz/run.sh passes its FUZZ_JOBS).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

sanitize=OFF werror=OFF python=OFF build_dir="" target=all
while [[ $# -gt 0 ]]; do
  case $1 in
    --sanitize) sanitize=ON ;;
    --werror) werror=ON ;;
    --python) python=ON ;;
    --build-dir) build_dir=$2; shift ;;
    --target) target=$2; shift ;;
    *) echo "build.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $build_dir ]]; then
  build_dir=$root/build
  [[ $sanitize == ON ]] && build_dir=$root/build-asan
fi

compiler=()
if [[ $sanitize == ON ]]; then
  "$root/scripts/setup.sh" --clang
  # libFuzzer needs clang. TTINTERP_FUZZ implies the sanitizers and adds libFuzzer's coverage
  # hooks, which the suites' executables leave unused (ASan's runtime answers them).
  compiler=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTTINTERP_FUZZ=ON)
  # A tree configured with GCC (the sanitized build was GCC's before) cannot switch compilers in
  # place: CMake's generate step fails once. Such a tree is configured afresh.
  cache=$build_dir/CMakeCache.txt
  if [[ -f $cache ]] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang++$' "$cache"; then
    echo "build.sh: $build_dir was configured with another compiler; configuring it afresh" >&2
    rm -rf "$cache" "$build_dir/CMakeFiles"
  fi
else
  "$root/scripts/setup.sh"
fi
# A tree that builds the Python package keeps building it: a plain rebuild (scripts/demo.sh after
# scripts/test.sh, say) would otherwise switch it off and leave build/python's module stale.
if [[ $python == OFF && -f $build_dir/CMakeCache.txt ]] &&
  grep -q '^TTINTERP_PYTHON:BOOL=ON$' "$build_dir/CMakeCache.txt"; then
  python=ON
fi
python_args=(-DTTINTERP_PYTHON=$python)
if [[ $python == ON ]]; then
  "$root/scripts/setup-python.sh"
  python_args+=("-DPython_EXECUTABLE=$root/.venv/bin/python")
fi

build_type=Release
# Sanitized code runs the whole suite; -O1 keeps it quick without hiding bugs, and line tables
# (-g1) are all a sanitizer report needs: full debug info made each object a third slower to build.
[[ $sanitize == ON ]] && build_type=RelWithDebInfo
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=$build_type \
  -DTTINTERP_SANITIZE=$sanitize -DTTINTERP_WERROR=$werror "${python_args[@]}" "${compiler[@]}" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DTTINTERP_BUILD_BENCH=$([[ $sanitize == ON ]] && echo OFF || echo ON) >/dev/null
cmake --build "$build_dir" --target "$target" -j "${BUILD_JOBS:-$(nproc)}"
