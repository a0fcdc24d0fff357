#!/usr/bin/env python3
"""Benchmark program (not a test): kernels that read and write a little of a large tensor.

A KV-cache update, an embedding's gradient, `x[idx] += v`: the launch's cost should be the rows it
touches, not the tensor. Three kernels on a 256 MiB f32 tensor (65,536 rows of 1,024), each against
the same update in torch eager:

  * row update: 64 programs each add 1 to one row, with a plain load and store (torch:
    ``x[rows] += 1``);
  * scatter-add: 64 programs each atomic_add a row of values into a row chosen by an index, some
    rows twice (torch: ``index_add_``);
  * dense scatter-add: 4,096 programs into 16,384 rows of 1,024 (64 MiB), a quarter of its rows
    hit per launch (torch: ``index_add_``).

Every result is checked against torch before it is timed. Medians of --rounds calls after warm-up,
ttinterp and torch interleaved, on 1 thread and on every core.

    PYTHONPATH=build/python .venv/bin/python python/bench/bench_scatter.py [--rounds N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import ttinterp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_backend import cpu_model, usable_cores  # noqa: E402

ROW = 1024


@triton.jit
def add_one_to_rows(x_ptr, rows_ptr, row_len, BLOCK: tl.constexpr):
    row = tl.load(rows_ptr + tl.program_id(0))
    i = tl.arange(0, BLOCK)
    p = x_ptr + row * row_len + i
    tl.store(p, tl.load(p, mask=i < row_len) + 1.0, mask=i < row_len)


@triton.jit
def scatter_add_rows(grad_ptr, index_ptr, src_ptr, row_len, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row = tl.load(index_ptr + pid)
    i = tl.arange(0, BLOCK)
    m = i < row_len
    tl.atomic_add(grad_ptr + row * row_len + i, tl.load(src_ptr + pid * row_len + i, mask=m), mask=m)


def cases():
    g = torch.Generator().manual_seed(0)
    big = torch.randn(65536, ROW, generator=g)
    rows = torch.randperm(65536, generator=g)[:64].to(torch.int32)
    index = torch.randint(0, 65536, (64, ), generator=g, dtype=torch.int32)
    index[1::8] = index[0]  # some rows twice
    src = torch.randint(-8, 8, (64, ROW), generator=g).float()
    dense = torch.randn(16384, ROW, generator=g)
    dense_index = torch.randint(0, 16384, (4096, ), generator=g, dtype=torch.int32)
    dense_src = torch.randint(-8, 8, (4096, ROW), generator=g).float()
    yield ("row update (64 rows of a 256 MiB tensor)",
           lambda: add_one_to_rows[(64, )](big, rows, ROW, BLOCK=ROW),
           lambda: big.index_put_((rows.long(), ), big[rows.long()] + 1.0), big)
    yield ("scatter-add (64 rows into 256 MiB)",
           lambda: scatter_add_rows[(64, )](big, index, src, ROW, BLOCK=ROW),
           lambda: big.index_add_(0, index.long(), src), big)
    yield ("dense scatter-add (4,096 rows into 64 MiB)",
           lambda: scatter_add_rows[(4096, )](dense, dense_index, dense_src, ROW, BLOCK=ROW),
           lambda: dense.index_add_(0, dense_index.long(), dense_src), dense)


def check(ours, theirs, target) -> None:
    """The same update from the same start, compared (sums of small integers: exact)."""
    start = target.clone()
    ours()
    after_ours = target.clone()
    target.copy_(start)
    theirs()
    if not torch.allclose(after_ours, target, rtol=0, atol=1e-3):
        raise RuntimeError("ttinterp and torch disagree")


def timed(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    cores = usable_cores()
    print(f"{cpu_model()}, {cores} cores; medians of {args.rounds} calls, ms\n")
    print(f"| kernel | ttinterp 1 thread | torch 1 thread | ttinterp {cores} threads "
          f"| torch {cores} threads |")
    print("|---|---:|---:|---:|---:|")
    for name, ours, theirs, target in cases():
        with ttinterp.options(threads=1):
            check(ours, theirs, target)
        row = []
        for threads in (1, cores):
            torch.set_num_threads(threads)
            with ttinterp.options(threads=threads):
                for _ in range(3):
                    ours()
                    theirs()
                row += [timed(ours, args.rounds), timed(theirs, args.rounds)]
        print(f"| {name} | " + " | ".join(f"{t:.3g}" for t in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
