"""libdevice calls through tl.extra.cuda.libdevice (tt.extern_elementwise), float32.

Launched as libdevice_kernel[(cdiv(n, BLOCK),)](x, y, out, n, BLOCK=128) with n = 300:
out[f, i] = f(x[i]) (or f(x[i], y[i])) for the eight functions below, one output row each.
x is in [0.05, 3), y in [-2, 2).
"""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def libdevice_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + 0 * n + offs, libdevice.exp(y), mask=mask)       # __nv_expf
    tl.store(out_ptr + 1 * n + offs, libdevice.log1p(x), mask=mask)     # __nv_log1pf
    tl.store(out_ptr + 2 * n + offs, libdevice.erf(y), mask=mask)       # __nv_erff
    tl.store(out_ptr + 3 * n + offs, libdevice.tanh(y), mask=mask)      # __nv_tanhf
    tl.store(out_ptr + 4 * n + offs, libdevice.pow(x, y), mask=mask)    # __nv_powf
    tl.store(out_ptr + 5 * n + offs, libdevice.atan2(y, x), mask=mask)  # __nv_atan2f
    tl.store(out_ptr + 6 * n + offs, libdevice.rsqrt(x), mask=mask)     # __nv_rsqrtf
    tl.store(out_ptr + 7 * n + offs, libdevice.floor(y * 3), mask=mask)  # __nv_floorf
