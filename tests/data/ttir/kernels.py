# Small Triton kernels whose TTIR is committed under tests/data/ttir/<version>/.
#
# Each kernel exercises a group of ops; scripts/gen_ttir_samples.py compiles them without a GPU
# (target sm_90) with several Triton versions. The tests in tests/frontend/ check the parsed
# signatures against the SPECS table below, so keep the two in sync.
#
# Version notes: tensor descriptors are `tl._experimental_make_tensor_descriptor` before 3.4;
# tl.histogram takes a mask from 3.4 on (not used here).

import triton
import triton.language as tl

try:  # 3.3+: libdevice lives under triton.language.extra
    from triton.language.extra import libdevice
except ImportError:  # pragma: no cover
    from triton.language.extra.cuda import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0, eviction_policy="evict_first")
    y = tl.load(y_ptr + offsets, mask=mask, other=1.0, cache_modifier=".cg")
    tl.store(out_ptr + offsets, x + y, mask=mask, eviction_policy="evict_last")


@triton.jit
def atomics_kernel(counter_ptr, fmax_ptr, lock_ptr, vals_ptr, n):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    offs = tl.arange(0, 64)
    m = offs < n
    v = tl.load(vals_ptr + offs, mask=m, other=0.0, volatile=True)
    tl.atomic_add(counter_ptr + offs % 4, 1, mask=m)
    tl.atomic_max(fmax_ptr, tl.max(v, axis=0), sem="relaxed")
    tl.atomic_add(fmax_ptr + 1 + offs * 0, v, mask=m, sem="release", scope="cta")
    while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire") == 1:
        pass
    old = tl.atomic_xchg(lock_ptr + 1, pid + nprog)
    tl.atomic_min(counter_ptr + 4, old)
    tl.atomic_and(counter_ptr + 5, pid)
    tl.atomic_or(counter_ptr + 6, pid)
    tl.atomic_xor(counter_ptr + 7, pid, sem="acq_rel", scope="sys")
    tl.atomic_xchg(lock_ptr, 0, sem="release")


@triton.jit
def reduce_kernel(x_ptr, sum_ptr, max_ptr, argmax_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(sum_ptr + rows, tl.sum(x, axis=1))
    tl.store(max_ptr + cols, tl.max(x, axis=0))
    tl.store(argmax_ptr + rows, tl.argmax(x, axis=1))
    tl.store(sum_ptr + M, tl.reduce(x, None, _mul_combine))


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def scan_kernel(x_ptr, out_ptr, out2_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=0))
    tl.store(out2_ptr + offs, tl.cumprod(x, axis=0, reverse=True))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    acc2 = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        acc2 = tl.dot(a, b, acc2, input_precision="tf32")
    bt = tl.trans(tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :]))
    acc3 = tl.dot(bt.to(tl.float16), tl.zeros((BK, BM), dtype=tl.float16))
    c = acc + acc2 + tl.sum(acc3, axis=0)[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def shape_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 64)
    x = tl.load(x_ptr + offs)
    r = tl.reshape(x, (8, 8))
    p = tl.permute(tl.reshape(x, (4, 4, 4)), (2, 0, 1))
    j = tl.join(r, r * 2.0)
    a, b = tl.split(j)
    c = tl.cat(tl.reshape(a, (64,)), tl.reshape(b, (64,)), can_reorder=True)
    e = tl.expand_dims(tl.sum(p, axis=2), 2)
    w = tl.where(r > 0.0, r, -r)
    tl.store(out_ptr + tl.arange(0, 128), c)
    tl.store(out_ptr + 128 + offs, tl.reshape(w + tl.broadcast_to(e, (4, 4, 4)).reshape(8, 8), (64,)))


@triton.jit
def hist_gather_kernel(x_ptr, idx_ptr, hist_ptr, out_ptr):
    offs = tl.arange(0, 512)
    x = tl.load(x_ptr + offs)
    h = tl.histogram(x, 16)
    tl.store(hist_ptr + tl.arange(0, 16), h)
    rows = tl.arange(0, 32)
    src = tl.load(x_ptr + rows[:, None] * 16 + tl.arange(0, 16)[None, :]).to(tl.float32)
    idx = tl.load(idx_ptr + rows[:, None] * 8 + tl.arange(0, 8)[None, :])
    g = tl.gather(src, idx, axis=1)
    tl.store(out_ptr + rows[:, None] * 8 + tl.arange(0, 8)[None, :], g)


@triton.jit
def fp8_kernel(x_ptr, out_ptr, out16_ptr, bits_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    e5 = x.to(tl.float8e5, fp_downcast_rounding="rtz")
    e4 = x.to(tl.float8e4nv)
    back = e5.to(tl.float32) + e4.to(tl.float32)
    tl.store(out_ptr + offs, back)
    tl.store(out16_ptr + offs, x.to(tl.bfloat16).to(tl.float16))
    tl.store(bits_ptr + offs, e5.to(tl.int8, bitcast=True))


@triton.jit
def debug_kernel(x_ptr, n):
    pid = tl.program_id(0)
    offs = tl.arange(0, 32)
    x = tl.load(x_ptr + offs)
    tl.device_print("x: ", x)
    tl.device_print("pid", pid, n)
    tl.device_assert(x >= 0, "x must be non-negative")
    tl.debug_barrier()
    tl.store(x_ptr + offs, x + 1)


@triton.jit
def block_ptr_kernel(a_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.make_block_ptr(base=a_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BM, 0),
                            block_shape=(BM, BN), order=(1, 0))
    dst = tl.make_block_ptr(base=out_ptr, shape=(M, N), strides=(stride_m, 1), offsets=(pid * BM, 0),
                            block_shape=(BM, BN), order=(1, 0))
    for _ in range(0, N, BN):
        t = tl.load(src, boundary_check=(0, 1), padding_option="zero")
        tl.store(dst, t * 2.0, boundary_check=(1,))
        src = tl.advance(src, (0, BN))
        dst = tl.advance(dst, (0, BN))


_make_desc = getattr(tl, "make_tensor_descriptor", None) or tl._experimental_make_tensor_descriptor


@triton.jit
def tensor_desc_kernel(a_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    src = _make_desc(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = _make_desc(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    t = src.load([pid * BM, 0])
    dst.store([pid * BM, 0], t + 1.0)


@triton.jit
def host_desc_kernel(in_desc, out_desc, M):
    # Host-side TensorDescriptor arguments (Triton 3.4+): each arrives as the descriptor, then its
    # shape (i32) and strides (i64).
    pid = tl.program_id(0)
    t = in_desc.load([pid * 16, 0])
    out_desc.store([pid * 16, 0], t * 2.0)


@triton.jit
def math_kernel(x_ptr, y_ptr, u_ptr, out_ptr, lo, hi):
    offs = tl.arange(0, 256)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    u = tl.load(u_ptr + offs)
    r = tl.sqrt_rn(x) + tl.div_rn(x, y) + libdevice.log1p(x) + tl.exp(y) + tl.fdiv(x, y)
    r = r + tl.clamp(x, lo, hi) + libdevice.pow(x, y) + tl.math.rsqrt(y) + tl.erf(x)
    hi_bits = tl.umulhi(u, u)
    r = r + hi_bits.to(tl.float32) + tl.abs(x) + tl.floor(y) + tl.maximum(x, y) + tl.fma(x, y, x)
    s = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [u], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, r + s.to(tl.float32))
    tl.store(out_ptr + 256 + offs, (u >> 3).to(tl.float32) + (u.to(tl.int32) // 7).to(tl.float32))


@triton.jit
def control_kernel(x_ptr, out_ptr, n, iters):
    pid = tl.program_id(0)
    if pid * 64 >= n:
        return
    tl.assume(iters > 0)
    offs = pid * 64 + tl.arange(0, 64)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    i = 0
    acc = x
    while i < iters:
        if i % 2 == 0:
            acc = acc * 3 + 1
        else:
            acc = acc // 2
        i += 1
    tl.store(out_ptr + offs, acc, mask=offs < n)


@triton.jit(noinline=True)
def _scale_helper(factor, bias):
    return factor * 2.0 + bias


@triton.jit
def call_kernel(x_ptr, out_ptr, factor):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * _scale_helper(factor, 1.0))


@triton.jit
def ptr_cast_kernel(x_ptr, out_ptr, addr_ptr):
    offs = tl.arange(0, 16)
    raw = x_ptr.to(tl.int64, bitcast=True)
    tl.store(addr_ptr, raw)
    p = (raw + 4).to(tl.pointer_type(tl.float32), bitcast=True)
    tl.store(out_ptr + offs, tl.load(p + offs))


@triton.jit
def _collatz_scalar(n, limit):
    # An early return (cf.cond_br in the region) and a data-dependent loop (scf.while).
    if n <= 0:
        return -1, n
    steps = 0
    while n != 1 and steps < limit:
        n = tl.where(n % 2 == 0, n // 2, 3 * n + 1)
        steps += 1
    return steps, n


@triton.jit
def _pair_scalar(a0, a1):
    return a1 * 2.0, a0 * 2.0


@triton.jit
def map_kernel(x_ptr, steps_ptr, last_ptr, f_ptr, out_ptr):
    offs = tl.arange(0, 64)
    steps, last = tl.map_elementwise(_collatz_scalar, tl.load(x_ptr + offs), offs * 0 + 100)
    tl.store(steps_ptr + offs, steps)
    tl.store(last_ptr + offs, last)
    # One result, two values per call: a 1-tuple. The GPU needs the pack to divide a thread's
    # elements: 512 over 4 warps is 4 each.
    wide = tl.arange(0, 512)
    (doubled, ) = tl.map_elementwise(_pair_scalar, tl.load(f_ptr + wide), pack=2)
    tl.store(out_ptr + wide, doubled)


# name -> (signature, constexprs, attrs (tt.divisibility by arg index), options)
SPECS = {
    "add_kernel": ({"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32",
                    "BLOCK": "constexpr"}, {"BLOCK": 1024}, {0: 16, 1: 16, 2: 16}, {}),
    "atomics_kernel": ({"counter_ptr": "*i32", "fmax_ptr": "*fp32", "lock_ptr": "*i32", "vals_ptr": "*fp32",
                        "n": "i32"}, {}, {}, {}),
    "reduce_kernel": ({"x_ptr": "*fp32", "sum_ptr": "*fp32", "max_ptr": "*fp32", "argmax_ptr": "*i32",
                       "M": "constexpr", "N": "constexpr"}, {"M": 16, "N": 32}, {0: 16}, {}),
    "scan_kernel": ({"x_ptr": "*i32", "out_ptr": "*i32", "out2_ptr": "*i32", "N": "constexpr"}, {"N": 256}, {}, {}),
    "matmul_kernel": ({"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                       "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
                       "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
                      {"BM": 32, "BN": 32, "BK": 16}, {0: 16, 1: 16, 2: 16, 6: 16}, {}),
    "shape_kernel": ({"x_ptr": "*fp32", "out_ptr": "*fp32"}, {}, {}, {}),
    "hist_gather_kernel": ({"x_ptr": "*i32", "idx_ptr": "*i32", "hist_ptr": "*i32", "out_ptr": "*fp32"},
                           {}, {}, {}),
    "fp8_kernel": ({"x_ptr": "*fp32", "out_ptr": "*fp32", "out16_ptr": "*fp16", "bits_ptr": "*i8"}, {}, {}, {}),
    "debug_kernel": ({"x_ptr": "*fp32", "n": "i32"}, {}, {}, {"debug": True}),
    "block_ptr_kernel": ({"a_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32", "stride_m": "i32",
                          "BM": "constexpr", "BN": "constexpr"}, {"BM": 64, "BN": 32}, {0: 16, 1: 16}, {}),
    "tensor_desc_kernel": ({"a_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32", "N": "i32",
                            "BM": "constexpr", "BN": "constexpr"}, {"BM": 64, "BN": 64}, {0: 16, 1: 16, 3: 16}, {}),
    "host_desc_kernel": ({"in_desc": "tensordesc<fp32[16, 32]>", "out_desc": "tensordesc<fp32[16, 32]>",
                          "M": "i32"}, {}, {}, {}),
    "math_kernel": ({"x_ptr": "*fp32", "y_ptr": "*fp32", "u_ptr": "*u32", "out_ptr": "*fp32", "lo": "fp32",
                     "hi": "fp32"}, {}, {}, {}),
    "control_kernel": ({"x_ptr": "*i32", "out_ptr": "*i32", "n": "i32", "iters": "i32"}, {}, {}, {}),
    "call_kernel": ({"x_ptr": "*fp32", "out_ptr": "*fp32", "factor": "fp32"}, {}, {}, {}),
    "ptr_cast_kernel": ({"x_ptr": "*fp32", "out_ptr": "*fp32", "addr_ptr": "*i64"}, {}, {}, {}),
    "map_kernel": ({"x_ptr": "*i32", "steps_ptr": "*i32", "last_ptr": "*i32", "f_ptr": "*fp32",
                    "out_ptr": "*fp32"}, {}, {}, {}),
}

# Kernels whose raw front-end IR (asm["source"], before inlining) is kept as <kernel>.source.ttir.
KEEP_SOURCE = ("block_ptr_kernel", "call_kernel", "reduce_kernel", "tensor_desc_kernel")

# Kernels a Triton version cannot compile (tl.make_block_ptr was removed in 3.9; host-side
# TensorDescriptor arguments arrived in 3.4; tl.map_elementwise is in 3.5, not in 3.3).
UNSUPPORTED = {"3.9": ("block_ptr_kernel",), "3.3": ("host_desc_kernel", "map_kernel")}
