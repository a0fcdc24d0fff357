#!/usr/bin/env bash
# Runs the Python package's tests under other Triton versions than the pinned one (python/
# requirements-test.txt): the package supports Triton 3.5 to 3.9. Each version gets a virtual
# environment holding only that Triton, which sees everything else (torch, numpy, pytest) through a
# .pth link to .venv, so no second torch is installed. Needs a build (scripts/test.sh, or
# scripts/build.sh --python) and .venv (scripts/setup-python.sh).
# Usage: scripts/test-triton-versions.sh [VERSION...]   (default 3.5.1: the oldest supported)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
versions=("$@")
[[ ${#versions[@]} -eq 0 ]] && versions=(3.5.1)
base=$(readlink -f "$root/.venv")
site=$("$base/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
for version in "${versions[@]}"; do
  venv=${XDG_CACHE_HOME:-$HOME/.cache}/ttinterp/triton-$version
  if ! "$venv/bin/python" -c "import triton" 2>/dev/null; then
    echo "test-triton-versions: installing triton $version" >&2
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "triton==$version"
  fi
  own=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  echo "$site" > "$own/ttinterp-base.pth"
  echo "== pytest with triton $version"
  (cd "$root" && TRITON_CACHE_DIR=$(mktemp -d) PYTHONPATH="$root/build/python" \
    TTINTERP_CLI="$root/build/tools/ttinterp" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    python/tests)
done
