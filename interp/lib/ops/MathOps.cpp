//===- MathOps.cpp - The math dialect and Triton's float extras -----------===//
//
// Transcendentals use the C library in the operand's precision (f16/bf16 are
// computed in float and rounded). The GPU's fast approximations (ex2.approx
// behind math.exp, for instance) may differ by a few ulp; precise_sqrt and
// precise_divf are correctly rounded on both.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include <cmath>

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
struct DivF {
  template <DType D> static Repr<D> apply(Repr<D> a, Repr<D> b) { return a / b; }
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

template <DType D> void fmaKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]), *c = f.at<T>(in.operands[2]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0; i < in.n; ++i)
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
template <class Fn> bool binaryF(mlir::Operation *op, Lowerer &L) {
  return lowerBinary<Fn>(op, L, Floats);
}

} // namespace

void registerMathOps(OpTable &t) {
  t.add("math.exp", &unaryF<Exp>);
  t.add("math.exp2", &unaryF<Exp2>);
  t.add("math.expm1", &unaryF<ExpM1>);
  t.add("math.log", &unaryF<Log>);
  t.add("math.log2", &unaryF<Log2>);
  t.add("math.log10", &unaryF<Log10>);
  t.add("math.log1p", &unaryF<Log1p>);
  t.add("math.sqrt", &unaryF<Sqrt>);
  t.add("math.rsqrt", &unaryF<RSqrt>);
  t.add("math.absf", &unaryF<AbsF>);
  t.add("math.sin", &unaryF<Sin>);
  t.add("math.cos", &unaryF<Cos>);
  t.add("math.tan", &unaryF<Tan>);
  t.add("math.tanh", &unaryF<Tanh>);
  t.add("math.erf", &unaryF<Erf>);
  t.add("math.floor", &unaryF<Floor>);
  t.add("math.ceil", &unaryF<Ceil>);
  t.add("math.trunc", &unaryF<Trunc>);
  t.add("math.round", &unaryF<Round>);
  t.add("math.roundeven", &unaryF<RoundEven>);
  t.add("math.atan", &unaryF<Atan>);
  t.add("math.asin", &unaryF<Asin>);
  t.add("math.acos", &unaryF<Acos>);
  t.add("math.sinh", &unaryF<Sinh>);
  t.add("math.cosh", &unaryF<Cosh>);
  t.add("math.cbrt", &unaryF<Cbrt>);
  t.add("math.powf", &binaryF<PowF>);
  t.add("math.atan2", &binaryF<Atan2>);
  t.add("math.copysign", &binaryF<CopySign>);
  t.add("math.fma", &lowerFma);
  t.add("math.absi", [](mlir::Operation *op, Lowerer &L) { return lowerUnary<AbsI>(op, L, Ints); });
  t.add("tt.precise_sqrt", &unaryF<Sqrt>);
  t.add("tt.precise_divf", &binaryF<DivF>);
  t.add("tt.mulhiui", [](mlir::Operation *op, Lowerer &L) { return lowerBinary<MulHiUI>(op, L, Ints); });
}

} // namespace ttinterp::interp
