"""Kernels that reach memory through pointer tables: int64 arrays of addresses loaded and turned into
pointers (tt.int_to_ptr), so the matrices they reach are buffers of their own, not launch arguments
(the spec lists them under "reachable"). Compiled by scripts/gen_pointer_tables.py.

- grouped_matmul_kernel: Triton tutorial 08 (grouped GEMM), unchanged in its algorithm: per group g,
  A_g (M x K), B_g (K x N) and C_g (M x N) f16 row-major are reached through group_a_ptrs[g],
  group_b_ptrs[g] and group_c_ptrs[g]; group_gemm_sizes[g] = (M, N, K), g_lds[g] = (lda, ldb, ldc).
  NUM_SM programs walk the tiles of every group; sizes must be multiples of the blocks (no masks).
- table_copy_kernel: program p copies n floats from the buffer table[p] points at into out[p*n:].
  A table entry that points near the end of its buffer makes the load stray out of it.
- table_scatter_kernel: program p stores x[0:n] + p through table[p], then (after a barrier) reads
  back view[0:n] through an argument and writes it to out[p*n:]: when view is the buffer table[p]
  points at, the load sees the store (one region, one shadow).
"""
import triton
import triton.language as tl


@triton.jit
def grouped_matmul_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds, group_size,
                          NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                          BLOCK_SIZE_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
            k = gk
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)
            offs_cm = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_cn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


@triton.jit
def table_copy_kernel(table, out, n, BLOCK: tl.constexpr):
    p = tl.program_id(0)
    src = tl.load(table + p).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + p * n + offs, tl.load(src + offs, mask=mask), mask=mask)


@triton.jit
def table_scatter_kernel(table, x, view, out, n, BLOCK: tl.constexpr):
    p = tl.program_id(0)
    dst = tl.load(table + p).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(x + offs, mask=mask) + p, mask=mask)
    tl.debug_barrier()
    tl.store(out + p * n + offs, tl.load(view + offs, mask=mask), mask=mask)
