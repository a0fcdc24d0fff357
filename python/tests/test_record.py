"""Record and replay: a launch recorded from Python and replayed by `ttinterp run` ends up equal.

Each test takes copies of its inputs before the launch, launches under ttinterp.record (or
TTINTERP_RECORD), checks the bundle's .npy inputs against those copies, then replays the bundle with
the CLI (TTINTERP_CLI, default build/tools/ttinterp) and checks every buffer it writes against the
Python-side storage after the launch, byte for byte.
"""
import ctypes
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import ttinterp

REPO = Path(__file__).resolve().parents[2]
CLI = os.environ.get("TTINTERP_CLI", str(REPO / "build" / "tools" / "ttinterp"))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    total = tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, total, mask=mask)


@triton.jit
def shift_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    # One program loads everything before storing, so overlapping src and dst give one answer.
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask) * 2 + 1, mask=mask)


@triton.jit
def affine_kernel(x_ptr, out_ptr, scale, shift, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * scale + shift, mask=mask)


@triton.jit
def bits_kernel(f_ptr, i_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    as_bits = tl.load(f_ptr + offsets, mask=mask).to(tl.int32, bitcast=True)
    tl.store(out_ptr + offsets, as_bits ^ tl.load(i_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def desc_copy_kernel(in_desc, out_ptr, out_cols, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    block = in_desc.load([pid_m * BM, pid_n * BN])
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    tl.store(out_ptr + rows[:, None] * out_cols + cols[None, :], block)


def storage_bytes(obj) -> bytes:
    """Every byte of the memory `obj` lives in: its torch storage, or its numpy base array."""
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        return ctypes.string_at(storage.data_ptr(), storage.nbytes())
    while isinstance(obj.base, np.ndarray):
        obj = obj.base
    return obj.tobytes()


def bundles(folder: Path) -> list:
    """The bundles in `folder` in recording order (by the number after the kernel's name)."""
    return sorted((p for p in folder.iterdir() if p.is_dir()),
                  key=lambda p: int(p.name.rsplit("-", 1)[1]))


def load_spec(bundle: Path) -> dict:
    return json.loads((bundle / "spec.json").read_text())


def recorded(bundle: Path, buffer: str) -> bytes:
    return np.load(bundle / f"{buffer}.npy").tobytes()


def replay(bundle: Path, out: Path) -> Path:
    proc = subprocess.run([CLI, "run", str(bundle / "spec.json"), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"replay of {bundle} failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def replayed(out: Path, buffer: str) -> bytes:
    return np.load(out / f"{buffer}.npy").tobytes()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int16])
def test_vector_add_replays_bit_for_bit(tmp_path, dtype):
    n = 1000
    x = (torch.randn(n) * 100).to(dtype)
    y = (torch.randn(n) * 100).to(dtype)
    out = torch.full((n, ), 7).to(dtype)
    before = {name: storage_bytes(t) for name, t in (("x_ptr", x), ("y_ptr", y), ("out_ptr", out))}
    with ttinterp.record(tmp_path / "rec"):
        add_kernel[(triton.cdiv(n, 256), )](x, y, out, n, BLOCK=256)

    [bundle] = bundles(tmp_path / "rec")
    assert bundle.name == "add_kernel-0000"
    assert (bundle / "kernel.ttir").read_text().lstrip().startswith(("#", "module"))
    spec = load_spec(bundle)
    spelling = {torch.float32: "f32", torch.bfloat16: "bf16", torch.int16: "i16"}[dtype]
    assert spec["buffers"] == {
        name: {"dtype": spelling, "shape": [n], "init": {"npy": f"{name}.npy"}}
        for name in ("x_ptr", "y_ptr", "out_ptr")}
    [launch] = spec["launches"]
    assert launch["grid"] == [4, 1, 1]
    assert launch["args"][:3] == [{"view": name, "offset": 0, "shape": [n], "strides": [1]}
                                  for name in ("x_ptr", "y_ptr", "out_ptr")]
    assert launch["args"][3] == {"i32": n}
    for name, data in before.items():
        assert recorded(bundle, name) == data

    result = replay(bundle, tmp_path / "out")
    for name, t in (("x_ptr", x), ("y_ptr", y), ("out_ptr", out)):
        assert replayed(result, name) == storage_bytes(t)
    assert torch.equal(out, x + y)  # the launch itself ran


def test_in_place_arguments_aliasing_one_tensor_via_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TTINTERP_RECORD", str(tmp_path / "rec"))
    x = torch.arange(50, dtype=torch.float32)
    before = storage_bytes(x)
    shift_kernel[(1, )](x, x, 50, BLOCK=64)
    monkeypatch.delenv("TTINTERP_RECORD")

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    assert list(spec["buffers"]) == ["src_ptr"]
    view = {"view": "src_ptr", "offset": 0, "shape": [50], "strides": [1]}
    assert spec["launches"][0]["args"] == [view, view, {"i32": 50}]
    assert recorded(bundle, "src_ptr") == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "src_ptr") == storage_bytes(x)
    assert torch.equal(x, torch.arange(50, dtype=torch.float32) * 2 + 1)


def test_numpy_arrays(tmp_path):
    x = np.arange(300, dtype=np.int32) * 3 - 100
    y = np.full(300, -7, dtype=np.int32)
    out = np.zeros(300, dtype=np.int32)
    before = [storage_bytes(a) for a in (x, y, out)]
    with ttinterp.record(tmp_path / "rec"):
        add_kernel[(3, )](x, y, out, 300, BLOCK=128)

    [bundle] = bundles(tmp_path / "rec")
    assert [recorded(bundle, b) for b in ("x_ptr", "y_ptr", "out_ptr")] == before
    result = replay(bundle, tmp_path / "out")
    for name, a in (("x_ptr", x), ("y_ptr", y), ("out_ptr", out)):
        assert replayed(result, name) == storage_bytes(a)
    np.testing.assert_array_equal(out, np.arange(300) * 3 - 107)


def test_views_of_one_storage_at_different_offsets(tmp_path):
    base = torch.arange(100, dtype=torch.float32)
    src, dst = base[0:60], base[40:100]  # overlapping: dst's first 20 elements are src's last 20
    before = storage_bytes(base)
    expected = base.clone()
    expected[40:100] = base[0:60] * 2 + 1
    with ttinterp.record(tmp_path / "rec"):
        shift_kernel[(1, )](src, dst, 60, BLOCK=64)

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    assert spec["buffers"] == {"src_ptr": {"dtype": "f32", "shape": [100],
                                           "init": {"npy": "src_ptr.npy"}}}
    assert spec["launches"][0]["args"][:2] == [
        {"view": "src_ptr", "offset": 0, "shape": [100], "strides": [1]},
        {"view": "src_ptr", "offset": 40, "shape": [60], "strides": [1]}]
    assert recorded(bundle, "src_ptr") == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "src_ptr") == storage_bytes(base)
    assert torch.equal(base, expected)


def test_float_and_int_scalars(tmp_path):
    n = 37
    x = torch.randn(n)
    out = torch.zeros(n)
    before = storage_bytes(x), storage_bytes(out)
    with ttinterp.record(tmp_path / "rec"):
        affine_kernel[(1, )](x, out, 0.1, -3, n, BLOCK=64)

    [bundle] = bundles(tmp_path / "rec")
    args = load_spec(bundle)["launches"][0]["args"]
    # 0.1 is not an f32: the spec holds the f32 the kernel computed with.
    assert args[2:] == [{"f32": float(np.float32(0.1))}, {"i32": -3}, {"i32": n}]
    assert (recorded(bundle, "x_ptr"), recorded(bundle, "out_ptr")) == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "x_ptr") == storage_bytes(x)
    assert replayed(result, "out_ptr") == storage_bytes(out)
    assert torch.equal(out, x * np.float32(0.1) - 3)


def test_one_storage_read_as_two_dtypes_gets_an_i8_root_with_aliases(tmp_path):
    words = torch.arange(16, dtype=torch.int32) * 0x01010101
    as_float = words.view(torch.float32)
    out = torch.zeros(16, dtype=torch.int32)
    before = storage_bytes(words)
    with ttinterp.record(tmp_path / "rec"):
        bits_kernel[(1, )](as_float, words, out, 16, BLOCK=16)

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    assert spec["buffers"]["f_ptr"] == {"dtype": "i8", "shape": [64], "init": {"npy": "f_ptr.npy"}}
    assert spec["buffers"]["f_ptr.f32"] == {"alias_of": "f_ptr", "byte_offset": 0, "dtype": "f32",
                                            "shape": [16]}
    assert spec["buffers"]["f_ptr.i32"] == {"alias_of": "f_ptr", "byte_offset": 0, "dtype": "i32",
                                            "shape": [16]}
    assert recorded(bundle, "f_ptr") == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "f_ptr") == storage_bytes(words)
    assert replayed(result, "out_ptr") == storage_bytes(out)
    assert torch.equal(out, torch.zeros(16, dtype=torch.int32))  # x ^ x


def test_storage_not_a_multiple_of_the_element_size(tmp_path):
    raw = np.arange(11, dtype=np.uint8)
    halves = raw[1:9].view(np.int16)  # 4 i16 starting 1 byte into an 11-byte allocation
    before = storage_bytes(raw)
    expected = halves * 2 + 1
    with ttinterp.record(tmp_path / "rec"):
        shift_kernel[(1, )](halves, halves, 4, BLOCK=4)

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    assert spec["buffers"] == {
        "src_ptr": {"dtype": "i8", "shape": [11], "init": {"npy": "src_ptr.npy"}},
        "src_ptr.i16.1": {"alias_of": "src_ptr", "byte_offset": 1, "dtype": "i16", "shape": [5]}}
    view = {"view": "src_ptr.i16.1", "offset": 0, "shape": [5], "strides": [1]}
    assert spec["launches"][0]["args"][:2] == [view, view]
    assert recorded(bundle, "src_ptr") == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "src_ptr") == storage_bytes(raw)
    np.testing.assert_array_equal(halves, expected)


def test_tensor_descriptor_with_nan_padding(tmp_path):
    from triton.tools.tensor_descriptor import TensorDescriptor
    big = torch.arange(20 * 24, dtype=torch.float32).reshape(20, 24)
    window = big[4:17, 8:21]  # 13 x 13, starting 416 bytes in
    desc = TensorDescriptor.from_tensor(window, block_shape=[8, 8], padding="nan")
    out = torch.zeros(16, 16)
    before = storage_bytes(big), storage_bytes(out)
    with ttinterp.record(tmp_path / "rec"):
        desc_copy_kernel[(2, 2)](desc, out, 16, BM=8, BN=8)

    [bundle] = bundles(tmp_path / "rec")
    args = load_spec(bundle)["launches"][0]["args"]
    assert args[0] == {"tensordesc": "in_desc", "offset": 4 * 24 + 8, "shape": [13, 13],
                       "strides": [24, 1], "padding": "nan"}
    assert (recorded(bundle, "in_desc"), recorded(bundle, "out_ptr")) == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "in_desc") == storage_bytes(big)
    assert replayed(result, "out_ptr") == storage_bytes(out)
    assert torch.equal(out[:13, :13], window)
    assert torch.isnan(out[13:, :]).all() and torch.isnan(out[:, 13:]).all()


def test_bundles_are_numbered_in_launch_order_across_kernels(tmp_path):
    x = torch.ones(8)
    with ttinterp.record(tmp_path / "rec"):
        add_kernel[(1, )](x, x, x, 8, BLOCK=8)
        shift_kernel[(1, )](x, x, 8, BLOCK=8)
        add_kernel[(1, )](x, x, x, 8, BLOCK=8)
    assert [b.name for b in bundles(tmp_path / "rec")] == [
        "add_kernel-0000", "shift_kernel-0001", "add_kernel-0002"]
    # Each bundle holds its inputs as they were before its own launch: 1, then 2, then 5.
    for bundle, value in zip(bundles(tmp_path / "rec"), (1.0, 2.0, 5.0)):
        assert recorded(bundle, "x_ptr" if bundle.name.startswith("add") else "src_ptr") == \
            np.full(8, value, dtype=np.float32).tobytes()
    assert torch.equal(x, torch.full((8, ), 10.0))


@triton.jit
def positive_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) > 0, mask=mask)


@triton.jit
def previous_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Reads the element before each one: x_ptr - 1 lies before a sliced tensor's first element.
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets - 1, mask=mask), mask=mask)


def test_bool_output_is_an_i1_alias_of_an_i8_root(tmp_path):
    x = torch.tensor([3.0, -1.0, 0.0, 2.5, -0.0, 7.0])
    out = torch.tensor([True, True, False, False, True, False])
    before = storage_bytes(out)
    with ttinterp.record(tmp_path / "rec"):
        positive_kernel[(1, )](x, out, 6, BLOCK=8)

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    assert spec["buffers"]["out_ptr"] == {"dtype": "i8", "shape": [6],
                                          "init": {"npy": "out_ptr.npy"}}
    assert spec["buffers"]["out_ptr.i1"] == {"alias_of": "out_ptr", "byte_offset": 0, "dtype": "i1",
                                             "shape": [6]}
    assert recorded(bundle, "out_ptr") == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "out_ptr") == storage_bytes(out) == bytes([1, 0, 0, 1, 0, 1])


def test_empty_tensors(tmp_path):
    empty = torch.empty(0)
    with ttinterp.record(tmp_path / "rec"):
        add_kernel[(1, )](empty, empty, empty, 0, BLOCK=16)

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    assert spec["buffers"]["x_ptr"]["shape"] == [0]
    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "x_ptr") == b""


def test_access_before_the_first_element_faults_only_in_the_replay(tmp_path):
    # The documented difference: Python bounds a pointer by its whole storage, the replay by the
    # view, which starts at the tensor's first element.
    base = torch.arange(10, dtype=torch.float32)
    out = torch.zeros(4)
    with ttinterp.record(tmp_path / "rec"):
        previous_kernel[(1, )](base[5:9], out, 4, BLOCK=4)
    assert torch.equal(out, torch.tensor([4.0, 5.0, 6.0, 7.0]))

    [bundle] = bundles(tmp_path / "rec")
    proc = subprocess.run([CLI, "run", str(bundle / "spec.json")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1
    assert "out_of_bounds" in proc.stderr


def test_scalar_values_are_what_the_interpreter_uses():
    from ttinterp._record import _scalar
    # Integers wrap to the parameter's width, read as signed; i1 keeps the low bit.
    assert _scalar(2**32 + 5, "i32") == 5
    assert _scalar(2**31, "i32") == -2**31
    assert _scalar(255, "i8") == -1
    assert _scalar(2**63, "i64") == -2**63
    assert _scalar(3, "i1") == 1 and _scalar(True, "i1") == 1 and _scalar(2, "i1") == 0
    # f64 is kept exactly; f32 is the nearest f32.
    assert _scalar(0.1, "f64") == 0.1
    assert _scalar(0.1, "f32") == 0.100000001490116119384765625
    # The narrow formats go through f32 first, as the interpreter converts them: 1 + 2^-11 + 2^-40
    # rounds straight to the f16 1 + 2^-10, but through f32 to 1 + 2^-11, a tie the spec's own
    # rounding then breaks to the even 1.0.
    assert _scalar(1 + 2**-11 + 2**-40, "f16") == 1 + 2**-11
    # Finite values beyond the format's range are written as the infinity they round to.
    assert _scalar(1e39, "f32") == "inf" and _scalar(-1e39, "f32") == "-inf"
    assert _scalar(65520.0, "f16") == "inf" and _scalar(65519.0, "f16") == 65519.0
    assert _scalar(float("inf"), "f64") == "inf" and _scalar(float("nan"), "f32") == "nan"


def test_overlapping_storages_share_one_root_spanning_their_union(tmp_path):
    memory = np.arange(64, dtype=np.float32)  # 256 bytes
    # Two storages over it, neither holding the other: a numpy array over bytes [0, 200) whose
    # base is not an ndarray, and a torch storage over bytes [160, 256).
    low = np.frombuffer((ctypes.c_float * 50).from_address(memory.ctypes.data), dtype=np.float32)
    high = torch.from_numpy(memory[40:64])
    assert high.untyped_storage().nbytes() == 96
    before = memory.tobytes()
    expected = memory.copy()
    expected[40:64] = memory[0:24] * 2 + 1
    with ttinterp.record(tmp_path / "rec"):
        shift_kernel[(1, )](low, high, 24, BLOCK=32)

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    assert spec["buffers"] == {"src_ptr": {"dtype": "f32", "shape": [64],
                                           "init": {"npy": "src_ptr.npy"}}}
    assert spec["launches"][0]["args"][:2] == [
        {"view": "src_ptr", "offset": 0, "shape": [50], "strides": [1]},
        {"view": "src_ptr", "offset": 40, "shape": [24], "strides": [1]}]
    assert recorded(bundle, "src_ptr") == before

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "src_ptr") == memory.tobytes()
    np.testing.assert_array_equal(memory, expected)


# Pointer tables: tensors reached through int64 tables of data_ptr()s (test_pointer_tables.py).
from test_pointer_tables import D, PAGE, group_gemm_fn, paged_gather, small_ints  # noqa: E402


def test_a_page_table_is_recorded_as_addresses_and_replays_with_the_replays_own(tmp_path):
    g = torch.Generator().manual_seed(21)
    cache = torch.randn(4, PAGE, D, generator=g)  # one storage of four pages
    lone = torch.randn(PAGE, D, generator=g)      # and a page of its own
    # Sequence 0 reads pages 3 and 1 of the cache, sequence 1 the lone page then cache page 0.
    table = torch.tensor([[cache[3].data_ptr(), cache[1].data_ptr()],
                          [lone.data_ptr(), cache[0].data_ptr()]])
    out = torch.zeros(2, 2 * PAGE, D)
    with ttinterp.record(tmp_path / "rec"), ttinterp.options(reachable={"cache": cache,
                                                                          "lone": lone}):
        paged_gather[(2, )](table, out, 2, PAGE=PAGE, D=D)
    assert torch.equal(out[0], torch.cat([cache[3], cache[1]]))
    assert torch.equal(out[1], torch.cat([lone, cache[0]]))

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    # No argument gives the reachable tensors a dtype: their buffers are bytes.
    page = PAGE * D * 4  # bytes of a page
    assert spec["buffers"]["cache"] == {"dtype": "i8", "shape": [4 * page],
                                        "init": {"npy": "cache.npy"}}
    assert spec["buffers"]["page_table"] == {"dtype": "i64", "shape": [4], "init": {"addresses": [
        {"buffer": "cache", "offset": 3 * page}, {"buffer": "cache", "offset": page},
        {"buffer": "lone"}, {"buffer": "cache"}]}}
    assert not (bundle / "page_table.npy").exists()
    assert spec["launches"][0]["reachable"] == ["cache", "lone"]
    assert recorded(bundle, "cache") == storage_bytes(cache)
    assert recorded(bundle, "lone") == storage_bytes(lone)

    result = replay(bundle, tmp_path / "out")
    assert replayed(result, "out") == storage_bytes(out)
    # The replay's table holds the replay's addresses, not these.
    assert replayed(result, "page_table") != storage_bytes(table)


def test_tutorial_08_grouped_gemm_replays_bit_for_bit(tmp_path):
    g = torch.Generator().manual_seed(22)
    sizes = [(32, 16, 32), (16, 48, 16)]
    group_A = [small_ints(m, k, generator=g) for m, n, k in sizes]
    group_B = [small_ints(k, n, generator=g) for m, n, k in sizes]
    with ttinterp.record(tmp_path / "rec"):
        group_C = group_gemm_fn(group_A, group_B)

    [bundle] = bundles(tmp_path / "rec")
    spec = load_spec(bundle)
    launch = spec["launches"][0]
    # The tables of A, B and C, each naming the reachable buffers in the group's order.
    tables = [spec["buffers"][f"group_{x}_ptrs"]["init"]["addresses"] for x in "abc"]
    assert tables == [[{"buffer": f"reachable_{i}_"} for i in first] for first in ([0, 1], [2, 3], [4, 5])]
    assert launch["reachable"] == [f"reachable_{i}_" for i in range(6)]

    result = replay(bundle, tmp_path / "out")
    for i, c in enumerate(group_C):
        assert replayed(result, f"reachable_{4 + i}_") == storage_bytes(c)
        assert torch.equal(c, torch.matmul(group_A[i].float(), group_B[i].float()).half())


def test_a_table_mixing_addresses_with_other_values_is_refused_before_the_launch(tmp_path):
    g = torch.Generator().manual_seed(23)
    pages = [torch.randn(PAGE, D, generator=g) for _ in range(2)]
    table = torch.tensor([[pages[0].data_ptr(), 12345]])  # the second entry is no address
    out = torch.zeros(1, 2 * PAGE, D)
    with pytest.raises(ValueError, match="holds the address of reachable buffer 'page0' among values"):
        with ttinterp.record(tmp_path / "rec"), ttinterp.options(reachable={"page0": pages[0],
                                                                             "page1": pages[1]}):
            paged_gather[(1, )](table, out, 2, PAGE=PAGE, D=D)
    assert torch.equal(out, torch.zeros(1, 2 * PAGE, D))
