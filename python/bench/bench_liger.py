"""Liger-Kernel's forward ops through the ttinterp backend against torch CPU eager.

A program, not a test: it needs Liger-Kernel (`pip install --no-deps liger-kernel`, which the
project does not install), runs each op's autograd Function forward on CPU tensors through this
backend and the same computation in torch, checks the results agree, then times both on one
thread, interleaved, and prints medians and their ratio. Real users' kernels, not the tutorials:
it is how the libdevice, int64-offset and repeated-gather gaps of docs/performance.md's
twenty-seventh round were found.

    PYTHONPATH=build/python .venv/bin/python python/bench/bench_liger.py [--rounds N] [OP ...]
"""
import argparse
import os
import statistics
import sys
import time

os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402

import ttinterp  # noqa: E402
from ttinterp._ttinterp import wait_for_chain_compilations  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_backend import cpu_model  # noqa: E402

M, N = 2048, 2048  # rows x hidden size of the row-wise ops
CASES = {}


def case(name):
    def register(make):
        CASES[name] = make
        return make
    return register


def rms(t, eps=1e-6):
    return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps)


@case("rms_norm")
def _rms_norm(gen):
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    x, w = torch.randn(M, N, generator=gen), torch.randn(N, generator=gen)
    return (lambda: LigerRMSNormFunction.apply(x, w, 1e-6),
            lambda: torch.nn.functional.rms_norm(x, (N, ), w, 1e-6))


@case("layer_norm")
def _layer_norm(gen):
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction
    x = torch.randn(M, N, generator=gen)
    w, b = torch.randn(N, generator=gen), torch.randn(N, generator=gen)
    return (lambda: LigerLayerNormFunction.apply(x, w, b, 1e-6),
            lambda: torch.nn.functional.layer_norm(x, (N, ), w, b, 1e-6))


@case("fused_add_rms_norm")
def _fused_add_rms_norm(gen):
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    x, r = torch.randn(M, N, generator=gen), torch.randn(M, N, generator=gen)
    w = torch.randn(N, generator=gen)

    def reference():
        s = x + r
        return torch.nn.functional.rms_norm(s, (N, ), w, 1e-6), s
    return (lambda: LigerFusedAddRMSNormFunction.apply(x, r, w, 1e-6)), reference


@case("poly_norm")
def _poly_norm(gen):
    from liger_kernel.ops.poly_norm import LigerPolyNormFunction
    x = torch.randn(M, N, generator=gen)
    w, b = torch.randn(3, generator=gen), torch.randn(1, generator=gen)
    return (lambda: LigerPolyNormFunction.apply(x, w, b, 1e-6, False),
            lambda: w[0] * rms(x**3) + w[1] * rms(x**2) + w[2] * rms(x) + b)


@case("group_norm")
def _group_norm(gen):
    from liger_kernel.ops.group_norm import LigerGroupNormFunction
    x = torch.randn(8, 64, 4096, generator=gen)
    w, b = torch.randn(64, generator=gen), torch.randn(64, generator=gen)
    return (lambda: LigerGroupNormFunction.apply(x, w, b, 64, 8, 1e-6),
            lambda: torch.nn.functional.group_norm(x, 8, w, b, 1e-6))


@case("swiglu")
def _swiglu(gen):
    from liger_kernel.ops.swiglu import LigerSiLUMulFunction
    a, b = torch.randn(M, N, generator=gen), torch.randn(M, N, generator=gen)
    return (lambda: LigerSiLUMulFunction.apply(a, b),
            lambda: torch.nn.functional.silu(a) * b)


@case("geglu")
def _geglu(gen):
    from liger_kernel.ops.geglu import LigerGELUMulFunction
    a, b = torch.randn(M, N, generator=gen), torch.randn(M, N, generator=gen)
    return (lambda: LigerGELUMulFunction.apply(a, b),
            lambda: torch.nn.functional.gelu(a, approximate="tanh") * b)


@case("dyt")
def _dyt(gen):
    from liger_kernel.ops.dyt import LigerDyTFunction
    x = torch.randn(M, N, generator=gen)
    alpha = torch.tensor([0.5])
    g, b = torch.randn(N, generator=gen), torch.randn(N, generator=gen)
    return (lambda: LigerDyTFunction.apply(x, alpha, g, b),
            lambda: g * torch.tanh(alpha * x) + b)


@case("softmax")
def _softmax(gen):
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    x = torch.randn(M, N, generator=gen)
    return (lambda: LigerSoftmaxFunction.apply(x)), (lambda: torch.softmax(x, -1))


@case("rope")
def _rope(gen):
    from liger_kernel.ops.rope import LigerRopeFunction
    bsz, heads, kv_heads, seq, dim = 2, 16, 4, 512, 128
    q = torch.randn(bsz, seq, heads, dim, generator=gen).transpose(1, 2)
    k = torch.randn(bsz, seq, kv_heads, dim, generator=gen).transpose(1, 2)
    inv = 1.0 / (10000**(torch.arange(0, dim, 2).float() / dim))
    freqs = torch.outer(torch.arange(seq).float(), inv)
    emb = torch.cat([freqs, freqs], -1)
    cos, sin = emb.cos()[None], emb.sin()[None]

    def rotate(t):
        return torch.cat([-t[..., dim // 2:], t[..., :dim // 2]], -1)

    def reference():
        return (q * cos[:, None] + rotate(q) * sin[:, None],
                k * cos[:, None] + rotate(k) * sin[:, None])
    # Liger rotates q and k in place: each call gets copies.
    return (lambda: LigerRopeFunction.apply(q.clone(), k.clone(), cos, sin)), reference


@case("cross_entropy")
def _cross_entropy(gen):
    from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    vocab, batch = 32000, 64
    x = torch.randn(batch, vocab, generator=gen)
    target = torch.randint(0, vocab, (batch, ), generator=gen)
    # Liger writes the gradient over its input: each call gets a copy that requires grad, made
    # untimed (torch's cross_entropy copies nothing; a training step's logits are fresh).
    fresh = {}

    def prepare():
        fresh["x"] = x.clone().requires_grad_()

    prepare()
    return (lambda: LigerCrossEntropyFunction.apply(fresh["x"], target, None)[0],
            lambda: torch.nn.functional.cross_entropy(x, target), prepare)


@case("kl_div")
def _kl_div(gen):
    from liger_kernel.ops.kl_div import LigerKLDivLossFunction
    x = torch.randn(256, 4096, generator=gen).log_softmax(-1)
    y = torch.randn(256, 4096, generator=gen).softmax(-1)
    return (lambda: LigerKLDivLossFunction.apply(x, y, "batchmean", False),
            lambda: torch.nn.functional.kl_div(x, y, reduction="batchmean"))


@case("tvd")
def _tvd(gen):
    from liger_kernel.ops.tvd import LigerTVDLossFunction
    p = torch.randn(256, 4096, generator=gen).softmax(-1)
    q = torch.randn(256, 4096, generator=gen).softmax(-1)
    return (lambda: LigerTVDLossFunction.apply(p, q)), (lambda: 0.5 * (p - q).abs().sum() / 256)


def agree(got, want) -> bool:
    """Agree to f32 round-off accumulated over a row: relative 1e-4, absolute 1e-5."""
    got, want = (got, ) if torch.is_tensor(got) else got, (want, ) if torch.is_tensor(want) else want
    return all(torch.allclose(g.detach().float(), w.detach().float(), rtol=1e-4, atol=1e-5)
               for g, w in zip(got, want))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed calls of each, medians")
    parser.add_argument("ops", nargs="*", help=f"a subset of {', '.join(CASES)}")
    args = parser.parse_args(argv)
    unknown = [op for op in args.ops if op not in CASES]
    if unknown:
        parser.error(f"unknown op(s): {', '.join(unknown)}")
    try:
        import liger_kernel  # noqa: F401
    except ImportError:
        print("bench_liger: needs Liger-Kernel: pip install --no-deps liger-kernel", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    print("## Liger-Kernel forward ops: ttinterp (1 thread) against torch CPU eager (1 thread)\n")
    print(f"- machine: {cpu_model()}; {args.rounds} timed calls of each after 10 untimed, "
          "alternating; medians\n")
    print("| op | ttinterp ms | torch ms | torch / ttinterp |")
    print("|---|---:|---:|---:|")
    failed = 0
    with ttinterp.options(threads=1):
        for name in args.ops or CASES:
            # A case may also return `prepare`, run untimed before each call of ours.
            ours, reference, *setup = CASES[name](torch.Generator().manual_seed(0))
            prepare = setup[0] if setup else (lambda: None)
            if not agree(ours(), reference()):
                print(f"| {name} | wrong answer | | |")
                failed += 1
                continue
            wait_for_chain_compilations()
            for _ in range(10):
                prepare()
                ours(), reference()
            times = {"ours": [], "torch": []}
            for _ in range(args.rounds):
                for key, fn in (("ours", ours), ("torch", reference)):
                    if fn is ours:
                        prepare()
                    start = time.perf_counter()
                    fn()
                    times[key].append((time.perf_counter() - start) * 1e3)
            a, b = statistics.median(times["ours"]), statistics.median(times["torch"])
            print(f"| {name} | {a:.3g} | {b:.3g} | {b / a:.2f} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
