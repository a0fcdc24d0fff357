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
#include <cstring>
#include <limits>
#include <type_traits>

namespace ttinterp::interp {

/// tt.reduce's order: element j of the axis joins lane j % kTreeLanes, each lane
/// folds its elements in index order, then the lanes combine as a warp's
/// shuffle-xor butterfly leaves lane 0: lane l with lane l + w, w = 16, 8, 4, 2, 1.
constexpr int64_t kTreeLanes = 32;

/// Calls step(width) for the butterfly's widths in order, each an integral_constant (so a
/// step's loop over its lanes has a constant trip count and vectorises); stops at the first
/// step that returns false, and returns whether all returned true.
// The step lambdas passed here are always_inline too: left to GCC, they became out-of-line
// clones compiled for the baseline ISA and called from each ISA's row reduction, which made
// the tutorial's layer norm 1.2x slower on Zen 3 (docs/performance.md, fifteenth round).
template <class Step> __attribute__((always_inline)) inline bool butterflyWidths(Step &&step) {
  static_assert(kTreeLanes == 32, "the widths below are 16, 8, 4, 2, 1 for 32 lanes");
  return step(std::integral_constant<int64_t, 16>()) &&
         step(std::integral_constant<int64_t, 8>()) && step(std::integral_constant<int64_t, 4>()) &&
         step(std::integral_constant<int64_t, 2>()) && step(std::integral_constant<int64_t, 1>());
}

/// Calls combine(l, l + w) for each butterfly step over the first `present` lanes
/// (fewer than kTreeLanes when the axis is short); returns false if combine did. Lane
/// l + w holds a value at step w exactly when it is below `present`: the steps before
/// only wrote lanes below w.
template <class Combine>
__attribute__((always_inline)) inline bool butterfly(int64_t present, Combine &&combine) {
  if (present == kTreeLanes) {
    // The same steps with every lane present, each spelled with its width a constant: where
    // combine is a plain op (a row reduction's), a step's combines are independent and
    // compile to one vector op of its width instead of dependent scalar ones through memory.
    return butterflyWidths([&](auto width) __attribute__((always_inline)) {
      for (int64_t l = 0; l < width(); ++l)
        if (!combine(l, l + width()))
          return false;
      return true;
    });
  }
  for (int64_t w = kTreeLanes / 2; w >= 1; w /= 2)
    for (int64_t l = 0; l < w && l + w < present; ++l)
      if (!combine(l, l + w))
        return false;
  return true;
}

template <DType D, class Fn>
__attribute__((always_inline)) inline Repr<D> combineOp(Repr<D> a, Repr<D> b) {
  return roundTo<D>(Fn::template apply<D>(a, b));
}

/// The float combiners that select one of their operands: maxnumf/minnumf (a NaN
/// loses to a number) and maximumf/minimumf (a NaN wins, as the canonical quiet NaN).
template <class Fn> struct SelectionOf { static constexpr bool selects = false; };
template <bool Greatest, bool NaNWins> struct Selection {
  static constexpr bool selects = true, greatest = Greatest, nanWins = NaNWins;
};
template <> struct SelectionOf<MaxNumF> : Selection<true, false> {};
template <> struct SelectionOf<MinNumF> : Selection<false, false> {};
template <> struct SelectionOf<MaximumF> : Selection<true, true> {};
template <> struct SelectionOf<MinimumF> : Selection<false, true> {};

/// A selecting reduction over a row whose result no combining order can change:
/// numbers ordered with -0 < +0 (maxNum/minNum's rule) form a total order, so the
/// tree picks the greatest (least) number whenever one exists, and a NaN that wins
/// is always the canonical one. Only a row of NaNs only, under maxnumf/minnumf,
/// depends on the tree (which payload survives), and a single element, which no
/// combine touches, is returned as it is: then this returns false. One pass
/// over integer keys (a float's bits, its negative half mirrored so that signed
/// comparison is the order above), with no dependence between elements, so it
/// vectorises where the tree's select chains do not.
template <DType D, class Fn>
__attribute__((always_inline)) inline bool selectRow(const Repr<D> *src, int64_t length,
                                                     Repr<D> &result) {
  using T = Repr<D>;
  using Sel = SelectionOf<Fn>;
  if (length < 2)
    return false;
  using Key = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  constexpr int kSignShift = int(sizeof(T)) * 8 - 1;
  constexpr Key kMagnitude = std::numeric_limits<Key>::max();
  constexpr Key kInfinity = sizeof(T) == 4 ? Key(0x7F800000) : Key(0x7FF0000000000000ll);
  constexpr Key kNone =
      Sel::greatest ? std::numeric_limits<Key>::min() : std::numeric_limits<Key>::max();
  // Written as masks and bit operations: GCC vectorises this loop, and not the same
  // loop spelled with comparisons and selects.
  Key best = kNone, anyNaN = 0, anyNumber = 0;
  for (int64_t i = 0; i < length; ++i) {
    Key bits;
    std::memcpy(&bits, src + i, sizeof bits);
    Key nanMask = (kInfinity - (bits & kMagnitude)) >> kSignShift; // all ones for a NaN
    Key key = bits ^ ((bits >> kSignShift) & kMagnitude);
    key = (key & ~nanMask) | (kNone & nanMask);
    best = Sel::greatest ? (best > key ? best : key) : (best < key ? best : key);
    anyNaN |= nanMask;
    anyNumber |= ~nanMask;
  }
  if (Sel::nanWins && anyNaN) {
    result = std::numeric_limits<T>::quiet_NaN();
    return true;
  }
  if (!anyNumber)
    return false;
  Key bits = best ^ ((best >> kSignShift) & kMagnitude);
  std::memcpy(&result, &bits, sizeof bits);
  return true;
}

/// tt.reduce in tree order along a contiguous axis: the lanes are one array, so
/// each pass over kTreeLanes elements is a vector loop.
// Always inlined: simd/Reductions.cpp compiles it into each ISA's function, and an
// out-of-line copy would be baseline code.
template <DType D, class Fn>
__attribute__((always_inline)) inline Repr<D> treeReduceRow(const Repr<D> *src, int64_t length) {
  using T = Repr<D>;
  if constexpr (SelectionOf<Fn>::selects && std::is_floating_point_v<T>) {
    T selected;
    if (selectRow<D, Fn>(src, length, selected))
      return selected; // what the tree below would return, in one vector pass
  }
  T lanes[kTreeLanes];
  int64_t present = std::min(length, kTreeLanes);
  std::copy(src, src + present, lanes);
  if constexpr (std::is_floating_point_v<T>) {
    if (present < kTreeLanes) {
      // A short row (a [M, 16] block reduced along its rows): butterfly() would combine
      // the present lanes one dependent scalar op after another, through memory. Every
      // step instead combines all its lanes and keeps the result only where the partner
      // lane is present, which is the same tree and vectorises. The absent lanes hold
      // zeros, combined and then discarded: float ops on any value are harmless.
      std::fill(lanes + present, lanes + kTreeLanes, T(0));
      butterflyWidths([&](auto width) __attribute__((always_inline)) {
        T combined[width()];
        for (int64_t l = 0; l < width(); ++l)
          combined[l] = combineOp<D, Fn>(lanes[l], lanes[l + width()]);
        for (int64_t l = 0; l < width(); ++l)
          lanes[l] = l + width() < present ? combined[l] : lanes[l];
        return true;
      });
      return lanes[0];
    }
  }
  int64_t k = kTreeLanes;
  for (; k + kTreeLanes <= length; k += kTreeLanes)
    for (int64_t l = 0; l < kTreeLanes; ++l)
      lanes[l] = combineOp<D, Fn>(lanes[l], src[k + l]);
  for (int64_t l = 0; k + l < length; ++l)
    lanes[l] = combineOp<D, Fn>(lanes[l], src[k + l]);
  butterfly(present, [&](int64_t a, int64_t b) __attribute__((always_inline)) {
    lanes[a] = combineOp<D, Fn>(lanes[a], lanes[b]);
    return true;
  });
  return lanes[0];
}

/// Combiners whose f32 row reductions run per ISA (simd::treeReduce).
template <class Fn> struct SimdReduceOf { static constexpr bool available = false; };
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
