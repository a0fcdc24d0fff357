"""float32 -> fp8 (E4M3FN = tl.float8e4nv, E5M2 = tl.float8e5) -> float32, round to nearest even.

Launched as fp8_convert_kernel[(cdiv(n, BLOCK),)](x, e4_bits, e5_bits, e4_back, e5_back, n,
BLOCK=64) with n = 120 hand-picked values (ties, subnormals, overflow, infinities, NaN).
x.to(tl.float8e4nv) is tt.fp_to_fp with rounding = rtne (the default for float downcasts); the
fp8 bytes are stored through .to(tl.int8, bitcast=True) (tt.bitcast) into int8 buffers; the
way back (fp8 -> f32) is tt.fp_to_fp without rounding (exact).
"""
import triton
import triton.language as tl


@triton.jit
def fp8_convert_kernel(x_ptr, e4_bits_ptr, e5_bits_ptr, e4_back_ptr, e5_back_ptr, n,
                       BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    e4 = x.to(tl.float8e4nv)  # f32 -> f8E4M3FN, rtne
    e5 = x.to(tl.float8e5)    # f32 -> f8E5M2, rtne
    tl.store(e4_bits_ptr + offs, e4.to(tl.int8, bitcast=True), mask=mask)
    tl.store(e5_bits_ptr + offs, e5.to(tl.int8, bitcast=True), mask=mask)
    tl.store(e4_back_ptr + offs, e4.to(tl.float32), mask=mask)
    tl.store(e5_back_ptr + offs, e5.to(tl.float32), mask=mask)
