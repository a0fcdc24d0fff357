//===- Compare.h - Comparing two runs' buffers: bitwise, or floats within a tolerance -*- C++
//-*-===//
//
// `ttinterp check` sets one run's final buffers against another's. Program orders of the
// interpreter must agree bit for bit; the interpreter and a native GPU kernel need not: the GPU
// contracts a * b + c into fma, divides and takes exp approximately, and sums in a tree. So
// floats there are compared by their distance in units in the last place (ulp), with a bound per
// dtype (docs/cuda.md says why each), optionally widened by a relative and absolute tolerance;
// integers, i1 and pointers are always compared bitwise.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ttinterp::driver {

/// When two elements count as equal.
struct Tolerance {
  /// Every dtype byte for byte (what two program orders of the interpreter must give).
  bool bitwise = false;
  /// The ulp bound for every float dtype; none: defaultUlp of the dtype.
  std::optional<uint64_t> ulp;
  /// Floats also match when |a - b| <= atol + rtol * max(|a|, |b|).
  double rtol = 0, atol = 0;

  /// The ulp bound applied to float dtype `d`.
  uint64_t ulpFor(DType d) const { return ulp ? *ulp : defaultUlpFor(d); }
  static uint64_t defaultUlpFor(DType d);
  /// How elements of dtype `d` are compared, for messages: "bitwise", "within 8 ulp", "within
  /// 8 ulp or |a - b| <= 1e-05 + 1e-05 * max(|a|, |b|)".
  std::string describe(DType d) const;
};

/// The number of representable values of float dtype `d` one must step through to get from bit
/// pattern `a` to bit pattern `b` (their distance in ulp): 0 for equal values, and for -0 and +0,
/// which are one point; across zero the steps on both sides add up. None when either is NaN, or
/// one is infinite and the other is not the same infinity (no finite number of steps is close).
std::optional<uint64_t> ulpDistance(DType d, uint64_t a, uint64_t b);

/// Whether one element `a` matches `b` under `tolerance`. Float NaNs match each other whatever
/// their payloads and signs. `ulp`, when given, receives the distance (none for NaN/infinity).
bool elementsMatch(DType d, const uint8_t *a, const uint8_t *b, const Tolerance &tolerance,
                   std::optional<uint64_t> *ulp = nullptr);

/// One element exactly, for a difference listing: floats in the shortest text that reads back
/// as the same value of their dtype (5.0000005 for the f32 after 5), integers as integers.
std::string formatValue(DType d, const uint8_t *p);

/// The C-order index of element `flat` of an array of `shape`.
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape);

/// Two copies of one buffer set side by side.
struct BufferComparison {
  int64_t elements = 0;  ///< Elements compared (those skipped excluded).
  int64_t differing = 0; ///< Elements that do not match under the tolerance.
  int64_t inexact = 0;   ///< Elements whose bits differ but which match under the tolerance.
  uint64_t maxUlp = 0;   ///< Largest ulp distance among float elements with a finite one.
  struct Element {
    std::vector<int64_t> index;
    std::string a, b;
    std::optional<uint64_t> ulp; ///< Floats with a finite distance only.
  };
  std::vector<Element> first; ///< The first non-matching elements in C order, up to the limit.
};

/// Compares arrays `a` and `b` of dtype `d` and `shape` (C order, little endian) element by
/// element, listing up to `limit` non-matching ones. Elements overlapping one of the byte ranges
/// `skip` ([begin, end) offsets into the buffer) are left out: the buffer's aliases judge those
/// bytes under their own dtypes.
BufferComparison compareBuffers(DType d, const std::vector<int64_t> &shape, const uint8_t *a,
                                const uint8_t *b, const Tolerance &tolerance, size_t limit,
                                const std::vector<std::pair<uint64_t, uint64_t>> &skip = {});

} // namespace ttinterp::driver
