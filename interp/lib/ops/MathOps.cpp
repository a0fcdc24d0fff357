//===- MathOps.cpp - The math dialect and Triton's float extras -----------===//
//
// Transcendentals of f32 (and of f16/bf16/fp8, computed in float and rounded)
// run on blocks through simd::map: SLEEF's 1-ulp vector kernels where the CPU
// has FMA, the C library otherwise; f64 uses the C library. The GPU's fast approximations (ex2.approx
// behind math.exp, for instance) may differ by a few ulp; precise_sqrt and
// precise_divf are correctly rounded on both. approx_divf (div.approx.f32, within
// 2 ulp on the GPU) is the correctly rounded quotient here, like __nv_fast_fdividef.
//
//===----------------------------------------------------------------------===//
#include "ArithFunctors.h"
#include "OpSupport.h"
#include "simd/Simd.h"

#include <cmath>
#include <limits>
#include <optional>

namespace ttinterp::interp {
namespace {

#define TTINTERP_UNARY(NAME, EXPR)                                                                 \
  struct NAME {                                                                                    \
    template <DType D> static Repr<D> apply(Repr<D> x) {                                           \
      using T = Repr<D>;                                                                           \
      (void)sizeof(T);                                                                             \
      return EXPR;                                                                                 \
    }                                                                                              \
  };
TTINTERP_UNARY(Exp, std::exp(x))
TTINTERP_UNARY(Exp2, std::exp2(x))
TTINTERP_UNARY(ExpM1, std::expm1(x))
TTINTERP_UNARY(Log, std::log(x))
TTINTERP_UNARY(Log2, std::log2(x))
TTINTERP_UNARY(Log10, std::log10(x))
TTINTERP_UNARY(Log1p, std::log1p(x))
TTINTERP_UNARY(Sqrt, std::sqrt(x))
TTINTERP_UNARY(RSqrt, T(1) / std::sqrt(x))
TTINTERP_UNARY(AbsF, std::fabs(x))
TTINTERP_UNARY(Sin, std::sin(x))
TTINTERP_UNARY(Cos, std::cos(x))
TTINTERP_UNARY(Tan, std::tan(x))
TTINTERP_UNARY(Tanh, std::tanh(x))
TTINTERP_UNARY(Erf, std::erf(x))
TTINTERP_UNARY(Erfc, std::erfc(x))
TTINTERP_UNARY(Floor, std::floor(x))
TTINTERP_UNARY(Ceil, std::ceil(x))
TTINTERP_UNARY(Trunc, std::trunc(x))
TTINTERP_UNARY(Round, std::round(x))
TTINTERP_UNARY(RoundEven, std::nearbyint(x))
TTINTERP_UNARY(Atan, std::atan(x))
TTINTERP_UNARY(Asin, std::asin(x))
TTINTERP_UNARY(Acos, std::acos(x))
TTINTERP_UNARY(Sinh, std::sinh(x))
TTINTERP_UNARY(Cosh, std::cosh(x))
TTINTERP_UNARY(Cbrt, std::cbrt(x))
#undef TTINTERP_UNARY

struct AbsI {
  template <DType D> static Repr<D> apply(Repr<D> x) {
    using U = UnsignedRepr<D>;
    return wrap<D>(signedValue<D>(x) < 0 ? Repr<D>(U(0) - U(x)) : x);
  }
};

struct PowF {
  template <DType D> static Repr<D> apply(Repr<D> a, Repr<D> b) { return std::pow(a, b); }
};
struct Atan2 {
  template <DType D> static Repr<D> apply(Repr<D> a, Repr<D> b) { return std::atan2(a, b); }
};
struct CopySign {
  template <DType D> static Repr<D> apply(Repr<D> a, Repr<D> b) { return std::copysign(a, b); }
};
/// Upper 32 bits of the 64-bit unsigned product (tt.mulhiui, i32 and i64).
struct MulHiUI {
  template <DType D> static Repr<D> apply(Repr<D> a, Repr<D> b) {
    if constexpr (D == DType::I64) {
      unsigned __int128 p = (unsigned __int128)uint64_t(a) * uint64_t(b);
      return Repr<D>(uint64_t(p >> 64));
    } else {
      constexpr unsigned bits = sizeof(Repr<D>) * 8;
      uint64_t p = unsignedValue<D>(a) * unsignedValue<D>(b);
      return wrap<D>(Repr<D>(UnsignedRepr<D>(p >> bits)));
    }
  }
};

/// Bit counts (math.ctlz/cttz/ctpop); a zero operand counts the whole width.
template <int Which> struct BitCount {
  template <DType D> static Repr<D> apply(Repr<D> x) {
    constexpr int bits = D == DType::I1 ? 1 : int(sizeof(Repr<D>) * 8);
    uint64_t u = unsignedValue<D>(x);
    int n;
    if constexpr (Which == 0)
      n = u == 0 ? bits : __builtin_clzll(u) - (64 - bits);
    else if constexpr (Which == 1)
      n = u == 0 ? bits : __builtin_ctzll(u);
    else
      n = __builtin_popcountll(u);
    return wrap<D>(Repr<D>(n));
  }
};

//===----------------------------------------------------------------------===//
// tt.clampf
//===----------------------------------------------------------------------===//

/// How a clampf is lowered on sm_90 (Triton's ClampFOpConversion).
enum class Clamp {
  Num,     ///< propagateNan = none: minnum(maxnum(x, lo), hi); a NaN x gives lo.
  Nan,     ///< propagateNan = all: minimum(maximum(x, lo), hi); any NaN gives NaN.
  Clip,    ///< clamp(x, -c, c) recognised as fmin.xorsign.abs(x, c): a NaN x gives
           ///< |c| with the sign of x xor the sign of c.
  ClipNan, ///< ... with .NaN: NaN when x or c is NaN.
};

template <DType D, Clamp C> void clampKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const T *x = f.at<T>(in.operands[0]), *lo = f.at<T>(in.operands[1]),
          *hi = f.at<T>(in.operands[2]);
  T *r = f.at<T>(in.results[0]);
  constexpr T nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    T a = x[i], l = lo[i], h = hi[i], v;
    if constexpr (C == Clamp::Num) {
      v = minNum(maxNum(a, l), h);
    } else if constexpr (C == Clamp::Nan) {
      // IEEE maximum/minimum: NaN wins, and -0 < +0.
      T m = a == l ? (std::signbit(a) ? l : a) : (a > l ? a : l);
      m = m == h ? (std::signbit(m) ? m : h) : (m < h ? m : h);
      v = std::isnan(a) || std::isnan(l) || std::isnan(h) ? nan : m;
    } else {
      bool negative = std::signbit(a) != std::signbit(h);
      T m;
      if (std::isnan(a) || std::isnan(h))
        m = C == Clamp::ClipNan || (std::isnan(a) && std::isnan(h)) ? nan
            : std::isnan(a)                                         ? std::fabs(h)
                                                                    : std::fabs(a);
      else
        m = std::fmin(std::fabs(a), std::fabs(h));
      v = std::isnan(m) ? m : std::copysign(m, negative ? T(-1) : T(1));
    }
    r[i] = roundTo<D>(v);
  }
}

mlir::Operation *definedBy(mlir::Value v, llvm::StringRef name) {
  mlir::Operation *def = v.getDefiningOp();
  return def && def->getName().getStringRef() == name ? def : nullptr;
}

/// Triton's isClipPattern (sm_90+): the lower bound is -(upper bound), spelled as
/// negf of it (also under splats), 0 - it, or two constants c and -c.
bool isClipPattern(mlir::Operation *op) {
  mlir::Value lo = op->getOperand(1), hi = op->getOperand(2);
  if (mlir::Operation *neg = definedBy(lo, "arith.negf"); neg && neg->getOperand(0) == hi)
    return true;
  mlir::Operation *loSplat = definedBy(lo, "tt.splat"), *hiSplat = definedBy(hi, "tt.splat");
  if (loSplat && hiSplat)
    if (mlir::Operation *neg = definedBy(loSplat->getOperand(0), "arith.negf");
        neg && neg->getOperand(0) == hiSplat->getOperand(0))
      return true;
  if (mlir::Operation *sub = definedBy(lo, "arith.subf"); sub && sub->getOperand(1) == hi) {
    std::optional<double> zero = splatConstant(sub->getOperand(0));
    if (zero && *zero == 0.0)
      return true;
  }
  std::optional<double> l = splatConstant(lo), h = splatConstant(hi);
  return l && h && *l == -*h;
}

bool lowerClampF(mlir::Operation *op, Lowerer &L) {
  SlotId x = L.use(op->getOperand(0)), lo = L.use(op->getOperand(1)), hi = L.use(op->getOperand(2));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  bool propagate = intAttr(op, "propagateNan", 0) != 0; // none = 0, all = 0xFFFF
  DType d = L.slot(r).dtype;
  // fmin.xorsign.abs exists for f32, f16 and bf16 only.
  bool clip = (d == DType::F32 || d == DType::F16 || d == DType::BF16) && isClipPattern(op);
  Clamp mode =
      clip ? (propagate ? Clamp::ClipNan : Clamp::Clip) : (propagate ? Clamp::Nan : Clamp::Num);
  ExecFn fn = visitFloat(d, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    switch (mode) {
    case Clamp::Num:
      return &clampKernel<D, Clamp::Num>;
    case Clamp::Nan:
      return &clampKernel<D, Clamp::Nan>;
    case Clamp::Clip:
      return &clampKernel<D, Clamp::Clip>;
    default:
      return &clampKernel<D, Clamp::ClipNan>;
    }
  });
  if (!fn)
    return L.error(op, "operands must be floats");
  L.emit(op, fn, {x, lo, hi}, {r});
  return true;
}

template <DType D> void fmaKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]), *c = f.at<T>(in.operands[2]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = roundTo<D>(std::fma(a[i], b[i], c[i]));
}

bool lowerFma(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0)), b = L.use(op->getOperand(1)), c = L.use(op->getOperand(2));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visitFloat(L.slot(r).dtype, [](auto tag) -> ExecFn {
    return &fmaKernel<decltype(tag)::value>;
  });
  L.emit(op, fn, {a, b, c}, {r});
  return true;
}

template <class Fn> bool unaryF(mlir::Operation *op, Lowerer &L) {
  return lowerUnary<Fn>(op, L, Floats);
}

/// A whole block through the vector function, then rounded to a narrow type.
template <DType D, simd::MathFn V> void vectorMathKernel(Frame &f, const Instr &in) {
  float *r = f.at<float>(in.results[0]);
  simd::map(V, f.at<float>(in.operands[0]), r, in.n);
  if constexpr (D != DType::F32)
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = roundTo<D>(r[i]);
}

/// A transcendental: float-held types on simd::map, f64 element by element on Fn.
template <class Fn, simd::MathFn V> bool vectorF(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visitFloat(L.slot(r).dtype, [](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if constexpr (D == DType::F64)
      return &unaryKernel<D, Fn>;
    else
      return &vectorMathKernel<D, V>;
  });
  if (!fn)
    return L.error(op, "unsupported element type");
  L.emit(op, fn, {a}, {r});
  return true;
}

} // namespace

std::optional<simd::MathFn> vectorMathFn(llvm::StringRef opName) {
#define TTINTERP_MATCH_VECTOR_MATH(NAME, FN)                                                       \
  if (opName == NAME)                                                                              \
    return simd::MathFn::FN;
  TTINTERP_VECTOR_MATH_OPS(TTINTERP_MATCH_VECTOR_MATH)
#undef TTINTERP_MATCH_VECTOR_MATH
  return std::nullopt;
}

void registerMathOps(OpTable &t) {
#define TTINTERP_ADD_VECTOR_MATH(NAME, FN) t.add(NAME, &vectorF<FN, simd::MathFn::FN>);
  TTINTERP_VECTOR_MATH_OPS(TTINTERP_ADD_VECTOR_MATH)
#undef TTINTERP_ADD_VECTOR_MATH
  t.add("math.sqrt", &unaryF<Sqrt>);
  t.add("math.rsqrt", &unaryF<RSqrt>);
  t.add("math.absf", &unaryF<AbsF>);
  t.add("math.erfc", &unaryF<Erfc>);
  t.add("math.floor", &unaryF<Floor>);
  t.add("math.ceil", &unaryF<Ceil>);
  t.add("math.trunc", &unaryF<Trunc>);
  t.add("math.round", &unaryF<Round>);
  t.add("math.roundeven", &unaryF<RoundEven>);
  t.add("math.powf", &binaryF<PowF>, kBothOperands);
  t.add("math.atan2", &binaryF<Atan2>, kBothOperands);
  t.add("math.copysign", &binaryF<CopySign>, kBothOperands);
  t.add("math.fma", &lowerFma);
  t.add("math.absi", [](mlir::Operation *op, Lowerer &L) { return lowerUnary<AbsI>(op, L, Ints); });
  t.add("math.ctlz",
        [](mlir::Operation *op, Lowerer &L) { return lowerUnary<BitCount<0>>(op, L, Ints); });
  t.add("math.cttz",
        [](mlir::Operation *op, Lowerer &L) { return lowerUnary<BitCount<1>>(op, L, Ints); });
  t.add("math.ctpop",
        [](mlir::Operation *op, Lowerer &L) { return lowerUnary<BitCount<2>>(op, L, Ints); });
  t.add("tt.clampf", &lowerClampF);
  t.add("tt.precise_sqrt", &unaryF<Sqrt>);
  t.add("tt.precise_divf", &binaryF<DivF>, kBothOperands);
  t.add("tt.approx_divf", &binaryF<DivF>, kBothOperands);
  t.add("tt.mulhiui", &binaryI<MulHiUI>, kBothOperands);
}

} // namespace ttinterp::interp
