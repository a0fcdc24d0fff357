//===- Reductions.cpp - tt.reduce's f32 row tree compiled per ISA ---------===//
//
// The tree and the combiners are ReduceOps' own (ops/ReduceTree.h, ArithFunctors.h),
// included before Highway's per-target region: each target's function below inlines
// that one definition and vectorises its 32-lane passes for its own vector width
// (maxnumf's selects are 2x faster on AVX2 than on baseline SSE2). Out-of-line copies
// of those templates, declared outside the region, stay baseline code.
//
//===----------------------------------------------------------------------===//
#include "ops/ReduceTree.h"
#include "simd/Simd.h"

#include <cmath>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/Reductions.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace ttinterp::interp::simd::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

/// The selecting reductions' common case in one op a vector: the row's greatest (least)
/// element by the vector unit's own max (min), NaNs noted apart. True with `result` what
/// selectRow (ReduceTree.h) would give, i.e. what the tree gives; false, for selectRow and
/// the tree to decide, where the vector max leaves the answer open: a NaN under maxnumf /
/// minnumf (which payload, or which number), or a zero result (which sign: the vector max
/// of -0 and +0 is either). A max row of numbers is 3 ops a vector here against selectRow's
/// ~10 (docs/performance.md, thirty-second round).
template <class Fn> bool selectRowByVectors(const float *src, int64_t length, float &result) {
  constexpr bool Greatest = SelectionOf<Fn>::greatest, NaNWins = SelectionOf<Fn>::nanWins;
  if (length < 2)
    return false; // a single element is returned as it is, NaN payload and all
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  auto select = [](auto a, auto b) { return Greatest ? hn::Max(a, b) : hn::Min(a, b); };
  const float none =
      Greatest ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  // Four accumulators: the select's latency, not the vector unit, would bound one.
  auto b0 = hn::Set(d, none), b1 = b0, b2 = b0, b3 = b0;
  auto nan = hn::FirstN(d, 0);
  int64_t i = 0;
  for (; i + 4 * L <= length; i += 4 * L) {
    const auto x0 = hn::LoadU(d, src + i), x1 = hn::LoadU(d, src + i + L),
               x2 = hn::LoadU(d, src + i + 2 * L), x3 = hn::LoadU(d, src + i + 3 * L);
    nan = hn::Or(
        nan, hn::Or(hn::Or(hn::IsNaN(x0), hn::IsNaN(x1)), hn::Or(hn::IsNaN(x2), hn::IsNaN(x3))));
    b0 = select(b0, x0), b1 = select(b1, x1), b2 = select(b2, x2), b3 = select(b3, x3);
  }
  for (; i + L <= length; i += L) {
    const auto x = hn::LoadU(d, src + i);
    nan = hn::Or(nan, hn::IsNaN(x));
    b0 = select(b0, x);
  }
  bool anyNaN = !hn::AllFalse(d, nan);
  const auto all = select(select(b0, b1), select(b2, b3));
  float best = hn::GetLane(Greatest ? hn::MaxOfLanes(d, all) : hn::MinOfLanes(d, all));
  for (; i < length; ++i) {
    const float x = src[i];
    anyNaN |= std::isnan(x);
    best = Greatest ? (x > best ? x : best) : (x < best ? x : best);
  }
  if (anyNaN) {
    if (!NaNWins)
      return false;
    result = std::numeric_limits<float>::quiet_NaN();
    return true;
  }
  if (best == 0.0f)
    return false;
  result = best;
  return true;
}

/// A selecting reduction of an f32 row: by the vector max where that settles it, else as
/// treeReduceRow decides.
template <class Fn> float selectingReduce(const float *src, int64_t length) {
  float selected;
  return selectRowByVectors<Fn>(src, length, selected) ? selected
                                                       : treeReduceRow<DType::F32, Fn>(src, length);
}

float TreeReduce(ReduceFn fn, const float *src, int64_t length) {
  constexpr DType F = DType::F32;
  switch (fn) {
  case ReduceFn::Add:
    return treeReduceRow<F, AddF>(src, length);
  case ReduceFn::Mul:
    return treeReduceRow<F, MulF>(src, length);
  case ReduceFn::MaxNum:
    return selectingReduce<MaxNumF>(src, length);
  case ReduceFn::MinNum:
    return selectingReduce<MinNumF>(src, length);
  case ReduceFn::Maximum:
    return selectingReduce<MaximumF>(src, length);
  case ReduceFn::Minimum:
    return selectingReduce<MinimumF>(src, length);
  }
  return src[0];
}

} // namespace ttinterp::interp::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ttinterp::interp::simd {
HWY_EXPORT(TreeReduce);
float treeReduce(ReduceFn fn, const float *src, int64_t length) {
  return HWY_DYNAMIC_DISPATCH(TreeReduce)(fn, src, length);
}
} // namespace ttinterp::interp::simd
#endif
