"""Triton language features user code relies on, on ttinterp, checked against torch.

@triton.heuristics, tl.device_print, libdevice calls, host TensorDescriptor arguments, atomics,
tl.dot precisions, 2-D grids over strided views, bool and float scalar arguments,
do_not_specialize, and the gathers and divisions of real normalisation kernels.
"""
import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.tools.tensor_descriptor import TensorDescriptor

import ttinterp

# --- @triton.heuristics -----------------------------------------------------------------------


@triton.heuristics({
    "BLOCK": lambda args: min(triton.next_power_of_2(args["n"]), 128),
    "EVEN_N": lambda args: args["n"] % min(triton.next_power_of_2(args["n"]), 128) == 0,
})
@triton.jit
def scale_with_heuristics(x_ptr, out_ptr, flags_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(x_ptr + offsets)
        tl.store(out_ptr + offsets, 3 * x)
    else:
        x = tl.load(x_ptr + offsets, mask=offsets < n)
        tl.store(out_ptr + offsets, 3 * x, mask=offsets < n)
    if tl.program_id(0) == 0:
        # What the heuristics chose, for the test to check.
        tl.store(flags_ptr, BLOCK)
        if EVEN_N:
            tl.store(flags_ptr + 1, 1)
        else:
            tl.store(flags_ptr + 1, 0)


@pytest.mark.parametrize("n, block, even", [(48, 64, False), (512, 128, True), (300, 128, False)])
def test_heuristics_choose_constexprs(n, block, even):
    x = torch.arange(n, dtype=torch.int32)
    out = torch.zeros(n, dtype=torch.int32)
    flags = torch.zeros(2, dtype=torch.int32)
    scale_with_heuristics[(triton.cdiv(n, block), )](x, out, flags, n)
    assert torch.equal(out, 3 * x)
    assert flags.tolist() == [block, int(even)]


# --- tl.device_print --------------------------------------------------------------------------


@triton.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))
    tl.device_print("x", x)


def test_device_print_writes_every_element(capfd):
    x = torch.tensor([10, -3, 7, 42, 0, 5, 6, 9], dtype=torch.int32)
    print_kernel[(2, )](x, BLOCK=4)
    lines = capfd.readouterr().out.splitlines()
    # Triton's GPU format, one line per element: "pid (x, y, z) idx (i) x: value". Programs may
    # print in any order, so compare as a set.
    expected = {f"pid ({pid}, 0, 0) idx ({i}) x: {int(x[pid * 4 + i])}" for pid in range(2)
                for i in range(4)}
    assert len(lines) == 8
    assert set(lines) == expected


# --- libdevice --------------------------------------------------------------------------------


@triton.jit
def libdevice_kernel(x_ptr, exp_ptr, tanh_ptr, erf_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(exp_ptr + offsets, libdevice.exp(x), mask=mask)
    tl.store(tanh_ptr + offsets, libdevice.tanh(x), mask=mask)
    tl.store(erf_ptr + offsets, libdevice.erf(x), mask=mask)


def test_libdevice_exp_tanh_erf_match_torch():
    x = torch.linspace(-8, 8, 1001, dtype=torch.float32)
    outs = [torch.empty_like(x) for _ in range(3)]
    libdevice_kernel[(triton.cdiv(1001, 256), )](x, *outs, 1001, BLOCK=256)
    # libdevice's f32 exp/tanh/erf are within 1-2 ulp of the exact value, and so is torch's CPU
    # implementation: compare with a tolerance of a few ulp (f32 ulp is 2^-23 ~ 1.2e-7 relative)
    # against the exact value rounded from f64.
    x64 = x.double()
    for got, ref in zip(outs, (torch.exp(x64), torch.tanh(x64), torch.erf(x64))):
        torch.testing.assert_close(got, ref.float(), rtol=5e-7, atol=1e-9)


@triton.jit
def gelu_tanh_mul_kernel(a_ptr, b_ptr, c_ptr, stride, n_cols: tl.constexpr, BLOCK: tl.constexpr):
    # Liger-Kernel's GEGLU forward: tanh through libdevice, inside a chain of arithmetic.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * stride + cols, mask=mask, other=0)
    b = tl.load(b_ptr + row * stride + cols, mask=mask, other=0)
    inner = 0.7978845608028654 * (a + 0.044715 * a * a * a)
    gelu = 0.5 * a * (1 + libdevice.tanh(inner))
    tl.store(c_ptr + row * stride + cols, gelu * b, mask=mask)


def test_libdevice_tanh_in_gelu_matches_torch():
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(64, 1000, generator=gen) * 3
    b = torch.randn(64, 1000, generator=gen)
    c = torch.empty_like(a)
    gelu_tanh_mul_kernel[(64, )](a, b, c, a.stride(0), n_cols=1000, BLOCK=1024)
    # Computed in double from the same formula: the f32 kernel rounds each of its ~10 ops and
    # its tanh is within 1 ulp, so a few ulp of the result (plus a little absolute slack where
    # 1 + tanh cancels).
    a64, b64 = a.double(), b.double()
    ref = 0.5 * a64 * (1 + torch.tanh(0.7978845608028654 * (a64 + 0.044715 * a64**3))) * b64
    torch.testing.assert_close(c, ref.float(), rtol=2e-6, atol=1e-6)


@triton.jit
def dyt_kernel(x_ptr, y_ptr, alpha_ptr, gamma_ptr, beta_ptr, N: tl.constexpr,
               BLOCK_N: tl.constexpr):
    # Liger-Kernel's DyT forward: int64 column offsets, a block wider than the row.
    col = tl.cast(tl.program_id(0), tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = col < N
    row = tl.program_id(1).to(tl.int64)
    x_ptr += row * N
    y_ptr += row * N
    alpha = tl.load(alpha_ptr)
    gamma = tl.load(gamma_ptr + col, mask=mask, other=0.0)
    beta = tl.load(beta_ptr + col, mask=mask, other=0.0)
    x = tl.load(x_ptr + col, mask=mask, other=0.0)
    y = gamma * libdevice.tanh(x * alpha) + beta
    tl.store(y_ptr + col, y, mask=mask)


def test_int64_offsets_with_a_masked_tail_match_torch():
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(40, 300, generator=gen)
    alpha = torch.tensor([0.7])
    gamma, beta = torch.randn(300, generator=gen), torch.randn(300, generator=gen)
    y = torch.full_like(x, 123.0)
    dyt_kernel[(2, 40)](x, y, alpha, gamma, beta, N=300, BLOCK_N=256)
    ref = gamma.double() * torch.tanh(x.double() * 0.7) + beta.double()
    torch.testing.assert_close(y, ref.float(), rtol=2e-6, atol=1e-6)


@triton.jit
def group_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, hidden, channels_per_group, eps,
                      BLOCK: tl.constexpr):
    # Liger-Kernel's group norm forward: tl.sum of a 1-D block (a reshape to its own type), the
    # channel `offs // per_channel` (a splatted i32 divisor) and the weight gathered per channel.
    batch, group = tl.program_id(0), tl.program_id(1)
    groups = tl.num_programs(1)
    x_ptr += (batch * groups + group) * hidden
    y_ptr += (batch * groups + group) * hidden
    offs = tl.arange(0, BLOCK)
    mask = offs < hidden
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.sum(x) / hidden
    var = tl.sum(x * x) / hidden - mean * mean
    rstd = 1 / tl.sqrt(var + eps)
    channel = group * channels_per_group + offs // (hidden // channels_per_group)
    w = tl.load(w_ptr + channel, mask=mask)
    b = tl.load(b_ptr + channel, mask=mask)
    tl.store(y_ptr + offs, (x - mean) * rstd * w + b, mask=mask)


def test_group_norm_with_per_channel_gathers_matches_torch():
    gen = torch.Generator().manual_seed(13)
    n, c, spatial, groups = 3, 12, 50, 4  # 3 channels of 50 a group: 150 of a 256 block
    x = torch.randn(n, c, spatial, generator=gen)
    w, b = torch.randn(c, generator=gen), torch.randn(c, generator=gen)
    y = torch.full_like(x, 123.0)
    group_norm_kernel[(n, groups)](x, y, w, b, 150, c // groups, 1e-5, BLOCK=256)
    ref = torch.nn.functional.group_norm(x.double(), groups, w.double(), b.double(), 1e-5)
    torch.testing.assert_close(y, ref.float(), rtol=1e-5, atol=1e-5)


@triton.jit
def per_channel_scale_kernel(x_ptr, w_ptr, out_ptr, hidden, per_channel, BLOCK: tl.constexpr):
    # Liger's group norm second pass: a loop over blocks of a row, the weight of each element's
    # channel `c0 + (i + arange) // per_channel`, the tail masked by the same offsets.
    row = tl.program_id(0)
    c0 = row * (hidden // per_channel)
    for i in range(0, hidden, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        mask = offs < hidden
        w = tl.load(w_ptr + c0 + offs // per_channel, mask=mask, other=-1.0)
        x = tl.load(x_ptr + row * hidden + offs, mask=mask)
        tl.store(out_ptr + row * hidden + offs, x * w, mask=mask)


def test_per_channel_weights_gathered_in_a_loop_match_torch():
    gen = torch.Generator().manual_seed(5)
    rows, channels, per_channel = 4, 3, 50  # rows of 150 in blocks of 64: a tail of 22
    x = torch.randn(rows, channels * per_channel, generator=gen)
    w = torch.randn(rows * channels, generator=gen)
    out = torch.full_like(x, 7.0)
    per_channel_scale_kernel[(rows, )](x, w, out, channels * per_channel, per_channel, BLOCK=64)
    ref = x * w.view(rows, channels).repeat_interleave(per_channel, dim=1)
    torch.testing.assert_close(out, ref, rtol=0, atol=0)


@triton.jit
def index_gather_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # out[i] = x[idx[i]]: a gather through loaded i32 indices, runs and repeats among them.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + idx, mask=mask), mask=mask)


def test_gather_through_loaded_indices_matches_torch():
    gen = torch.Generator().manual_seed(17)
    x = torch.randn(1000, generator=gen)
    idx = torch.cat([torch.arange(100, 300), torch.full((150, ), 7),
                     torch.randint(0, 1000, (350, ), generator=gen)]).to(torch.int32)
    out = torch.zeros(700)
    index_gather_kernel[(3, )](x, idx, out, 700, BLOCK=256)
    assert torch.equal(out, x[idx.long()])


@triton.jit
def erf_f64_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, libdevice.erf(tl.load(x_ptr + i)))


def test_libdevice_on_float64():
    x = torch.linspace(-3, 3, 64, dtype=torch.float64)
    out = torch.empty_like(x)
    erf_f64_kernel[(1, )](x, out, BLOCK=64)
    # libdevice's __nv_erf is within 2 ulp in f64.
    torch.testing.assert_close(out, torch.erf(x), rtol=1e-15, atol=1e-300)


# --- host TensorDescriptor arguments ----------------------------------------------------------


@triton.jit
def descriptor_matmul_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([offs_am, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, offs_bn])
        accumulator = tl.dot(a, b, accumulator)
    c_desc.store([offs_am, offs_bn], accumulator.to(tl.float16))


def test_tensor_descriptor_matmul_with_partial_blocks():
    M, N, K = 72, 40, 56  # none a multiple of its block: loads pad with zeros, stores clip
    BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32
    torch.manual_seed(0)
    # Small integers in fp16: products and sums (|sum| <= 56 * 16) are exact, so the result equals
    # torch's exactly whatever the order of the additions.
    a = torch.randint(-4, 5, (M, K)).to(torch.float16)
    b = torch.randint(-4, 5, (K, N)).to(torch.float16)
    c = torch.full((M, N), 12345.0, dtype=torch.float16)
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_K, BLOCK_N])
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N])
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    descriptor_matmul_kernel[grid](a_desc, b_desc, c_desc, M, N, K, BLOCK_M=BLOCK_M,
                                   BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    assert torch.equal(c, (a.float() @ b.float()).to(torch.float16))


@triton.jit
def descriptor_copy_kernel(src_desc, dst_ptr, stride_dst, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr):
    # Reads a block that may cross the tensor's edge and writes it whole: the padding shows.
    block = src_desc.load([tl.program_id(0) * BLOCK_M, tl.program_id(1) * BLOCK_N])
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(dst_ptr + rows[:, None] * stride_dst + cols[None, :], block)


@pytest.mark.parametrize("padding", ["zero", "nan"])
def test_tensor_descriptor_load_pads_outside_the_shape(padding):
    src = torch.arange(10 * 12, dtype=torch.float32).reshape(10, 12)
    dst = torch.empty(16, 16)
    desc = TensorDescriptor(src, shape=[10, 12], strides=[12, 1], block_shape=[8, 8],
                            padding=padding)
    descriptor_copy_kernel[(2, 2)](desc, dst, dst.stride(0), BLOCK_M=8, BLOCK_N=8)
    expected = torch.full((16, 16), 0.0 if padding == "zero" else float("nan"))
    expected[:10, :12] = src
    torch.testing.assert_close(dst, expected, rtol=0, atol=0, equal_nan=True)


# --- atomics ----------------------------------------------------------------------------------


@triton.jit
def histogram_kernel(values_ptr, bins_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    v = tl.load(values_ptr + offsets, mask=mask)
    tl.atomic_add(bins_ptr + v, 1, mask=mask)


def test_atomic_add_histogram_matches_bincount():
    torch.manual_seed(0)
    values = torch.randint(0, 37, (5000, ), dtype=torch.int32)
    bins = torch.zeros(37, dtype=torch.int32)
    histogram_kernel[(triton.cdiv(5000, 256), )](values, bins, 5000, BLOCK=256)
    assert torch.equal(bins, torch.bincount(values, minlength=37).to(torch.int32))


@triton.jit
def atomic_max_and_sum_kernel(x_ptr, max_ptr, sum_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0)
    tl.atomic_max(max_ptr, tl.max(x, axis=0))
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))


def test_atomic_max_and_float_add_across_programs():
    torch.manual_seed(0)
    # Integer-valued floats: every partial sum is exact in f32, so the order in which the
    # programs add does not matter.
    x = torch.randint(-1000, 1000, (3000, )).to(torch.float32)
    result_max = torch.full((1, ), -float("inf"))
    result_sum = torch.zeros(1)
    atomic_max_and_sum_kernel[(triton.cdiv(3000, 128), )](x, result_max, result_sum, 3000,
                                                          BLOCK=128)
    assert result_max.item() == x.max().item()
    assert result_sum.item() == x.sum().item()


# --- tl.dot precisions ------------------------------------------------------------------------


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
               PRECISION: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision=PRECISION))


def test_dot_ieee_on_float32_matches_torch():
    torch.manual_seed(0)
    a = torch.randn(32, 64)
    b = torch.randn(64, 16)
    c = torch.empty(32, 16)
    dot_kernel[(1, )](a, b, c, 32, 16, 64, PRECISION="ieee")
    # Full f32 products; only the order of 64 f32 additions differs from the f64 reference:
    # |error| <~ 64 * 2^-24 * sum|a_k b_k| ~ 2e-5 for these sizes.
    ref = (a.double() @ b.double()).float()
    torch.testing.assert_close(c, ref, rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("precision", ["ieee", "tf32", None])
def test_dot_tf32_drops_low_mantissa_bits_and_ieee_keeps_them(precision):
    # 1 + 2^-12 needs 13 mantissa bits: exact in f32, 1.0 in tf32 (10 bits). Worked out by hand:
    # sum over K=16 of (1 + 2^-12) * 1 is 16 + 2^-8 exactly with ieee inputs and 16 with tf32,
    # which is what an f32 tl.dot uses by default on a GPU with tensor cores (None).
    a = torch.full((16, 16), 1 + 2**-12)
    b = torch.ones(16, 16)
    c = torch.empty(16, 16)
    dot_kernel[(1, )](a, b, c, 16, 16, 16, PRECISION=precision)
    expected = 16 + 2**-8 if precision == "ieee" else 16.0
    assert torch.equal(c, torch.full((16, 16), expected))


# --- a 2-D grid over strided views ------------------------------------------------------------


@triton.jit
def add_transpose_kernel(x_ptr, y_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_ym, stride_yn,
                         stride_om, stride_on, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out[m, n] = x[m, n] + y[n, m], tiled over a 2-D grid.
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask)
    y = tl.load(y_ptr + rn[None, :] * stride_ym + rm[:, None] * stride_yn, mask=mask)
    tl.store(out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on, x + y, mask=mask)


def test_2d_grid_with_strided_views():
    base = torch.arange(50 * 90, dtype=torch.float32).reshape(50, 90)
    x = base[5:42, ::2]  # 37 x 45, strides (90, 2)
    y = torch.arange(45 * 37, dtype=torch.float32).reshape(37, 45).t()  # 45 x 37, strides (1, 45)
    out_storage = torch.zeros(45, 37)
    out = out_storage.t()  # 37 x 45, column-major
    grid = (triton.cdiv(37, 16), triton.cdiv(45, 8))
    add_transpose_kernel[grid](x, y, out, 37, 45, *x.stride(), *y.stride(), *out.stride(),
                               BLOCK_M=16, BLOCK_N=8)
    assert torch.equal(out, x + y.t())
    assert torch.equal(base, torch.arange(50 * 90, dtype=torch.float32).reshape(50, 90))


# --- bool and float scalar arguments ----------------------------------------------------------


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, alpha, negate, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    result = alpha * x + y
    if negate:
        result = -result
    tl.store(out_ptr + offsets, result, mask=mask)


@pytest.mark.parametrize("alpha, negate", [(2.5, False), (-0.75, True), (1.0, True)])
def test_bool_and_float_scalar_arguments(alpha, negate):
    x = torch.arange(-50, 50, dtype=torch.float32)
    y = torch.arange(100, dtype=torch.float32) / 4
    out = torch.empty(100)
    axpy_kernel[(1, )](x, y, out, alpha, negate, 100, BLOCK=128)
    # alpha is an f32 kernel argument (exactly representable here): alpha * x + y rounds once per
    # operation, as torch does in f32 (the backend does not fuse into an FMA).
    expected = torch.tensor(alpha, dtype=torch.float32) * x + y
    assert torch.equal(out, -expected if negate else expected)


# --- do_not_specialize ------------------------------------------------------------------------


@triton.jit(do_not_specialize=["n"])
def count_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, offsets < n)


def test_do_not_specialize_compiles_once():
    compiled = []
    for n in (1, 16, 17, 64):
        out = torch.empty(64, dtype=torch.int8)
        compiled.append(count_kernel[(1, )](out, n, BLOCK=64))
        assert torch.equal(out, (torch.arange(64) < n).to(torch.int8))
    # 1 and multiples of 16 would otherwise each give their own specialization.
    assert all(k is compiled[0] for k in compiled)


def test_without_do_not_specialize_one_is_a_constant():
    @triton.jit
    def specialized_count_kernel(out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        tl.store(out_ptr + offsets, offsets < n)

    out = torch.empty(64, dtype=torch.int8)
    one = specialized_count_kernel[(1, )](out, 1, BLOCK=64)
    assert torch.equal(out, (torch.arange(64) < 1).to(torch.int8))
    many = specialized_count_kernel[(1, )](out, 17, BLOCK=64)
    assert torch.equal(out, (torch.arange(64) < 17).to(torch.int8))
    assert one is not many


def test_options_autotune_first_takes_the_first_config():
    configs = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]

    @triton.autotune(configs=configs, key=["n"])
    @triton.jit
    def tuned_copy(src, dst, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offsets, tl.load(src + offsets, mask=offsets < n), mask=offsets < n)

    src = np.arange(200, dtype=np.float32)
    dst = np.zeros(200, dtype=np.float32)
    with ttinterp.options(autotune="first"):
        tuned_copy[lambda meta: (triton.cdiv(200, meta["BLOCK"]), )](src, dst, 200)
    np.testing.assert_array_equal(dst, src)
    assert tuned_copy.best_config.kwargs == {"BLOCK": 32}


@triton.jit
def masked_int_div_mod_kernel(x_ptr, y_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    # FlagGems' integer floor_divide and remainder: the masked-off tail lanes load 0 and are
    # divided by before the masked store, as on the GPU (where their results are never seen).
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    y = tl.load(y_ptr + i, mask=m)
    tl.store(q_ptr + i, x // y, mask=m)
    tl.store(r_ptr + i, x % y, mask=m)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_division_of_masked_off_lanes_is_not_a_fault(dtype):
    n = 1000  # not a multiple of the block: the last program has 24 masked-off lanes
    x = torch.randint(-100, 100, (n, ), dtype=dtype)
    y = torch.randint(1, 10, (n, ), dtype=dtype) * (torch.randint(0, 2, (n, ), dtype=dtype) * 2 - 1)
    q, r = torch.empty_like(x), torch.empty_like(x)
    masked_int_div_mod_kernel[(triton.cdiv(n, 256), )](x, y, q, r, n, BLOCK=256)
    # Triton's // and % on integers truncate toward zero, as C does (torch.div rounding "trunc",
    # torch.fmod).
    assert torch.equal(q, torch.div(x, y, rounding_mode="trunc"))
    assert torch.equal(r, torch.fmod(x, y))


# --- integer scalars of 64 bits, and tl.const pointers ------------------------------------------


@triton.jit
def store_scalar_bits(value, bits_ptr, as_float_ptr):
    tl.store(bits_ptr, value.to(tl.int64, bitcast=True))
    tl.store(as_float_ptr, value.to(tl.float32))


@pytest.mark.parametrize("value", [2**63 - 1, 2**63, 2**64 - 1, -2**63])
def test_64_bit_integer_scalars_keep_their_bits(value):
    # From 2**63 up Triton passes the argument as u64: the kernel sees its bits, and converts it
    # to float as unsigned.
    bits, as_float = torch.zeros(1, dtype=torch.int64), torch.zeros(1)
    store_scalar_bits[(1, )](value, bits, as_float)
    assert bits.item() == (value - 2**64 if value >= 2**63 else value)
    assert as_float.item() == float(np.float32(value))


@triton.jit
def copy_through_const_pointer(src: tl.const, dst, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask) * 2, mask=mask)


def test_a_tl_const_pointer_parameter_is_read():
    # Triton 3.9 puts it in a named address space: !tt.ptr<f32, "constant">.
    x = torch.randn(100)
    out = torch.zeros(100)
    copy_through_const_pointer[(1, )](x, out, 100, BLOCK=128)
    assert torch.equal(out, x * 2)
    with pytest.raises(ttinterp.KernelFault):
        copy_through_const_pointer[(1, )](torch.randn(50), out, 100, BLOCK=128)  # reads past it


# --- the rest of libdevice, against mpmath -------------------------------------------------------


@triton.jit
def libdevice_specials(x_ptr, y_ptr, z_ptr, n_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x, y, z, n = tl.load(x_ptr + i), tl.load(y_ptr + i), tl.load(z_ptr + i), tl.load(n_ptr + i)
    tl.store(out_ptr + 0 * BLOCK + i, libdevice.erfcx(x))
    tl.store(out_ptr + 1 * BLOCK + i, libdevice.erfcinv(y))
    tl.store(out_ptr + 2 * BLOCK + i, libdevice.normcdfinv(z))
    tl.store(out_ptr + 3 * BLOCK + i, libdevice.cyl_bessel_i0(x))
    tl.store(out_ptr + 4 * BLOCK + i, libdevice.cyl_bessel_i1(x))
    tl.store(out_ptr + 5 * BLOCK + i, libdevice.jn(n, tl.abs(x) + 0.5))
    tl.store(out_ptr + 6 * BLOCK + i, libdevice.yn(n, tl.abs(x) + 0.5))
    tl.store(out_ptr + 7 * BLOCK + i, libdevice.norm3d(x, y, z))
    tl.store(out_ptr + 8 * BLOCK + i, libdevice.rnorm4d(x, y, z, x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_special_libdevice_functions_match_mpmath(dtype):
    mpmath = pytest.importorskip("mpmath")  # torch's own dependency (through sympy)
    mp = mpmath.mp
    mp.dps = 50
    x = torch.tensor([-3.0, -0.5, 0.0, 0.5, 1.0, 5.0, 30.0, 150.0], dtype=dtype)
    y = torch.tensor([1e-30, 1e-10, 0.01, 0.5, 1.0, 1.5, 1.99, 1.9999], dtype=dtype)
    z = torch.tensor([1e-30, 1e-10, 0.01, 0.3, 0.5, 0.7, 0.99, 0.9999], dtype=dtype)
    n = torch.tensor([0, 1, 2, 5, 0, 1, 2, 5], dtype=torch.int32)
    out = torch.zeros(9 * 8, dtype=dtype)
    libdevice_specials[(1, )](x, y, z, n, out, BLOCK=8)
    got = out.view(9, 8).tolist()

    def v(t, k):
        return mp.mpf(float(t[k]))

    references = [
        lambda k: mp.exp(v(x, k)**2) * mp.erfc(v(x, k)),
        lambda k: mp.erfinv(1 - v(y, k)),
        lambda k: mp.sqrt(2) * mp.erfinv(2 * v(z, k) - 1),
        lambda k: mp.besseli(0, v(x, k)),
        lambda k: mp.besseli(1, v(x, k)),
        lambda k: mp.besselj(int(n[k]), abs(v(x, k)) + mp.mpf("0.5")),
        lambda k: mp.bessely(int(n[k]), abs(v(x, k)) + mp.mpf("0.5")),
        lambda k: mp.sqrt(v(x, k)**2 + v(y, k)**2 + v(z, k)**2),
        lambda k: 1 / mp.sqrt(2 * v(x, k)**2 + v(y, k)**2 + v(z, k)**2),
    ]
    names = ["erfcx", "erfcinv", "normcdfinv", "i0", "i1", "jn", "yn", "norm3d", "rnorm4d"]
    for name, reference, row in zip(names, references, got):
        for k, value in enumerate(row):
            want = reference(k)
            if dtype == torch.float32:
                # Within one f32 ulp of the exact value (the C library's jn/yn: two), or
                # infinite where it overflows f32.
                exact = float(want)
                if abs(exact) > 3.4028234663852886e38:
                    assert value == float("inf") * (1 if exact > 0 else -1), (name, k)
                    continue
                ulp = float(np.spacing(np.float32(abs(exact))))
                assert abs(value - exact) <= (2 if name in ("jn", "yn") else 1) * ulp, (name, k)
            else:
                # Within 2 f64 ulps (the C library's jn/yn and I0/I1: 1e-13 relative).
                bound = 1e-13 if name in ("jn", "yn", "i0", "i1") else 4.5e-16
                assert abs(mp.mpf(value) - want) <= bound * abs(want), (name, k, value, want)


@triton.jit
def rsqrt_rn(x_ptr, out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, libdevice.rsqrt_rn(tl.load(x_ptr + i)))


def test_rsqrt_rn_is_correctly_rounded():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    x = torch.rand(4096, generator=torch.Generator().manual_seed(3)) * 1000 + 1e-3
    out = torch.empty_like(x)
    rsqrt_rn[(1, )](x, out, BLOCK=4096)
    want = [np.float32(float(1 / mpmath.sqrt(mpmath.mpf(float(v))))) for v in x.tolist()]
    assert out.tolist() == [float(w) for w in want]
