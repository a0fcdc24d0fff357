#!/usr/bin/env bash
# Installs the Debian packages ttinterp builds with; idempotent, and a no-op when they are present.
# Usage: scripts/setup.sh [--clang]   (--clang: also clang 14 and its runtimes, libFuzzer, ASan and
#                                     UBSan, which the sanitized build and the fuzz targets use)
set -euo pipefail

packages=(cmake ninja-build g++ libmlir-19-dev mlir-19-tools llvm-19-dev libfmt-dev doctest-dev
          nlohmann-json3-dev libeigen3-dev libhwy-dev libsleef-dev libabsl-dev)
[[ ${1:-} == --clang ]] && packages+=(clang libclang-rt-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
