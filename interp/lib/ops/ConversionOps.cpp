//===- ConversionOps.cpp - tt.fp_to_fp: float conversions as sm_90 does them -===//
//
// Every pair of f64/f32/f16/bf16/fp8 types, rounding to nearest even (rtne, the
// default for narrowing) or toward zero (rtz). Conversions to fp8 follow the
// GPU's cvt.rn.satfinite: out-of-range values and infinities saturate to the
// largest finite value and NaN becomes the canonical fp8 NaN (docs/semantics.md).
// Widening conversions are exact.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

namespace ttinterp::interp {
namespace {

/// A float rounded to type To (a float or narrower) as tt.fp_to_fp does.
template <DType To, bool TowardZero> Repr<To> narrowFloat(float f) {
  if constexpr (To == DType::F16)
    return TowardZero ? roundHalfTowardZero(f) : roundTo<DType::F16>(f);
  else if constexpr (To == DType::BF16)
    return TowardZero ? roundBF16TowardZero(f) : roundTo<DType::BF16>(f);
  else if constexpr (isFP8(To))
    return fp8ToFloat(To, convertToFP8(To, f, TowardZero));
  else
    return f;
}

template <DType From, DType To, bool TowardZero> Repr<To> convertFloat(Repr<From> a) {
  if constexpr (To == DType::F64) {
    return double(a); // exact from every narrower type
  } else if constexpr (From == DType::F64) {
    if constexpr (To == DType::F32)
      return TowardZero ? floatTowardZero(a) : float(a);
    // Through a float that keeps enough bits for the second rounding to be the only one.
    return narrowFloat<To, TowardZero>(TowardZero ? floatTowardZero(a) : floatRoundToOdd(a));
  } else {
    return narrowFloat<To, TowardZero>(a);
  }
}

template <DType From, DType To, bool TowardZero> void fpToFpKernel(Frame &f, const Instr &in) {
  const Repr<From> *a = f.at<Repr<From>>(in.operands[0]);
  Repr<To> *r = f.at<Repr<To>>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = convertFloat<From, To, TowardZero>(a[i]);
}

bool lowerFpToFp(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  DType from = L.slot(a).dtype, to = L.slot(r).dtype;
  if (!isFloat(from) || !isFloat(to))
    return L.error(op, "operand and result must be floats");
  // RoundingMode: rtz = 0, rtne = 1; absent (widening casts) means exact, i.e. any mode.
  bool towardZero = intAttr(op, "rounding", 1) == 0;
  ExecFn fn = visitFloat(from, [&](auto f) -> ExecFn {
    return visitFloat(to, [&](auto t) -> ExecFn {
      constexpr DType From = decltype(f)::value, To = decltype(t)::value;
      return towardZero ? &fpToFpKernel<From, To, true> : &fpToFpKernel<From, To, false>;
    });
  });
  L.emit(op, fn, {a}, {r});
  return true;
}

} // namespace

void registerConversionOps(OpTable &t) { t.add("tt.fp_to_fp", &lowerFpToFp); }

} // namespace ttinterp::interp
