#!/usr/bin/env python3
"""Regenerate every file under tests/data/kernels/ (the interpreter-semantics and memory-model fixtures).

Same recipe as scripts/gen_fixtures.py (whose helpers this script imports): each folder
tests/data/kernels/<name>/ holds <name>.py, compiled ONCE for GPUTarget("cuda", 90, 32), num_warps=4,
specialized the way a real launch with the spec's values would be (Triton's own JIT binder on mock
tensors; a view's data_ptr() is its byte offset, so a view one float32 into its buffer is not 16-byte
aligned), giving <name>.ttir, .ptx, .cubin and .json (Triton's cache metadata) from that one compile;
spec*.json for the ttinterp CLI (launch arguments checked against the printed tt.func arguments);
inputs/*.npy (fixed seeds); expected*/<buffer>.npy computed independently with numpy, never by ttinterp.
For every kernel the script asserts that the TTIR contains the ops the kernel exists to exercise.

Triton versions: every kernel is compiled with 3.8.0 except block_ptr, compiled with 3.5.1, the last
line whose front-end IR still has block pointers (3.7+ lower tl.make_block_ptr in Python; every 3.x
rewrites them away in make_ttir, so the cached .ttir never has them). The 3.5.1 compile runs in a
subprocess with another interpreter: $TRITON35_PYTHON (default /tmp/tr35/bin/python; make it with
  python3 -m venv /tmp/tr35 && /tmp/tr35/bin/pip install triton==3.5.1 numpy).

Run:  /tmp/tr38/bin/python scripts/gen_test_kernels.py [name ...]     (no GPU needed)
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in scripts/ or tests/data/kernels/
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_fixtures as gf  # noqa: E402  (sets a private TRITON_CACHE_DIR, checks the Triton version)
from gen_fixtures import Buf, I32  # noqa: E402

np = gf.np
triton = gf.triton
ROOT = gf.ROOT
KERNELS = ROOT / "tests" / "data" / "kernels"
BLOCK_PTR_TRITON = "3.5.1"
F32 = np.float32

# ---------------------------------------------------------------------------------------------
# launch arguments beyond gen_fixtures' (buffer names, I32, F32)


class View:
    """A pointer argument that is a strided window of a buffer (spec {"view": ...}); offset, shape and
    strides in elements of the buffer's dtype."""

    def __init__(self, buf, offset, shape, strides):
        self.buf, self.offset, self.shape, self.strides = buf, offset, list(shape), list(strides)


class MockPtr(gf.MockTensor):
    """A mock tensor whose data_ptr() is a byte offset from a 16-byte-aligned allocation."""

    def __init__(self, dtype, byte_offset):
        super().__init__(dtype)
        self.byte_offset = byte_offset

    def data_ptr(self):
        return self.byte_offset


class Desc:
    """A host-side tensor descriptor argument (spec {"tensordesc": ...}): a view of a buffer (offset, shape
    and strides in elements; default the whole buffer) read and written in blocks of `block`."""

    def __init__(self, buf, block, padding="zero", offset=0, shape=None, strides=None):
        self.buf, self.block, self.padding = buf, list(block), padding
        self.offset, self.shape, self.strides = offset, shape, strides

    def view(self, buffers):
        shape = self.shape or buffers[self.buf].shape
        strides = self.strides or [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
        return list(shape), list(strides)


def buf_of(a):
    return a.buf if isinstance(a, (View, Desc)) else a


def mock_value(a, buffers):
    if isinstance(a, View):
        b = buffers[a.buf]
        return MockPtr(b.dtype, a.offset * b.data.itemsize)
    if isinstance(a, Desc):
        # Triton's own TensorDescriptor (what its JIT binder specializes on), over a mock base:
        # built field by field because __post_init__ would ask the mock for a torch dtype.
        from triton.tools.tensor_descriptor import TensorDescriptor
        b = buffers[a.buf]
        shape, strides = a.view(buffers)
        d = object.__new__(TensorDescriptor)
        fields = dict(base=MockPtr(b.dtype, a.offset * b.data.itemsize), shape=shape, strides=strides,
                      block_shape=a.block, padding=a.padding, round_f32_to_tf32=False)
        for f, v in fields.items():
            object.__setattr__(d, f, v)
        return d
    return gf.launch_value(a, buffers)


def arg_json(a):
    if isinstance(a, View):
        return {"view": a.buf, "offset": a.offset, "shape": a.shape, "strides": a.strides}
    if isinstance(a, Desc):
        d = {"tensordesc": a.buf}
        if a.offset:
            d["offset"] = a.offset
        if a.shape:
            d["shape"] = a.shape
        if a.strides:
            d["strides"] = a.strides
        if a.padding != "zero":
            d["padding"] = a.padding
        return d
    return gf.spec_arg_json(a)


def expand_descriptors(kept, buffers):
    """(name, TTIR type) of the tt.func arguments Triton passes for the spec's arguments: a descriptor
    is itself, then its shape (i32) and strides (i64)."""
    out = []
    for name, a in kept:
        if isinstance(a, Desc):
            block = "x".join(str(d) for d in a.block)
            out.append((name, f"!tt.tensordesc<{block}x{gf.TTIR_TYPE[buffers[a.buf].dtype]}>"))
            out += [(f"{name}.shape.{d}", "i32") for d in range(len(a.block))]
            out += [(f"{name}.stride.{d}", "i64") for d in range(len(a.block))]
        elif isinstance(a, (str, View)):
            out.append((name, f"!tt.ptr<{gf.TTIR_TYPE[buffers[buf_of(a)].dtype]}>"))
        else:
            out.append((name, "i32" if isinstance(a, I32) else "f32"))
    return out


def check_args(kept, ttir_args, buffers, label):
    """The spec's arguments are the printed tt.func arguments, name by name and type by type (a
    descriptor argument stands for the descriptor and its shape and stride arguments)."""
    want = expand_descriptors(kept, buffers)
    assert [(n, t) for n, t, _ in ttir_args] == want, (label, ttir_args, want)


# ---------------------------------------------------------------------------------------------
# the kernels: each returns a dict
#   kernel: function name; constexprs; debug (launch flag); compiles: optional list of
#   (file stem, function name) when one .py holds several kernels;
#   specs: {spec stem: dict(args, grid, buffers, expected (None: no expected files), function,
#           ttir (file, default <name>.ttir))}; the first spec's arguments drive the compile;
#   ops: strings each compiled TTIR must contain.


def cdiv(a, b):
    return (a + b - 1) // b


def k_argmax():
    rng = np.random.default_rng(2001)
    rows, cols = 11, 100
    x = rng.integers(-6, 7, (rows, cols)).astype(F32)  # 13 distinct values: many tied maxima per row
    x[2, :] = 3.0                     # all equal: argmax 0
    x[3, :] = -2.0
    x[3, 99] = 9.0                    # single max in the last valid column
    x[4, :] = -1.0
    x[4, [40, 98, 99]] = 8.0          # three-way tie, the first wins
    x[5, :] = -np.inf                 # all -inf, like the masked lanes: max -inf, argmax 0 (ties with
    #                                   masked columns 100..127 too, whose indices are larger)
    x[6, :50] = -np.inf
    x[6, 77] = -100.0                 # max among many -inf, after them
    bufs = {"x": Buf("f32", "npy", data=x), "idx": Buf("i32", {"fill": -1}, [rows]),
            "mx": Buf("f32", "zeros", [rows])}
    # numpy.argmax returns the first index of the maximum: Triton's tie_break_left=True rule
    exp = {"x": x, "idx": x.argmax(axis=1).astype(np.int32), "mx": x.max(axis=1).astype(F32)}
    return dict(kernel="argmax_kernel", constexprs={"BLOCK_R": 2, "BLOCK_C": 128},
                ops=['"tt.reduce"', "arith.maxnumf", "arith.cmpf oeq"],
                specs={"spec": dict(args=["x", "idx", "mx", I32(rows), I32(cols), I32(cols)],
                                    grid=[cdiv(rows, 2)], buffers=bufs, expected=exp)})


def k_cumsum():
    rng = np.random.default_rng(2002)
    rows, cols = 6, 50
    x = rng.integers(-100, 100, (rows, cols)).astype(np.int32)
    bufs = {"x": Buf("i32", "npy", data=x), "fwd": Buf("i32", "zeros", [rows, cols]),
            "rev": Buf("i32", "zeros", [rows, cols])}
    exp = {"x": x, "fwd": np.cumsum(x, axis=1, dtype=np.int64).astype(np.int32),
           "rev": np.cumsum(x[:, ::-1], axis=1, dtype=np.int64)[:, ::-1].astype(np.int32)}
    return dict(kernel="cumsum_kernel", constexprs={"BLOCK": 64},
                ops=['"tt.scan"', "reverse = false", "reverse = true", "tt.scan.return"],
                specs={"spec": dict(args=["x", "fwd", "rev", I32(cols)], grid=[rows], buffers=bufs,
                                    expected=exp)})


def k_atomics():
    rng = np.random.default_rng(2003)
    n, nb, B = 1000, 8, 64
    keys = rng.integers(0, nb, n).astype(np.int32)
    ivals = rng.integers(-1000, 1000, n).astype(np.int32)
    fvals = (rng.integers(-255, 256, n) * 0.25).astype(F32)  # |v| < 64, multiples of 1/4: exact sums
    xbuf = rng.integers(-50, 50, B).astype(np.int32)
    i32min, i32max = -2**31, 2**31 - 1
    bufs = {"keys": Buf("i32", "npy", data=keys), "ivals": Buf("i32", "npy", data=ivals),
            "fvals": Buf("f32", "npy", data=fvals), "cnt": Buf("i32", "zeros", [nb]),
            "isum": Buf("i32", "zeros", [nb]), "fsum": Buf("f32", "zeros", [nb]),
            "bmax": Buf("i32", {"fill": i32min}, [nb]), "bmin": Buf("i32", {"fill": i32max}, [nb]),
            "acc": Buf("i32", "arange", [B]), "old": Buf("i32", "zeros", [2, B]),
            "xbuf": Buf("i32", "npy", data=xbuf), "xold": Buf("i32", "zeros", [B]),
            "ctr": Buf("i32", {"fill": 40}, [1]), "tries": Buf("i32", "zeros", [1])}
    j = np.arange(B)
    exp = {"keys": keys, "ivals": ivals, "fvals": fvals,
           "cnt": np.bincount(keys, minlength=nb).astype(np.int32),
           "isum": np.bincount(keys, weights=ivals, minlength=nb).astype(np.int32),
           "fsum": np.bincount(keys, weights=fvals.astype(np.float64), minlength=nb).astype(F32),
           "bmax": np.array([ivals[keys == k].max() for k in range(nb)], np.int32),
           "bmin": np.array([ivals[keys == k].min() for k in range(nb)], np.int32),
           "acc": (j + 10 * j + 1).astype(np.int32),
           "old": np.stack([j, j + 10 * j]).astype(np.int32),
           "xbuf": (-j).astype(np.int32), "xold": xbuf,
           "ctr": np.array([45], np.int32), "tries": np.array([6], np.int32)}
    assert all((keys == k).any() for k in range(nb))
    args = ["keys", "ivals", "fvals", "cnt", "isum", "fsum", "bmax", "bmin", "acc", "old", "xbuf", "xold",
            "ctr", "tries", I32(n)]
    return dict(kernel="atomics_kernel", constexprs={"BLOCK": B},
                ops=["tt.atomic_rmw add", "tt.atomic_rmw fadd", "tt.atomic_rmw max", "tt.atomic_rmw min",
                     "tt.atomic_rmw exch", "tt.atomic_cas", "scf.while", "scf.if"],
                specs={"spec": dict(args=args, grid=[cdiv(n, B)], buffers=bufs, expected=exp)})


# --- fp8 ------------------------------------------------------------------------------------
# Encoding assumed (what the sm_90 lowering of tt.fp_to_fp f32 -> fp8 does: one
# cvt.rn.satfinite.{e4m3,e5m2}x2.f32 per pair, checked on the PTX below; CUDA's cuda_fp8.hpp host
# emulation of __NV_SATFINITE describes the same rules):
#   * round to nearest, ties to even, directly from float32 (no intermediate f16), subnormals kept;
#   * |rounded value| > largest finite, and +-inf, saturate to +-largest finite (448 for E4M3FN,
#     57344 for E5M2; so E5M2 never produces inf from f32);
#   * NaN -> NaN: 0x7F for a positive quiet NaN (E4M3FN has only S.1111.111; for E5M2 the
#     emulation gives 0x7E for f32 qNaN and 0x7F for the canonical NaN: compare NaN lanes by class);
#   * signs are kept, zeros and underflows included (-0 and -1e-10 -> 0x80).
# fp8 -> f32 is exact (E5M2 inf -> inf).
FP8 = {"e4m3fn": dict(ebits=4, mbits=3, bias=7, maxfinite=448.0, nan=0x7F),
       "e5m2": dict(ebits=5, mbits=2, bias=15, maxfinite=57344.0, nan=0x7F)}


def fp8_encode(x, fmt):
    """float32 array -> uint8 codes, round to nearest even with saturation (see above)."""
    f = FP8[fmt]
    mb, emin = f["mbits"], 1 - f["bias"]
    out = np.zeros(x.shape, np.uint8)
    for i, v in enumerate(np.asarray(x, np.float64).ravel()):
        sign = 0x80 if np.signbit(v) else 0
        if np.isnan(v):
            out.flat[i] = f["nan"]
            continue
        a = abs(v)
        if np.isinf(a):
            r = f["maxfinite"]
        else:
            e = max(np.frexp(a)[1] - 1, emin) if a > 0 else emin  # exponent of a's quantum
            q = 2.0**(e - mb)
            r = float(np.rint(a / q)) * q  # exact division by a power of two; np.rint: ties to even
            r = min(r, f["maxfinite"])    # satfinite
        if r == 0:
            code = 0
        else:
            e = np.frexp(r)[1] - 1
            if e < emin:  # subnormal
                code = int(r / 2.0**(emin - mb))
            else:
                code = ((e + f["bias"]) << mb) | (int(r / 2.0**(e - mb)) - (1 << mb))
        out.flat[i] = code | sign
    return out


def fp8_decode(codes, fmt):
    f = FP8[fmt]
    mb, bias = f["mbits"], f["bias"]
    out = np.zeros(codes.shape, np.float64)
    for i, c in enumerate(np.asarray(codes, np.uint8).ravel()):
        s = -1.0 if c & 0x80 else 1.0
        c = int(c)
        e, m = (c >> mb) & ((1 << f["ebits"]) - 1), c & ((1 << mb) - 1)
        if fmt == "e4m3fn" and e == 15 and m == 7:
            v = np.nan
        elif fmt == "e5m2" and e == 31:
            v = np.inf if m == 0 else np.nan
        elif e == 0:
            v = m * 2.0**(1 - bias - mb)
        else:
            v = (1 + m / 2.0**mb) * 2.0**(e - bias)
        out.flat[i] = s * v
    return out.astype(F32)


def k_fp8_convert():
    def nxt(v, d):
        return float(np.nextafter(F32(v), F32(d)))

    vals = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 0.1, -0.3, 3.14159, 100.0, -200.0,
            # E4M3 ties (quantum 1/8 at [1, 2)): 1.0625 -> 1.0, 1.1875 -> 1.25, 1.3125 -> 1.25, and
            # the values just past the ties
            1.0625, 1.1875, 1.3125, -1.0625, nxt(1.0625, 2), nxt(1.0625, 0), nxt(1.1875, 0),
            # E5M2 ties (quantum 1/4 at [1, 2)): 1.125 -> 1.0, 1.375 -> 1.5, 1.625 -> 1.5, 1.875 -> 2;
            # 1.125 + 2^-20 rounds up (via f16 it would tie and round down)
            1.125, 1.375, 1.625, 1.875, -1.375, 1.125 + 2.0**-20, 1.375 - 2.0**-20,
            # top of E4M3FN: 448 max, 464 tie (-> 448 even), beyond -> saturate to 448
            240.0, 416.0, 432.0, 440.0, 447.0, 448.0, 449.0, 460.0, 464.0, 465.0, 480.0, 500.0, 1000.0,
            -448.0, -464.0, -1e6, 1e30,
            # top of E5M2: 57344 max, 61440 tie (-> 65536 -> saturate), beyond -> saturate to 57344
            40960.0, 49152.0, 53248.0, 57344.0, 57345.0, 59392.0, 61439.0, 61440.0, 65536.0, 1e5,
            -57344.0, -70000.0, 3.0e38,
            # E4M3FN subnormals: min 2^-9, min normal 2^-6; ties at odd multiples of 2^-10
            2.0**-6, 2.0**-7, 2.0**-8, 2.0**-9, 3 * 2.0**-9, 5 * 2.0**-9, 7 * 2.0**-9,
            2.0**-10, 3 * 2.0**-10, 5 * 2.0**-10, 7 * 2.0**-10, 15 * 2.0**-10, nxt(2.0**-10, 1),
            nxt(2.0**-10, 0), 2.0**-11, -2.0**-9, -3 * 2.0**-10,
            # E5M2 subnormals: min 2^-16, min normal 2^-14; ties at odd multiples of 2^-17
            2.0**-14, 2.0**-15, 2.0**-16, 3 * 2.0**-16, 2.0**-17, 3 * 2.0**-17, 5 * 2.0**-17,
            7 * 2.0**-17, nxt(2.0**-17, 1), nxt(2.0**-17, 0), 2.0**-18, -3 * 2.0**-17,
            # far underflow (signed zero results), float32 subnormals
            1e-10, -1e-10, 1e-40, -1e-45,
            # infinities and NaN
            np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(2004)
    n = 120
    rest = n - len(vals)
    assert rest > 0
    # the rest: random magnitudes over both formats' ranges, both signs
    vals += list((rng.choice([-1.0, 1.0], rest) * 2.0**rng.uniform(-18, 17, rest)).astype(F32))
    x = np.array(vals, F32)
    assert len(x) == n
    e4, e5 = fp8_encode(x, "e4m3fn"), fp8_encode(x, "e5m2")
    bufs = {"x": Buf("f32", "npy", data=x), "e4_bits": Buf("i8", "zeros", [n]), "e5_bits": Buf("i8", "zeros", [n]),
            "e4_back": Buf("f32", "zeros", [n]), "e5_back": Buf("f32", "zeros", [n])}
    exp = {"x": x, "e4_bits": e4.view(np.int8), "e5_bits": e5.view(np.int8),
           "e4_back": fp8_decode(e4, "e4m3fn"), "e5_back": fp8_decode(e5, "e5m2")}
    # spot checks of the encoder against hand-computed codes
    want = {1.0625: (0x38, 0x3C), 1.1875: (0x3A, 0x3D), 1.125 + 2.0**-20: (0x39, 0x3D), 464.0: (0x7E, 0x5F),
            465.0: (0x7E, 0x5F), 61440.0: (0x7E, 0x7B), 2.0**-10: (0x00, 0x14), 3 * 2.0**-10: (0x02, 0x1A),
            2.0**-17: (0x00, 0x00), 3 * 2.0**-17: (0x00, 0x02), np.inf: (0x7E, 0x7B), -1e-10: (0x80, 0x80)}
    for v, (c4, c5) in want.items():
        i = int(np.flatnonzero(x == F32(v))[0])
        assert (e4[i], e5[i]) == (c4, c5), (v, hex(e4[i]), hex(e5[i]))
    return dict(kernel="fp8_convert_kernel", constexprs={"BLOCK": 64},
                ops=["tt.fp_to_fp %x", "rounding = rtne", "-> tensor<64xf8E4M3FN>", "-> tensor<64xf8E5M2>",
                     "tt.bitcast", "tensor<64xf8E4M3FN> -> tensor<64xf32>", "tensor<64xf8E5M2> -> tensor<64xf32>"],
                ptx=["cvt.rn.satfinite.e4m3x2.f32", "cvt.rn.satfinite.e5m2x2.f32"],
                specs={"spec": dict(args=["x", "e4_bits", "e5_bits", "e4_back", "e5_back", I32(n)],
                                    grid=[cdiv(n, 64)], buffers=bufs, expected=exp)})


# --- dot precisions -----------------------------------------------------------------------------


def tf32_rna(x):
    """cvt.rna.tf32.f32: round to 10 mantissa bits, to nearest, ties away from zero (finite inputs)."""
    u = np.ascontiguousarray(x, F32).view(np.uint32).astype(np.uint64)
    u = (u + 0x1000) & 0xFFFFE000
    return u.astype(np.uint32).view(F32)


def bf16_rne(x):
    """f32 -> bf16, round to nearest even (overflow to inf, NaN kept), returned as f32."""
    x = np.ascontiguousarray(x, F32)
    u = x.view(np.uint32).astype(np.uint64)
    r = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(F32)
    return np.where(np.isnan(x), x, r)


def split_bf16(x, n):
    """BF16DotTC's split: hi = bf16(x), then bf16 of what is left after each f32 subtraction."""
    parts = []
    with np.errstate(invalid="ignore"):
        for _ in range(n):
            p = bf16_rne(x)
            parts.append(p)
            x = (x - p).astype(F32)
    return parts


def exact_dot(a, b):
    """a @ b with float64 products and sums (exact for the operands here), IEEE inf/NaN rules."""
    with np.errstate(invalid="ignore"):
        return (a.astype(np.float64)[:, :, None] * b.astype(np.float64)[None, :, :]).sum(axis=1)


def multi_pass(pa, pb, cross, c):
    """Triton 3.8's multi-pass f32 dot (F32DotTC, BF16DotTC): the cross terms from zero, NaNs of that
    partial sum replaced by 0, then hi*hi, then + c; here with one rounding at the end."""
    small = sum(exact_dot(pa[i], pb[j]) for i, j in cross)
    small[np.isnan(small)] = 0
    with np.errstate(invalid="ignore"):
        return (small + exact_dot(pa[0], pb[0]) + c).astype(F32)


BF16X3_TERMS = [(1, 0), (0, 1)]                          # mid*hi, hi*mid (then hi*hi)
BF16X6_TERMS = [(1, 1), (2, 0), (0, 2), (1, 0), (0, 1)]  # mid*mid, lo*hi, hi*lo, mid*hi, hi*mid


def k_dot_precision():
    rng = np.random.default_rng(2005)
    # full 24-bit mantissas: tf32 keeps 11 of them, so tf32 and ieee differ by ~1e-3 relative
    a = (rng.standard_normal((32, 32)) * 1.7).astype(F32)
    b = (rng.standard_normal((32, 32)) * 0.9).astype(F32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    c_ieee = (a64 @ b64).astype(F32)
    # tf32: the f32 registers go straight into mma ... .tf32 (asserted on the PTX below), which reads
    # the top 19 bits: truncation, as gen_fixtures.round_to_tf32 documents for matmul_tf32
    ta, tb = gf.round_to_tf32(a).astype(np.float64), gf.round_to_tf32(b).astype(np.float64)
    c_tf32 = (ta @ tb).astype(F32)
    # tf32x3 (TritonGPU F32DotTC pass): big = cvt.rna.tf32(x), small = x - big (exact in f32);
    # c = dot(big_a, big_b) + [dot(small_a, big_b) + dot(big_a, small_b)], each dot in tf32 (the
    # small parts are truncated by the tensor core); exact products, one rounding
    ba, bb = tf32_rna(a), tf32_rna(b)
    sa, sb = gf.round_to_tf32(a - ba), gf.round_to_tf32(b - bb)
    ba, bb, sa, sb = (t.astype(np.float64) for t in (ba, bb, sa, sb))
    c_x3 = (ba @ bb + sa @ bb + ba @ sb).astype(F32)
    d_tf32 = np.abs(c_tf32.astype(np.float64) - c_ieee).max()
    d_x3 = np.abs(c_x3.astype(np.float64) - c_ieee).max()
    assert d_tf32 > 1e-3 and d_x3 < 1e-5, (d_tf32, d_x3)
    # bf16x3/bf16x6 (TritonGPU BF16DotTC pass, as the 3.8 TTGIR shows): split each operand into bf16
    # parts, dot the cross terms from zero, NaNs -> 0, add hi*hi, then c. These specs (and
    # spec_tf32x3_inf) use a_inf = a with a[0, 0] = +inf: its residual parts are inf - inf = NaN, so
    # row 0's cross terms are NaN, cleaned to 0, and hi*hi makes row 0 +-inf by the sign of b[0, :]
    # (a dot that kept the NaN would give NaN).
    a_inf = a.copy()
    a_inf[0, 0] = np.inf
    assert (b[0] != 0).all()
    c_bf16x3 = multi_pass(split_bf16(a_inf, 2), split_bf16(b, 2), BF16X3_TERMS, 0.0)
    c_bf16x6 = multi_pass(split_bf16(a_inf, 3), split_bf16(b, 3), BF16X6_TERMS, 0.0)
    with np.errstate(invalid="ignore"):
        tba = tf32_rna(a_inf)
        x3 = [tba, gf.round_to_tf32(a_inf - tba)], [tf32_rna(b), gf.round_to_tf32(b - tf32_rna(b))]
    c_x3_inf = multi_pass(*x3, BF16X3_TERMS, 0.0)
    for c in (c_bf16x3, c_bf16x6, c_x3_inf):
        assert (c[0] == np.where(b[0] > 0, np.inf, -np.inf)).all() and np.isfinite(c[1:]).all()
    # bf16x3 drops the mid*mid and lo terms (about 2^-16 relative): visibly off ieee; bf16x6 is not
    d_b3 = np.abs(c_bf16x3[1:].astype(np.float64) - c_ieee[1:]).max()
    d_b6 = np.abs(c_bf16x6[1:].astype(np.float64) - c_ieee[1:]).max()
    assert d_b3 > 5e-5 and d_b6 < 1e-5, (d_b3, d_b6)

    def spec(c, fn, stem, a=a, a_name=None):
        bufs = {"a": Buf("f32", "npy", data=a), "b": Buf("f32", "npy", data=b), "c": Buf("f32", "zeros", [32, 32])}
        return dict(args=["a", "b", "c"], grid=[1], buffers=bufs, expected={"a": a, "b": b, "c": c},
                    function=fn, ttir=f"{stem}.ttir", npy_names={"a": a_name} if a_name else {})

    return dict(constexprs={},
                compiles=[("dot_ieee", "dot_ieee_kernel"), ("dot_tf32", "dot_tf32_kernel"),
                          ("dot_tf32x3", "dot_tf32x3_kernel"), ("dot_bf16x3", "dot_bf16x3_kernel"),
                          ("dot_bf16x6", "dot_bf16x6_kernel")],
                ops={"dot_ieee": ["tt.dot %a"], "dot_tf32": ["inputPrecision = tf32 :"],
                     "dot_tf32x3": ["inputPrecision = tf32x3"], "dot_bf16x3": ["inputPrecision = bf16x3"],
                     "dot_bf16x6": ["inputPrecision = bf16x6"]},
                ptx={"dot_tf32": ["mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"],
                     "dot_tf32x3": ["cvt.rna.tf32.f32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"],
                     "dot_bf16x3": ["cvt.rn.bf16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"],
                     "dot_bf16x6": ["cvt.rn.bf16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"]},
                no_ptx={"dot_tf32": ["cvt.rna.tf32.f32"], "dot_ieee": ["mma"]},
                specs={"spec": spec(c_ieee, "dot_ieee_kernel", "dot_ieee"),
                       "spec_tf32": spec(c_tf32, "dot_tf32_kernel", "dot_tf32"),
                       "spec_tf32x3": spec(c_x3, "dot_tf32x3_kernel", "dot_tf32x3"),
                       "spec_tf32x3_inf": spec(c_x3_inf, "dot_tf32x3_kernel", "dot_tf32x3", a_inf, "a_inf"),
                       "spec_bf16x3": spec(c_bf16x3, "dot_bf16x3_kernel", "dot_bf16x3", a_inf, "a_inf"),
                       "spec_bf16x6": spec(c_bf16x6, "dot_bf16x6_kernel", "dot_bf16x6", a_inf, "a_inf")})


# --- dot_scaled ------------------------------------------------------------------------------
# Semantics assumed (Triton 3.8 for sm_90: DecomposeScaledBlocked, as the TTGIR shows; the docs and
# interpreter of tl.dot_scaled for the layouts): e2m1 values are 2 per byte, the first in the low nibble,
# consecutive along K (k_pack) or along M / N; each value is upcast to bf16 and multiplied in bf16 by
# 2^(s-127) for its e8m0 scale byte s (one per 32 elements along K; lhs scales M x K/32, rhs N x K/32);
# s = 0xFF makes the value NaN unless fast_math, where the scale is +inf; then a bf16 dot accumulating
# into acc in f32. The inputs keep every scaled value exact in bf16 (asserted) and every product a
# multiple of a quantum Q with sum(|products|) + |acc| < 2^24 Q, so any f32 summation order is exact:
# the expectations are exact whatever order the GPU or the interpreter adds in.
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1_decode(codes):
    return np.where(codes & 8, -1.0, 1.0) * E2M1[codes & 7]


def e2m1_pack(codes, axis):
    """Two 4-bit codes per byte along `axis`, the even index in the low nibble."""
    lo, hi = np.take(codes, range(0, codes.shape[axis], 2), axis), np.take(codes, range(1, codes.shape[axis], 2), axis)
    return (lo | (hi << 4)).astype(np.uint8).view(np.int8)


def mx_scaled(values, scales, fast_math, k_axis):
    """values (K along k_axis) times 2^(s-127) of scales [M or N, K/32]; 0xFF: NaN, or inf with fast_math."""
    s = np.repeat(scales.astype(np.int64), 32, axis=1)
    if k_axis == 0:
        s = s.T
    with np.errstate(invalid="ignore"):
        out = values * np.where(s == 255, np.inf, 2.0**(s - 127))
    if not fast_math:
        out[s == 255] = np.nan
    finite = np.isfinite(out)
    assert (bf16_rne(out[finite].astype(F32)) == out[finite]).all(), "a scaled value is not exact in bf16"
    return out


def check_order_free(a, b, acc, q):
    """Every product a[m,k] b[k,n] a multiple of q and each output's sum(|terms|) below 2^24 q."""
    with np.errstate(invalid="ignore"):
        p = a[:, :, None] * b[None, :, :]
    fin = np.isfinite(p)
    assert (np.mod(p[fin] / q, 1) == 0).all() and (np.mod(acc / q, 1) == 0).all()
    total = np.where(fin, np.abs(p), 0).sum(axis=1) + np.abs(acc)
    assert (total < 2.0**24 * q).all(), total.max()


def fp8_codes(rng, shape, ebits_range, mbits):
    """Random fp8 codes with exponent fields in ebits_range (no zeros, subnormals or specials), both signs."""
    e = rng.integers(ebits_range[0], ebits_range[1] + 1, shape)
    m = rng.integers(0, 1 << mbits, shape)
    return ((rng.integers(0, 2, shape) << 7) | (e << mbits) | m).astype(np.uint8)


def k_dot_scaled():
    rng = np.random.default_rng(2011)
    M = N = 32
    K = 64
    # mxfp4_e4m3: e2m1 (every code, -0 included) x e4m3 (exponents 2^-1..2^2), scales 2^-2..2^2,
    # accumulator multiples of 1/4; sa[5, 1] = 0xFF (row 5 NaN), sb[7, 0] = 0xFF (column 7 NaN), and the
    # e4m3 NaN code at b[10, 20] (column 20 NaN).
    a_codes = rng.integers(0, 16, (M, K))
    sa = (127 + rng.integers(-2, 3, (M, K // 32))).astype(np.uint8)
    b_codes = fp8_codes(rng, (K, N), (6, 9), 3)
    b_codes[10, 20] = 0x7F
    sb = (127 + rng.integers(-2, 3, (N, K // 32))).astype(np.uint8)
    acc = (rng.integers(-64, 65, (M, N)) * 0.25).astype(F32)
    av, bv = e2m1_decode(a_codes), fp8_decode(b_codes, "e4m3fn").astype(np.float64)
    check_order_free(mx_scaled(av, sa, False, 1), mx_scaled(bv, sb, False, 0), acc, 2.0**-9)
    sa[5, 1] = 0xFF
    sb[7, 0] = 0xFF
    c1 = (exact_dot(mx_scaled(av, sa, False, 1), mx_scaled(bv, sb, False, 0)) + acc).astype(F32)
    assert np.isnan(c1[5]).all() and np.isnan(c1[:, 7]).all() and np.isnan(c1[:, 20]).all()
    assert np.isfinite(np.delete(np.delete(c1, [5], 0), [7, 20], 1)).all()
    a_bytes = e2m1_pack(a_codes, 1)
    bufs1 = {"a": Buf("i8", "npy", data=a_bytes), "sa": Buf("i8", "npy", data=sa.view(np.int8)),
             "b": Buf("i8", "npy", data=b_codes.view(np.int8)), "sb": Buf("i8", "npy", data=sb.view(np.int8)),
             "acc": Buf("f32", "npy", data=acc), "c": Buf("f32", "zeros", [M, N])}
    # bf16_e5m2 (fast_math): a = k/8 (|a| <= 4) as bf16 bits, no lhs scale; b e5m2 (exponents
    # 2^-2..2^2), scales 2^-2..2^2; b[3, 9] = +inf (column 9: +-inf, NaN where a[m, 3] = 0);
    # sb[30, 1] = 0xFF is +inf under fast_math: column 30 is NaN where the signs of a[m, k] b[k, 30]
    # (k >= 32) mix, and exactly +inf in row 0, where they are all positive (without fast_math: NaN).
    a2 = (rng.integers(-32, 33, (M, K)) / 8.0).astype(F32)
    a2[4:, 3] = np.where(a2[4:, 3] == 0, 0.5, a2[4:, 3])
    a2[0:4, 3] = 0.0
    a2[0, 32:] = np.abs(a2[0, 32:]) + 0.125
    b2_codes = fp8_codes(rng, (K, N), (13, 17), 2)
    b2_codes[3, 9] = 0x7C
    b2_codes[32:, 30] &= 0x7F
    sb2 = (127 + rng.integers(-2, 3, (N, K // 32))).astype(np.uint8)
    b2v = fp8_decode(b2_codes, "e5m2").astype(np.float64)
    b2_fin = np.where(np.isinf(b2v), 0.0, b2v)
    check_order_free(a2.astype(np.float64), mx_scaled(b2_fin, sb2, True, 0), np.zeros((M, N)), 2.0**-9)
    sb2[30, 1] = 0xFF
    c2 = exact_dot(a2, mx_scaled(b2v, sb2, True, 0)).astype(F32)
    assert c2[0, 30] == np.inf and np.isnan(c2[:4, 9]).all() and np.isinf(c2[4:, 9]).all()
    assert np.isnan(c2[1:, 30]).any()
    a2_bits = a2.view(np.uint32) >> 16
    assert (a2_bits << 16).view(F32).tolist() == a2.tolist()  # exact in bf16
    bufs2 = {"a": Buf("i16", "npy", data=a2_bits.astype(np.uint16).view(np.int16)),
             "b": Buf("i8", "npy", data=b2_codes.view(np.int8)), "sb": Buf("i8", "npy", data=sb2.view(np.int8)),
             "c": Buf("f32", "zeros", [M, N])}
    # mxfp4_mn_packed: e2m1 x e2m1 with a's pairs along M and b's along N, scales 2^-2..2^2
    a3_codes, b3_codes = rng.integers(0, 16, (M, K)), rng.integers(0, 16, (K, N))
    sa3 = (127 + rng.integers(-2, 3, (M, K // 32))).astype(np.uint8)
    sb3 = (127 + rng.integers(-2, 3, (N, K // 32))).astype(np.uint8)
    a3s, b3s = mx_scaled(e2m1_decode(a3_codes), sa3, False, 1), mx_scaled(e2m1_decode(b3_codes), sb3, False, 0)
    check_order_free(a3s, b3s, np.zeros((M, N)), 2.0**-6)
    c3 = exact_dot(a3s, b3s).astype(F32)
    bufs3 = {"a": Buf("i8", "npy", data=e2m1_pack(a3_codes, 0)), "sa": Buf("i8", "npy", data=sa3.view(np.int8)),
             "b": Buf("i8", "npy", data=e2m1_pack(b3_codes, 1)), "sb": Buf("i8", "npy", data=sb3.view(np.int8)),
             "c": Buf("f32", "zeros", [M, N])}

    def spec(fn, stem, bufs, c):
        exp = {n: bf.data for n, bf in bufs.items() if n != "c"}
        exp["c"] = c
        return dict(args=list(bufs), grid=[1], buffers=bufs, expected=exp, function=fn, ttir=f"{stem}.ttir",
                    npy_names={n: f"{stem}_{n}" for n in bufs})

    scaled = "tt.dot_scaled"
    return dict(constexprs={},
                compiles=[("mxfp4_e4m3", "mxfp4_e4m3_kernel"), ("bf16_e5m2", "bf16_e5m2_kernel"),
                          ("mxfp4_mn_packed", "mxfp4_mn_packed_kernel")],
                ops={"mxfp4_e4m3": [scaled, "lhs = e2m1 rhs = e4m3 {fastMath = false}",
                                    "tensor<32x32xi8>, tensor<32x2xi8> * tensor<64x32xf8E4M3FN>, tensor<32x2xi8>"],
                     "bf16_e5m2": [scaled, "lhs = bf16 rhs = e5m2 {fastMath = true}",
                                   ": tensor<32x64xbf16> * tensor<64x32xf8E5M2>, tensor<32x2xi8>"],
                     "mxfp4_mn_packed": [scaled, "{fastMath = false, lhs_k_pack = false, rhs_k_pack = false}",
                                         "tensor<16x64xi8>, tensor<32x2xi8> * tensor<64x16xi8>, tensor<32x2xi8>"]},
                ptx={"mxfp4_e4m3": ["mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"]},
                specs={"spec": spec("mxfp4_e4m3_kernel", "mxfp4_e4m3", bufs1, c1),
                       "spec_bf16_e5m2": spec("bf16_e5m2_kernel", "bf16_e5m2", bufs2, c2),
                       "spec_mn_packed": spec("mxfp4_mn_packed_kernel", "mxfp4_mn_packed", bufs3, c3)})


def k_block_ptr():
    M, N, LD, ROWS, BM, BN = 37, 50, 60, 39, 16, 32
    rng = np.random.default_rng(2006)
    x = np.full((ROWS, LD), 1000.0, F32)  # sentinels outside the M x N window
    x[:M, :N] = rng.integers(-64, 64, (M, N)) * 0.5  # exact sums
    y0 = np.full((ROWS, LD), -7.0, F32)
    s0 = np.full([ROWS], -7.0, F32)
    y = y0.copy()
    y[:M, :N] = x[:M, :N].astype(np.float64) * 2 + 1
    s = s0.copy()
    s[:M] = x[:M, :N].astype(np.float64).sum(axis=1)

    def spec(ttir):
        bufs = {"x": Buf("f32", "npy", data=x), "y": Buf("f32", {"fill": -7.0}, [ROWS, LD]),
                "s": Buf("f32", {"fill": -7.0}, [ROWS])}
        return dict(args=["x", "y", "s", I32(M), I32(N), I32(LD)], grid=[cdiv(M, BM)], buffers=bufs,
                    expected={"x": x, "y": y, "s": s}, ttir=ttir)

    return dict(kernel="block_ptr_kernel", constexprs={"BM": BM, "BN": BN}, triton=BLOCK_PTR_TRITON,
                # the front-end IR (Triton's cache file {name}.source) keeps the block pointers ...
                source_ops=["tt.make_tensor_ptr", "tt.advance", "boundaryCheck = array<i32: 0, 1>",
                            "padding = 1 : i32", "boundaryCheck = array<i32: 0>", "!tt.ptr<tensor<16x32xf32>>"],
                # ... the cached .ttir has them rewritten into tensors of pointers and masks
                ops=["tt.load", "tt.store", "scf.for"], no_ops=["tt.make_tensor_ptr", "tt.advance"],
                specs={"spec": spec("block_ptr.source.ttir"), "spec_rewritten": spec("block_ptr.ttir")})


def k_libdevice():
    rng = np.random.default_rng(2007)
    n = 300
    x = rng.uniform(0.05, 3.0, n).astype(F32)
    y = rng.uniform(-2.0, 2.0, n).astype(F32)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    import math
    erf = np.vectorize(math.erf)
    y3 = (y * F32(3)).astype(np.float64)  # y * 3 is an f32 multiply in the kernel
    out = np.stack([np.exp(y64), np.log1p(x64), erf(y64), np.tanh(y64), np.power(x64, y64),
                    np.arctan2(y64, x64), 1 / np.sqrt(x64), np.floor(y3)]).astype(F32)
    bufs = {"x": Buf("f32", "npy", data=x), "y": Buf("f32", "npy", data=y), "out": Buf("f32", "zeros", [8, n])}
    syms = ["__nv_expf", "__nv_log1pf", "__nv_erff", "__nv_tanhf", "__nv_powf", "__nv_atan2f", "__nv_rsqrtf",
            "__nv_floorf"]
    return dict(kernel="libdevice_kernel", constexprs={"BLOCK": 128},
                ops=["tt.extern_elementwise"] + [f'symbol = "{s}"' for s in syms],
                specs={"spec": dict(args=["x", "y", "out", I32(n)], grid=[cdiv(n, 128)], buffers=bufs,
                                    expected={"x": x, "y": y, "out": out})})


def collatz_steps(v):
    s = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        s += 1
        assert v < 2**31
    return s


def k_while_loop():
    x = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 27, 31, 97, 129, 255, 703, 871, 1024, 6171, 9999, 10971,
                  77031, 230631, 142587], np.int32)
    bufs = {"x": Buf("i32", "npy", data=x), "steps": Buf("i32", {"fill": -1}, [len(x)])}
    exp = {"x": x, "steps": np.array([collatz_steps(int(v)) for v in x], np.int32)}
    return dict(kernel="collatz_kernel", constexprs={}, ops=["scf.while", "scf.condition", "scf.if"],
                specs={"spec": dict(args=["x", "steps"], grid=[len(x)], buffers=bufs, expected=exp)})


DEVICE_ASSERT_FAIL_INDEX = 77


def k_device_assert():
    rng = np.random.default_rng(2008)
    n = 200
    x = rng.uniform(0.0, 10.0, n).astype(F32)
    x[5] = 0.0
    bad = x.copy()
    bad[DEVICE_ASSERT_FAIL_INDEX] = -1.5
    exp = {"x": x, "y": (x.astype(np.float64) * 2).astype(F32)}
    return dict(kernel="device_assert_kernel", constexprs={"BLOCK": 64}, debug=True,
                ops=['tt.assert', '"x must be non-negative"'],
                specs={"spec": dict(args=["x", "y", I32(n)], grid=[cdiv(n, 64)],
                                    buffers={"x": Buf("f32", "npy", data=x), "y": Buf("f32", "zeros", [n])},
                                    expected=exp),
                       # fails in program 1 (77 // 64), lane 13: no expected files (exit code 1, kind assert)
                       "spec_fail": dict(args=["x", "y", I32(n)], grid=[cdiv(n, 64)],
                                         buffers={"x": Buf("f32", "npy", data=bad), "y": Buf("f32", "zeros", [n])},
                                         npy_names={"x": "x_fail"}, expected=None)})


def k_shift_copy():
    rng = np.random.default_rng(2009)
    n, B = 256, 64
    src = rng.integers(-1000, 1000, n).astype(F32)
    # spec.json: distinct buffers; out is a view one element into `o` (so not 16-byte aligned, like
    # the other specs): o[0] stays 0, o[1:] = inp + 1
    o = np.zeros(n + 1, F32)
    o[1:] = src + 1
    plain = dict(args=["inp", View("o", 1, [n], [1]), I32(n), I32(1)], grid=[cdiv(n, B)],
                 buffers={"inp": Buf("f32", "npy", data=src), "o": Buf("f32", "zeros", [n + 1])},
                 expected={"inp": src, "o": o})
    # spec_shifted.json: in = buf[0:n], out = buf[1:n+1]: program p reads buf[64p .. 64p+63] and
    # writes buf[64p+1 .. 64p+64]; program p+1 reads buf[64(p+1)], which program p writes: the
    # result depends on the order of programs (no expected files)
    buf = np.arange(n + 1).astype(F32)
    shifted = dict(args=[View("buf", 0, [n], [1]), View("buf", 1, [n], [1]), I32(n), I32(1)],
                   grid=[cdiv(n, B)], buffers={"buf": Buf("f32", "arange", [n + 1])}, expected=None)
    # spec_interleaved.json: in = buf[0::2], out = buf[1::2] (stride 2): disjoint, exact
    inter = np.arange(2 * n).astype(F32) * 3
    e = inter.copy()
    e[1::2] = inter[0::2] + 1
    interleaved = dict(args=[View("buf", 0, [n], [2]), View("buf", 1, [n], [2]), I32(n), I32(2)],
                       grid=[cdiv(n, B)], buffers={"buf": Buf("f32", "npy", data=inter)}, expected={"buf": e})
    assert buf[0] == 0
    return dict(kernel="shift_copy_kernel", constexprs={"BLOCK": B}, ops=["tt.load", "tt.store", "arith.muli"],
                specs={"spec": plain, "spec_shifted": shifted, "spec_interleaved": interleaved})


def k_pointer_table():
    rng = np.random.default_rng(2010)
    n = 50
    src = rng.integers(-100, 100, (2, n)).astype(F32)
    dst = np.zeros((2, n), F32)
    dst[0] = src[1] * 2
    dst[1] = src[0] * 2 + 1
    bufs = {"table": Buf("i64", "zeros", [4]), "src": Buf("f32", "npy", data=src), "dst": Buf("f32", "zeros", [2, n])}
    # no expected/table.npy: it ends up holding run-time addresses
    return dict(kernel="pointer_table_kernel", constexprs={"BLOCK": 64},
                ops=["tt.ptr_to_int", "tt.int_to_ptr", "!tt.ptr<i64>", "ttg.barrier all"],
                specs={"spec": dict(args=["table", "src", "dst", I32(n)], grid=[1], buffers=bufs,
                                    expected={"src": src, "dst": dst})})


def k_oob_store():
    n = 63
    bufs = {"x": Buf("f32", "arange", [n]), "out": Buf("f32", "zeros", [n])}
    return dict(kernel="oob_store_kernel", constexprs={"BLOCK": 64}, ops=["tt.store"],
                specs={"spec": dict(args=["x", "out", I32(n)], grid=[1], buffers=bufs, expected=None)})


def k_tensor_desc():
    # tma_matmul: integer-valued f16 in [-4, 4], so every product and partial sum is exact in f32
    # and any summation order gives numpy's integer result. M, N and K are not multiples of the
    # blocks (64 x 32 x 32): the last blocks hang over all three edges and must read zeros.
    M, N, K, BM, BN, BK = 70, 56, 104, 64, 32, 32
    rng = np.random.default_rng(2012)
    a = rng.integers(-4, 5, (M, K)).astype(np.float16)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    c = (a.astype(np.int64) @ b.astype(np.int64)).astype(F32)
    # spec_view: A is a window of a larger buffer, rows 8.. and columns 8.. of an 80 x 112 array
    # (row stride 112 elements = 224 bytes and a 16-byte-aligned start, as TMA needs).
    abig = rng.integers(-4, 5, (80, 112)).astype(np.float16)
    abig[8:8 + M, 8:8 + K] = a
    mm_args = lambda a_arg: [a_arg, Desc("b", [BK, BN]), Desc("c", [BM, BN]), I32(M), I32(N), I32(K)]
    mm_grid = [cdiv(M, BM) * cdiv(N, BN)]
    mm = dict(function="tma_matmul_kernel", grid=mm_grid,
              buffers={"a": Buf("f16", "npy", data=a), "b": Buf("f16", "npy", data=b),
                       "c": Buf("f32", {"fill": -1.0}, [M, N])},
              args=mm_args(Desc("a", [BM, BK])), expected={"a": a, "b": b, "c": c})
    mm_view = dict(function="tma_matmul_kernel", grid=mm_grid,
                   buffers={"abig": Buf("f16", "npy", data=abig), "b": Buf("f16", "npy", data=b),
                            "c": Buf("f32", {"fill": -1.0}, [M, N])},
                   args=mm_args(Desc("abig", [BM, BK], offset=8 * 112 + 8, shape=[M, K], strides=[112, 1])),
                   expected={"abig": abig, "b": b, "c": c})

    # desc_shift: 16 x 16 blocks read at (pid_m * 16 - 2, pid_n * 16 + 3) from a 40 x 50 array.
    R, C, B = 40, 50, 16
    gm, gn = cdiv(R + 2, B), cdiv(C - 3, B)
    x = rng.uniform(-1, 1, (R, C)).astype(F32)

    def shift(padding):
        pad = np.nan if padding == "nan" else 0.0
        out = np.full((gm * gn, B, B), pad, F32)
        shifted = np.zeros((R, C), F32)
        for pm in range(gm):
            for pn in range(gn):
                for i in range(B):
                    for j in range(B):
                        r, col = pm * B - 2 + i, pn * B + 3 + j
                        if 0 <= r < R and 0 <= col < C:
                            out[pm * gn + pn, i, j] = x[r, col]
                            shifted[r, col] = x[r, col] + np.float32(1.0)
        bufs = {"x": Buf("f32", "npy", data=x), "out": Buf("f32", {"fill": -7.0}, [gm * gn, B, B]),
                "shifted": Buf("f32", "zeros", [R, C])}
        return dict(function="desc_shift_kernel", grid=[gm, gn], buffers=bufs,
                    args=[Desc("x", [B, B], padding=padding), "out", Desc("shifted", [B, B])],
                    expected={"x": x, "out": out, "shifted": shifted})

    return dict(compiles=[("tma_matmul", "tma_matmul_kernel"), ("desc_shift", "desc_shift_kernel")],
                constexprs={"tma_matmul_kernel": {"BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK},
                            "desc_shift_kernel": {"BLOCK_M": B, "BLOCK_N": B}},
                ops={"tma_matmul": ["!tt.tensordesc<64x32xf16>", "tt.descriptor_load", "tt.descriptor_store",
                                    "tt.dot", "scf.for"],
                     "desc_shift": ["!tt.tensordesc<16x16xf32>", "tt.descriptor_load", "tt.descriptor_store"]},
                specs={"spec": mm, "spec_view": mm_view, "spec_shift": shift("zero"),
                       "spec_shift_nan": shift("nan")})


KERNEL_FNS = {
    "argmax": k_argmax,
    "cumsum": k_cumsum,
    "atomics": k_atomics,
    "fp8_convert": k_fp8_convert,
    "dot_precision": k_dot_precision,
    "dot_scaled": k_dot_scaled,
    "block_ptr": k_block_ptr,
    "libdevice": k_libdevice,
    "while_loop": k_while_loop,
    "device_assert": k_device_assert,
    "shift_copy": k_shift_copy,
    "pointer_table": k_pointer_table,
    "oob_store": k_oob_store,
    "tensor_desc": k_tensor_desc,
}

# ---------------------------------------------------------------------------------------------
# writing


def buffer_json(name, buf, folder, npy_name=None):
    if buf.init != "npy":
        return gf.buffer_json(name, buf, folder)
    rel = f"inputs/{npy_name or name}.npy"
    gf.write_npy(folder / rel, buf.data)
    return {"dtype": buf.dtype, "shape": buf.shape, "init": {"npy": rel}}


def write_spec(folder, stem, sp, kept, fn_name, ttir_file):
    spec = {"buffers": {n: buffer_json(n, b, folder, sp.get("npy_names", {}).get(n)) for n, b in sp["buffers"].items()},
            "launches": [{"kernel": ttir_file, "function": fn_name, "grid": sp["grid"],
                          "args": [arg_json(a) for _, a in kept]}]}
    (folder / f"{stem}.json").write_text(gf.format_spec(spec))
    if sp["expected"] is None:
        return
    exp_dir = "expected" + stem[len("spec"):]
    assert set(sp["expected"]) <= set(sp["buffers"]), stem
    for n, arr in sp["expected"].items():
        b = sp["buffers"][n]
        assert arr.dtype == gf.NP_DTYPE[b.dtype] and list(arr.shape) == b.shape, (stem, n, arr.dtype, arr.shape)
        gf.write_npy(folder / exp_dir / f"{n}.npy", arr)


def check_contains(text, needles, label, absent=False):
    for s in needles:
        assert (s in text) != absent, f"{label}: {'unexpected' if absent else 'missing'} {s!r}"


def generate(name):
    k = KERNEL_FNS[name]()
    if k.get("triton", gf.REQUIRED_TRITON) != triton.__version__:
        return run_elsewhere(name, k["triton"])
    folder = KERNELS / name
    for sub in folder.iterdir():
        if sub.is_dir() and (sub.name in ("inputs", "__pycache__") or sub.name.startswith("expected")):
            shutil.rmtree(sub)
    for f in list(folder.glob("spec*.json")):
        f.unlink()
    rel = f"tests/data/kernels/{name}/{name}.py"
    os.utime(rel, (gf.SOURCE_MTIME, gf.SOURCE_MTIME))  # see gen_fixtures.generate()
    compiles = k.get("compiles") or [(name, k["kernel"])]
    specs = k["specs"]
    lines = []
    for stem, fn_name in compiles:
        # the specs launching this function; the first one's arguments drive the compile
        mine = [(s, sp) for s, sp in specs.items() if sp.get("function", fn_name) == fn_name]
        fn = gf.load_kernel(name, fn_name, rel)
        # constexprs: one dict for every kernel of the file, or one per function name
        constexprs = k["constexprs"].get(fn_name, k["constexprs"])
        first = mine[0][1]
        values = [mock_value(a, first["buffers"]) for a in first["args"]]
        compiled, specialization = gf.compile_like_launch(fn, first["args"], constexprs, first["buffers"],
                                                          debug=k.get("debug", False), values=values)
        assert compiled.name == fn_name
        ttir, ptx = compiled.asm["ttir"], compiled.asm["ptx"]
        (folder / f"{stem}.ttir").write_text(ttir)
        (folder / f"{stem}.ptx").write_text(ptx)
        (folder / f"{stem}.cubin").write_bytes(compiled.asm["cubin"])
        (folder / f"{stem}.json").write_text(gf.normalized_metadata(compiled, stem))
        pick = (lambda v: v.get(stem, []) if isinstance(v, dict) else v)
        check_contains(ttir, pick(k.get("ops", [])), stem)
        check_contains(ttir, pick(k.get("no_ops", [])), stem, absent=True)
        check_contains(ptx, pick(k.get("ptx", [])), stem + ".ptx")
        check_contains(ptx, pick(k.get("no_ptx", [])), stem + ".ptx", absent=True)
        if "source_ops" in k:
            source = compiled.asm["source"]
            (folder / f"{stem}.source.ttir").write_text(source)
            check_contains(source, k["source_ops"], stem + ".source")
        targs = gf.ttir_func_args(ttir, fn_name)
        for s, sp in mine:
            # every spec's launch must specialize like the compiled one
            if sp is not first:
                vals = [mock_value(a, sp["buffers"]) for a in sp["args"]]
                _, spec2 = gf.compile_like_launch(fn, sp["args"], constexprs, sp["buffers"],
                                                  debug=k.get("debug", False), values=vals)
                assert spec2 == specialization, (name, s)
            kept = gf.spec_args(fn.params, sp["args"], specialization)
            check_args(kept, targs, sp["buffers"], f"{name}/{s}")
            write_spec(folder, s, sp, kept, fn_name, sp.get("ttir", f"{stem}.ttir"))
        lines.append(f"{name}/{stem} [triton {triton.__version__}]: @{fn_name}(" +
                     ", ".join(f"%{n}: {t}" + (f" {{{a}}}" if a else "") for n, t, a in targs) + ")")
    for line in lines:
        print(line)


def run_elsewhere(name, version):
    """Runs this script for `name` under the Python that has triton==`version`."""
    py = os.environ.get("TRITON35_PYTHON", "/tmp/tr35/bin/python")
    env = dict(os.environ, GEN_FIXTURES_ANY_TRITON="1")
    env.pop("TRITON_CACHE_DIR", None)
    check = subprocess.run([py, "-c", "import triton; print(triton.__version__)"], capture_output=True, text=True,
                           env=env)
    if check.returncode != 0 or check.stdout.strip() != version:
        sys.exit(f"{name} needs triton=={version} in $TRITON35_PYTHON ({py}): "
                 f"python3 -m venv /tmp/tr35 && /tmp/tr35/bin/pip install triton=={version} numpy")
    subprocess.run([py, __file__, name], check=True, env=env)


def main():
    os.chdir(ROOT)
    names = sys.argv[1:] or list(KERNEL_FNS)
    for name in names:
        generate(name)
    shutil.rmtree(gf._cache, ignore_errors=True)


if __name__ == "__main__":
    main()
