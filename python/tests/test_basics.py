"""Launching unchanged Triton code: grids, constexprs, keywords, specialization, NumPy arrays."""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl

import ttinterp


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


def test_backend_is_active():
    assert isinstance(triton.runtime.driver.active, ttinterp.backend.driver.TTInterpDriver)
    # Libraries take the target's backend for the tensors' device type: flash-linear-attention
    # does `getattr(torch, backend)` at import (mapping "cuda" and "hip" to torch.cuda).
    backend = triton.runtime.driver.active.get_current_target().backend
    assert backend == "cpu"
    assert getattr(torch, backend) is torch.cpu


@pytest.mark.parametrize("n", [1, 17, 1024, 4099])
def test_vector_add_tuple_grid(n):
    x = torch.randn(n)
    y = torch.randn(n)
    out = torch.empty(n)
    add_kernel[(triton.cdiv(n, 256), )](x, y, out, n, BLOCK=256)
    assert torch.equal(out, x + y)


def test_vector_add_lambda_grid_and_keywords():
    n = 3000
    x = torch.arange(n, dtype=torch.float32)
    y = torch.full((n, ), 0.5)
    out = torch.zeros(n)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]), )
    add_kernel[grid](x_ptr=x, y_ptr=y, out_ptr=out, n=n, BLOCK=512)
    assert torch.equal(out, x + 0.5)


def test_numpy_arrays():
    x = np.arange(100, dtype=np.int32)
    y = np.full(100, 7, dtype=np.int32)
    out = np.zeros(100, dtype=np.int32)
    add_kernel[(1, )](x, y, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out, np.arange(100) + 7)


def test_integer_specialization_of_one_and_multiples_of_16():
    # n == 1 becomes a constexpr, n % 16 == 0 a divisibility hint: three compiles, one kernel.
    for n in (1, 32, 33):
        x = torch.arange(n, dtype=torch.float32)
        out = torch.zeros(n)
        add_kernel[(1, )](x, x, out, n, BLOCK=64)
        assert torch.equal(out, 2 * x)


def test_cached_kernel_does_not_recompile():
    x = torch.ones(64)
    out = torch.zeros(64)
    compiled = add_kernel[(1, )](x, x, out, 64, BLOCK=64)
    again = add_kernel[(1, )](x, x, out, 64, BLOCK=64)
    assert compiled is again
    assert torch.equal(out, torch.full((64, ), 2.0))


def test_ttir_keeps_python_locations():
    x = torch.ones(64)
    compiled = add_kernel[(1, )](x, x, x, 64, BLOCK=64)
    assert "test_basics.py" in compiled.asm["ttinterp"].decode()


@pytest.mark.parametrize("expected", [ValueError, AssertionError])
def test_num_warps_not_a_power_of_two_is_refused_as_the_nvidia_backend_refuses_it(expected):
    # The NVIDIA backend asserts; code written for it (Triton's own tests) expects AssertionError.
    x = torch.randn(64)
    with pytest.raises(expected, match="num_warps must be a power of 2, not 3"):
        add_kernel[(1, )](x, x, torch.empty(64), 64, BLOCK=64, num_warps=3)
