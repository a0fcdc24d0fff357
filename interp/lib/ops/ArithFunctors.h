//===- ArithFunctors.h - Element semantics of the arith ops, shared by their users -*- C++ -*-===//
//
// One definition of what each binary arith op does to a pair of elements
// (compute representations, before narrow-float rounding). ArithOps.cpp
// wraps them in block kernels; ReduceOps.cpp folds with them when a
// tt.reduce / tt.scan combine region is a single such op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OpSupport.h"

#include <cmath>
#include <limits>

namespace ttinterp::interp {

template <DType D> constexpr unsigned bitWidth() {
  return D == DType::I1 ? 1 : unsigned(sizeof(Repr<D>) * 8);
}

#define TTINTERP_INT_OP(NAME, EXPR)                                                                \
  struct NAME {                                                                                    \
    template <DType D> static Repr<D> apply(Repr<D> a, Repr<D> b) {                                \
      using U = UnsignedRepr<D>;                                                                   \
      (void)sizeof(U);                                                                             \
      return wrap<D>(Repr<D>(EXPR));                                                               \
    }                                                                                              \
  };
TTINTERP_INT_OP(AddI, U(U(a) + U(b)))
TTINTERP_INT_OP(SubI, U(U(a) - U(b)))
TTINTERP_INT_OP(MulI, U(uint64_t(U(a)) * uint64_t(U(b))))
TTINTERP_INT_OP(AndI, a &b)
TTINTERP_INT_OP(OrI, a | b)
TTINTERP_INT_OP(XOrI, a ^ b)
TTINTERP_INT_OP(MaxSI, signedValue<D>(a) > signedValue<D>(b) ? a : b)
TTINTERP_INT_OP(MinSI, signedValue<D>(a) < signedValue<D>(b) ? a : b)
TTINTERP_INT_OP(MaxUI, U(a) > U(b) ? a : b)
TTINTERP_INT_OP(MinUI, U(a) < U(b) ? a : b)
TTINTERP_INT_OP(ShLI, unsignedValue<D>(b) >= bitWidth<D>() ? U(0) : U(U(a) << unsignedValue<D>(b)))
TTINTERP_INT_OP(ShRUI, unsignedValue<D>(b) >= bitWidth<D>() ? U(0) : U(U(a) >> unsignedValue<D>(b)))
TTINTERP_INT_OP(ShRSI, unsignedValue<D>(b) >= bitWidth<D>()
                           ? (signedValue<D>(a) < 0 ? ~U(0) : U(0))
                           : U(signedValue<D>(a) >> unsignedValue<D>(b)))
#undef TTINTERP_INT_OP

/// PTX max/min (IEEE maxNum/minNum): a NaN operand yields the other operand
/// (b when both are NaN), and "if values of both inputs are 0.0, then +0.0 >
/// -0.0". Inline rather than std::fmax, whose treatment of zeros libm leaves
/// open; written as selects, without branches, so loops over it vectorise.
template <class T> inline T maxNum(T a, T b) {
  T r = a == b ? (std::signbit(a) ? b : a) : (a > b ? a : b);
  r = b != b ? a : r;
  return a != a ? b : r;
}
template <class T> inline T minNum(T a, T b) {
  T r = a == b ? (std::signbit(a) ? a : b) : (a < b ? a : b);
  r = b != b ? a : r;
  return a != a ? b : r;
}

#define TTINTERP_FLOAT_OP(NAME, EXPR)                                                              \
  struct NAME {                                                                                    \
    template <DType D> static Repr<D> apply(Repr<D> a, Repr<D> b) { return EXPR; }                 \
  };
TTINTERP_FLOAT_OP(AddF, a + b)
TTINTERP_FLOAT_OP(SubF, a - b)
TTINTERP_FLOAT_OP(MulF, a *b)
TTINTERP_FLOAT_OP(DivF, a / b)
TTINTERP_FLOAT_OP(RemF, std::fmod(a, b))
TTINTERP_FLOAT_OP(MaxNumF, maxNum(a, b))
TTINTERP_FLOAT_OP(MinNumF, minNum(a, b))
// Without NaNs maximum/minimum order values (and zeros) as maxNum/minNum do.
TTINTERP_FLOAT_OP(MaximumF, (std::isnan(a) || std::isnan(b))
                                ? std::numeric_limits<Repr<D>>::quiet_NaN()
                                : maxNum(a, b))
TTINTERP_FLOAT_OP(MinimumF, (std::isnan(a) || std::isnan(b))
                                ? std::numeric_limits<Repr<D>>::quiet_NaN()
                                : minNum(a, b))
#undef TTINTERP_FLOAT_OP

// The four correctly rounded IEEE operations: their f32 blocks run on simd::basic.
#define TTINTERP_SIMD_BASIC(NAME, OP)                                                              \
  template <> struct SimdBasicOf<NAME> {                                                           \
    static constexpr bool available = true;                                                        \
    static constexpr simd::BasicOp op = simd::BasicOp::OP;                                         \
  };
TTINTERP_SIMD_BASIC(AddF, Add)
TTINTERP_SIMD_BASIC(SubF, Sub)
TTINTERP_SIMD_BASIC(MulF, Mul)
TTINTERP_SIMD_BASIC(DivF, Div)
#undef TTINTERP_SIMD_BASIC

/// The binary arith ops that are one functor above, as X(name, functor):
/// ArithOps registers each as a block op, and ReduceOps folds with the
/// commutative ones (those a combine region may apply either way round)
/// without running the region.
#define TTINTERP_COMMUTATIVE_INT_OPS(X)                                                            \
  X("arith.addi", AddI)                                                                            \
  X("arith.muli", MulI)                                                                            \
  X("arith.andi", AndI)                                                                            \
  X("arith.ori", OrI)                                                                              \
  X("arith.xori", XOrI)                                                                            \
  X("arith.maxsi", MaxSI)                                                                          \
  X("arith.minsi", MinSI)                                                                          \
  X("arith.maxui", MaxUI)                                                                          \
  X("arith.minui", MinUI)
#define TTINTERP_OTHER_INT_OPS(X)                                                                  \
  X("arith.subi", SubI)                                                                            \
  X("arith.shli", ShLI)                                                                            \
  X("arith.shrui", ShRUI)                                                                          \
  X("arith.shrsi", ShRSI)
#define TTINTERP_COMMUTATIVE_FLOAT_OPS(X)                                                          \
  X("arith.addf", AddF)                                                                            \
  X("arith.mulf", MulF)                                                                            \
  TTINTERP_FLOAT_MIN_MAX_OPS(X)
#define TTINTERP_FLOAT_MIN_MAX_OPS(X)                                                              \
  X("arith.maxnumf", MaxNumF)                                                                      \
  X("arith.minnumf", MinNumF)                                                                      \
  X("arith.maximumf", MaximumF)                                                                    \
  X("arith.minimumf", MinimumF)
#define TTINTERP_OTHER_FLOAT_OPS(X)                                                                \
  X("arith.subf", SubF)                                                                            \
  X("arith.divf", DivF)                                                                            \
  X("arith.remf", RemF)

} // namespace ttinterp::interp
