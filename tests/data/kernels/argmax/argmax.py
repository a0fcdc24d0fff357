"""Row-wise tl.argmax and tl.max over a 2-D float32 input, two rows per program.

Launched as argmax_kernel[(cdiv(n_rows, BLOCK_R),)](x, idx, mx, n_rows, n_cols, x.stride(0),
BLOCK_R=2, BLOCK_C=128) on a 10 x 100 matrix of small integers (many ties). Lanes past n_cols
(and rows past n_rows) load -inf, so they never win the max; tl.argmax's default tie rule
(tie_break_left=True) returns the smallest column index among equal maxima, as numpy.argmax does.
"""
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, idx_ptr, max_ptr, n_rows, n_cols, stride_row, BLOCK_R: tl.constexpr,
                  BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)  # masked tail: 28 columns, no spare rows
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=mask, other=-float("inf"))
    i = tl.argmax(x, axis=1)  # tt.reduce over (value, index) pairs, axis 1
    m = tl.max(x, axis=1)     # tt.reduce with arith.maxnumf
    tl.store(idx_ptr + rows, i, mask=rows < n_rows)
    tl.store(max_ptr + rows, m, mask=rows < n_rows)
