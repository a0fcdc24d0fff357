"""out[i * stride] = in[i * stride] + 1 for i < n, one block of 64 per program: the kernel the
memory-model specs alias in and out on.

Launched as shift_copy_kernel[(cdiv(n, BLOCK),)](inp, out, n, stride, BLOCK=64). `stride` is
do_not_specialize, so a launch with stride 1 compiles to the same code as one with stride 2.
Compiled for the specs' alignment: `inp` 16-byte aligned, `out` not (it starts one float32 into
its buffer in every spec), so only %inp carries tt.divisibility.
"""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["stride"])
def shift_copy_kernel(in_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(in_ptr + offs * stride, mask=mask)
    tl.store(out_ptr + offs * stride, x + 1, mask=mask)
