# Kernels whose programs wait for each other (issue 15, item 5); their TTIR, compiled by
# Triton 3.9.0 for sm_90, is NAME.ttir next to this file. Regenerate with
#   PYTHONPATH=build/python .venv/bin/python tests/data/kernels/spin_wait/spin_wait.py
import pathlib

import torch
import triton
import triton.language as tl

import ttinterp


@triton.jit
def lookback_cumsum(x_ptr, out_ptr, flag_ptr, carry_ptr, BLOCK: tl.constexpr):
    # Decoupled look-back: program p waits for program p - 1's running total.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    prefix = 0
    if pid > 0:
        while tl.atomic_load(flag_ptr + pid - 1) == 0:
            pass
        prefix = tl.load(carry_ptr + pid - 1)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0) + prefix)
    tl.store(carry_ptr + pid, prefix + tl.sum(x, axis=0))
    tl.atomic_store(flag_ptr + pid, 1)


@triton.jit
def grid_barrier(counter_ptr, out_ptr, expected):
    # Every program arrives, then waits for all `expected` to have arrived.
    tl.atomic_add(counter_ptr, 1)
    while tl.atomic_load(counter_ptr) < expected:
        pass
    tl.store(out_ptr + tl.program_id(0), tl.atomic_load(counter_ptr))


@triton.jit
def locked_sum(x_ptr, acc_ptr, lock_ptr, count_ptr, BLOCK: tl.constexpr):
    # Every program adds its block into one accumulator behind a spin lock, as Triton's
    # layer norm tutorial accumulates its weight gradients; the first holder stores instead
    # of adding, and says so in the count.
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + offs)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    if tl.load(count_ptr) == 0:
        tl.atomic_xchg(count_ptr, 1)
    else:
        x += tl.load(acc_ptr + offs)
    tl.store(acc_ptr + offs, x)
    tl.atomic_xchg(lock_ptr, 0)


if __name__ == "__main__":
    ttinterp.activate()
    here = pathlib.Path(__file__).parent
    i32 = dict(dtype=torch.int32)
    texts = [
        lookback_cumsum.warmup(torch.empty(8, **i32), torch.empty(8, **i32), torch.empty(8, **i32),
                               torch.empty(8, **i32), BLOCK=8, grid=(1, )).asm["ttir"],
        grid_barrier.warmup(torch.empty(1, **i32), torch.empty(8, **i32), 3, grid=(1, )).asm["ttir"],
        locked_sum.warmup(torch.empty(8, **i32), torch.empty(8, **i32), torch.empty(1, **i32),
                          torch.empty(1, **i32), BLOCK=8, grid=(1, )).asm["ttir"],
    ]
    for name, text in zip(["lookback_cumsum", "grid_barrier", "locked_sum"], texts):
        (here / f"{name}.ttir").write_text(text)
