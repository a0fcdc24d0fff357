//===- ReduceTree.h - tt.reduce's fixed combining order -----------*- C++ -*-===//
//
// One definition of the tree every tt.reduce follows (docs/semantics.md,
// "Reductions"), shared by ReduceOps.cpp and by simd/Reductions.cpp, which compiles
// the f32 row reduction per ISA from this same code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ArithFunctors.h"

#include <algorithm>
#include <cstdint>

namespace ttinterp::interp {

/// tt.reduce's order: element j of the axis joins lane j % kTreeLanes, each lane
/// folds its elements in index order, then the lanes combine as a warp's
/// shuffle-xor butterfly leaves lane 0: lane l with lane l + w, w = 16, 8, 4, 2, 1.
constexpr int64_t kTreeLanes = 32;

/// Calls combine(l, l + w) for each butterfly step over the first `present` lanes
/// (fewer than kTreeLanes when the axis is short); returns false if combine did.
template <class Combine> __attribute__((always_inline)) inline bool butterfly(int64_t present, Combine &&combine) {
  int64_t valid = present;
  for (int64_t w = kTreeLanes / 2; w >= 1; w /= 2) {
    for (int64_t l = 0; l < w && l + w < valid; ++l)
      if (!combine(l, l + w))
        return false;
    valid = std::min(valid, w);
  }
  return true;
}

template <DType D, class Fn> __attribute__((always_inline)) inline Repr<D> combineOp(Repr<D> a, Repr<D> b) {
  return roundTo<D>(Fn::template apply<D>(a, b));
}

/// tt.reduce in tree order along a contiguous axis: the lanes are one array, so
/// each pass over kTreeLanes elements is a vector loop.
// Always inlined: simd/Reductions.cpp compiles it into each ISA's function, and an
// out-of-line copy would be baseline code.
template <DType D, class Fn>
__attribute__((always_inline)) inline Repr<D> treeReduceRow(const Repr<D> *src, int64_t length) {
  using T = Repr<D>;
  T lanes[kTreeLanes];
  int64_t present = std::min(length, kTreeLanes);
  std::copy(src, src + present, lanes);
  int64_t k = kTreeLanes;
  for (; k + kTreeLanes <= length; k += kTreeLanes)
    for (int64_t l = 0; l < kTreeLanes; ++l)
      lanes[l] = combineOp<D, Fn>(lanes[l], src[k + l]);
  for (int64_t l = 0; k + l < length; ++l)
    lanes[l] = combineOp<D, Fn>(lanes[l], src[k + l]);
  butterfly(present, [&](int64_t a, int64_t b) {
    lanes[a] = combineOp<D, Fn>(lanes[a], lanes[b]);
    return true;
  });
  return lanes[0];
}

/// Combiners whose f32 row reductions run per ISA (simd::treeReduce).
template <class Fn> struct SimdReduceOf {
  static constexpr bool available = false;
};
#define TTINTERP_SIMD_REDUCE(NAME, FN)                                                             \
  template <> struct SimdReduceOf<NAME> {                                                          \
    static constexpr bool available = true;                                                        \
    static constexpr simd::ReduceFn fn = simd::ReduceFn::FN;                                       \
  };
TTINTERP_SIMD_REDUCE(AddF, Add)
TTINTERP_SIMD_REDUCE(MulF, Mul)
TTINTERP_SIMD_REDUCE(MaxNumF, MaxNum)
TTINTERP_SIMD_REDUCE(MinNumF, MinNum)
TTINTERP_SIMD_REDUCE(MaximumF, Maximum)
TTINTERP_SIMD_REDUCE(MinimumF, Minimum)
#undef TTINTERP_SIMD_REDUCE

} // namespace ttinterp::interp
