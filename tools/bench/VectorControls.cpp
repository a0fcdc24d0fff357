//===- VectorControls.cpp - The benchmark's vector controls, one copy per ISA -===//
//
// Highway compiles this file once per target (foreach_target.h re-includes it); the
// exported functions dispatch to the best one the CPU supports, as interp's kernels do.
//
//===----------------------------------------------------------------------===//
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tools/bench/VectorControls.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep
#include <hwy/highway.h>

#include <hwy/contrib/math/math-inl.h>

#include "VectorControls.h"

#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace ttinterp::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void VectorAdd(const float *x, const float *y, float *out, int64_t first, int64_t last) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t i = first;
  for (; i + L <= last; i += L)
    hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, out + i);
  for (; i < last; ++i)
    out[i] = x[i] + y[i];
}

/// Sum of `in[0, n)`: lane-wise partial sums in two accumulators, then across lanes.
HWY_INLINE float Sum(const float *in, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  auto a = hn::Zero(d), b = hn::Zero(d);
  int64_t k = 0;
  for (; k + 2 * L <= n; k += 2 * L) {
    a = hn::Add(a, hn::LoadU(d, in + k));
    b = hn::Add(b, hn::LoadU(d, in + k + L));
  }
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(a, b)));
  for (; k < n; ++k)
    s += in[k];
  return s;
}

void SoftmaxRows(const float *x, float *y, int64_t cols, int64_t first, int64_t last) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  for (int64_t r = first; r < last; ++r) {
    const float *in = x + r * cols;
    float *o = y + r * cols;
    auto mv = hn::Set(d, -INFINITY);
    int64_t k = 0;
    for (; k + L <= cols; k += L)
      mv = hn::Max(mv, hn::LoadU(d, in + k));
    float m = hn::GetLane(hn::MaxOfLanes(d, mv));
    for (; k < cols; ++k)
      m = std::max(m, in[k]);
    const auto mm = hn::Set(d, m);
    for (k = 0; k + L <= cols; k += L)
      hn::StoreU(hn::Exp(d, hn::Sub(hn::LoadU(d, in + k), mm)), d, o + k);
    for (; k < cols; ++k)
      o[k] = std::exp(in[k] - m);
    const auto sv = hn::Set(d, Sum(o, cols));
    for (k = 0; k + L <= cols; k += L)
      hn::StoreU(hn::Div(hn::LoadU(d, o + k), sv), d, o + k);
    for (; k < cols; ++k)
      o[k] /= hn::GetLane(sv);
  }
}

void LayerNormRows(const float *x, float *y, const float *w, const float *bias, float *mean,
                   float *rstd, int64_t cols, int64_t first, int64_t last) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  for (int64_t r = first; r < last; ++r) {
    const float *in = x + r * cols;
    float *o = y + r * cols;
    const float mu = Sum(in, cols) / float(cols);
    const auto muv = hn::Set(d, mu);
    auto a = hn::Zero(d);
    int64_t k = 0;
    for (; k + L <= cols; k += L) {
      const auto c = hn::Sub(hn::LoadU(d, in + k), muv);
      a = hn::Add(a, hn::Mul(c, c));
    }
    float v = hn::GetLane(hn::SumOfLanes(d, a));
    for (; k < cols; ++k)
      v += (in[k] - mu) * (in[k] - mu);
    const float rs = 1.0f / std::sqrt(v / float(cols) + 1e-5f);
    const auto rsv = hn::Set(d, rs);
    for (k = 0; k + L <= cols; k += L) {
      const auto c = hn::Mul(hn::Sub(hn::LoadU(d, in + k), muv), rsv);
      hn::StoreU(hn::Add(hn::Mul(c, hn::LoadU(d, w + k)), hn::LoadU(d, bias + k)), d, o + k);
    }
    for (; k < cols; ++k)
      o[k] = (in[k] - mu) * rs * w[k] + bias[k];
    mean[r] = mu;
    rstd[r] = rs;
  }
}

const char *TargetName() { return hwy::TargetName(HWY_TARGET); }

} // namespace ttinterp::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ttinterp::bench {
HWY_EXPORT(VectorAdd);
HWY_EXPORT(SoftmaxRows);
HWY_EXPORT(LayerNormRows);
HWY_EXPORT(TargetName);

void vectorAdd(const float *x, const float *y, float *out, int64_t first, int64_t last) {
  HWY_DYNAMIC_DISPATCH(VectorAdd)(x, y, out, first, last);
}
void softmaxRows(const float *x, float *y, int64_t cols, int64_t first, int64_t last) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRows)(x, y, cols, first, last);
}
void layerNormRows(const float *x, float *y, const float *w, const float *bias, float *mean,
                   float *rstd, int64_t cols, int64_t first, int64_t last) {
  HWY_DYNAMIC_DISPATCH(LayerNormRows)(x, y, w, bias, mean, rstd, cols, first, last);
}
const char *vectorControlTarget() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
} // namespace ttinterp::bench
#endif
