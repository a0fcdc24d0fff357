"""A data-dependent while loop (scf.while): Collatz step counts, one integer per program.

Launched as collatz_kernel[(n,)](x, steps) with n = 24 int32 starting values >= 1:
steps[i] = number of steps x -> x / 2 (x even) or 3 x + 1 (x odd) until x == 1
(0 for x = 1: the loop body never runs). All scalar: no tensors, no masks.
"""
import triton
import triton.language as tl


@triton.jit
def collatz_kernel(x_ptr, steps_ptr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    steps = 0
    while x != 1:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    tl.store(steps_ptr + pid, steps)
