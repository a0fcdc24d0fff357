//===- View.cpp - Strided views of caller memory and their byte extents ---===//
#include "ttinterp/memory/View.h"

#include <fmt/format.h>

#include <limits>

namespace ttinterp {

namespace {

using i128 = __int128;

constexpr i128 kInt64Max = std::numeric_limits<int64_t>::max();
constexpr i128 kUInt64Max = std::numeric_limits<uint64_t>::max();

/// Element start offsets (bytes, relative to `address`) of the lowest and highest element,
/// computed in 128 bits so that a hostile shape or stride cannot overflow silently.
struct Layout {
  std::optional<std::string> error;
  bool empty = false;
  i128 lowOffset = 0;
  i128 highOffset = 0;
};

Layout computeLayout(const View &v) {
  Layout l;
  if (v.shape.size() != v.strides.size()) {
    l.error =
        fmt::format("rank mismatch: {} sizes but {} strides", v.shape.size(), v.strides.size());
    return l;
  }
  for (size_t k = 0; k < v.shape.size(); ++k) {
    if (v.shape[k] < 0) {
      l.error = fmt::format("negative size {} in dimension {}", v.shape[k], k);
      return l;
    }
    if (v.shape[k] == 0)
      l.empty = true;
  }
  // An empty view names no bytes, so its strides cannot overflow anything.
  if (l.empty)
    return l;

  i128 count = 1;
  const i128 elemSize = static_cast<i128>(byteSize(v.dtype));
  for (size_t k = 0; k < v.shape.size(); ++k) {
    count *= v.shape[k];
    if (count > kInt64Max) {
      l.error = "element count overflows int64";
      return l;
    }
    // (n - 1) * |stride| < 2^126, so this cannot overflow before the check.
    i128 reach = static_cast<i128>(v.shape[k] - 1) * static_cast<i128>(v.strides[k]);
    if (reach > kInt64Max || reach < -kInt64Max) {
      l.error = fmt::format("dimension {} (size {}, stride {}) spans more than int64 elements", k,
                            v.shape[k], v.strides[k]);
      return l;
    }
    reach *= elemSize;
    if (reach < 0)
      l.lowOffset += reach;
    else
      l.highOffset += reach;
  }
  const i128 span = l.highOffset - l.lowOffset + elemSize;
  if (span > kInt64Max) {
    l.error = "byte span of the view overflows int64";
    return l;
  }
  const i128 lo = static_cast<i128>(v.address) + l.lowOffset;
  const i128 hi = static_cast<i128>(v.address) + l.highOffset + elemSize;
  if (lo < 0 || hi > kUInt64Max) {
    l.error = fmt::format("elements fall outside the 64-bit address space (address {:#x}, "
                          "lowest byte offset {}, highest byte offset {})",
                          v.address, static_cast<int64_t>(l.lowOffset),
                          static_cast<int64_t>(l.highOffset + elemSize - 1));
    return l;
  }
  return l;
}

} // namespace

int64_t View::numElements() const {
  int64_t count = 1;
  bool saturated = false;
  for (int64_t n : shape) {
    if (n <= 0)
      return 0;
    if (!saturated && __builtin_mul_overflow(count, n, &count))
      saturated = true;
  }
  return saturated ? std::numeric_limits<int64_t>::max() : count;
}

ByteRange View::extent() const {
  Layout l = computeLayout(*this);
  if (l.error || l.empty)
    return {address, address};
  const i128 elemSize = static_cast<i128>(byteSize(dtype));
  return {static_cast<uint64_t>(static_cast<i128>(address) + l.lowOffset),
          static_cast<uint64_t>(static_cast<i128>(address) + l.highOffset + elemSize)};
}

bool View::isContiguous() const {
  if (shape.size() != strides.size())
    return false;
  if (numElements() == 0)
    return true;
  int64_t expected = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    // A size-1 dimension is never stepped over, so its stride says nothing about layout.
    if (shape[k] == 1)
      continue;
    if (strides[k] != expected)
      return false;
    if (__builtin_mul_overflow(expected, shape[k], &expected))
      return false;
  }
  return true;
}

std::optional<std::string> View::validate() const { return computeLayout(*this).error; }

std::string View::describe() const {
  std::string dims;
  for (size_t k = 0; k < shape.size(); ++k)
    dims += fmt::format("{}{}", k ? "x" : "", shape[k]);
  std::string strideList;
  for (size_t k = 0; k < strides.size(); ++k)
    strideList += fmt::format("{}{}", k ? ", " : "", strides[k]);
  std::string head =
      fmt::format("{}[{}] strides [{}] at {:#x}", name(dtype), dims, strideList, address);
  if (std::optional<std::string> error = validate())
    return fmt::format("{} (invalid: {})", head, *error);
  ByteRange r = extent();
  if (r.empty())
    return head + " (no bytes)";
  return fmt::format("{} (bytes [{:#x}, {:#x}))", head, r.lo, r.hi);
}

} // namespace ttinterp
