"""One 32x32x32 float32 tl.dot, five compiles: input_precision ieee, tf32, tf32x3, bf16x3, bf16x6.

Each kernel is launched on grid (1,) as k(a, b, c) with row-major 32 x 32 float32 matrices and
computes c = a @ b in a single tl.dot (tt.dot with inputPrecision = ieee (not printed), tf32,
tf32x3, bf16x3, bf16x6). The kernels share _dot_body, which Triton inlines.
"""
import triton
import triton.language as tl


@triton.jit
def _dot_body(a_ptr, b_ptr, c_ptr, PRECISION: tl.constexpr):
    i = tl.arange(0, 32)
    offs = i[:, None] * 32 + i[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + offs, c)


@triton.jit
def dot_ieee_kernel(a_ptr, b_ptr, c_ptr):
    _dot_body(a_ptr, b_ptr, c_ptr, "ieee")


@triton.jit
def dot_tf32_kernel(a_ptr, b_ptr, c_ptr):
    _dot_body(a_ptr, b_ptr, c_ptr, "tf32")


@triton.jit
def dot_tf32x3_kernel(a_ptr, b_ptr, c_ptr):
    _dot_body(a_ptr, b_ptr, c_ptr, "tf32x3")


@triton.jit
def dot_bf16x3_kernel(a_ptr, b_ptr, c_ptr):
    _dot_body(a_ptr, b_ptr, c_ptr, "bf16x3")


@triton.jit
def dot_bf16x6_kernel(a_ptr, b_ptr, c_ptr):
    _dot_body(a_ptr, b_ptr, c_ptr, "bf16x6")
