#!/usr/bin/env python3
"""Regenerate tests/data/kernels/pointer_tables/ (pointer-table kernels: TTIR, inputs, expected results).

Compiles each kernel of tests/data/kernels/pointer_tables/pointer_tables.py once for
GPUTarget("cuda", 90, 32), num_warps=4 (no GPU needed) with the installed Triton (3.9.0 for the committed
files), and writes <kernel>.ttir, inputs/*.npy (fixed seeds) and expected/*.npy computed with numpy, never
by ttinterp. The specs (spec*.json) are written by hand; their buffers match what is generated here.
Run: .venv/bin/python scripts/gen_pointer_tables.py
"""
import os
import sys
import tempfile
import types

# A private cache: a cached compile would keep the locations of the checkout that made it.
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ttinterp-gen-pointer-tables-")

import numpy as np  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(ROOT, "tests", "data", "kernels", "pointer_tables")
# Compiled from a path relative to the repository root, so TTIR locations read
# "tests/data/kernels/pointer_tables/pointer_tables.py" whatever the checkout's location (importlib's
# loaders would make the path absolute; compile() keeps it as given), as scripts/gen_fixtures.py does.
os.chdir(ROOT)
REL = "tests/data/kernels/pointer_tables/pointer_tables.py"
k = types.ModuleType("ttinterp_pointer_tables")
k.__file__ = REL
sys.modules[k.__name__] = k
with open(REL) as source:
    exec(compile(source.read(), REL, "exec"), k.__dict__)

#: The tutorial's blocks and programs, and the groups' (M, N, K): multiples of the blocks.
GEMM = dict(NUM_SM=4, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)
GROUPS = [(32, 16, 32), (16, 48, 16), (48, 32, 64)]

SPECS = {
    "grouped_matmul_kernel": ({"group_a_ptrs": "*i64", "group_b_ptrs": "*i64", "group_c_ptrs": "*i64",
                               "group_gemm_sizes": "*i32", "g_lds": "*i32", "group_size": "i32",
                               **{c: "constexpr" for c in GEMM}}, GEMM, ["tt.int_to_ptr", "tt.dot"]),
    "table_copy_kernel": ({"table": "*i64", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 64},
                          ["tt.int_to_ptr"]),
    "table_scatter_kernel": ({"table": "*i64", "x": "*fp32", "view": "*fp32", "out": "*fp32", "n": "i32",
                              "BLOCK": "constexpr"}, {"BLOCK": 64}, ["tt.int_to_ptr"]),
}


def compile_one(name):
    signature, constexprs, ops = SPECS[name]
    src = triton.compiler.ASTSource(fn=getattr(k, name), signature=signature, constexprs=constexprs)
    text = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ttir"]
    for op in ops:
        assert op in text, f"{name}: {op} missing from the TTIR"
    with open(os.path.join(DIR, name.replace("_kernel", "") + ".ttir"), "w") as f:
        f.write(text)


def save(folder, name, array):
    os.makedirs(os.path.join(DIR, folder), exist_ok=True)
    np.save(os.path.join(DIR, folder, name + ".npy"), array)


def main():
    for name in SPECS:
        compile_one(name)
    # Integer-valued f16 in [-3, 3]: every product and partial sum (|x| <= 9 * 64) is exact in f16 and
    # f32, so any summation order gives numpy's result exactly.
    rng = np.random.default_rng(2015)
    for g, (m, n, kk) in enumerate(GROUPS):
        a = rng.integers(-3, 4, (m, kk)).astype(np.float16)
        b = rng.integers(-3, 4, (kk, n)).astype(np.float16)
        save("inputs", f"a{g}", a)
        save("inputs", f"b{g}", b)
        save("expected", f"c{g}", (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))
    save("inputs", "sizes", np.array(GROUPS, np.int32))
    save("inputs", "lds", np.array([(kk, n, n) for m, n, kk in GROUPS], np.int32))
    # table_copy: three source buffers of 40 floats (arange in the spec), copied 40 at a time.
    srcs = [np.arange(40, dtype=np.float32) for _ in range(3)]
    save("expected_copy", "out", np.concatenate([srcs[1], srcs[0], srcs[2]]))


if __name__ == "__main__":
    main()
