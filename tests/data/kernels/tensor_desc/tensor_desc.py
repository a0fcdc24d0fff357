# Host-side tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor, Triton 3.4+): each
# descriptor parameter arrives as the descriptor plus its shape (i32) and strides (i64).
import triton
import triton.language as tl


@triton.jit
def tma_matmul_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    # C = A @ B with f16 inputs and an f32 accumulator; blocks past M, N and K read zeros and
    # stores past M and N are dropped by the descriptors themselves (no masks).
    pid = tl.program_id(0)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc)


@triton.jit
def desc_shift_kernel(in_desc, out_ptr, shifted_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Reads a block shifted by (-2, +3) elements, so the first blocks hang over the top edge and the
    # last ones over the right and bottom edges: those lanes read the descriptor's padding. The block
    # goes to out_ptr whole (one block per program, row-major) and, plus one, back through a second
    # descriptor at the same shifted place, which drops what falls outside.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    row = pid_m * BLOCK_M - 2
    col = pid_n * BLOCK_N + 3
    x = in_desc.load([row, col])
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    block = pid_m * tl.num_programs(1) + pid_n
    ptrs = out_ptr + block * BLOCK_M * BLOCK_N + offs_m[:, None] * BLOCK_N + offs_n[None, :]
    tl.store(ptrs, x)
    shifted_desc.store([row, col], x + 1.0)
