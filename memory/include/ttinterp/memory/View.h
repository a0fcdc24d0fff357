//===- View.h - Strided views of caller memory and their byte extents -*- C++ -*-===//
//
// A View names elements in a caller's address space: element (i0, ..., in) lives at
// address + sum(ik * strides[k]) * byteSize(dtype). Strides are counted in elements and may
// be zero (broadcast) or negative (reversed), so two views can name the same bytes in
// different orders, with different element sizes, or interleaved. A View owns no memory
// and says nothing about whether the bytes exist; it is pure layout, which is what the
// overlap classifier needs.
//
// Every query other than validate() assumes the view is valid (validate() returned
// nullopt); on an invalid view they still return without undefined behaviour, but the
// values are meaningless.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ttinterp {

/// A half-open interval of byte addresses [lo, hi).
struct ByteRange {
  uint64_t lo = 0;
  uint64_t hi = 0;

  /// True when the range holds no byte (hi <= lo).
  bool empty() const { return hi <= lo; }
  /// True when both ranges are non-empty and share at least one byte.
  bool overlaps(const ByteRange &other) const {
    return !empty() && !other.empty() && lo < other.hi && other.lo < hi;
  }
  /// Number of bytes in the range (0 when empty).
  uint64_t size() const { return empty() ? 0 : hi - lo; }
};

/// A strided view of elements of one dtype in a caller address space.
struct View {
  uint64_t address = 0; ///< Caller address of element 0 (all indices zero).
  DType dtype = DType::I8;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides; ///< In elements; zero and negative allowed.

  /// Rank of the view (shape.size()).
  size_t rank() const { return shape.size(); }

  /// Product of the shape (1 for rank 0); saturates at INT64_MAX on an invalid view.
  int64_t numElements() const;

  /// The bytes spanned: the first byte of the lowest-addressed element to one past the
  /// last byte of the highest-addressed element. Empty (at `address`) when the view has no
  /// elements. The view's bytes are a subset of this range, equal to it only when dense.
  ByteRange extent() const;

  /// True when the elements are laid out in C order with no gaps, starting at `address`:
  /// strides of dimensions of size > 1 equal the product of the later sizes. A view with no
  /// elements is contiguous (there is nothing to lay out), as in NumPy.
  bool isContiguous() const;

  /// Nullopt when the view is well-formed, else why not: rank mismatch between shape and
  /// strides, a negative size, an element count or byte span that overflows int64, or
  /// elements that fall outside the 64-bit address space.
  std::optional<std::string> validate() const;

  /// One line for reports, e.g. "f32[2x3] strides [3, 1] at 0x1000 (bytes [0x1000, 0x1018))".
  std::string describe() const;
};

} // namespace ttinterp
