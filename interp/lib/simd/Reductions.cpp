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

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/Reductions.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace ttinterp::interp::simd::HWY_NAMESPACE {

float TreeReduce(ReduceFn fn, const float *src, int64_t length) {
  constexpr DType F = DType::F32;
  switch (fn) {
  case ReduceFn::Add:
    return treeReduceRow<F, AddF>(src, length);
  case ReduceFn::Mul:
    return treeReduceRow<F, MulF>(src, length);
  case ReduceFn::MaxNum:
    return treeReduceRow<F, MaxNumF>(src, length);
  case ReduceFn::MinNum:
    return treeReduceRow<F, MinNumF>(src, length);
  case ReduceFn::Maximum:
    return treeReduceRow<F, MaximumF>(src, length);
  case ReduceFn::Minimum:
    return treeReduceRow<F, MinimumF>(src, length);
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
