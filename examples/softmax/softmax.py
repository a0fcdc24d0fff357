"""Row softmax, one program per row.

Launched as softmax_kernel[(n_rows,)](out, inp, inp.stride(0), out.stride(0),
n_cols, BLOCK=256) on a 37 x 200 float32 matrix: n_cols = 200 is not a power
of two, so BLOCK = next_power_of_2(200) = 256 and the last 56 lanes are masked
(loaded as -inf so they do not change the max, and contribute exp(-inf) = 0).
"""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(axis=0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)  # subtract the row max for stability
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)
