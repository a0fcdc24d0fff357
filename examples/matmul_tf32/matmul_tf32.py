"""Blocked matmul C = A @ B (float32) with a K loop and tl.dot, using
the default input precision, which on NVIDIA is tf32: operands are
reduced to tf32 (10-bit mantissa) before the tensor-core multiply,
accumulation in float32.

Launched on a 2-D grid (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)) = (3, 2) as
matmul_tf32_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1),
b.stride(0), b.stride(1), c.stride(0), c.stride(1),
BLOCK_M=32, BLOCK_N=32, BLOCK_K=32) with M = 70, N = 50, K = 90, none of
them a multiple of 32, so edge tiles are masked in M, N and K.
A, B and C are contiguous, so stride_ak, stride_bn and stride_cn equal 1:
a real launch specializes integer arguments equal to 1 into constants, and
they vanish from the compiled signature.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_tf32_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K  # columns of A / rows of B still in range
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
