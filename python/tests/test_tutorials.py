"""Triton's tutorial kernels, written as a user writes them, run on ttinterp, checked against torch.

Vector add, fused softmax, matmul with @triton.autotune, layer norm forward and backward (with the
tutorial's spin lock and partial sums) and a flash-attention forward. Sizes are small: the point is
that unchanged user code runs and gives torch's answer, not speed.
"""
import math

import pytest
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

import ttinterp

# --- 01: vector add ---------------------------------------------------------------------------


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]), )
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


def test_vector_add():
    torch.manual_seed(0)
    x = torch.rand(9973)  # not a multiple of the block: the last program is masked
    y = torch.rand(9973)
    # One f32 addition per element, as torch does: bit-identical.
    assert torch.equal(add(x, y), x + y)


# --- 02: fused softmax ------------------------------------------------------------------------


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # Each program walks over rows with a stride of the number of programs.
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    y = torch.empty_like(x)
    # The tutorial sizes the grid from the GPU's occupancy; fewer programs than rows keeps the
    # persistent row loop exercised.
    num_programs = min(8, n_rows)
    softmax_kernel[(num_programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                         BLOCK_SIZE=BLOCK_SIZE, num_stages=2, num_warps=4)
    return y


def test_fused_softmax():
    torch.manual_seed(0)
    x = torch.randn(37, 181) * 4
    # tl.exp is an f32 exponential (within a few ulp of torch's), and the row sum is added in a
    # different order than torch's: a few ulp of relative error per element.
    torch.testing.assert_close(softmax(x), torch.softmax(x, dim=1), rtol=1e-5, atol=1e-7)


def test_fused_softmax_on_a_row_strided_view():
    torch.manual_seed(1)
    wide = torch.randn(20, 300)
    x = wide[:, 10:110]  # row stride 300, 100 columns
    torch.testing.assert_close(softmax(x), torch.softmax(x, dim=1), rtol=1e-5, atol=1e-7)


# --- 03: matmul with @triton.autotune ---------------------------------------------------------

MATMUL_CONFIGS = [
    triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2},
                  num_stages=3, num_warps=4),
    triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 4},
                  num_stages=4, num_warps=4),
    triton.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1},
                  num_stages=2, num_warps=2),
]


@triton.autotune(configs=MATMUL_CONFIGS, key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                  ACTIVATION: tl.constexpr):
    # Grouped ordering of the output tiles, for L2 reuse on a GPU.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


def matmul(a: torch.Tensor, b: torch.Tensor, activation: str = "") -> torch.Tensor:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), dtype=torch.float16)
    grid = lambda META: (
        triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]), )
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), ACTIVATION=activation)
    return c


def test_matmul_autotune_benchmarks_every_config_and_keeps_one():
    # Default options: every config is benchmarked (and so run) on the CPU.
    torch.manual_seed(0)
    M, N, K = 80, 72, 100  # no dimension a multiple of any block: every mask matters
    # Small integers in fp16: each product and every partial sum (|sum| <= 100 * 16) is exact in
    # f32 and the result fits fp16 exactly, so whatever the order of the additions the result
    # equals torch's exactly.
    a = torch.randint(-4, 5, (M, K)).to(torch.float16)
    b = torch.randint(-4, 5, (K, N)).to(torch.float16)
    c = matmul(a, b)
    expected = (a.float() @ b.float()).to(torch.float16)
    assert torch.equal(c, expected)
    best = matmul_kernel.best_config
    assert any(best.kwargs == cfg.kwargs for cfg in MATMUL_CONFIGS)
    # Every config was timed (so ran), and the kept one is the fastest.
    timings = matmul_kernel.configs_timings
    timed = sorted(str(cfg.kwargs) for cfg in timings)
    assert timed == sorted(str(cfg.kwargs) for cfg in MATMUL_CONFIGS)
    assert all(t[0] > 0 for t in timings.values())
    assert best is min(timings, key=timings.get)
    # The autotuner remembers its choice for this (M, N, K) and reuses it.
    c.fill_(0)
    assert torch.equal(matmul(a, b), expected)
    assert matmul_kernel.best_config.kwargs == best.kwargs


def test_matmul_transposed_operand_with_leaky_relu():
    torch.manual_seed(1)
    a = torch.randn(64, 48).to(torch.float16)
    b = torch.randn(40, 48).to(torch.float16).t()  # a column-major (K, N) view
    c = matmul(a, b, activation="leaky_relu")
    ref = torch.nn.functional.leaky_relu(a.float() @ b.float(), 0.01).to(torch.float16)
    # fp16 products are exact in f32; only the order of 48 f32 additions differs (~1e-6
    # relative), then both round to fp16: at most one fp16 ulp apart (2^-10 relative).
    torch.testing.assert_close(c, ref, rtol=2e-3, atol=1e-3)


# --- 05: layer norm forward and backward ------------------------------------------------------


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Mean and variance in blocks, as the tutorial does for rows longer than one block.
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # Rows share GROUP_SIZE_M partial-sum buffers, each guarded by a lock; the count next to the
    # lock says whether the buffer was written yet.
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                         BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


class LayerNorm(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        y = torch.empty_like(x)
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        mean = torch.empty((M, ), dtype=torch.float32)
        rstd = torch.empty((M, ), dtype=torch.float32)
        MAX_FUSED_SIZE = 65536 // x.element_size()
        BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
        if N > BLOCK_SIZE:
            raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
        num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
        _layer_norm_fwd_fused[(M, )](x_arg, y, weight, bias, mean, rstd, x_arg.stride(0), N, eps,
                                     BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_ctas=1)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.BLOCK_SIZE = BLOCK_SIZE
        ctx.num_warps = num_warps
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w, b, m, v = ctx.saved_tensors
        N = w.shape[0]
        # The tutorial picks 64-256 buffers for GPU-sized inputs; 8 buffers for 64 rows still
        # makes eight programs contend for every lock.
        GROUP_SIZE_M = 8
        locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32)
        # Uninitialised memory may hold anything: NaN makes sure the first writer of each buffer
        # overwrites it rather than accumulating into it.
        _dw = torch.full((GROUP_SIZE_M, N), float("nan"), dtype=x.dtype)
        _db = torch.full((GROUP_SIZE_M, N), float("nan"), dtype=x.dtype)
        dw = torch.empty((N, ), dtype=w.dtype)
        db = torch.empty((N, ), dtype=w.dtype)
        dx = torch.empty_like(dy)
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        _layer_norm_bwd_dx_fused[(M, )](dx, dy, _dw, _db, x, w, m, v, locks, x_arg.stride(0), N,
                                        BLOCK_SIZE_N=ctx.BLOCK_SIZE, GROUP_SIZE_M=GROUP_SIZE_M,
                                        num_warps=ctx.num_warps)
        grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE_N"]), )
        _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, min(GROUP_SIZE_M, M), N, BLOCK_SIZE_M=32,
                                   BLOCK_SIZE_N=128, num_ctas=1)
        return dx, None, dw, db, None


layer_norm = LayerNorm.apply


def test_layer_norm_forward_and_backward_with_lock():
    torch.manual_seed(0)
    M, N, eps = 64, 300, 1e-5
    w_shape = (N, )
    weight = torch.rand(w_shape, requires_grad=True)
    bias = torch.rand(w_shape, requires_grad=True)
    x = (-2.3 + 0.5 * torch.randn(M, N)).requires_grad_(True)
    dy = .1 * torch.randn_like(x)

    # With hazard checking on: the backward pass's plain loads and stores of the shared
    # partial sums are ordered by its lock (atomic_cas acquires what atomic_xchg released).
    with ttinterp.options(hazards="error"):
        y_tri = layer_norm(x, w_shape, weight, bias, eps)
        y_tri.backward(dy, retain_graph=True)
    dx_tri, dw_tri, db_tri = [t.grad.clone() for t in (x, weight, bias)]
    x.grad, weight.grad, bias.grad = None, None, None

    y_ref = torch.nn.functional.layer_norm(x, w_shape, weight, bias, eps)
    y_ref.backward(dy, retain_graph=True)
    dx_ref, dw_ref, db_ref = [t.grad.clone() for t in (x, weight, bias)]

    # Everything is f32. Means and variances are summed in another order than torch's (a few ulp),
    # and rstd goes through tl.sqrt; outputs are O(1), so 1e-5 absolute is a few hundred ulp of
    # slack.
    torch.testing.assert_close(y_tri, y_ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dx_tri, dx_ref, rtol=1e-4, atol=1e-5)
    # dw/db are sums over 64 rows, accumulated in lock order (whichever program got the lock)
    # and then by the reduction kernel: f32 rounding of a 64-term sum.
    torch.testing.assert_close(db_tri, db_ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dw_tri, dw_ref, rtol=1e-4, atol=1e-5)


# --- 06: fused attention forward --------------------------------------------------------------
# Triton 3.9 has no block pointers; the tutorial reads Q, K, V and writes O through tensor
# descriptors over the (Z * H * N_CTX, HEAD_DIM) view: host TensorDescriptor arguments where the
# GPU supports them, otherwise descriptors made in the kernel from plain pointers.


@triton.jit
def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype: tl.constexpr, start_m,
                    qk_scale, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr,
                    BLOCK_N: tl.constexpr, STAGE: tl.constexpr, offs_m: tl.constexpr,
                    offs_n: tl.constexpr, N_CTX: tl.constexpr):
    # STAGE 1: the blocks left of the diagonal (causal), 2: the diagonal block, 3: every block.
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offsetk_y = offset_y + lo
    offsetv_y = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offsetk_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offsetv_y, 0])
        p = p.to(dtype)
        acc = tl.dot(p, v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offsetk_y += BLOCK_N
        offsetv_y += BLOCK_N
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX, HEAD_DIM: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    dtype = tl.float16
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H

    y_dim = Z * H * N_CTX
    desc_q = _maybe_make_tensor_desc(desc_q, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])
    desc_k = _maybe_make_tensor_desc(desc_k, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_N, HEAD_DIM])
    desc_v = _maybe_make_tensor_desc(desc_v, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_N, HEAD_DIM])
    desc_o = _maybe_make_tensor_desc(desc_o, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])

    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2): exp(x) = exp2(x / log(2))
    q = desc_q.load([qo_offset_y, 0])
    # Causal: STAGE 3 runs the blocks left of the diagonal (inner stage 1), then the masked
    # diagonal block (inner stage 2). Non-causal: STAGE 1 runs every block (inner stage 3).
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype,
                                        start_m, qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE,
                                        offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype,
                                        start_m, qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m,
                                        offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(dtype))


def attention(q, k, v, causal, sm_scale, host_descriptors, BLOCK_M=64, BLOCK_N=32):
    Z, H, N_CTX, HEAD_DIM = q.shape
    assert HEAD_DIM == k.shape[-1] == v.shape[-1]
    o = torch.empty_like(q)
    stage = 3 if causal else 1
    M = torch.empty((Z, H, N_CTX), dtype=torch.float32)
    if host_descriptors:
        y_dim = Z * H * N_CTX
        desc_q = TensorDescriptor(q, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                  block_shape=[BLOCK_M, HEAD_DIM])
        desc_k = TensorDescriptor(k, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                  block_shape=[BLOCK_N, HEAD_DIM])
        desc_v = TensorDescriptor(v, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                  block_shape=[BLOCK_N, HEAD_DIM])
        desc_o = TensorDescriptor(o, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                  block_shape=[BLOCK_M, HEAD_DIM])
    else:
        desc_q, desc_k, desc_v, desc_o = q, k, v, o

        # Descriptors made on the device ask for scratch memory, as on a GPU.
        def alloc_fn(size: int, align: int, stream):
            return torch.empty(size, dtype=torch.int8)

        triton.set_allocator(alloc_fn)
    grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H, 1)
    _attn_fwd[grid](sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX=N_CTX,
                    HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGE=stage, num_warps=4,
                    num_stages=3)
    return o, M


@pytest.mark.parametrize("host_descriptors", [True, False], ids=["host_desc", "device_desc"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_fused_attention_forward(causal, host_descriptors):
    torch.manual_seed(0)
    Z, H, N_CTX, HEAD_DIM = 1, 2, 128, 64
    q = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16).normal_(mean=0.0, std=0.5)
    k = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16).normal_(mean=0.0, std=0.5)
    v = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16).normal_(mean=0.0, std=0.5)
    sm_scale = 0.5
    o, lse2 = attention(q, k, v, causal, sm_scale, host_descriptors)

    ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                           is_causal=causal, scale=sm_scale)
    # The kernel rounds the softmax weights to fp16 before the second dot (2^-11 relative per
    # weight, so at most 2^-11 * max|v| ~ 1e-3 on a weighted mean of v) and the output to fp16
    # (2^-11 relative, |o| < 2): 2e-3 absolute against the f32 reference, as on a GPU.
    torch.testing.assert_close(o.float(), ref, rtol=0, atol=2e-3)
    # M holds each row's log-sum-exp in base 2, computed in f32 from exact fp16 products.
    scores = (q.float() @ k.float().transpose(-1, -2)) * sm_scale
    if causal:
        scores = scores.masked_fill(torch.ones(N_CTX, N_CTX, dtype=torch.bool).triu(1),
                                    float("-inf"))
    lse2_ref = torch.logsumexp(scores, dim=-1) / math.log(2)
    torch.testing.assert_close(lse2, lse2_ref, rtol=1e-5, atol=1e-5)
