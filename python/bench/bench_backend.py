#!/usr/bin/env python3
"""Benchmark program (not a test): ttinterp's Triton backend vs Triton's interpreter vs torch eager.

Runs Triton's tutorial kernels, written as the tutorials write them, at the sizes of
docs/performance.md (vector add 2^24 f32, softmax 4096x1024 f32, matmul 512^3 f32 with
input_precision="ieee", layer norm 4096x1024 f32) on

  * ttinterp (this package) on 1 thread and on every core (``ttinterp.options(threads=...)``),
  * Triton's own interpreter (``TRITON_INTERPRET=1``), in a worker process of this same script,
    since that variable must be set before triton is imported,
  * torch CPU eager, the same computation, on 1 thread and on every core,

and the per-launch cost of a tiny cached launch (one program, a 1024-element vector add).

Every engine's result is checked against torch (allclose) before it is timed: a wrong answer is
never timed. Each timed call is one call of the user-level function, as the tutorials' own
benchmarks time it (the Triton wrappers allocate their outputs, as torch eager does), right after an
untimed 25 ms of calls of the same engine, so that the engine before it has left the cores. Rounds are
interleaved across engines, in a rotating order, so that the shared machine's drift hits all alike;
the tables give medians over rounds, and speedups/ratios are medians of each round's own ratio.

    PYTHONPATH=build/python .venv/bin/python python/bench/bench_backend.py           # full sizes
    PYTHONPATH=build/python .venv/bin/python python/bench/bench_backend.py --quick   # smoke run
    ... bench_backend.py --copy-back   # also ttinterp with outputs copied back, not exchanged
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# Triton reads TRITON_INTERPRET when a kernel is decorated, i.e. while this module is imported, so
# the choice has to be made before the import: the worker is the interpreter, the parent never is.
_WORKER_ENGINE = "triton-interpret"
_IS_WORKER = any(a == f"--engine={_WORKER_ENGINE}" for a in sys.argv) or any(
    a == "--engine" and sys.argv[i + 1:i + 2] == [_WORKER_ENGINE] for i, a in enumerate(sys.argv))
if _IS_WORKER:
    os.environ["TRITON_INTERPRET"] = "1"
else:
    os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# --- the kernels, as Triton's tutorials (3.9) write them ---------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)  # 1024 at the benchmark's size, as the bench kernel
    y = torch.empty_like(x)
    # The tutorial sizes its persistent grid from the GPU's occupancy, capped at n_rows; a CPU has
    # no occupancy to fill, so every row gets its own program (the bench kernel's one row each).
    num_programs = n_rows
    softmax_kernel[(num_programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                         BLOCK_SIZE=BLOCK_SIZE, num_stages=2, num_warps=4)
    return y


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        # Exact f32 products (not tf32), so the result is torch's fp32 matmul up to summation order.
        accumulator = tl.dot(a, b, accumulator, input_precision="ieee")
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator  # the tutorial casts to fp16 here; the benchmark compares f32 with torch's f32

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), dtype=torch.float32)
    # One fixed config with the bench kernel's blocks instead of the tutorial's @triton.autotune:
    # the engines must run the same program, not whatever each one's autotuner prefers.
    meta = dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=8)
    grid = (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]), )
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), num_stages=3, num_warps=4, **meta)
    return c


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


def layer_norm(x, normalized_shape, weight, bias, eps):
    """The tutorial's LayerNorm.forward without autograd: returns y, mean and rstd."""
    y = torch.empty_like(x)
    x_arg = x.reshape(-1, x.shape[-1])
    M, N = x_arg.shape
    mean = torch.empty((M, ), dtype=torch.float32)
    rstd = torch.empty((M, ), dtype=torch.float32)
    MAX_FUSED_SIZE = 65536 // x.element_size()
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))  # 1024, as the bench kernel
    if N > BLOCK_SIZE:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _layer_norm_fwd_fused[(M, )](x_arg, y, weight, bias, mean, rstd, x_arg.stride(0), N, eps,
                                 BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_ctas=1)
    return y, mean, rstd


# --- the workloads: inputs, the Triton call, the torch call, the check ------------------------

FULL_SIZES = {"vector_add": 1 << 24, "softmax": (4096, 1024), "matmul": 512,
              "layernorm": (4096, 1024)}
QUICK_SIZES = {"vector_add": 1 << 16, "softmax": (64, 1024), "matmul": 128, "layernorm": (64, 1024)}
KERNELS = ("vector_add", "softmax", "matmul", "layernorm")
LAYERNORM_EPS = 1e-5
TINY_N = 1024


def describe(kernel: str, size) -> str:
    if kernel == "vector_add":
        exp = size.bit_length() - 1
        shown = f"2^{exp}" if size == 1 << exp else str(size)
        return f"vector add ({shown} f32)"
    if kernel == "matmul":
        return f"matmul ieee ({size}^3 f32)"
    name = {"softmax": "softmax", "layernorm": "layer norm"}[kernel]
    return f"{name} ({size[0]}x{size[1]} f32)"


class Workload:
    """One kernel at one size: fixed inputs, the tutorial call, torch's call and the check.

    Both processes build the inputs from the same seed, but each checks against its own torch
    reference, so nothing about the inputs needs to cross the process boundary."""

    def __init__(self, kernel: str, size):
        self.kernel = kernel
        gen = torch.Generator().manual_seed(1234 + KERNELS.index(kernel))
        if kernel == "vector_add":
            self.args = (torch.rand(size, generator=gen), torch.rand(size, generator=gen))
            self.run_triton = lambda: add(*self.args)
            self.run_torch = lambda: self.args[0] + self.args[1]
            self.tolerance = (0.0, 0.0)  # one f32 addition per element, as torch does: exact
        elif kernel == "softmax":
            self.args = (torch.randn(size, generator=gen) * 4, )
            self.run_triton = lambda: softmax(*self.args)
            self.run_torch = lambda: torch.softmax(self.args[0], dim=1)
            self.tolerance = (1e-5, 1e-7)  # tl.exp within a few ulp of torch's; another sum order
        elif kernel == "matmul":
            self.args = (torch.randn(size, size, generator=gen),
                         torch.randn(size, size, generator=gen))
            self.run_triton = lambda: matmul(*self.args)
            self.run_torch = lambda: self.args[0] @ self.args[1]
            self.tolerance = (1e-4, 1e-4)  # exact products; K-long f32 sums in another order
        elif kernel == "layernorm":
            rows, cols = size
            x = torch.randn(size, generator=gen) * 2 + 0.5
            w = torch.rand(cols, generator=gen) + 0.5
            b = torch.randn(cols, generator=gen)
            self.args = (x, (cols, ), w, b, LAYERNORM_EPS)
            self.run_triton = lambda: layer_norm(*self.args)
            self.run_torch = lambda: torch.nn.functional.layer_norm(*self.args)
            self.tolerance = (1e-4, 1e-5)  # row sums as a blocked fold vs torch's Welford
        else:
            raise ValueError(kernel)
        self.reference = self._reference()

    def _reference(self):
        """torch's answer; for layer norm also the mean and 1/std the kernel stores."""
        if self.kernel != "layernorm":
            return (self.run_torch(), )
        x, _, _, _, eps = self.args
        var, mean = torch.var_mean(x, dim=1, unbiased=False)
        return (self.run_torch(), mean, torch.rsqrt(var + eps))

    def check(self, result) -> dict:
        """allclose against torch; the largest absolute error for the record."""
        results = result if isinstance(result, tuple) else (result, )
        rtol, atol = self.tolerance
        ok, worst = True, 0.0
        for got, want in zip(results, self.reference):
            if got.shape != want.shape or got.dtype != want.dtype:
                why = (f"got {tuple(got.shape)} {got.dtype}, "
                       f"torch gives {tuple(want.shape)} {want.dtype}")
                return {"ok": False, "max_abs_err": None, "why": why}
            ok = ok and torch.allclose(got, want, rtol=rtol, atol=atol)
            worst = max(worst, (got - want).abs().max().item())
        return {"ok": bool(ok), "max_abs_err": worst}


def time_call(fn) -> float:
    """Milliseconds of one call."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def tiny_launch_us(launches: int, warmup: int) -> float:
    """Median microseconds of one cached launch of a one-program, 1024-element vector add."""
    x = torch.rand(TINY_N)
    y = torch.rand(TINY_N)
    out = torch.empty(TINY_N)
    grid = (1, )
    add_kernel[grid](x, y, out, TINY_N, BLOCK_SIZE=1024)
    if not torch.equal(out, x + y):
        raise RuntimeError("tiny vector add gave a wrong answer")
    for _ in range(warmup):
        add_kernel[grid](x, y, out, TINY_N, BLOCK_SIZE=1024)
    samples = []
    clock = time.perf_counter_ns
    for _ in range(launches):
        start = clock()
        add_kernel[grid](x, y, out, TINY_N, BLOCK_SIZE=1024)
        samples.append(clock() - start)
    return statistics.median(samples) / 1e3


def torch_tiny_us(launches: int, warmup: int) -> float:
    """The same 1024-element add in torch eager (no kernel launch), for scale."""
    x, y = torch.rand(TINY_N), torch.rand(TINY_N)
    out = torch.empty(TINY_N)
    for _ in range(warmup):
        torch.add(x, y, out=out)
    samples = []
    clock = time.perf_counter_ns
    for _ in range(launches):
        start = clock()
        torch.add(x, y, out=out)
        samples.append(clock() - start)
    return statistics.median(samples) / 1e3


# --- the Triton-interpreter worker: JSON lines in, JSON lines out ------------------------------


def worker_main(args) -> int:
    """Serves the parent: {"cmd": "check"|"time"|"tiny"|"quit", ...} per stdin line."""
    # Keep stdout for the protocol alone: anything printed by Triton or torch goes to stderr.
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    from triton.runtime.interpreter import InterpretedFunction
    if not isinstance(add_kernel, InterpretedFunction):
        print(json.dumps({"error": "TRITON_INTERPRET=1 did not select Triton's interpreter"}),
              file=protocol)
        return 1
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    workloads: dict = {}
    print(json.dumps({"ready": True, "triton": triton.__version__}), file=protocol)
    for line in sys.stdin:
        request = json.loads(line)
        cmd = request["cmd"]
        try:
            if cmd == "quit":
                break
            if cmd == "tiny":
                reply = {"us": tiny_launch_us(request["launches"], request["warmup"])}
            else:
                kernel = request["kernel"]
                if kernel not in workloads:
                    workloads[kernel] = Workload(kernel, sizes[kernel])
                w = workloads[kernel]
                if cmd == "check":
                    reply = w.check(w.run_triton())
                elif cmd == "time":
                    reply = {"ms": time_call(w.run_triton)}
                else:
                    reply = {"error": f"unknown command {cmd!r}"}
        except Exception as e:  # reported to the parent, which says which engine failed
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), file=protocol)
    return 0


class TritonInterpreter:
    """The worker process running this script under TRITON_INTERPRET=1."""

    def __init__(self, quick: bool):
        env = dict(os.environ, TRITON_INTERPRET="1")
        cmd = [sys.executable, os.path.abspath(__file__), "--engine", _WORKER_ENGINE]
        if quick:
            cmd.append("--quick")
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        hello = self._read()
        if "error" in hello:
            raise RuntimeError(hello["error"])

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Triton-interpreter worker exited (status {self.proc.wait()})")
        return json.loads(line)

    def ask(self, **request) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = self._read()
        if "error" in reply:
            raise RuntimeError(f"Triton interpreter, {request}: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            self.proc.wait()


# --- the parent: check, time in interleaved rounds, print ---------------------------------------


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def spread_rounds(rounds: int, chosen: int) -> set:
    """Which of `rounds` rounds time the slow engine: `chosen` of them, evenly spread."""
    return {int((i + 0.5) * rounds / chosen) for i in range(chosen)}


def fmt_ms(values) -> str:
    if not values:
        return "-"
    m = statistics.median(values)
    return f"{m:.0f}" if m >= 1000 else f"{m:.3g}" if m < 10 else f"{m:.1f}"


def paired(numerators, denominators) -> list:
    """Per-round ratios numerator/denominator over the rounds where both were timed."""
    return [numerators[r] / denominators[r] for r in numerators if r in denominators]


def fmt_ratio(ratios, suffix="") -> str:
    if not ratios:
        return "-"
    m = statistics.median(ratios)
    return f"{m:.0f}{suffix}" if m >= 100 else f"{m:.3g}{suffix}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=None,
                        help="timed rounds per engine, medians (default 5, --quick 1)")
    parser.add_argument("--triton-rounds", type=int, default=1,
                        help="rounds that also time Triton's interpreter (0: leave it out)")
    parser.add_argument("--quick", action="store_true", help="small sizes, 1 round: a smoke run")
    parser.add_argument("--tiny-launches", type=int, default=None,
                        help="timed tiny launches per engine (default 2000, --quick 200)")
    parser.add_argument("--kernels", default=",".join(KERNELS),
                        help=f"comma-separated subset of {','.join(KERNELS)}")
    parser.add_argument("--copy-back", action="store_true",
                        help="also time ttinterp writing outputs back by copying, not by "
                             "exchanging pages (exchange_pages=False), interleaved with the rest")
    parser.add_argument("--json", metavar="PATH", help="also write every sample to this file")
    parser.add_argument("--engine", choices=[_WORKER_ENGINE], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.engine == _WORKER_ENGINE:
        return worker_main(args)

    if args.rounds is None:
        args.rounds = 1 if args.quick else 5
    kernels = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in kernels if k not in KERNELS]
    if unknown or not kernels:
        parser.error(f"--kernels: unknown {unknown or 'empty list'}; "
                     f"choose from {','.join(KERNELS)}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not 0 <= args.triton_rounds <= args.rounds:
        parser.error(f"--triton-rounds must be between 0 and --rounds ({args.rounds})")
    tiny_launches = args.tiny_launches or (200 if args.quick else 2000)
    if tiny_launches < 1:
        parser.error("--tiny-launches must be at least 1")
    tiny_warmup = max(10, tiny_launches // 10)

    try:
        import ttinterp
    except ImportError as e:
        print(f"bench_backend: cannot import ttinterp ({e}); run with PYTHONPATH=build/python",
              file=sys.stderr)
        return 2
    ttinterp.activate()
    from ttinterp._ttinterp import wait_for_chain_compilations

    cores = usable_cores()
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    load_start = os.getloadavg()
    wall_start = time.perf_counter()

    interp = TritonInterpreter(args.quick) if args.triton_rounds else None
    triton_rounds = spread_rounds(args.rounds, args.triton_rounds) if interp else set()

    # Engines timed in the parent: how to set them up around a call, and what they run.
    def ttinterp_engine(threads, exchange_pages=True):
        return lambda w: (ttinterp.options(threads=threads, exchange_pages=exchange_pages),
                          w.run_triton)

    class TorchThreads:
        def __init__(self, threads):
            self.threads = threads

        def __enter__(self):
            torch.set_num_threads(self.threads)
            # Changing the thread count rebuilds torch's pool, and its workers sleep when idle: a
            # parallel op right before the timed call stands for the ops a model runs before it.
            torch.ones(1 << 20).add_(1)

        def __exit__(self, *exc):
            return False

    def torch_engine(threads):
        return lambda w: (TorchThreads(threads), w.run_torch)

    local_engines = {
        "ttinterp_1": ttinterp_engine(1),
        "ttinterp_all": ttinterp_engine(cores),
        "torch_1": torch_engine(1),
        "torch_all": torch_engine(cores),
    }
    if args.copy_back:
        local_engines["ttinterp_1_copy"] = ttinterp_engine(1, exchange_pages=False)
        local_engines["ttinterp_all_copy"] = ttinterp_engine(cores, exchange_pages=False)
    engines = list(local_engines) + (["triton_interp"] if interp else [])
    samples = {k: {e: {} for e in engines} for k in kernels}  # kernel -> engine -> round -> ms
    checks = {k: {} for k in kernels}
    wrong = []

    try:
        workloads = {}
        for kernel in kernels:
            w = workloads[kernel] = Workload(kernel, sizes[kernel])
            # Check every engine first (also its warm-up: compile, caches); torch is the reference.
            for engine, setup in local_engines.items():
                context, fn = setup(w)
                with context:
                    result = fn()
                    checks[kernel][engine] = w.check(result) if engine.startswith("ttinterp") \
                        else {"ok": True, "max_abs_err": 0.0}
                    fn()  # a second warm-up call: nothing first-call-only is timed
            # The warm-ups asked for the kernel's element-wise chains to be compiled in the
            # background: time the compiled loops (TTINTERP_JIT=off times the interpreter alone).
            wait_for_chain_compilations()
            if interp:
                checks[kernel]["triton_interp"] = interp.ask(cmd="check", kernel=kernel)
            for engine, c in checks[kernel].items():
                if not c["ok"]:
                    wrong.append((kernel, engine, c))
                    print(f"bench_backend: {engine} gave a wrong answer on {kernel}: {c}; "
                          "not timed", file=sys.stderr)

        for r in range(args.rounds):
            for kernel in kernels:
                w = workloads[kernel]
                order = engines[r % len(engines):] + engines[:r % len(engines)]
                for engine in order:
                    if not checks[kernel][engine]["ok"]:
                        continue
                    if engine == "triton_interp":
                        if r in triton_rounds:
                            samples[kernel][engine][r] = interp.ask(cmd="time", kernel=kernel)["ms"]
                        continue
                    context, fn = local_engines[engine](w)
                    with context:
                        # Untimed calls first, for at least 25 ms: the engine timed before may
                        # still hold the cores (torch's OpenMP workers spin for about 10 ms
                        # after each op, which made a 2-thread launch right after one 2-3x
                        # slower), and sleeping instead lets idle cores doze off (also slower).
                        settled = time.perf_counter() + 0.025
                        fn()
                        while time.perf_counter() < settled:
                            fn()
                        samples[kernel][engine][r] = time_call(fn)
            print(f"bench_backend: round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)

        tiny = {}
        with ttinterp.options(threads=1):
            tiny["ttinterp_1"] = tiny_launch_us(tiny_launches, tiny_warmup)
        with ttinterp.options(threads=cores):
            tiny["ttinterp_all"] = tiny_launch_us(tiny_launches, tiny_warmup)
        if interp:
            tiny["triton_interp"] = interp.ask(cmd="tiny", launches=tiny_launches,
                                               warmup=tiny_warmup)["us"]
        torch.set_num_threads(1)
        tiny["torch_1"] = torch_tiny_us(tiny_launches, tiny_warmup)
    finally:
        if interp:
            interp.close()
        torch.set_num_threads(cores)

    load_end = os.getloadavg()
    wall = time.perf_counter() - wall_start

    # --- print ---
    import numpy
    print("## ttinterp backend vs Triton's interpreter vs torch CPU eager")
    print()
    print(f"- machine: {cpu_model()}, {os.cpu_count()} logical CPUs ({cores} usable: 'all cores' = "
          f"{cores} threads); load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end")
    print(f"- versions: Python {platform.python_version()}, triton {triton.__version__}, torch "
          f"{torch.__version__}, numpy {numpy.__version__}, ttinterp {ttinterp.__version__}")
    t_rounds = (f"Triton interpreter timed in {args.triton_rounds} of them (round "
                f"{', '.join(str(r + 1) for r in sorted(triton_rounds))})" if interp
                else "Triton interpreter not run")
    print(f"- {args.rounds} round{'s' if args.rounds > 1 else ''}"
          f"{' (--quick sizes)' if args.quick else ''}, interleaved across engines; {t_rounds}; "
          f"{wall:.0f} s in all")
    print()
    all_label = f"all cores ({cores})"
    print(f"| kernel | Triton interpreter ms | ttinterp 1 thread ms | ttinterp {all_label} ms | "
          f"torch 1 thread ms | torch {all_label} ms | ttinterp/Triton-interp speedup | "
          f"ttinterp/torch ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kernel in kernels:
        s = samples[kernel]

        def cell(engine):
            c = checks[kernel].get(engine)
            if c is not None and not c["ok"]:
                return "WRONG"
            return fmt_ms(list(s.get(engine, {}).values()))

        speedup = "-"
        if interp and s["triton_interp"]:
            speedup = (f"{fmt_ratio(paired(s['triton_interp'], s['ttinterp_1']), 'x')} / "
                       f"{fmt_ratio(paired(s['triton_interp'], s['ttinterp_all']), 'x')}")
        ratio = (f"{fmt_ratio(paired(s['torch_1'], s['ttinterp_1']))} / "
                 f"{fmt_ratio(paired(s['torch_all'], s['ttinterp_all']))}")
        print(f"| {describe(kernel, sizes[kernel])} | {cell('triton_interp')} | "
              f"{cell('ttinterp_1')} | {cell('ttinterp_all')} | {cell('torch_1')} | "
              f"{cell('torch_all')} | {speedup} | {ratio} |")
    print()
    print("Times: medians over rounds of one call of the user-level function (the tutorial's "
          "wrapper, which allocates its outputs; torch eager allocates too). speedup = "
          "Triton-interpreter time / ttinterp time, with ttinterp on 1 thread / on all cores; "
          "ratio = torch time / ttinterp time at the same thread count (1 thread / all cores): "
          "ttinterp's speed as a fraction of torch's. Both are medians of each round's own "
          "ratio. Every engine's result was checked against torch (allclose) before it was timed" +
          (f"; WRONG: {len(wrong)} engine/kernel pairs failed it and were not timed." if wrong
           else ", and all passed."))
    print()
    if args.copy_back:
        print(f"| kernel | ttinterp 1 thread ms: pages exchanged / copied | {all_label}: "
              f"exchanged / copied | copied / exchanged (1 thread / {all_label}) |")
        print("|---|---:|---:|---:|")
        for kernel in kernels:
            s = samples[kernel]
            print(f"| {describe(kernel, sizes[kernel])} | {fmt_ms(list(s['ttinterp_1'].values()))} "
                  f"/ {fmt_ms(list(s['ttinterp_1_copy'].values()))} | "
                  f"{fmt_ms(list(s['ttinterp_all'].values()))} / "
                  f"{fmt_ms(list(s['ttinterp_all_copy'].values()))} | "
                  f"{fmt_ratio(paired(s['ttinterp_1_copy'], s['ttinterp_1']))} / "
                  f"{fmt_ratio(paired(s['ttinterp_all_copy'], s['ttinterp_all']))} |")
        print()
        print("Outputs written back by exchanging whole pages (the default) or by copying them "
              "(exchange_pages=False), timed in the same rounds.")
        print()
    print(f"| tiny cached launch (1 program, {TINY_N}-element f32 vector add) | µs per launch |")
    print("|---|---:|")
    if interp:
        print(f"| Triton interpreter | {tiny['triton_interp']:.1f} |")
    print(f"| ttinterp, 1 thread | {tiny['ttinterp_1']:.1f} |")
    print(f"| ttinterp, {all_label} | {tiny['ttinterp_all']:.1f} |")
    print(f"| torch eager `torch.add(x, y, out=out)`, 1 thread, for scale | "
          f"{tiny['torch_1']:.1f} |")
    print()
    print(f"Medians of {tiny_launches} launches each after {tiny_warmup} warm-up launches; "
          "`add_kernel[(1,)](x, y, out, 1024, BLOCK_SIZE=1024)` with preallocated tensors.")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"sizes": {k: sizes[k] for k in kernels}, "cores": cores, "cpu": cpu_model(),
                       "load_start": load_start, "load_end": load_end, "checks": checks,
                       "samples_ms": samples, "tiny_us": tiny,
                       "versions": {"triton": triton.__version__, "torch": torch.__version__,
                                    "ttinterp": ttinterp.__version__}}, f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
