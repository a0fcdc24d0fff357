#!/usr/bin/env python3
"""Compiles the benchmark's kernels: the examples' own Triton sources at benchmark sizes.

Run from the repository root with triton 3.8.0 (see scripts/gen_fixtures.py):
    /path/to/venv/bin/python scripts/gen_bench_kernels.py
Writes tools/bench/kernels/<name>.ttir (only the names given, if any). Only the TTIR is needed: the benchmark runs it on the CPU.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_fixtures as g  # noqa: E402  (exits unless triton 3.8.0 is installed)

OUT = Path("tools/bench/kernels")

# (output name, example, kernel function, launch args, constexprs)
KERNELS = [
    ("vector_add", "vector_add", "add_kernel", ["x", "y", "out", g.I32(1 << 24)], {"BLOCK": 1024}),
    ("softmax_1024", "softmax", "softmax_kernel", ["out", "inp", g.I32(1024), g.I32(1024), g.I32(1024)],
     {"BLOCK": 1024}),
    ("matmul_ieee", "matmul", "matmul_kernel",
     ["a", "b", "c"] + [g.I32(v) for v in (512, 512, 512, 512, 1, 512, 1, 512, 1)],
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}),
    ("matmul_tf32", "matmul_tf32", "matmul_tf32_kernel",
     ["a", "b", "c"] + [g.I32(v) for v in (512, 512, 512, 512, 1, 512, 1, 512, 1)],
     {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}),
    ("layernorm", "layernorm", "layernorm_fwd_kernel",
     ["x", "y", "w", "b", "mean", "rstd", g.I32(1024), g.I32(1024), g.F32(1e-5)], {"BLOCK_SIZE": 1024}),
    # Rows of 16: what a program costs beyond its data.
    ("layernorm_narrow", "layernorm", "layernorm_fwd_kernel",
     ["x", "y", "w", "b", "mean", "rstd", g.I32(16), g.I32(16), g.F32(1e-5)], {"BLOCK_SIZE": 16}),
]


def main(names):
    OUT.mkdir(parents=True, exist_ok=True)
    for out, example, fn_name, args, constexprs in KERNELS:
        if names and out not in names:
            continue
        fn = g.load_kernel(example, fn_name)
        buffers = {a: g.Buf("f32", "zeros", [1]) for a in args if isinstance(a, str)}
        compiled, _ = g.compile_like_launch(fn, args, constexprs, buffers)
        (OUT / f"{out}.ttir").write_text(compiled.asm["ttir"])
        print(f"wrote {OUT / out}.ttir")


if __name__ == "__main__":
    main(sys.argv[1:])
