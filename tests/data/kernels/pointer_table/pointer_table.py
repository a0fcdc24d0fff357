"""Pointers stored in memory: addresses written to an int64 table (tt.ptr_to_int), read back and
turned into pointers again (tt.int_to_ptr), then loaded from and stored through.

Launched as pointer_table_kernel[(1,)](table, src, dst, n, BLOCK=64) with src, dst 2 x n float32
(n = 50) and table 4 int64. The kernel fills the table itself, since the spec cannot know
addresses: table = [&src[1, 0], &src[0, 0], &dst[0, 0], &dst[1, 0]]; then for j in 0, 1 it loads
row pointer s = table[j] and d = table[2 + j] and stores d[i] = 2 * s[i] + j, so
dst[0] = 2 * src[1] and dst[1] = 2 * src[0] + 1. One program; tl.debug_barrier (`ttg.barrier all` in 3.8 TTIR) between
filling and reading the table, as a GPU needs (the scalar stores are made by one thread).
"""
import triton
import triton.language as tl


@triton.jit
def pointer_table_kernel(table_ptr, src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    tl.store(table_ptr + 0, (src_ptr + n).to(tl.int64))  # tt.ptr_to_int
    tl.store(table_ptr + 1, src_ptr.to(tl.int64))
    tl.store(table_ptr + 2, dst_ptr.to(tl.int64))
    tl.store(table_ptr + 3, (dst_ptr + n).to(tl.int64))
    tl.debug_barrier()
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    for j in tl.static_range(2):
        s = tl.load(table_ptr + j).to(tl.pointer_type(tl.float32))  # tt.int_to_ptr
        d = tl.load(table_ptr + 2 + j).to(tl.pointer_type(tl.float32))
        v = tl.load(s + offs, mask=mask)
        tl.store(d + offs, v * 2 + j, mask=mask)
