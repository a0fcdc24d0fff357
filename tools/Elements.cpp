//===- Elements.cpp - Element encodings of every dtype ---------------------===//
#include "Elements.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace ttinterp::driver {

namespace {

/// A binary floating-point format narrower than double.
struct Format {
  int exponentBits;
  int mantissaBits;
  int bias;
  bool ieee;             ///< All-ones exponent holds inf and NaN (f16, bf16, e5m2).
  bool unsignedZero;     ///< FNUZ: no -0, NaN is the sign bit alone.
  uint32_t maxMagnitude; ///< Bits of the largest finite value (sign clear).
  uint32_t nan;          ///< The NaN this encoder produces (sign clear).
};

Format formatOf(DType d) {
  switch (d) {
  case DType::F16:
    return {5, 10, 15, true, false, 0x7BFF, 0x7E00};
  case DType::BF16:
    return {8, 7, 127, true, false, 0x7F7F, 0x7FC0};
  case DType::F8E5M2:
    return {5, 2, 15, true, false, 0x7B, 0x7E};
  case DType::F8E4M3FN:
    // No infinity; only S.1111.111 is NaN, so 1.110 x 2^8 = 448 is the largest value.
    return {4, 3, 7, false, false, 0x7E, 0x7F};
  case DType::F8E4M3FNUZ:
    return {4, 3, 8, false, true, 0x7F, 0x80};
  case DType::F8E5M2FNUZ:
    return {5, 2, 16, false, true, 0x7F, 0x80};
  default:
    return {0, 0, 0, false, false, 0, 0};
  }
}

int widthOf(const Format &f) { return 1 + f.exponentBits + f.mantissaBits; }

uint64_t encodeNarrow(const Format &f, double v) {
  uint32_t signBit = uint32_t(1) << (widthOf(f) - 1);
  if (std::isnan(v))
    return f.unsignedZero ? f.nan : (std::signbit(v) ? signBit : 0) | f.nan;
  uint32_t sign = std::signbit(v) ? signBit : 0;
  double a = std::fabs(v);
  auto overflow = [&]() -> uint64_t {
    if (f.ieee)
      return sign | (((uint32_t(1) << f.exponentBits) - 1) << f.mantissaBits);
    return f.unsignedZero ? f.nan : sign | f.nan;
  };
  if (std::isinf(a))
    return overflow();
  if (a == 0)
    return f.unsignedZero ? 0 : sign;

  int e2;
  std::frexp(a, &e2);
  int exponent = e2 - 1; // a = 1.m * 2^exponent
  int minNormal = 1 - f.bias;
  uint64_t magnitude;
  if (exponent < minNormal) {
    // Subnormal range: count in units of the smallest subnormal. Rounding up to 2^m
    // lands exactly on the smallest normal's encoding.
    double q = std::nearbyint(std::ldexp(a, f.mantissaBits - minNormal));
    magnitude = uint64_t(q);
  } else {
    if (exponent > f.bias + 2) // far beyond every finite value (keeps the shift small)
      return overflow();
    double q = std::nearbyint(std::ldexp(a, f.mantissaBits - exponent));
    uint64_t mantissa = uint64_t(q);
    if (mantissa == (uint64_t(1) << (f.mantissaBits + 1))) {
      ++exponent;
      mantissa >>= 1;
    }
    magnitude = (uint64_t(exponent + f.bias) << f.mantissaBits) |
                (mantissa - (uint64_t(1) << f.mantissaBits));
  }
  if (magnitude > f.maxMagnitude)
    return overflow();
  if (magnitude == 0 && f.unsignedZero)
    return 0;
  return sign | magnitude;
}

double decodeNarrow(const Format &f, uint64_t bits) {
  uint32_t signBit = uint32_t(1) << (widthOf(f) - 1);
  uint32_t b = uint32_t(bits) & ((signBit << 1) - 1);
  if (f.unsignedZero && b == signBit)
    return std::numeric_limits<double>::quiet_NaN();
  bool negative = b & signBit;
  uint32_t magnitude = b & (signBit - 1);
  uint32_t expMask = (uint32_t(1) << f.exponentBits) - 1;
  uint32_t exponent = magnitude >> f.mantissaBits;
  uint32_t mantissa = magnitude & ((uint32_t(1) << f.mantissaBits) - 1);
  double value;
  if (f.ieee && exponent == expMask)
    value = mantissa ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
  else if (!f.ieee && !f.unsignedZero && magnitude > f.maxMagnitude)
    value = std::numeric_limits<double>::quiet_NaN();
  else if (exponent == 0)
    value = std::ldexp(double(mantissa), 1 - f.bias - f.mantissaBits);
  else
    value = std::ldexp(double(mantissa | (uint32_t(1) << f.mantissaBits)),
                       int(exponent) - f.bias - f.mantissaBits);
  return negative ? -value : value;
}

int integerBits(DType d) { return d == DType::I1 ? 1 : int(byteSize(d)) * 8; }

} // namespace

uint64_t encodeFloat(DType d, double v) {
  if (d == DType::F64) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    return u;
  }
  if (d == DType::F32) {
    float f = float(v); // C++ rounds to nearest even here
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  return encodeNarrow(formatOf(d), v);
}

double decodeFloat(DType d, uint64_t bits) {
  if (d == DType::F64) {
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  if (d == DType::F32) {
    uint32_t u = uint32_t(bits);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  return decodeNarrow(formatOf(d), bits);
}

double largestFinite(DType d) {
  if (d == DType::F64)
    return std::numeric_limits<double>::max();
  if (d == DType::F32)
    return std::numeric_limits<float>::max();
  return decodeNarrow(formatOf(d), formatOf(d).maxMagnitude);
}

int64_t integerMin(DType d) {
  int bits = integerBits(d);
  if (bits == 1)
    return 0;
  if (bits == 64)
    return std::numeric_limits<int64_t>::min();
  return -(int64_t(1) << (bits - 1));
}

uint64_t integerMax(DType d) {
  int bits = integerBits(d);
  return bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t(1) << bits) - 1;
}

int64_t wrapInteger(DType d, int64_t v) {
  int bits = integerBits(d);
  if (bits == 1)
    return v & 1;
  if (bits == 64)
    return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = uint64_t(v) & mask;
  uint64_t signBit = uint64_t(1) << (bits - 1);
  return int64_t((u ^ signBit) - signBit);
}

void storeInteger(DType d, uint8_t *p, int64_t v) {
  uint64_t u = uint64_t(wrapInteger(d, v));
  // Little-endian hosts only (as every GPU ttinterp stands in for).
  std::memcpy(p, &u, byteSize(d));
}

void storeFloat(DType d, uint8_t *p, double v) {
  uint64_t bits = encodeFloat(d, v);
  std::memcpy(p, &bits, byteSize(d));
}

double loadAsDouble(DType d, const uint8_t *p) {
  uint64_t u = 0;
  std::memcpy(&u, p, byteSize(d));
  if (isFloat(d))
    return decodeFloat(d, u);
  if (d == DType::I1)
    return u != 0;
  if (d == DType::Ptr)
    return double(u);
  return double(wrapInteger(d, int64_t(u)));
}

std::string formatElement(DType d, const uint8_t *p) {
  uint64_t u = 0;
  std::memcpy(&u, p, byteSize(d));
  if (isFloat(d))
    return fmt::format("{:.6g}", decodeFloat(d, u));
  if (d == DType::I1)
    return u ? "1" : "0";
  if (d == DType::Ptr)
    return fmt::format("{:#x}", u);
  return fmt::format("{}", wrapInteger(d, int64_t(u)));
}

} // namespace ttinterp::driver
