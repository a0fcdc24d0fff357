"""The ops Triton 3.9 added, on ttinterp, checked against torch and by hand (issue 15, item 3).

tt.grid_dependency_wait / tt.grid_dependency_launch_dependents (gdc_wait, gdc_launch_dependents),
tt.approx_divf (tl.fdiv(approx=True)), tt.atomic_load, tt.atomic_store and tt.atomic_poll; and
tt.map_elementwise (tl.map_elementwise), which Triton 3.5 and 3.8 have too.
"""
import pytest
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc

import ttinterp
from conftest import needs_approx_fdiv, needs_tl_atomic_load


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    # Tutorial 11's shape: wait for the previous grid, let the next one start early.
    gdc.gdc_wait()
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    gdc.gdc_launch_dependents()
    tl.store(out_ptr + offs, x * factor, mask=m)


def test_dependent_launches_see_the_previous_grids_writes():
    x = torch.arange(100, dtype=torch.float32)
    mid = torch.zeros(100)
    out = torch.zeros(100)
    scale_kernel[(4, )](x, mid, 100, 2.0, BLOCK=32)
    scale_kernel[(4, )](mid, out, 100, 3.0, BLOCK=32)
    assert torch.equal(out, x * 6)


@triton.jit
def approx_div_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.fdiv(tl.load(x_ptr + offs), tl.load(y_ptr + offs), approx=True))


@needs_approx_fdiv
def test_approx_divf_is_within_2_ulp_of_the_quotient():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(256, generator=g)
    y = torch.randn(256, generator=g) + 3.0
    out = torch.empty(256)
    approx_div_kernel[(1, )](x, y, out, BLOCK=256)
    exact = (x.double() / y.double()).float()
    ulp = (torch.nextafter(exact.abs(), torch.tensor(float("inf"))) - exact.abs())
    assert torch.all((out - exact).abs() <= 2 * ulp)


@triton.jit
def atomic_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    v = tl.atomic_load(src_ptr + offs, mask=m, sem="acquire")
    tl.atomic_store(dst_ptr + offs, v * 10, mask=m, sem="release")


@needs_tl_atomic_load
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32, torch.float16])
def test_atomic_load_and_store_respect_the_mask(dtype):
    src = torch.arange(1, 17).to(dtype)
    dst = torch.full((16, ), -1).to(dtype)
    atomic_copy_kernel[(1, )](src, dst, 11, BLOCK=16)
    expected = torch.full((16, ), -1).to(dtype)
    expected[:11] = src[:11] * 10
    assert torch.equal(dst, expected)


@triton.jit
def poll_kernel(flag_ptr, out_ptr, expected, BLOCK: tl.constexpr, TIMEOUT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if TIMEOUT:
        ok = tl.atomic_poll(flag_ptr + offs, expected, timeout_ns=1000)
    else:
        ok = tl.atomic_poll(flag_ptr + offs, expected)
    tl.store(out_ptr + offs, ok.to(tl.int32))


@needs_tl_atomic_load
def test_atomic_poll_with_a_timeout_is_true_where_the_value_is_there():
    flags = torch.tensor([7, 0, 7, 3], dtype=torch.int32)
    out = torch.full((4, ), -1, dtype=torch.int32)
    poll_kernel[(1, )](flags, out, 7, BLOCK=4, TIMEOUT=True)
    assert out.tolist() == [1, 0, 1, 0]


@needs_tl_atomic_load
def test_atomic_poll_without_a_timeout_on_a_value_already_there():
    flags = torch.full((4, ), 5, dtype=torch.int32)
    out = torch.zeros(4, dtype=torch.int32)
    poll_kernel[(1, )](flags, out, 5, BLOCK=4, TIMEOUT=False)
    assert out.tolist() == [1, 1, 1, 1]


@needs_tl_atomic_load
def test_atomic_poll_waiting_for_no_one_is_a_spin_wait_fault():
    flags = torch.tensor([5, 5, 2, 5], dtype=torch.int32)
    out = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(ttinterp.KernelFault) as info:
        poll_kernel[(1, )](flags, out, 5, BLOCK=4, TIMEOUT=False)
    # One program, polling for a value no other program will store: a deadlock.
    assert info.value.kind == "spin_wait"
    assert "1 program(s) wait" in str(info.value)
    assert "test_triton39_ops.py" in info.value.location
    assert out.tolist() == [0, 0, 0, 0]


@triton.jit
def flag_handoff_kernel(flag_ptr, out_ptr, ATOMIC_SET: tl.constexpr):
    # Program 0 sets the flag; program 1 reads it with an atomic load.
    if tl.program_id(0) == 0:
        if ATOMIC_SET:
            tl.atomic_store(flag_ptr, 1)
        else:
            tl.store(flag_ptr, 1)
    else:
        tl.store(out_ptr, tl.atomic_load(flag_ptr))


@needs_tl_atomic_load
def test_atomic_store_then_atomic_load_of_another_program_is_no_hazard():
    flag = torch.zeros(1, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(hazards="error"):
        flag_handoff_kernel[(2, )](flag, out, ATOMIC_SET=True)
    assert out.item() == 1


@needs_tl_atomic_load
def test_plain_store_then_atomic_load_of_another_program_is_a_hazard():
    flag = torch.zeros(1, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    with ttinterp.options(hazards="error"):
        with pytest.raises(ttinterp.HazardError) as info:
            flag_handoff_kernel[(2, )](flag, out, ATOMIC_SET=False)
    h = info.value.hazards[0]
    assert h.kind == "read-after-write"
    assert (h.first_op, h.second_op) == ("tt.store", "tt.atomic_load")


@triton.jit
def selu_scalar(x, alpha):
    # An early return: each element runs only its own branch (cf.cond_br in the region).
    if x > 0:
        return x
    return alpha * (tl.exp(x) - 1)


@triton.jit
def selu_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.map_elementwise(selu_scalar, x, alpha), mask=m)


def test_map_elementwise_runs_a_branching_scalar_function():
    x = torch.randn(300, generator=torch.Generator().manual_seed(5))
    out = torch.empty(300)
    selu_kernel[(3, )](x, out, 300, 1.5, BLOCK=128)
    positive = x > 0
    assert torch.equal(out[positive], x[positive])
    expected = (1.5 * (torch.exp(x.double()) - 1)).float()
    assert torch.allclose(out[~positive], expected[~positive], rtol=1e-6, atol=1e-7)


@triton.jit
def guarded_load_scalar(p, inside):
    # Only elements inside the buffer load: the others would fault if they ran the load.
    if inside:
        return tl.load(p)
    return -1.0


@triton.jit
def guarded_gather_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.map_elementwise(guarded_load_scalar, x_ptr + offs, offs < n))


def test_map_elementwise_loads_only_in_the_branch_taken():
    x = torch.arange(10, dtype=torch.float32)
    out = torch.zeros(16)
    guarded_gather_kernel[(1, )](x, out, 10, BLOCK=16)
    assert out.tolist() == list(range(10)) + [-1.0] * 6


@triton.jit
def unguarded_load_scalar(p):
    return tl.load(p)


@triton.jit
def unguarded_gather_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.map_elementwise(unguarded_load_scalar, x_ptr + offs))


def test_map_elementwise_load_out_of_bounds_is_a_fault_at_its_line():
    x = torch.arange(10, dtype=torch.float32)
    out = torch.zeros(16)
    with pytest.raises(ttinterp.KernelFault) as info:
        unguarded_gather_kernel[(1, )](x, out, BLOCK=16)
    assert info.value.kind == "out_of_bounds"
    assert info.value.op == "tt.load"
    # The scalar function's `return tl.load(p)`.
    line = unguarded_load_scalar.fn.__code__.co_firstlineno + 2
    assert info.value.location.startswith(f"{__file__}:{line}:")
    assert torch.equal(out, torch.zeros(16))


@triton.jit
def pair_scalar(a0, a1, b0, b1):
    # pack=2: two consecutive elements of each operand; results come back result-major.
    return a1, a0, b0 + b1, b0 - b1


@triton.jit
def pair_kernel(x_ptr, y_ptr, swapped_ptr, sums_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    swapped, sums = tl.map_elementwise(pair_scalar, tl.load(x_ptr + offs), tl.load(y_ptr + offs),
                                       pack=2)
    tl.store(swapped_ptr + offs, swapped)
    tl.store(sums_ptr + offs, sums)


def test_map_elementwise_pack_hands_consecutive_pairs_to_one_call():
    x = torch.arange(16, dtype=torch.int32)
    y = torch.arange(16, dtype=torch.int32) * 10
    swapped = torch.empty(16, dtype=torch.int32)
    sums = torch.empty(16, dtype=torch.int32)
    pair_kernel[(1, )](x, y, swapped, sums, BLOCK=16)
    assert torch.equal(swapped, x.view(8, 2).flip(1).reshape(16))
    pairs = y.view(8, 2)
    assert torch.equal(sums, torch.stack([pairs[:, 0] + pairs[:, 1], pairs[:, 0] - pairs[:, 1]], 1).reshape(16))
