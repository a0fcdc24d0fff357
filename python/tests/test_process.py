"""ttinterp in a fresh process: import order with Triton's own MLIR, the entry point, Triton's cache."""
import os
import subprocess
import sys
import textwrap

import pytest

ADD = textwrap.dedent("""
    import triton, triton.language as tl

    @triton.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)

    def run():
        import torch
        x = torch.arange(1000, dtype=torch.float32)
        out = torch.zeros(1000)
        add[(4, )](x, x, out, 1000, BLOCK=256)
        assert torch.equal(out, 2 * x), out
        print("ok")
""")


def run_python(code, tmp_path, extra_path=(), env=None):
    full_env = dict(os.environ)
    full_env.pop("TRITON_DEFAULT_BACKEND", None)
    full_env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    inherited = [os.path.abspath(p) for p in full_env.get("PYTHONPATH", "").split(os.pathsep) if p]
    full_env["PYTHONPATH"] = os.pathsep.join([*map(str, extra_path), *inherited])
    full_env.update(env or {})
    (tmp_path / "kernels.py").write_text(ADD)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=full_env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("order", ["triton, torch, ttinterp", "ttinterp, triton, torch"])
def test_import_order_with_tritons_own_mlir(tmp_path, order):
    # libtriton.so exports its own MLIR/LLVM; the extension links Debian's MLIR 19. Both must work
    # in one process whichever is loaded first: compile with Triton's, run with ours.
    imports = "\n".join(f"import {name}" for name in order.split(", "))
    r = run_python(imports + "\nimport ttinterp; ttinterp.activate()\nfrom kernels import run; run()\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_entry_point_selects_ttinterp_without_importing_it(tmp_path):
    # What `pip install` registers, laid out by hand: Triton finds the plugin through the
    # triton.backends entry point, and on a machine with no GPU driver it is the only active one.
    info = tmp_path / "site" / "ttinterp-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ttinterp\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[triton.backends]\nttinterp = ttinterp.backend\n")
    code = """
        import sys, triton
        from kernels import run
        run()
        assert "ttinterp" in sys.modules, "the entry point did not load the plugin"
        print(type(triton.runtime.driver.active).__name__)
    """
    r = run_python(code, tmp_path, extra_path=[tmp_path / "site"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok", "TTInterpDriver"]

    r = run_python(code, tmp_path, extra_path=[tmp_path / "site"],
                   env={"TRITON_DEFAULT_BACKEND": "ttinterp"})
    assert r.returncode == 0, r.stderr


def test_tritons_kernel_cache_is_reused_by_a_second_process(tmp_path):
    code = """
        import triton, ttinterp
        ttinterp.activate()
        hits = []
        triton.knobs.compilation.listener = lambda **kw: hits.append(kw["cache_hit"])
        from kernels import run
        run()
        print(hits)
    """
    first = run_python(code, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split("\n")[1] == "[False]"
    second = run_python(code, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split("\n")[1] == "[True]"


def test_a_triton_older_than_3_5_is_refused_on_import_with_the_versions_that_work(tmp_path):
    # Triton 3.4's driver and backend interfaces differ from 3.5's; a clear error, not a late one.
    r = run_python("import triton\ntriton.__version__ = '3.4.0'\nimport ttinterp\n", tmp_path)
    assert r.returncode != 0
    assert "ImportError: ttinterp's Triton backend needs Triton 3.5 to 3.9, not 3.4.0" in r.stderr


ROW_SUMS = textwrap.dedent("""
    import struct, torch, triton, triton.language as tl
    import ttinterp
    ttinterp.activate()

    @triton.jit
    def row_sums(x, out, N, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, N, BLOCK):
            v = tl.load(x + pid * N + off + cols)
            acc += v * v
        direct = tl.load(x + pid * N + cols)
        tl.store(out + 2 * pid, tl.sum(acc, axis=0))
        tl.store(out + 2 * pid + 1, tl.sum(direct * 0.5 + 1.0, axis=0))

    gen = torch.Generator().manual_seed(3)
    x = torch.randn(3, 256, generator=gen)
    out = torch.zeros(6)
    row_sums[(3, )](x, out, 256, BLOCK=64)
    squares = (x.double() ** 2).sum(1)
    direct = (x[:, :64].double() * 0.5 + 1.0).sum(1)
    ref = torch.stack([squares, direct], 1).flatten()
    assert torch.allclose(out.double(), ref, rtol=1e-5, atol=1e-5), (out, ref)
    print(" ".join(struct.pack("<f", float(v)).hex() for v in out))
""")


def test_row_sums_folded_by_compiled_chains_have_the_interpreted_bits(tmp_path):
    # A compiled chain adds up the row it makes when a tt.reduce sums it, directly or carried by
    # its loop (docs/architecture.md, "Row sums"): Triton's own TTIR for both, compiled at the
    # first run (TTINTERP_JIT=eager) and never (off), must give the same bits, near torch's sums.
    (tmp_path / "row_sums.py").write_text(ROW_SUMS)  # Triton reads a kernel's source from its file
    bits = {}
    for mode in ("off", "eager"):
        r = run_python("import row_sums\n", tmp_path, env={"TTINTERP_JIT": mode})
        assert r.returncode == 0, r.stderr
        bits[mode] = r.stdout.split()
    assert len(bits["off"]) == 6
    assert bits["eager"] == bits["off"]
