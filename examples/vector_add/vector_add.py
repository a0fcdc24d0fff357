"""Masked vector add: out[i] = x[i] + y[i] for i < n.

Launched as add_kernel[(cdiv(n, BLOCK),)](x, y, out, n, BLOCK=1024) with
n = 5000, which is not a multiple of BLOCK: the fifth program's tail
(offsets 5000..5119) is masked off.
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n  # false on the tail of the last block
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
