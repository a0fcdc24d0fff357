//===- Numeric.h - Compute representations of element types ----*- C++ -*-===//
//
// Inside a kernel every value lives in its compute representation: integers in
// their own width (i1 as a byte holding 0 or 1), f32/f64 natively, and the
// narrow floats (f16, bf16, fp8) as a float holding a value exactly
// representable in the narrow type. Every narrow-float op rounds its result
// back to the type (as the GPU does); a float has more than 2p+2 bits for each
// narrow type, so computing in float and rounding once gives the correctly
// rounded narrow result for + - * / and sqrt.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ttinterp::interp {

template <DType D> struct ReprOf {
  using type = float; // f16, bf16, fp8
};
template <> struct ReprOf<DType::I1> { using type = uint8_t; };
template <> struct ReprOf<DType::I8> { using type = int8_t; };
template <> struct ReprOf<DType::I16> { using type = int16_t; };
template <> struct ReprOf<DType::I32> { using type = int32_t; };
template <> struct ReprOf<DType::I64> { using type = int64_t; };
template <> struct ReprOf<DType::F64> { using type = double; };
template <> struct ReprOf<DType::Ptr> { using type = uint64_t; };
template <DType D> using Repr = typename ReprOf<D>::type;

/// Bytes of one element in the compute representation.
constexpr size_t computeSize(DType d) {
  switch (d) {
  case DType::I1:
  case DType::I8:
    return 1;
  case DType::I16:
    return 2;
  case DType::I64:
  case DType::F64:
  case DType::Ptr:
    return 8;
  default:
    return 4;
  }
}

constexpr bool isNarrowFloat(DType d) {
  return d == DType::F16 || d == DType::BF16 || isFP8(d);
}

//===----------------------------------------------------------------------===//
// Bit-level conversions of the narrow float formats (round to nearest even).
//===----------------------------------------------------------------------===//

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0x1F)
    return bitsFloat(sign | 0x7F800000 | (man << 13));
  if (exp == 0) {
    if (man == 0)
      return bitsFloat(sign);
    // Subnormal half: value = man * 2^-24, exact in float.
    float v = float(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t floatToHalf(float f) {
  uint32_t u = floatBits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t abs = u & 0x7FFFFFFF;
  if (abs > 0x7F800000) // NaN: keep it quiet and keep payload's top bits
    return uint16_t(sign | 0x7E00 | ((abs >> 13) & 0x3FF));
  if (abs >= 0x477FF000) // rounds to >= 65520: infinity
    return uint16_t(sign | 0x7C00);
  if (abs < 0x38800000) {
    // Result is subnormal (or zero) in half: round abs * 2^24 to an integer.
    float v = bitsFloat(abs) * 16777216.0f; // exact: scaling by a power of two
    uint32_t q = uint32_t(std::nearbyint(v)); // current mode is round-to-nearest-even
    return uint16_t(sign | q);
  }
  uint32_t rounded = abs + 0xFFF + ((abs >> 13) & 1);
  return uint16_t(sign | ((rounded - 0x38000000) >> 13));
}

inline float bf16ToFloat(uint16_t b) { return bitsFloat(uint32_t(b) << 16); }

inline uint16_t floatToBF16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7FFFFFFF) > 0x7F800000)
    return uint16_t((u >> 16) | 0x40); // quiet NaN
  u += 0x7FFF + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

/// fp8 decoding tables, built once.
float fp8ToFloat(DType d, uint8_t bits);
/// The NaN the GPU's fp8 conversions produce: 0x7F for E4M3FN (S.1111.111) and
/// E5M2 (S.11111.11, the canonical quiet NaN); 0x80 for the FNUZ formats, their only NaN.
constexpr uint8_t fp8NaN(DType d) {
  return d == DType::F8E4M3FNUZ || d == DType::F8E5M2FNUZ ? 0x80 : 0x7F;
}
/// Encodes a float (exactly representable or not) to fp8 with round to nearest
/// even; values beyond the largest finite value saturate to it when `saturate`,
/// else become inf (E5M2) or NaN (formats without inf). Every NaN becomes fp8NaN(d).
uint8_t floatToFP8(DType d, float f, bool saturate);
/// tt.fp_to_fp's encoding of a float to fp8 (docs/semantics.md, "fp8"): round to
/// nearest even (cvt.rn.satfinite on sm_90) or toward zero; finite values beyond the
/// largest finite value and, when rounding to nearest, the infinities saturate to it;
/// NaN becomes fp8NaN(d).
uint8_t convertToFP8(DType d, float f, bool towardZero);

/// f rounded toward zero to f16 / bf16 (cvt.rz), held as a float: finite values never
/// overflow to infinity; infinities and NaN stay what they are.
inline float roundHalfTowardZero(float f) {
  uint32_t u = floatBits(f);
  uint32_t abs = u & 0x7FFFFFFF;
  if (abs >= 0x7F800000)
    return f;
  if (abs > 0x477FE000) // above 65504, the largest finite half
    return bitsFloat((u & 0x80000000) | 0x477FE000);
  if (abs < 0x38800000) // below 2^-14: the half quantum is 2^-24
    return std::copysign(std::trunc(bitsFloat(abs) * 16777216.0f) * 5.9604644775390625e-8f, f);
  return bitsFloat(u & ~uint32_t(0x1FFF));
}
inline float roundBF16TowardZero(float f) {
  return std::isnan(f) ? f : bitsFloat(floatBits(f) & 0xFFFF0000u);
}

/// A double rounded to float with round-to-odd: rounding that float once more to a
/// format of at most 22 bits of precision gives the correctly rounded result (a
/// float keeps p + 2 bits for every narrow type), so double -> f16 rounds once.
inline float floatRoundToOdd(double v) {
  float f = float(v);
  if (double(f) != v && !std::isnan(v) && !std::isinf(f) && (floatBits(f) & 1) == 0)
    f = std::nextafter(f, v > double(f) ? INFINITY : -INFINITY);
  return f;
}
/// A double rounded toward zero to float (finite values saturate at FLT_MAX).
inline float floatTowardZero(double v) {
  float f = float(v);
  if (!std::isnan(v) && std::fabs(double(f)) > std::fabs(v))
    f = std::nextafter(f, 0.0f);
  return f;
}

/// Rounds a float to the nearest value of narrow type D (identity for others).
template <DType D> inline Repr<D> roundTo(Repr<D> v) {
  if constexpr (D == DType::F16)
    return halfToFloat(floatToHalf(v));
  else if constexpr (D == DType::BF16)
    return bf16ToFloat(floatToBF16(v));
  else if constexpr (isFP8(D))
    return fp8ToFloat(D, floatToFP8(D, v, false));
  else
    return v;
}

/// Reads one element of type D from memory into its compute representation.
template <DType D> inline Repr<D> loadElement(const uint8_t *p) {
  if constexpr (D == DType::F16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  } else if constexpr (D == DType::BF16) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16ToFloat(h);
  } else if constexpr (isFP8(D)) {
    return fp8ToFloat(D, *p);
  } else if constexpr (D == DType::I1) {
    return uint8_t(*p != 0);
  } else if constexpr (D == DType::Ptr) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v & 0x0000FFFFFFFFFFFFull; // a pointer read from memory has no provenance
  } else {
    Repr<D> v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
}

/// Writes one element of type D from its compute representation to memory.
template <DType D> inline void storeElement(uint8_t *p, Repr<D> v) {
  if constexpr (D == DType::F16) {
    uint16_t h = floatToHalf(v);
    std::memcpy(p, &h, 2);
  } else if constexpr (D == DType::BF16) {
    uint16_t h = floatToBF16(v);
    std::memcpy(p, &h, 2);
  } else if constexpr (isFP8(D)) {
    *p = floatToFP8(D, v, false);
  } else if constexpr (D == DType::Ptr) {
    uint64_t a = v & 0x0000FFFFFFFFFFFFull; // strip provenance: memory holds plain addresses
    std::memcpy(p, &a, 8);
  } else {
    std::memcpy(p, &v, sizeof(v));
  }
}

} // namespace ttinterp::interp

namespace ttinterp::interp {

template <DType D> using DTypeTag = std::integral_constant<DType, D>;

/// Calls v(DTypeTag<D>{}) for the runtime integer dtype d (I1..I64); the
/// lambda is instantiated once per integer type, so it picks typed kernels.
template <class V> auto visitInt(DType d, V &&v) -> decltype(v(DTypeTag<DType::I32>{})) {
  switch (d) {
  case DType::I1:
    return v(DTypeTag<DType::I1>{});
  case DType::I8:
    return v(DTypeTag<DType::I8>{});
  case DType::I16:
    return v(DTypeTag<DType::I16>{});
  case DType::I32:
    return v(DTypeTag<DType::I32>{});
  case DType::I64:
    return v(DTypeTag<DType::I64>{});
  default:
    return {};
  }
}

/// As visitInt, for the float dtypes.
template <class V> auto visitFloat(DType d, V &&v) -> decltype(v(DTypeTag<DType::F32>{})) {
  switch (d) {
  case DType::F16:
    return v(DTypeTag<DType::F16>{});
  case DType::BF16:
    return v(DTypeTag<DType::BF16>{});
  case DType::F32:
    return v(DTypeTag<DType::F32>{});
  case DType::F64:
    return v(DTypeTag<DType::F64>{});
  case DType::F8E4M3FN:
    return v(DTypeTag<DType::F8E4M3FN>{});
  case DType::F8E4M3FNUZ:
    return v(DTypeTag<DType::F8E4M3FNUZ>{});
  case DType::F8E5M2:
    return v(DTypeTag<DType::F8E5M2>{});
  case DType::F8E5M2FNUZ:
    return v(DTypeTag<DType::F8E5M2FNUZ>{});
  default:
    return {};
  }
}

/// Every dtype, pointers included.
template <class V> auto visitAny(DType d, V &&v) -> decltype(v(DTypeTag<DType::I32>{})) {
  if (isInteger(d))
    return visitInt(d, v);
  if (isFloat(d))
    return visitFloat(d, v);
  return v(DTypeTag<DType::Ptr>{});
}

} // namespace ttinterp::interp
