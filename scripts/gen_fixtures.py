#!/usr/bin/env python3
"""Regenerate every file of every example under examples/ from the kernel sources.

For each example this script
  * compiles examples/<name>/<name>.py ONCE with Triton 3.8.0 for
    GPUTarget("cuda", 90, 32), num_warps=4, specializing the arguments exactly
    as a real launch with the example's concrete values would (Triton's own JIT
    binder is run on mock tensors whose data_ptr() is 16-byte aligned, as torch
    allocations are), and writes <name>.ttir, <name>.ptx, <name>.cubin and
    <name>.json (the metadata file from Triton's cache);
  * writes the input buffers as inputs/*.npy (numpy default_rng, fixed seed);
  * writes spec.json for the ttinterp CLI, checking that its argument list
    matches the printed tt.func argument list name by name and type by type;
  * writes expected/<buffer>.npy for every buffer, computed independently with
    numpy (never by running ttinterp).

No GPU is needed. Run it from anywhere:  python3 scripts/gen_fixtures.py
(it needs triton==3.8.0 and numpy: pip install -r scripts/requirements-fixtures.txt).

Determinism: the kernel modules are imported through paths relative to the
repository root, so TTIR/PTX locations read "examples/<name>/<name>.py" whatever
the checkout's location. The only machine-dependent item in Triton's metadata,
the absolute path of libdevice in "extern_libs", is rewritten relative to the
site-packages directory ("triton/backends/nvidia/lib/libdevice.10.bc"), and ptxas copies the
kernel .py file's mtime into the cubin's DWARF line table, so the script pins that mtime to a fixed
date (SOURCE_MTIME) before compiling.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import types
from pathlib import Path

REQUIRED_TRITON = "3.8.0"
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# Compile into a private, empty cache so that every run really compiles.
_cache = tempfile.mkdtemp(prefix="ttinterp-fixtures-cache-")
os.environ["TRITON_CACHE_DIR"] = _cache
sys.dont_write_bytecode = True  # no __pycache__ inside examples/

import numpy as np  # noqa: E402

try:
    import triton  # noqa: E402
except ImportError:
    triton = None
# GEN_FIXTURES_ANY_TRITON=1 lets another script import these helpers under another Triton
# (scripts/gen_test_kernels.py compiles one kernel with 3.5.1); this script itself needs 3.8.0.
if triton is None or (triton.__version__ != REQUIRED_TRITON and os.environ.get("GEN_FIXTURES_ANY_TRITON") != "1"):
    have = "not installed" if triton is None else triton.__version__
    sys.exit(f"gen_fixtures.py needs triton=={REQUIRED_TRITON} (found: {have}). Install it in a venv:\n"
             f"  python3 -m venv /tmp/tr38 && /tmp/tr38/bin/pip install triton=={REQUIRED_TRITON} numpy\n"
             f"  /tmp/tr38/bin/python scripts/gen_fixtures.py")

from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource, make_backend  # noqa: E402
from triton.runtime.jit import create_function_from_signature  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
NUM_WARPS = 4
SOURCE_MTIME = 1735689600  # 2025-01-01T00:00:00Z, see generate()

# ---------------------------------------------------------------------------------------------
# buffers and launch arguments

NP_DTYPE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32, "i64": np.int64,
            "i8": np.int8, "i16": np.int16, "i1": np.bool_}
TORCH_DTYPE = {"f32": "torch.float32", "f64": "torch.float64", "f16": "torch.float16", "i32": "torch.int32",
               "i64": "torch.int64", "i8": "torch.int8", "i16": "torch.int16", "i1": "torch.bool"}


class Buf:
    """A buffer: dtype name, initial contents (np array) and how the spec initialises it."""

    def __init__(self, dtype, init, shape=None, data=None):
        self.dtype, self.init = dtype, init
        npdt = NP_DTYPE[dtype]
        if init == "zeros":
            self.data = np.zeros(shape, npdt)
        elif init == "arange":
            self.data = np.arange(int(np.prod(shape))).astype(npdt).reshape(shape)
        elif isinstance(init, dict) and "fill" in init:
            self.data = np.full(shape, init["fill"], npdt)
        elif init == "npy":
            self.data = np.ascontiguousarray(data, npdt)
        else:
            raise ValueError(init)
        self.shape = list(self.data.shape)


class MockTensor:
    """What Triton's JIT binder looks at: dtype and data_ptr() (16-byte aligned, as torch allocations are)."""

    def __init__(self, dtype):
        self.dtype = TORCH_DTYPE[dtype]

    @staticmethod
    def data_ptr():
        return 0


class I32:
    def __init__(self, v):
        self.v = v


class F32:
    def __init__(self, v):
        self.v = v


# ---------------------------------------------------------------------------------------------
# the examples

def cdiv(a, b):
    return (a + b - 1) // b


def ex_vector_add():
    rng = np.random.default_rng(1001)
    n = 5000
    bufs = {"x": Buf("f32", "npy", data=rng.standard_normal(n)),
            "y": Buf("f32", "npy", data=rng.standard_normal(n)),
            "out": Buf("f32", "zeros", [n])}
    exp = {"x": bufs["x"].data, "y": bufs["y"].data,
           # f32 + f32 is exact in f64, so rounding the f64 sum once gives IEEE f32 addition
           "out": (bufs["x"].data.astype(np.float64) + bufs["y"].data).astype(np.float32)}
    return dict(kernel="add_kernel", args=["x", "y", "out", I32(n)], constexprs={"BLOCK": 1024},
                grid=[cdiv(n, 1024)], buffers=bufs, specs={"spec": exp})


def ex_inplace_add():
    rng = np.random.default_rng(1002)
    n = 1000
    bufs = {"x": Buf("f32", "npy", data=rng.standard_normal(n)),
            "y": Buf("f32", "npy", data=rng.standard_normal(n))}
    x, y = bufs["x"].data, bufs["y"].data
    exp = {"x": (x.astype(np.float64) + y).astype(np.float32), "y": y}
    aliased = {"buffers": {"x": bufs["x"]}, "args": ["x", "x", I32(n)],
               "expected": {"x": (x.astype(np.float64) * 2).astype(np.float32)}}
    return dict(kernel="inplace_add_kernel", args=["x", "y", I32(n)], constexprs={"BLOCK": 256},
                grid=[cdiv(n, 256)], buffers=bufs, specs={"spec": exp}, aliased=aliased)


def ex_softmax():
    rng = np.random.default_rng(1003)
    rows, cols = 37, 200
    bufs = {"out": Buf("f32", "zeros", [rows, cols]),
            "inp": Buf("f32", "npy", data=rng.standard_normal((rows, cols)) * 3.0)}
    x = bufs["inp"].data.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    exp = {"out": (e / e.sum(axis=1, keepdims=True)).astype(np.float32), "inp": bufs["inp"].data}
    return dict(kernel="softmax_kernel", args=["out", "inp", I32(cols), I32(cols), I32(cols)],
                constexprs={"BLOCK": 256}, grid=[rows], buffers=bufs, specs={"spec": exp})


def round_to_tf32(x):
    """Reduce float32 operands to tf32 (1 sign, 8 exponent, 10 mantissa bits) by TRUNCATION (round
    toward zero: the low 13 mantissa bits are cleared).

    Why truncation: NVIDIA tensor cores read only the top 19 bits (sign, exponent, top 10 mantissa
    bits) of each 32-bit .tf32 operand register. Triton 3.8 feeds the f32 registers straight into
    `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` without a `cvt.rna.tf32.f32` (generate()
    asserts this on matmul_tf32.ptx), so the hardware effectively truncates. (Code that rounds first
    with cvt.rna would instead get round-to-nearest, ties away from zero; the difference is at most
    one tf32 ulp per operand.) Products and sums are then taken exactly (float64) and rounded once to
    float32; the tensor core accumulates in float32 in its own order, so compare with a tolerance.
    NaN/Inf are not handled (the inputs have none)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return (u & np.uint32(0xFFFFE000)).view(np.float32)


def _matmul(name, seed, tf32):
    rng = np.random.default_rng(seed)
    M, N, K = 70, 50, 90
    bufs = {"a": Buf("f32", "npy", data=rng.standard_normal((M, K))),
            "b": Buf("f32", "npy", data=rng.standard_normal((K, N))),
            "c": Buf("f32", "zeros", [M, N])}
    a, b = bufs["a"].data, bufs["b"].data
    if tf32:
        a, b = round_to_tf32(a), round_to_tf32(b)
    c = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    exp = {"a": bufs["a"].data, "b": bufs["b"].data, "c": c}
    # stride_ak, stride_bn, stride_cn are 1: a real launch turns them into constants
    args = ["a", "b", "c", I32(M), I32(N), I32(K), I32(K), I32(1), I32(N), I32(1), I32(N), I32(1)]
    return dict(kernel=name, args=args, constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32},
                grid=[cdiv(M, 32), cdiv(N, 32)], buffers=bufs, specs={"spec": exp})


def ex_matmul():
    return _matmul("matmul_kernel", 1004, tf32=False)


def ex_matmul_tf32():
    return _matmul("matmul_tf32_kernel", 1004, tf32=True)


def ex_layernorm():
    rng = np.random.default_rng(1005)
    rows, N, eps = 37, 300, 1e-5
    bufs = {"x": Buf("f32", "npy", data=rng.standard_normal((rows, N)) * 2.0 + 0.5),
            "y": Buf("f32", "zeros", [rows, N]),
            "w": Buf("f32", "npy", data=rng.standard_normal(N)),
            "b": Buf("f32", "npy", data=rng.standard_normal(N)),
            "mean": Buf("f32", "zeros", [rows]),
            "rstd": Buf("f32", "zeros", [rows])}
    x = bufs["x"].data.astype(np.float64)
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1.0 / np.sqrt(var + np.float64(np.float32(eps)))
    y = (x - mean[:, None]) * rstd[:, None] * bufs["w"].data.astype(np.float64) + bufs["b"].data
    exp = {"x": bufs["x"].data, "y": y.astype(np.float32), "w": bufs["w"].data, "b": bufs["b"].data,
           "mean": mean.astype(np.float32), "rstd": rstd.astype(np.float32)}
    args = ["x", "y", "w", "b", "mean", "rstd", I32(N), I32(N), F32(eps)]
    return dict(kernel="layernorm_fwd_kernel", args=args, constexprs={"BLOCK_SIZE": 128}, grid=[rows],
                buffers=bufs, specs={"spec": exp})


def ex_alias_5791():
    bufs = {"b": Buf("f32", {"fill": 7}, [8])}
    e = bufs["b"].data.copy()
    e[0] = 1
    return dict(kernel="aliasing_test", args=["b", "b"], constexprs={}, grid=[1], buffers=bufs,
                specs={"spec": {"b": e}})


EXAMPLE_FNS = {
    "vector_add": ex_vector_add,
    "inplace_add": ex_inplace_add,
    "softmax": ex_softmax,
    "matmul": ex_matmul,
    "matmul_tf32": ex_matmul_tf32,
    "layernorm": ex_layernorm,
    "alias_5791": ex_alias_5791,
}

# ---------------------------------------------------------------------------------------------
# compiling


def load_kernel(name, fn_name, rel=None):
    """Imports kernel `fn_name` from `rel` (default examples/<name>/<name>.py), a path relative to the
    repository root (the current directory)."""
    rel = rel or f"examples/{name}/{name}.py"  # relative: it is the path the TTIR locations print
    # (importlib's file loaders would make the path absolute; compile() keeps it as given)
    mod = types.ModuleType(f"ttinterp_example_{name}")
    mod.__file__ = rel
    sys.modules[mod.__name__] = mod
    exec(compile(Path(rel).read_text(), rel, "exec"), mod.__dict__)
    return getattr(mod, fn_name)


def launch_value(a, buffers):
    if isinstance(a, str):
        return MockTensor(buffers[a].dtype)
    if isinstance(a, I32):
        return a.v
    if isinstance(a, F32):
        return a.v
    raise TypeError(a)


def compile_like_launch(fn, args, constexprs, buffers, debug=False, values=None):
    """Specialize like JITFunction.run does for a real launch (same binder, same _pack_args), then compile.
    `values` (optional) replaces the launch values derived from `args` (e.g. mock tensors whose
    data_ptr() is not 16-byte aligned); `debug` is the launch's debug flag."""
    backend = make_backend(TARGET)
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    kwargs = dict(constexprs, num_warps=NUM_WARPS, debug=debug, instrumentation_mode="")
    if values is None:
        values = [launch_value(a, buffers) for a in args]
    bound, specialization, options = binder(*values, **kwargs)
    options, signature, consts, attrs = fn._pack_args(backend, options, bound, specialization, options)
    src = ASTSource(fn, signature, consts, attrs)
    compiled = triton.compile(src, target=TARGET, options=options.__dict__)
    return compiled, specialization


TTIR_TYPE = {"f32": "f32", "f64": "f64", "f16": "f16", "i32": "i32", "i64": "i64", "i8": "i8", "i16": "i16",
             "i1": "i1"}


def ttir_func_args(ttir, fn_name):
    m = re.search(r"tt\.func public @(\w+)\((.*)\) attributes", ttir)
    assert m and m.group(1) == fn_name, (fn_name, m and m.group(1))
    return [(a.group(1), a.group(2), a.group(3) or "")
            for a in re.finditer(r"%([\w.]+): ([^\s{]+)(?: \{([^}]*)\})? loc\(", m.group(2))]


def spec_args(params, args, specialization):
    """Drop the arguments the compiled signature does not have (constexprs, ints specialized to 1)."""
    out = []
    for p, a, s in zip(params, args, specialization):
        if s[0] == "constexpr":
            continue
        out.append((p.name, a))
    return out


def check_against_ttir(kept, ttir_args, buffers, label):
    assert [n for n, _ in kept] == [n for n, _, _ in ttir_args], (label, kept, ttir_args)
    for (name, a), (_, ty, _) in zip(kept, ttir_args):
        if isinstance(a, str):
            want = f"!tt.ptr<{TTIR_TYPE[buffers[a].dtype]}>"
        elif isinstance(a, I32):
            want = "i32"
        else:
            want = "f32"
        assert ty == want, (label, name, ty, want)


def spec_arg_json(a):
    if isinstance(a, str):
        return a
    if isinstance(a, I32):
        return {"i32": a.v}
    return {"f32": a.v}


def write_npy(path, arr):
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.ascontiguousarray(arr), allow_pickle=False)


def normalized_metadata(compiled, name):
    text = Path(compiled.metadata_group[f"{compiled.name}.json"]).read_text()
    meta = json.loads(text)
    site = str(Path(triton.__file__).resolve().parents[1])
    meta["extern_libs"] = [[k, os.path.relpath(v, site) if os.path.isabs(v) else v] for k, v in meta["extern_libs"]]
    return json.dumps(meta)  # same serialisation as Triton's cache (json.dumps, no indent, no newline)


def buffer_json(name, buf, folder):
    d = {"dtype": buf.dtype, "shape": buf.shape}
    if buf.init == "npy":
        rel = f"inputs/{name}.npy"
        write_npy(folder / rel, buf.data)
        d["init"] = {"npy": rel}
    else:
        d["init"] = buf.init
    return d


def format_spec(spec):
    """json, one buffer per line and one launch key per line."""
    d = json.dumps
    bufs = ",\n".join(f"    {d(n)}: {d(b)}" for n, b in spec["buffers"].items())
    launches = ",\n".join("    {\n" + ",\n".join(f"      {d(k)}: {d(v)}" for k, v in l.items()) + "\n    }"
                           for l in spec["launches"])
    text = '{\n  "buffers": {\n' + bufs + '\n  },\n  "launches": [\n' + launches + "\n  ]\n}\n"
    assert json.loads(text) == spec
    return text


def write_spec(folder, stem, kernel_file, fn_name, grid, buffers, kept, expected, expected_dir):
    spec = {"buffers": {n: buffer_json(n, b, folder) for n, b in buffers.items()},
            "launches": [{"kernel": kernel_file, "function": fn_name, "grid": grid,
                          "args": [spec_arg_json(a) for _, a in kept]}]}
    (folder / f"{stem}.json").write_text(format_spec(spec))
    assert set(expected) == set(buffers), (stem, set(expected), set(buffers))
    for n, arr in expected.items():
        b = buffers[n]
        assert arr.dtype == NP_DTYPE[b.dtype] and list(arr.shape) == b.shape, (stem, n, arr.dtype, arr.shape)
        write_npy(folder / expected_dir / f"{n}.npy", arr)


def generate(name):
    ex = EXAMPLE_FNS[name]()
    folder = EXAMPLES / name
    for sub in ("inputs", "expected", "expected_aliased"):
        if (folder / sub).exists():
            shutil.rmtree(folder / sub)
    # ptxas records the kernel source's mtime and size in the cubin's DWARF line table (.debug_line file
    # entry); pin the mtime so that the cubin does not depend on when the file was checked out.
    os.utime(f"examples/{name}/{name}.py", (SOURCE_MTIME, SOURCE_MTIME))
    fn = load_kernel(name, ex["kernel"])
    compiled, specialization = compile_like_launch(fn, ex["args"], ex["constexprs"], ex["buffers"])
    assert compiled.name == ex["kernel"]
    ttir = compiled.asm["ttir"]
    (folder / f"{name}.ttir").write_text(ttir)
    (folder / f"{name}.ptx").write_text(compiled.asm["ptx"])
    (folder / f"{name}.cubin").write_bytes(compiled.asm["cubin"])
    (folder / f"{name}.json").write_text(normalized_metadata(compiled, name))

    if name == "matmul_tf32":  # the assumption round_to_tf32() documents
        ptx = compiled.asm["ptx"]
        assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx and "tf32.f32" not in ptx.replace(
            "f32.tf32.tf32.f32", ""), "tf32 lowering changed: revisit round_to_tf32()"
        assert "inputPrecision = tf32" in ttir
    targs = ttir_func_args(ttir, ex["kernel"])
    kept = spec_args(fn.params, ex["args"], specialization)
    check_against_ttir(kept, targs, ex["buffers"], name)
    write_spec(folder, "spec", f"{name}.ttir", ex["kernel"], ex["grid"], ex["buffers"], kept,
               ex["specs"]["spec"], "expected")
    if "aliased" in ex:
        al = ex["aliased"]
        # The aliased launch specializes identically (both pointers 16-byte aligned): same compile.
        _, spec2 = compile_like_launch(fn, al["args"], ex["constexprs"], al["buffers"])
        assert spec2 == specialization
        kept2 = spec_args(fn.params, al["args"], specialization)
        check_against_ttir(kept2, targs, al["buffers"], name + " aliased")
        write_spec(folder, "spec_aliased", f"{name}.ttir", ex["kernel"], ex["grid"], al["buffers"], kept2,
                   al["expected"], "expected_aliased")
    print(f"{name}: @{ex['kernel']}(" + ", ".join(f"%{n}: {t}" + (f" {{{a}}}" if a else "")
                                                  for n, t, a in targs) + f")  grid={ex['grid']}")


def main():
    os.chdir(ROOT)
    names = sys.argv[1:] or list(EXAMPLE_FNS)
    for name in names:
        generate(name)
    (EXAMPLES / "TRITON_VERSION").write_text(REQUIRED_TRITON + "\n")
    shutil.rmtree(_cache, ignore_errors=True)


if __name__ == "__main__":
    main()
