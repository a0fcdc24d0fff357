//===- Compare.cpp - Element and buffer comparison under a tolerance -------===//
#include "Compare.h"

#include "Elements.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ttinterp::driver {

uint64_t Tolerance::defaultUlpFor(DType d) {
  // Why these bounds: docs/cuda.md, "Comparing with native runs".
  switch (d) {
  case DType::F64:
    return 4;
  case DType::F32:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  default:
    return isFP8(d) ? 1 : 0;
  }
}

std::string Tolerance::describe(DType d) const {
  if (bitwise || !isFloat(d))
    return "bitwise";
  std::string text = fmt::format("within {} ulp", ulpFor(d));
  if (rtol > 0 || atol > 0)
    text += fmt::format(" or |a - b| <= {} + {} * max(|a|, |b|)", atol, rtol);
  return text;
}

std::optional<uint64_t> ulpDistance(DType d, uint64_t a, uint64_t b) {
  double va = decodeFloat(d, a), vb = decodeFloat(d, b);
  if (std::isnan(va) || std::isnan(vb))
    return std::nullopt;
  if (std::isinf(va) || std::isinf(vb))
    return va == vb ? std::optional<uint64_t>(0) : std::nullopt;
  // Finite values of every format are sign and magnitude, and the magnitude bits count the
  // representable values up from zero, so the distance is a difference of magnitudes (a sum
  // across zero, where -0 and +0 both sit at magnitude 0).
  uint64_t sign = uint64_t(1) << (byteSize(d) * 8 - 1);
  a &= sign | (sign - 1);
  b &= sign | (sign - 1);
  uint64_t ma = a & (sign - 1), mb = b & (sign - 1);
  if ((a & sign) == (b & sign))
    return ma > mb ? ma - mb : mb - ma;
  return ma + mb;
}

bool elementsMatch(DType d, const uint8_t *a, const uint8_t *b, const Tolerance &tolerance,
                   std::optional<uint64_t> *ulp) {
  size_t size = byteSize(d);
  bool same = std::memcmp(a, b, size) == 0;
  if (tolerance.bitwise || !isFloat(d)) {
    if (ulp)
      *ulp = std::nullopt;
    return same;
  }
  uint64_t ba = 0, bb = 0;
  std::memcpy(&ba, a, size);
  std::memcpy(&bb, b, size);
  std::optional<uint64_t> distance = ulpDistance(d, ba, bb);
  if (ulp)
    *ulp = distance;
  double va = decodeFloat(d, ba), vb = decodeFloat(d, bb);
  if (same || (std::isnan(va) && std::isnan(vb)))
    return true;
  if (!distance)
    return false;
  if (*distance <= tolerance.ulpFor(d))
    return true;
  return std::fabs(va - vb) <=
         tolerance.atol + tolerance.rtol * std::max(std::fabs(va), std::fabs(vb));
}

std::string formatValue(DType d, const uint8_t *p) {
  if (!isFloat(d))
    return formatElement(d, p);
  uint64_t bits = 0;
  std::memcpy(&bits, p, byteSize(d));
  double v = decodeFloat(d, bits);
  // fmt's "{}" is the shortest text that reads back as the same value of its C++ type; f32 is
  // printed as float so that text is the f32's, and the narrow formats' values are exact doubles.
  return d == DType::F32 ? fmt::format("{}", float(v)) : fmt::format("{}", v);
}

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return index;
}

BufferComparison compareBuffers(DType d, const std::vector<int64_t> &shape, const uint8_t *a,
                                const uint8_t *b, const Tolerance &tolerance, size_t limit,
                                const std::vector<std::pair<uint64_t, uint64_t>> &skip) {
  BufferComparison result;
  uint64_t size = byteSize(d);
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  for (int64_t e = 0; e < n; ++e) {
    uint64_t lo = uint64_t(e) * size, hi = lo + size;
    if (std::any_of(skip.begin(), skip.end(),
                    [&](const auto &range) { return lo < range.second && range.first < hi; }))
      continue;
    ++result.elements;
    const uint8_t *pa = a + lo, *pb = b + lo;
    if (std::memcmp(pa, pb, size) == 0)
      continue;
    std::optional<uint64_t> ulp;
    bool match = elementsMatch(d, pa, pb, tolerance, &ulp);
    if (ulp)
      result.maxUlp = std::max(result.maxUlp, *ulp);
    if (match) {
      ++result.inexact;
      continue;
    }
    if (result.first.size() < limit)
      result.first.push_back({unflatten(e, shape), formatValue(d, pa), formatValue(d, pb), ulp});
    ++result.differing;
  }
  return result;
}

} // namespace ttinterp::driver
