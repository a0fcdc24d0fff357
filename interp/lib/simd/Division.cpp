//===- Division.cpp - 32-bit integer division and remainder of blocks, per ISA -===//
//
// arith.divsi/divui/remsi/remui on i32 blocks: the x86 integer divider takes one lane at a
// time (and a group norm's `offsets // per_channel` was a quarter of its launch), while
// every 32-bit operand is exact in a double, so the vector unit can do the work. Two ways,
// both exact (the proofs are beside them), so every target and the scalar tail agree bit
// for bit with plain integer division:
// - a divisor per lane: the double quotient, truncated (vdivpd, 8 lanes at a time);
// - one divisor for the block (a splat): its reciprocal, computed once, a multiply and a
//   floor per lane, and one correction step from the exact remainder.
//
//===----------------------------------------------------------------------===//
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/Division.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep
#include <hwy/highway.h>

#include "simd/Simd.h"

#include <cmath>

#ifndef TTINTERP_SIMD_DIVISION_ONCE
#define TTINTERP_SIMD_DIVISION_ONCE
namespace ttinterp::interp::simd {
namespace {
constexpr double kTwo31 = 2147483648.0, kTwo32 = 4294967296.0;

bool isUnsigned(IntDivOp op) { return op == IntDivOp::DivU || op == IntDivOp::RemU; }
bool isRemainder(IntDivOp op) { return op == IntDivOp::RemS || op == IntDivOp::RemU; }

/// An operand's value: its two's-complement bits read as signed or unsigned.
double operandValue(int32_t v, bool unsignedOp) {
  return unsignedOp ? double(uint32_t(v)) : double(v);
}

/// A result in [-2^31, 2^32) as i32 bits: the quotient 2^31 (MIN / -1) wraps to MIN, an
/// unsigned result at or above 2^31 is its two's-complement pattern.
int32_t wrapResult(double v) { return int32_t(int64_t(v >= kTwo31 ? v - kTwo32 : v)); }

/// One lane, the way the vector code's divisor-per-lane path computes it (and, both being
/// exact, the way its one-divisor path ends up).
int32_t divideLane(IntDivOp op, int32_t a, int32_t b) {
  const bool u = isUnsigned(op);
  const double x = operandValue(a, u), y = operandValue(b, u);
  const double q = std::trunc(x / y);
  return wrapResult(isRemainder(op) ? x - q * y : q);
}
} // namespace
} // namespace ttinterp::interp::simd
#endif

HWY_BEFORE_NAMESPACE();
namespace ttinterp::interp::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void IntDivide32(IntDivOp op, const int32_t *a, const int32_t *b, bool splatDivisor, int32_t *r,
                 int64_t n) {
  const hn::ScalableTag<double> d;
  const hn::Rebind<int32_t, decltype(d)> di;
  const int64_t lanes = int64_t(hn::Lanes(d));
  const bool u = isUnsigned(op), remainder = isRemainder(op);
  const auto zero = hn::Zero(d), one = hn::Set(d, 1.0);
  const auto two31 = hn::Set(d, kTwo31), two32 = hn::Set(d, kTwo32);
  auto load = [&](const int32_t *p) {
    auto v = hn::PromoteTo(d, hn::LoadU(di, p));
    return u ? hn::IfThenElse(hn::Lt(v, zero), hn::Add(v, two32), v) : v;
  };
  auto store = [&](int32_t *p, decltype(zero) v) {
    hn::StoreU(hn::DemoteTo(di, hn::IfThenElse(hn::Ge(v, two31), hn::Sub(v, two32), v)), di, p);
  };
  int64_t i = 0;
  if (splatDivisor) {
    // With y = |divisor|, A = |x| < 2^32 and t = A / y: rcp = 1/y and A * rcp each round
    // once, to within 2^-53 relative, so the product is within 2^-51 t of t. Its floor is
    // never above floor(t): for t not an integer, floor(t) + 1 - t >= 1 / y, more than
    // 2^-51 t plus the half ulp (2^-53 (t + 1)) that could round it up, as 2A + y < 2^53.
    // Nor more than one below. f * y and A - f * y are integers below 2^33: exact, and a
    // remainder of y or more says f is the one below, which one step corrects. Truncating
    // division is floor(A / y) with the operands' signs; the remainder takes the dividend's.
    const double divisor = operandValue(b[0], u);
    const double y = std::fabs(divisor);
    const auto vy = hn::Set(d, y), rcp = hn::Set(d, 1.0 / y);
    const bool negativeDivisor = divisor < 0;
    for (; i + lanes <= n; i += lanes) {
      const auto x = load(a + i);
      const auto ax = hn::Abs(x);
      auto f = hn::Floor(hn::Mul(ax, rcp));
      auto rem = hn::Sub(ax, hn::Mul(f, vy));
      const auto low = hn::Ge(rem, vy);
      f = hn::IfThenElse(low, hn::Add(f, one), f);
      rem = hn::IfThenElse(low, hn::Sub(rem, vy), rem);
      const auto negativeDividend = hn::Lt(x, zero);
      if (remainder) {
        store(r + i, hn::IfThenElse(negativeDividend, hn::Neg(rem), rem));
      } else {
        const auto negative = negativeDivisor ? hn::Not(negativeDividend) : negativeDividend;
        store(r + i, hn::IfThenElse(negative, hn::Neg(f), f));
      }
    }
  } else {
    // |x / y| < 2^32, so the rounded double quotient is within 2^-21 / |y| of the true one,
    // nearer than the 1 / |y| from a fraction to the next integer, and an integral quotient
    // is exact: truncated, it is the integer quotient. q * y is at most |x|: exact.
    for (; i + lanes <= n; i += lanes) {
      const auto x = load(a + i), y = load(b + i);
      const auto q = hn::Trunc(hn::Div(x, y));
      store(r + i, remainder ? hn::Sub(x, hn::Mul(q, y)) : q);
    }
  }
  for (; i < n; ++i)
    r[i] = divideLane(op, a[i], b[splatDivisor ? 0 : i]);
}

} // namespace ttinterp::interp::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ttinterp::interp::simd {
HWY_EXPORT(IntDivide32);
void intDivide32(IntDivOp op, const int32_t *a, const int32_t *b, bool splatDivisor, int32_t *r,
                 int64_t n) {
  HWY_DYNAMIC_DISPATCH(IntDivide32)(op, a, b, splatDivisor, r, n);
}
} // namespace ttinterp::interp::simd
#endif
