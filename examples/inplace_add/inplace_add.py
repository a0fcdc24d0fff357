"""In-place add through two pointer arguments: x[i] += y[i] for i < n.

Launched as inplace_add_kernel[(cdiv(n, BLOCK),)](x, y, n, BLOCK=256) with
n = 1000. Called with distinct x and y (spec.json), and with y being the
same buffer as x (spec_aliased.json), in which case x becomes 2 * x.
"""
import triton
import triton.language as tl


@triton.jit
def inplace_add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)  # may read the very same memory as x
    tl.store(x_ptr + offsets, x + y, mask=mask)
