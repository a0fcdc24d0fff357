"""tl.dot_scaled (microscaling matmul) on grid (1,), three kernels, every operand passed as raw int bytes.

Buffers hold raw bits in int8 / int16 (specs have no fp8 or bf16 dtypes); the kernels bitcast them to
the types tl.dot_scaled takes (uint8 for e2m1 pairs and e8m0 scales, float8e4nv, float8e5, bfloat16).
- mxfp4_e4m3_kernel(a, sa, b, sb, acc, c): c = (a * 2^(sa-127)) @ (b * 2^(sb-127)) + acc, M = N = 32,
  K = 64; a e2m1 packed along K (32 x 32 bytes), b e4m3 (64 x 32), scales 32 x 2 (one per 32 of K).
- bf16_e5m2_kernel(a, b, sb, c): c = a @ (b * 2^(sb-127)) with a bf16 (32 x 64) and no lhs scale,
  b e5m2 (64 x 32), fast_math=True.
- mxfp4_mn_packed_kernel(a, sa, b, sb, c): both e2m1, a packed along M (16 x 64 bytes for 32 x 64
  values), b packed along N (64 x 16 bytes for 64 x 32), lhs_k_pack=rhs_k_pack=False.
"""
import triton
import triton.language as tl


@triton.jit
def _tile(ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    return tl.load(ptr + tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :])


@triton.jit
def mxfp4_e4m3_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, acc_ptr, c_ptr):
    a = _tile(a_ptr, 32, 32).to(tl.uint8, bitcast=True)
    sa = _tile(sa_ptr, 32, 2).to(tl.uint8, bitcast=True)
    b = _tile(b_ptr, 64, 32).to(tl.float8e4nv, bitcast=True)
    sb = _tile(sb_ptr, 32, 2).to(tl.uint8, bitcast=True)
    acc = _tile(acc_ptr, 32, 32)
    c = tl.dot_scaled(a, sa, "e2m1", b, sb, "e4m3", acc=acc)
    tl.store(c_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], c)


@triton.jit
def bf16_e5m2_kernel(a_ptr, b_ptr, sb_ptr, c_ptr):
    a = _tile(a_ptr, 32, 64).to(tl.bfloat16, bitcast=True)
    b = _tile(b_ptr, 64, 32).to(tl.float8e5, bitcast=True)
    sb = _tile(sb_ptr, 32, 2).to(tl.uint8, bitcast=True)
    c = tl.dot_scaled(a, None, "bf16", b, sb, "e5m2", fast_math=True)
    tl.store(c_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], c)


@triton.jit
def mxfp4_mn_packed_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr):
    a = _tile(a_ptr, 16, 64).to(tl.uint8, bitcast=True)
    sa = _tile(sa_ptr, 32, 2).to(tl.uint8, bitcast=True)
    b = _tile(b_ptr, 64, 16).to(tl.uint8, bitcast=True)
    sb = _tile(sb_ptr, 32, 2).to(tl.uint8, bitcast=True)
    c = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1", lhs_k_pack=False, rhs_k_pack=False)
    tl.store(c_ptr + tl.arange(0, 32)[:, None] * 32 + tl.arange(0, 32)[None, :], c)
