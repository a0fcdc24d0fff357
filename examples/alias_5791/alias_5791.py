"""Aliasing repro from Triton issue #5791 ("Triton interpreter cannot handle
parameters that alias", https://github.com/triton-lang/triton/issues/5791).

The kernel stores 1 through its first pointer and never touches the second.
The issue calls it as aliasing_test[(1,)](buffer, buffer) on
torch.zeros(1, device="cuda") and expects buffer[0] == 1; Triton's interpreter
printed 0 because it copied each argument to the host separately and the
untouched copy of `buffer2` was written back last, over the stored value.
Here the buffer has 8 float32 elements filled with 7: afterwards element 0 is
1 and elements 1..7 are still 7.
"""
import triton
import triton.language as tl


@triton.jit
def aliasing_test(buffer, buffer2):
    tl.store(buffer, 1)
