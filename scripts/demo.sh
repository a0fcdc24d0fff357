#!/usr/bin/env bash
# Installs what is missing, builds ttinterp and runs the bundled examples,
# including the aliasing repro of Triton issue #5791.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" >/dev/null
cd "$root"
for spec in examples/vector_add/spec.json examples/inplace_add/spec.json \
            examples/inplace_add/spec_aliased.json examples/alias_5791/spec.json \
            examples/softmax/spec.json examples/matmul/spec.json examples/layernorm/spec.json; do
  name=$(basename "$(dirname "$spec")")/$(basename "$spec" .json)
  echo "=== ttinterp run $spec"
  build/tools/ttinterp run "$spec" --out "build/demo/$name"
  echo
done
echo "Results are in build/demo/ as .npy files."
