"""tl.cumsum on int32 rows, forward and reverse (tt.scan with reverse = false / true).

Launched as cumsum_kernel[(n_rows,)](x, fwd, rev, n_cols, BLOCK=64) on a 6 x 50 int32 matrix
(values in [-100, 100), exact). Lanes past n_cols load 0, so they change neither scan:
fwd[r, j] = sum(x[r, :j+1]) and rev[r, j] = sum(x[r, j:n_cols]).
"""
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, fwd_ptr, rev_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0)
    tl.store(fwd_ptr + row * n_cols + cols, tl.cumsum(x, axis=0), mask=mask)
    tl.store(rev_ptr + row * n_cols + cols, tl.cumsum(x, axis=0, reverse=True), mask=mask)
