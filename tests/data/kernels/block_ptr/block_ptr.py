"""Block pointers: tl.make_block_ptr / tl.advance / tl.load(boundary_check, padding_option="zero")
/ tl.store(boundary_check). Compiled with Triton 3.5.1 (see README: 3.5's front-end IR keeps
tt.make_tensor_ptr; its cached .ttir has them rewritten into pointer arithmetic).

Launched as block_ptr_kernel[(cdiv(M, BM),)](x, y, s, M, N, ld, BM=16, BN=32) with M = 37,
N = 50 and a row stride ld = 60, on buffers with 39 rows of 60 columns: the logical M x N matrix
is a window whose spare columns (50..59) and rows (37, 38) hold sentinels. Per block of 16 rows the
kernel walks the columns in steps of 32 (tl.advance): y = 2 * x + 1 inside the window (stores past
it are dropped by the boundary check) and s[row] = sum of the row, where out-of-window lanes load
0 (padding_option "zero", so the sentinels in x never reach the sums).
"""
import triton
import triton.language as tl


@triton.jit
def block_ptr_kernel(x_ptr, y_ptr, s_ptr, M, N, ld, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    xp = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(ld, 1), offsets=(pid * BM, 0),
                           block_shape=(BM, BN), order=(1, 0))
    yp = tl.make_block_ptr(y_ptr, shape=(M, N), strides=(ld, 1), offsets=(pid * BM, 0),
                           block_shape=(BM, BN), order=(1, 0))
    acc = tl.zeros([BM], tl.float32)
    for _ in range(0, tl.cdiv(N, BN)):
        v = tl.load(xp, boundary_check=(0, 1), padding_option="zero")
        tl.store(yp, v * 2 + 1, boundary_check=(0, 1))
        acc += tl.sum(v, axis=1)
        xp = tl.advance(xp, (0, BN))
        yp = tl.advance(yp, (0, BN))
    sp = tl.make_block_ptr(s_ptr, shape=(M, ), strides=(1, ), offsets=(pid * BM, ), block_shape=(BM, ),
                           order=(0, ))
    tl.store(sp, acc, boundary_check=(0, ))
