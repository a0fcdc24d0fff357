#!/usr/bin/env bash
# Installs what is missing, then configures and builds ttinterp into a build directory.
# Usage: scripts/build.sh [--sanitize] [--werror] [--python] [--build-dir DIR]
#   --python  also the Python package's native module (build/python), with .venv set up by
#             scripts/setup-python.sh (Triton, torch, nanobind from PyPI)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

sanitize=OFF werror=OFF python=OFF build_dir=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --sanitize) sanitize=ON ;;
    --werror) werror=ON ;;
    --python) python=ON ;;
    --build-dir) build_dir=$2; shift ;;
    *) echo "build.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $build_dir ]]; then
  build_dir=$root/build
  [[ $sanitize == ON ]] && build_dir=$root/build-asan
fi

"$root/scripts/setup.sh"
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
  -DTTINTERP_SANITIZE=$sanitize -DTTINTERP_WERROR=$werror "${python_args[@]}" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DTTINTERP_BUILD_BENCH=$([[ $sanitize == ON ]] && echo OFF || echo ON) >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
