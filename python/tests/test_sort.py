"""tl.sort, tl.topk and tl.bitonic_merge on ttinterp, checked against torch (issue 15, item 1).

Triton 3.9 sorts by reshaping the whole block of 2^k lanes into a rank-k tensor of 2s
(`tensor<2x2x...xi32>`): sorting a [4, 1024] block is rank 12, 2^16 lanes rank 16. These kernels
are what Liger-Kernel's MoE router and FlagGems' top-k compile to.
"""
import pytest
import torch
import triton
import triton.language as tl
from conftest import TRITON


@triton.jit
def sort_rows_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, N: tl.constexpr, DESCENDING: tl.constexpr):
    offsets = tl.arange(0, ROWS)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offsets)
    tl.store(out_ptr + offsets, tl.sort(x, descending=DESCENDING))


@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.float16, torch.int64])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_1024_lanes_rank_10(dtype, descending):
    # One row of 1024 lanes: the hypercube is tensor<2x...x2> of rank 10.
    g = torch.Generator().manual_seed(5)
    if dtype.is_floating_point:
        x = torch.randn(1, 1024, generator=g).to(dtype)
    else:
        x = torch.randint(-1000, 1000, (1, 1024), generator=g, dtype=dtype)
    out = torch.empty_like(x)
    sort_rows_kernel[(1, )](x, out, ROWS=1, N=1024, DESCENDING=descending)
    assert torch.equal(out, torch.sort(x, dim=1, descending=descending).values)


def test_sort_rows_of_a_2d_block_rank_12():
    # [4, 1024]: 2^12 lanes, each row sorted on its own.
    x = torch.randperm(4096, generator=torch.Generator().manual_seed(6)).to(torch.int32).view(4, 1024)
    out = torch.empty_like(x)
    sort_rows_kernel[(1, )](x, out, ROWS=4, N=1024, DESCENDING=False)
    assert torch.equal(out, torch.sort(x, dim=1).values)


def test_sort_65536_lanes_rank_16():
    x = torch.randn(1, 65536, generator=torch.Generator().manual_seed(7))
    out = torch.empty_like(x)
    sort_rows_kernel[(1, )](x, out, ROWS=1, N=65536, DESCENDING=True)
    assert torch.equal(out, torch.sort(x, dim=1, descending=True).values)


@triton.jit
def topk_kernel(x_ptr, out_ptr, N: tl.constexpr, K: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(out_ptr + row * K + tl.arange(0, K), tl.topk(x, K))


@pytest.mark.parametrize("k", [1, 8, 256])
def test_topk_of_1024_lanes(k):
    if k == 1 and TRITON < (3, 9):
        pytest.skip(f"Triton {triton.__version__}'s tl.topk(x, 1) does not compile (fixed in 3.9)")
    x = torch.randn(3, 1024, generator=torch.Generator().manual_seed(8))
    out = torch.empty(3, k)
    topk_kernel[(3, )](x, out, N=1024, K=k)
    assert torch.equal(out, torch.topk(x, k, dim=1).values)


@triton.jit
def moe_router_kernel(logits_ptr, experts_ptr, weights_ptr, N: tl.constexpr, K: tl.constexpr):
    # Liger-style top-k routing: pack (score, lane) into one sortable int64 and sort
    # descending, so the lane of each of the K best scores comes out with it.
    lanes = tl.arange(0, N)
    scores = tl.load(logits_ptr + lanes)
    bits = scores.to(tl.int32, bitcast=True)
    # float -> int order: flip the magnitude bits of negatives.
    ordered = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits).to(tl.int64)
    packed = (ordered << 32) | (N - 1 - lanes).to(tl.int64)
    best = tl.sort(packed, descending=True)
    top = tl.reshape(best, [N // K, K])
    first = tl.sum(tl.where(tl.arange(0, N // K)[:, None] == 0, top, 0), axis=0)
    lane = (N - 1 - (first & 0xFFFFFFFF)).to(tl.int32)
    tl.store(experts_ptr + tl.arange(0, K), lane)
    tl.store(weights_ptr + tl.arange(0, K), tl.load(logits_ptr + lane))


def test_moe_router_sorts_1024_packed_keys():
    logits = torch.randn(1024, generator=torch.Generator().manual_seed(9))
    experts = torch.empty(8, dtype=torch.int32)
    weights = torch.empty(8)
    moe_router_kernel[(1, )](logits, experts, weights, N=1024, K=8)
    expected = torch.topk(logits, 8)
    assert torch.equal(experts, expected.indices.to(torch.int32))
    assert torch.equal(weights, expected.values)


@triton.jit
def bitonic_merge_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(out_ptr + offsets, tl.bitonic_merge(tl.load(x_ptr + offsets)))


def test_bitonic_merge_of_two_sorted_halves():
    g = torch.Generator().manual_seed(10)
    low = torch.sort(torch.randint(0, 10**6, (512, ), generator=g, dtype=torch.int32)).values
    high = torch.sort(torch.randint(0, 10**6, (512, ), generator=g, dtype=torch.int32),
                      descending=True).values
    x = torch.cat([low, high])  # bitonic: ascending then descending
    out = torch.empty_like(x)
    bitonic_merge_kernel[(1, )](x, out, N=1024)
    assert torch.equal(out, torch.sort(x).values)
