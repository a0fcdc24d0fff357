#!/usr/bin/env bash
# Creates .venv with what the Python package builds and tests with: python/requirements-test.txt and
# torch for CPU use. Idempotent: a no-op when .venv already has them.
#
# torch: PyPI's Linux wheel depends on ~3 GB of NVIDIA libraries, and `import torch` fails without
# them. This machine kind ships the CUDA toolkit's libraries, which cover all but four; so the wheel is
# installed without its dependencies, plus its pure-Python ones and those four (about 660 MB), and
# checked with an import. Where that import fails (no system CUDA), the full wheel is installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
torch_version=2.15.0

# .venv is a link to a virtual environment kept per requirement set under the user's cache, so
# every clone on this machine (CI's fresh ones too) shares one install of the same pins; a real
# .venv folder made by hand is used as it is.
if [[ ! -e $root/.venv ]]; then
  key=$( (cat "$root/python/requirements-test.txt"; echo "torch==$torch_version") | sha256sum | cut -c1-12)
  shared=${XDG_CACHE_HOME:-$HOME/.cache}/ttinterp/venv-$key
  [[ -x $shared/bin/python ]] || { mkdir -p "$(dirname "$shared")"; python3 -m venv "$shared"; }
  ln -sfn "$shared" "$root/.venv"
fi
venv=$root/.venv
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
py=$venv/bin/python
pip=("$py" -m pip install -q --disable-pip-version-check --no-warn-conflicts)

if ! "$py" -c "import triton, numpy, pytest, nanobind" 2>/dev/null; then
  echo "setup-python: installing python/requirements-test.txt" >&2
  "${pip[@]}" -r "$root/python/requirements-test.txt"
fi
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "setup-python: installing torch $torch_version for CPU use" >&2
  "${pip[@]}" --no-deps "torch==$torch_version"
  "${pip[@]}" filelock "typing-extensions>=4.13" "setuptools>=77" "sympy>=1.13.3" "networkx>=2.5.1" \
    jinja2 "fsspec>=0.8.5"
  "${pip[@]}" --no-deps "nvidia-cufile==1.17.1.22.*" nvidia-cusparselt-cu13==0.8.1 \
    nvidia-nvshmem-cu13==3.7.2 nvidia-nccl-cu13==2.30.7
  if ! "$py" -c "import torch" 2>/dev/null; then
    echo "setup-python: torch needs its NVIDIA libraries here; installing the full wheel" >&2
    "${pip[@]}" "torch==$torch_version"
  fi
fi
