"""Pointer tables through Python: tensors a kernel reaches through int64 arrays of data_ptr()s.

Triton's tutorial 08 (grouped GEMM) and a paged-attention-style gather load addresses from a table and
dereference them; those tensors are not launch arguments, so the launch names them with
``ttinterp.options(reachable=...)``. Results are compared with torch computed independently.
"""
import importlib.util
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

import ttinterp


def _fixture_kernels():
    """The kernels of tests/data/kernels/pointer_tables/pointer_tables.py (whose TTIR the C++ tests
    run), loaded from that file so that both suites run one source."""
    path = Path(__file__).resolve().parents[2] / "tests/data/kernels/pointer_tables/pointer_tables.py"
    spec = importlib.util.spec_from_file_location("pointer_tables_fixture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Triton tutorial 08 (grouped GEMM), its algorithm as published.
grouped_matmul_kernel = _fixture_kernels().grouped_matmul_kernel


def group_gemm_fn(group_A, group_B, num_sm=4):
    """The tutorial's host code: tables of data_ptr()s, sizes and leading dimensions."""
    group_size = len(group_A)
    A_addrs, B_addrs, C_addrs, g_sizes, g_lds, group_C = [], [], [], [], [], []
    for A, B in zip(group_A, group_B):
        M, K = A.shape
        K, N = B.shape
        C = torch.full((M, N), float("nan"), dtype=A.dtype)
        group_C.append(C)
        A_addrs.append(A.data_ptr())
        B_addrs.append(B.data_ptr())
        C_addrs.append(C.data_ptr())
        g_sizes += [M, N, K]
        g_lds += [A.stride(0), B.stride(0), C.stride(0)]
    d_a_ptrs = torch.tensor(A_addrs)
    d_b_ptrs = torch.tensor(B_addrs)
    d_c_ptrs = torch.tensor(C_addrs)
    d_g_sizes = torch.tensor(g_sizes, dtype=torch.int32)
    d_g_lds = torch.tensor(g_lds, dtype=torch.int32)
    with ttinterp.options(reachable=list(group_A) + list(group_B) + group_C):
        grouped_matmul_kernel[(num_sm, )](d_a_ptrs, d_b_ptrs, d_c_ptrs, d_g_sizes, d_g_lds, group_size,
                                          NUM_SM=num_sm, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)
    return group_C


def small_ints(*shape, generator):
    # Integers in [-3, 3]: every product and partial sum (at most 9 * 64) is exact in f16 and f32,
    # so any summation order gives torch's result exactly.
    return torch.randint(-3, 4, shape, generator=generator).to(torch.float16)


def test_tutorial_08_grouped_gemm_matches_torch():
    g = torch.Generator().manual_seed(8)
    sizes = [(32, 16, 32), (16, 48, 16), (48, 32, 64), (64, 64, 48)]
    group_A = [small_ints(m, k, generator=g) for m, n, k in sizes]
    group_B = [small_ints(k, n, generator=g) for m, n, k in sizes]
    before_A = [a.clone() for a in group_A]
    group_C = group_gemm_fn(group_A, group_B)
    for a, b, c, a0 in zip(group_A, group_B, group_C, before_A):
        assert torch.equal(c, torch.matmul(a.float(), b.float()).half())
        assert torch.equal(a, a0)


def test_grouped_gemm_without_reachable_faults_and_changes_nothing():
    g = torch.Generator().manual_seed(9)
    a, b = small_ints(16, 16, generator=g), small_ints(16, 16, generator=g)
    c = torch.zeros(16, 16, dtype=torch.float16)
    tables = [torch.tensor([t.data_ptr()]) for t in (a, b, c)]
    sizes = torch.tensor([16, 16, 16], dtype=torch.int32)
    with pytest.raises(ttinterp.KernelFault) as info:
        grouped_matmul_kernel[(1, )](*tables, sizes, sizes.clone(), 1, NUM_SM=1, BLOCK_SIZE_M=16,
                                     BLOCK_SIZE_N=16, BLOCK_SIZE_K=16)
    assert info.value.kind == "out_of_bounds"
    assert "unknown provenance" in info.value.message
    assert torch.equal(c, torch.zeros(16, 16, dtype=torch.float16))


@triton.jit
def paged_gather(page_table, out, pages_per_seq, PAGE: tl.constexpr, D: tl.constexpr):
    # Program s copies sequence s's pages, found through its row of the page table, into out[s].
    s = tl.program_id(0)
    rows = tl.arange(0, PAGE)[:, None]
    cols = tl.arange(0, D)[None, :]
    for j in range(pages_per_seq):
        page = tl.load(page_table + s * pages_per_seq + j).to(tl.pointer_type(tl.float32))
        block = tl.load(page + rows * D + cols)
        tl.store(out + (s * pages_per_seq + j) * PAGE * D + rows * D + cols, block)


PAGE, D = 4, 8


def make_pages(count, generator):
    # Separate allocations, as a KV cache's pages would be.
    return [torch.randn(PAGE, D, generator=generator) for _ in range(count)]


def test_paged_gather_through_a_page_table_matches_torch():
    g = torch.Generator().manual_seed(10)
    pages = make_pages(6, g)
    order = [[4, 0, 5], [2, 2, 1]]  # sequence 1 uses page 2 twice
    table = torch.tensor([[pages[p].data_ptr() for p in seq] for seq in order])
    out = torch.zeros(2, 3 * PAGE, D)
    with ttinterp.options(reachable={f"page{i}": p for i, p in enumerate(pages)}):
        paged_gather[(2, )](table, out, 3, PAGE=PAGE, D=D)
    for s, seq in enumerate(order):
        assert torch.equal(out[s], torch.cat([pages[p] for p in seq]))


def test_a_page_table_entry_that_strays_faults_naming_its_page():
    g = torch.Generator().manual_seed(11)
    pages = make_pages(3, g)
    # Entry 1 points at row 2 of page 1: its 4-row read runs 2 rows past the page's end.
    table = torch.tensor([[pages[0].data_ptr(), pages[1][2:].data_ptr()]])
    out = torch.full((1, 2 * PAGE, D), -1.0)
    with ttinterp.options(reachable={f"page{i}": p for i, p in enumerate(pages)}):
        with pytest.raises(ttinterp.KernelFault) as info:
            paged_gather[(1, )](table, out, 2, PAGE=PAGE, D=D)
    assert info.value.kind == "out_of_bounds"
    assert "reachable buffer 'page1'" in info.value.message
    # The launch is transactional: page 0's copy never reached `out`.
    assert torch.equal(out, torch.full((1, 2 * PAGE, D), -1.0))


def test_a_page_table_entry_outside_every_reachable_tensor_faults():
    g = torch.Generator().manual_seed(12)
    pages = make_pages(2, g)
    table = torch.tensor([[pages[0].data_ptr(), pages[1].data_ptr()]])
    out = torch.zeros(1, 2 * PAGE, D)
    with ttinterp.options(reachable=[pages[0]]):  # pages[1] is not listed
        with pytest.raises(ttinterp.KernelFault) as info:
            paged_gather[(1, )](table, out, 2, PAGE=PAGE, D=D)
    assert "not inside any argument's or reachable buffer's memory" in info.value.message
    assert "reachable[0]" not in info.value.message


@triton.jit
def paged_scatter(page_table, src, PAGE: tl.constexpr, D: tl.constexpr):
    # Program s writes src[s] into the page its table entry names.
    s = tl.program_id(0)
    i = tl.arange(0, PAGE * D)
    page = tl.load(page_table + s).to(tl.pointer_type(tl.float32))
    tl.store(page + i, tl.load(src + s * PAGE * D + i))


def test_two_programs_writing_one_page_through_the_table_is_a_hazard():
    page = torch.zeros(PAGE, D)
    src = torch.arange(2 * PAGE * D, dtype=torch.float32)
    table = torch.tensor([page.data_ptr(), page.data_ptr()])
    with ttinterp.options(reachable=[page], hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            paged_scatter[(2, )](table, src, PAGE=PAGE, D=D)
    h = info.value.hazards[0]
    assert h.kind == "write-after-write"
    assert h.reachable == ["reachable[0]"]
    # The launch ran (a hazard is not a fault): the last program in order wins, as written back.
    assert torch.equal(page.flatten(), src[PAGE * D:])


def test_reachable_must_be_tensors():
    with pytest.raises(TypeError):
        with ttinterp.options(reachable=5):
            pass
