"""What ``@triton.autotune`` does on ttinterp: time each config on the CPU, or take the first.

Triton's Autotuner asks the active driver for a benchmarker and keeps the config with the smallest
time. ``options(autotune="benchmark")`` (the default) times each config's launch on the host clock, so
every config runs (and is checked: all must give the same answer). ``autotune="first"`` (environment:
``TTINTERP_AUTOTUNE=first``) times nothing and reports every config equal, so the first one is taken
and the others never run: quicker for test suites.
"""
from __future__ import annotations

import statistics
import time

from . import _state


def benchmarker(kernel_call, quantiles=None, warmup=1, rep=3, return_mode="mean", **kwargs):
    if _state.current().autotune == "first":
        times = [0.0]
    else:
        # Triton's warmup and rep are GPU milliseconds; a CPU launch is 10-1000x slower, so a
        # fixed one warm-up and three timed runs stand for them.
        kernel_call()
        times = []
        for _ in range(3):
            start = time.perf_counter()
            kernel_call()
            times.append((time.perf_counter() - start) * 1e3)
    if quantiles is not None:
        ordered = sorted(times)
        return [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
    return {"min": min, "max": max, "median": statistics.median}.get(return_mode, statistics.mean)(times)
