"""tl.device_assert, compiled with debug=True so that it is kept (tt.assert).

Launched as device_assert_kernel[(cdiv(n, BLOCK),)](x, y, n, BLOCK=64, debug=True) with n = 200:
y = 2 * x where every x >= 0. Debug mode also makes Triton add its integer-overflow checks
(more tt.assert ops, on the pid * BLOCK + arange index arithmetic); they never fire here.
"""
import triton
import triton.language as tl


@triton.jit
def device_assert_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.store(y_ptr + offs, x * 2, mask=mask)
