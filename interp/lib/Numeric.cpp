//===- Numeric.cpp - fp8 encodings through LLVM's APFloat -----------------===//
#include "Numeric.h"

#include "llvm/ADT/APFloat.h"

#include <array>

namespace ttinterp::interp {

static const llvm::fltSemantics &semanticsOf(DType d) {
  switch (d) {
  case DType::F8E4M3FN:
    return llvm::APFloat::Float8E4M3FN();
  case DType::F8E4M3FNUZ:
    return llvm::APFloat::Float8E4M3FNUZ();
  case DType::F8E5M2:
    return llvm::APFloat::Float8E5M2();
  default:
    return llvm::APFloat::Float8E5M2FNUZ();
  }
}

namespace {
/// Decoded values and the largest finite magnitude of one fp8 format.
struct FP8Table {
  std::array<float, 256> value{};
  float maxFinite = 0;
  explicit FP8Table(DType d) {
    const llvm::fltSemantics &sem = semanticsOf(d);
    for (unsigned b = 0; b < 256; ++b)
      value[b] = llvm::APFloat(sem, llvm::APInt(8, b)).convertToFloat();
    maxFinite = llvm::APFloat::getLargest(sem).convertToFloat();
  }
};

const FP8Table &table(DType d) {
  static const FP8Table e4m3fn(DType::F8E4M3FN), e4m3fnuz(DType::F8E4M3FNUZ),
      e5m2(DType::F8E5M2), e5m2fnuz(DType::F8E5M2FNUZ);
  switch (d) {
  case DType::F8E4M3FN:
    return e4m3fn;
  case DType::F8E4M3FNUZ:
    return e4m3fnuz;
  case DType::F8E5M2:
    return e5m2;
  default:
    return e5m2fnuz;
  }
}
} // namespace

float fp8ToFloat(DType d, uint8_t bits) { return table(d).value[bits]; }

uint8_t floatToFP8(DType d, float f, bool saturate) {
  if (std::isnan(f))
    return fp8NaN(d);
  const FP8Table &t = table(d);
  // Clamping before rounding gives what rounding then saturating gives: every
  // value above the largest finite one rounds to it or beyond.
  if (saturate && std::fabs(f) > t.maxFinite)
    f = std::copysign(t.maxFinite, f);
  llvm::APFloat x(f);
  bool lost;
  x.convert(semanticsOf(d), llvm::APFloat::rmNearestTiesToEven, &lost);
  return uint8_t(x.bitcastToAPInt().getZExtValue());
}

uint8_t convertToFP8(DType d, float f, bool towardZero) {
  if (!towardZero)
    return floatToFP8(d, f, /*saturate=*/true);
  if (std::isnan(f))
    return fp8NaN(d);
  const FP8Table &t = table(d);
  // The GPU's only rtz path (f32 -> f16 rz -> the top byte, E5M2) keeps infinities;
  // formats without an infinity saturate, as their rtne conversion does.
  if (std::isinf(f) && d == DType::F8E5M2)
    return std::signbit(f) ? 0xFC : 0x7C;
  if (std::fabs(f) > t.maxFinite)
    f = std::copysign(t.maxFinite, f);
  llvm::APFloat x(f);
  bool lost;
  x.convert(semanticsOf(d), llvm::APFloat::rmTowardZero, &lost);
  return uint8_t(x.bitcastToAPInt().getZExtValue());
}

} // namespace ttinterp::interp
