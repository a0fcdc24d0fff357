#!/usr/bin/env python3
"""Regenerate the TTIR samples under tests/data/ttir/<triton-version>/ (no GPU needed).

Writes <kernel>.ttir (what Triton caches as {name}.ttir) and, for the kernels listed in
kernels.KEEP_SOURCE and versions that expose it, <kernel>.source.ttir (the front-end IR).
Run it once per Triton version, each from its own environment, e.g.:
    python3 -m venv /tmp/tr33 && /tmp/tr33/bin/pip install triton==3.3.1 numpy
    /tmp/tr33/bin/python scripts/gen_ttir_samples.py
The kernels and their compile specs live in tests/data/ttir/kernels.py. A kernel that a
version cannot compile is reported and skipped. The tests read only the committed files.
"""

import argparse
import os
import sys

import triton
from triton.backends.compiler import GPUTarget

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "ttir")
sys.path.insert(0, DATA)

import kernels  # noqa: E402


def compile_one(name, spec, target):
    signature, constexprs, divisibility, options = spec
    fn = getattr(kernels, name)
    attrs = {(i, ): [["tt.divisibility", d]] for i, d in divisibility.items()}
    src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    opts = {"num_warps": 4}
    opts.update(options)
    asm = triton.compile(src, target=target, options=opts).asm
    return asm["ttir"], asm.get("source")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="output folder (default tests/data/ttir/<version>)")
    ap.add_argument("kernels", nargs="*", help="kernel names (default: all in SPECS)")
    args = ap.parse_args()
    version = triton.__version__.split("+")[0]
    out = args.out or os.path.join(DATA, version)
    os.makedirs(out, exist_ok=True)
    target = GPUTarget("cuda", 90, 32)
    failed = []
    unsupported = kernels.UNSUPPORTED.get(".".join(version.split(".")[:2]), ())
    for name in args.kernels or kernels.SPECS:
        if name in unsupported:
            print(f"[{version}] {name}: skipped (not supported by this version)")
            continue
        try:
            text, source = compile_one(name, kernels.SPECS[name], target)
        except Exception as e:  # noqa: BLE001 - report and go on with the next kernel
            failed.append(name)
            print(f"[{version}] {name}: FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            continue
        with open(os.path.join(out, name + ".ttir"), "w") as f:
            f.write(text)
        print(f"[{version}] {name}: {len(text)} bytes")
        # The raw front-end IR (before inlining and rewriting) keeps tt.call, private functions
        # and (3.5) block pointers; keep it for the kernels that show those.
        if source and name in kernels.KEEP_SOURCE:
            with open(os.path.join(out, name + ".source.ttir"), "w") as f:
                f.write(source)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
