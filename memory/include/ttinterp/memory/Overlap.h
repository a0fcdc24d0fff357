//===- Overlap.h - Do two strided views share bytes? ------------*- C++ -*-===//
//
// Two questions about a pair of views, in the manner of NumPy's may_share_memory:
//
//  * sharesMemory: do the views have a byte in common? Answered in bytes, so views of
//    different dtypes can overlap partially (an i32 element covering half of two f16s).
//    Cheap tests come first (empty views, disjoint extents, a shared first element, a dense
//    view); only then an exact search over the linear Diophantine equation that a common
//    byte must satisfy, bounded by a work limit. The answer is three-way: No, Yes, or
//    TooHard when the limit ran out before the search finished.
//
//  * classify: the three cases callers treat differently. Identical views are full aliases
//    (the same elements at the same addresses), so reads and writes through either agree
//    element by element; Overlapping views share some bytes in some other arrangement;
//    Disjoint views share none.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/View.h"

#include <cstdint>
#include <string_view>

namespace ttinterp {

/// Whether two views share at least one byte.
enum class SharesMemory {
  No,      ///< Proven disjoint.
  Yes,     ///< Proven to share a byte.
  TooHard, ///< The work limit ran out first (or a view was invalid); callers must decide.
};

/// Search steps sharesMemory may spend in its exact solver by default. Each step is a few
/// integer operations; the bound keeps a pathological pair in the microsecond-to-millisecond
/// range.
inline constexpr int64_t kDefaultOverlapMaxWork = int64_t(1) << 16;

/// Whether views `a` and `b` have a byte in common. Exact (Yes or No) unless the solver needs
/// more than `maxWork` search steps, in which case TooHard; `maxWork` <= 0 allows only the
/// cheap tests. Views with no elements share nothing. A view that fails validate() gives
/// TooHard, since nothing can be proven about it.
SharesMemory sharesMemory(const View &a, const View &b, int64_t maxWork = kDefaultOverlapMaxWork);

/// How two views relate.
enum class OverlapClass {
  Disjoint,    ///< No byte in common (this includes any view with no elements).
  Identical,   ///< Same dtype, address, shape and strides, ignoring strides of size-1
               ///< dimensions: the same elements at the same addresses.
  Overlapping, ///< Shares bytes in any other way, or could not be proven disjoint.
};

/// Classifies a pair of views. Identical needs the same dtype, start address and shape, and
/// equal strides in every dimension of size > 1 (a size-1 dimension is never stepped over,
/// so its stride is immaterial); a transposed or reversed view of the same buffer is
/// Overlapping, not Identical. TooHard from sharesMemory (default work limit) is classified
/// as Overlapping: treating a possible alias as an alias is always safe, only slower.
OverlapClass classify(const View &a, const View &b);

/// "identical", "overlapping" or "disjoint".
std::string_view name(OverlapClass c);

/// "no", "yes" or "too-hard".
std::string_view name(SharesMemory s);

} // namespace ttinterp
