"""A store one element past the end: the bug is the missing mask on the store.

Launched as oob_store_kernel[(1,)](x, out, n, BLOCK=64) with n = 63 and 63-element float32
buffers: the load is masked, the store is not, so lane 63 writes out[63], one element past out
(byte offset 252 of a 252-byte buffer). A memory checker must report it; nothing is expected.
"""
import triton
import triton.language as tl


@triton.jit
def oob_store_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x + 1)  # BUG: no mask, lane 63 >= n stores out of bounds
