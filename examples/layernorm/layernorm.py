"""LayerNorm forward (after the Triton tutorial), one program per row:
    mean = sum(x) / N
    var  = sum((x - mean)^2) / N
    rstd = 1 / sqrt(var + eps)
    y    = (x - mean) * rstd * w + b
and the row's mean and rstd are stored too.

Launched as layernorm_fwd_kernel[(n_rows,)](x, y, w, b, mean, rstd,
x.stride(0), N, eps, BLOCK_SIZE=128) on a 37 x 300 float32 matrix with
eps = 1e-5: each of the three column loops runs 3 iterations, the last one
masked (300 = 2 * 128 + 44).
"""
import triton
import triton.language as tl


@triton.jit
def layernorm_fwd_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr,
                         stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(axis=0)
    x_ptr += row * stride
    y_ptr += row * stride
    # mean
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    # normalize and apply the affine transform
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(y_ptr + cols, y, mask=mask)
