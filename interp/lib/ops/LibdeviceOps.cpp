//===- LibdeviceOps.cpp - tt.extern_elementwise: CUDA libdevice functions --===//
//
// The symbol (`__nv_expf`, `__nv_pow`, ...) is resolved once at lowering into a
// kernel typed on the function itself, so the element loop makes direct calls.
// f32 functions are evaluated in double and rounded once to f32, f64 ones with
// the C library: results are as close to exact as libdevice's own (documented
// at most 1 to 4 ulp off for these functions), though not always bit-identical
// to it. An unknown symbol is a lowering error that names it.
//
// The `_rz`/`_rd`/`_ru` variants round toward zero, down or up: the FPU is put in that mode
// for the block and the operation done in the result's own type, so the hardware rounds it
// once (this file is compiled with -frounding-math, so the compiler keeps every operation
// inside the mode and folds none). Conversions to integers saturate and take NaN to 0, as
// PTX's cvt does.
//
//===----------------------------------------------------------------------===//
#include "ArithFunctors.h"
#include "OpSupport.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

namespace ttinterp::interp {
namespace {

//===----------------------------------------------------------------------===//
// Element functions
//===----------------------------------------------------------------------===//

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// erfinv by Giles' approximation ("Approximating the erfinv function", 2010),
/// polished to double precision by two Newton steps on erf.
double erfinvD(double x) {
  if (std::isnan(x) || x < -1 || x > 1)
    return kNaN;
  if (x == 1 || x == -1)
    return x * kInf;
  double w = -std::log((1.0 - x) * (1.0 + x)), p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double y = p * x;
  for (int i = 0; i < 2; ++i) {
    double slope = 1.1283791670955126 * std::exp(-y * y); // d erf / dy = 2/sqrt(pi) e^-y^2
    if (slope == 0)
      break;
    y -= (std::erf(y) - x) / slope;
  }
  return y;
}

double lgammaD(double x) {
#if defined(__GLIBC__)
  int sign;
  return ::lgamma_r(x, &sign); // lgamma writes the global signgam: not thread-safe
#else
  return std::lgamma(x);
#endif
}

double exp10D(double x) {
#if defined(__GLIBC__)
  return ::exp10(x);
#else
  return std::pow(10.0, x);
#endif
}

constexpr long double kPiL = 3.141592653589793238462643383279502884L;

/// sin(pi x) and cos(pi x), reduced exactly (x mod 2 is exact), then evaluated in extended
/// precision on [-pi/4, pi/4]: integers give zeros of the right sign, halves exact ones.
double sinpiD(double x) {
  if (!std::isfinite(x))
    return std::isnan(x) ? x : kNaN;
  const double t = std::fmod(std::fabs(x), 2.0); // [0, 2), exact
  const double quadrant = std::nearbyint(2 * t); // 0..4
  const double r = t - quadrant / 2;             // [-1/4, 1/4], exact
  if (r == 0 && std::fmod(quadrant, 2.0) == 0)
    return std::copysign(0.0, x); // sinpi(n) is a zero with x's sign (IEEE 754 sinPi)
  const long double a = kPiL * r;
  long double v;
  switch (int(quadrant) & 3) {
  case 0:
    v = sinl(a);
    break;
  case 1:
    v = cosl(a);
    break;
  case 2:
    v = -sinl(a);
    break;
  default:
    v = -cosl(a);
    break;
  }
  return x < 0 ? -double(v) : double(v);
}
double cospiD(double x) {
  if (!std::isfinite(x))
    return std::isnan(x) ? x : kNaN;
  const double t = std::fmod(std::fabs(x), 2.0);
  const double quadrant = std::nearbyint(2 * t);
  const double r = t - quadrant / 2;
  if (r == 0 && std::fmod(quadrant, 2.0) != 0)
    return 0.0; // cospi(n + 1/2) is +0
  const long double a = kPiL * r;
  switch (int(quadrant) & 3) {
  case 0:
    return double(cosl(a));
  case 1:
    return double(-sinl(a));
  case 2:
    return double(-cosl(a));
  default:
    return double(sinl(a));
  }
}

/// exp(x^2) erfc(x) in extended precision; beyond where erfc underflows there, the first
/// terms of its asymptotic series (relative error below 1e-19 from x = 100 on).
double erfcxD(double x) {
  if (std::isnan(x))
    return x;
  if (x < 100) {
    const long double xl = x;
    return double(expl(xl * xl) * erfcl(xl));
  }
  const long double xl = x, s = 1 / (2 * xl * xl);
  return double((1 - s * (1 - 3 * s * (1 - 5 * s))) / (xl * sqrtl(kPiL)));
}

/// erfc^-1 by Newton's method on erfc in extended precision, from erfinv(1 - y) near the
/// middle (1 - y exact there) or from the tail's asymptotics, and by symmetry above 1.
double erfcinvD(double y) {
  if (std::isnan(y) || y < 0 || y > 2)
    return kNaN;
  if (y == 0)
    return kInf;
  if (y == 2)
    return -kInf;
  if (y > 1)
    return -erfcinvD(2 - y); // exact for y in (1, 2)
  long double x;
  if (y >= 0.5) {
    x = erfinvD(1 - y);
  } else {
    // erfc(x) ~ exp(-x^2) / (x sqrt(pi)): a few fixed-point steps of x = sqrt(-log(y x sqrt(pi)))
    x = sqrtl(-logl(y));
    for (int i = 0; i < 3; ++i)
      x = sqrtl(-logl(y * x * sqrtl(kPiL)));
  }
  const long double target = y;
  for (int i = 0; i < 6; ++i) {
    const long double slope = -2 / sqrtl(kPiL) * expl(-x * x);
    if (slope == 0)
      break;
    const long double step = (erfcl(x) - target) / slope;
    x -= step;
    if (fabsl(step) <= fabsl(x) * 1e-19L)
      break;
  }
  return double(x);
}
double normcdfinvD(double p) { return -1.41421356237309504880 * erfcinvD(2 * p); }

/// I_nu(x) for nu = 0 or 1 and x >= 0, in extended precision: the power series up to 30 (positive
/// terms, no cancellation), the asymptotic expansion beyond (taken while its terms shrink, which at
/// x = 30 leaves under 1e-25), overflowing to infinity past what a double holds. (The C++
/// library's std::cyl_bessel_i throws for large arguments.)
long double besselI(int nu, long double x) {
  if (x <= 30) {
    const long double quarterSquare = x * x / 4;
    long double term = nu == 0 ? 1 : x / 2, sum = term;
    for (int k = 1; k < 200 && term > sum * 1e-21L; ++k) {
      term *= quarterSquare / (k * (k + nu));
      sum += term;
    }
    return sum;
  }
  const long double mu = 4.0L * nu * nu;
  long double term = 1, sum = 1;
  for (int k = 1; k < 100; ++k) {
    const long double odd = 2 * k - 1, next = -term * (mu - odd * odd) / (8 * k * x);
    if (fabsl(next) >= fabsl(term) || next == 0)
      break;
    term = next;
    sum += term;
  }
  return expl(x) / sqrtl(2 * kPiL * x) * sum;
}
double besselI0D(double x) { return std::isnan(x) ? x : double(besselI(0, std::fabs(x))); }
double besselI1D(double x) {
  return std::isnan(x) ? x : std::copysign(double(besselI(1, std::fabs(x))), x);
}

/// Unary functions: NAME_d on double, NAME_f on float (through double, one rounding).
#define TTINTERP_UNARY(NAME, EXPR)                                                                 \
  double NAME##_d(double x) { return EXPR; }                                                       \
  float NAME##_f(float x) { return float(NAME##_d(double(x))); }
TTINTERP_UNARY(exp, std::exp(x))
TTINTERP_UNARY(exp2, std::exp2(x))
TTINTERP_UNARY(exp10, exp10D(x))
TTINTERP_UNARY(expm1, std::expm1(x))
TTINTERP_UNARY(log, std::log(x))
TTINTERP_UNARY(log2, std::log2(x))
TTINTERP_UNARY(log10, std::log10(x))
TTINTERP_UNARY(log1p, std::log1p(x))
TTINTERP_UNARY(logb, std::logb(x))
TTINTERP_UNARY(sin, std::sin(x))
TTINTERP_UNARY(cos, std::cos(x))
TTINTERP_UNARY(tan, std::tan(x))
TTINTERP_UNARY(asin, std::asin(x))
TTINTERP_UNARY(acos, std::acos(x))
TTINTERP_UNARY(atan, std::atan(x))
TTINTERP_UNARY(sinh, std::sinh(x))
TTINTERP_UNARY(cosh, std::cosh(x))
TTINTERP_UNARY(tanh, std::tanh(x))
TTINTERP_UNARY(asinh, std::asinh(x))
TTINTERP_UNARY(acosh, std::acosh(x))
TTINTERP_UNARY(atanh, std::atanh(x))
TTINTERP_UNARY(erf, std::erf(x))
TTINTERP_UNARY(erfc, std::erfc(x))
TTINTERP_UNARY(erfinv, erfinvD(x))
TTINTERP_UNARY(normcdf, 0.5 * std::erfc(-x * 0.70710678118654752440))
TTINTERP_UNARY(lgamma, lgammaD(x))
TTINTERP_UNARY(tgamma, std::tgamma(x))
TTINTERP_UNARY(sqrt, std::sqrt(x))
TTINTERP_UNARY(rsqrt, 1.0 / std::sqrt(x))
TTINTERP_UNARY(cbrt, std::cbrt(x))
TTINTERP_UNARY(rcbrt, 1.0 / std::cbrt(x))
TTINTERP_UNARY(rcp, 1.0 / x)
TTINTERP_UNARY(floor, std::floor(x))
TTINTERP_UNARY(ceil, std::ceil(x))
TTINTERP_UNARY(trunc, std::trunc(x))
TTINTERP_UNARY(round, std::round(x))    // halfway cases away from zero
TTINTERP_UNARY(rint, std::nearbyint(x)) // the current mode: to nearest even
TTINTERP_UNARY(fabs, std::fabs(x))
TTINTERP_UNARY(j0, ::j0(x))
TTINTERP_UNARY(j1, ::j1(x))
TTINTERP_UNARY(y0, ::y0(x))
TTINTERP_UNARY(y1, ::y1(x))
TTINTERP_UNARY(sinpi, sinpiD(x))
TTINTERP_UNARY(cospi, cospiD(x))
TTINTERP_UNARY(erfcx, erfcxD(x))
TTINTERP_UNARY(erfcinv, erfcinvD(x))
TTINTERP_UNARY(normcdfinv, normcdfinvD(x))
TTINTERP_UNARY(besselI0, besselI0D(x))
TTINTERP_UNARY(besselI1, besselI1D(x))
#undef TTINTERP_UNARY
/// __saturatef: clamps to [0, 1], NaN to 0.
float saturate_f(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }

#define TTINTERP_BINARY(NAME, EXPR)                                                                \
  double NAME##_d(double x, double y) { return EXPR; }                                             \
  float NAME##_f(float x, float y) { return float(NAME##_d(double(x), double(y))); }
TTINTERP_BINARY(pow, std::pow(x, y))
TTINTERP_BINARY(atan2, std::atan2(x, y))
TTINTERP_BINARY(hypot, std::hypot(x, y))
TTINTERP_BINARY(rhypot, 1.0 / std::hypot(x, y))
TTINTERP_BINARY(fmod, std::fmod(x, y))
TTINTERP_BINARY(remainder, std::remainder(x, y))
TTINTERP_BINARY(fmin, minNum(x, y)) // PTX min/max: a NaN operand is ignored, -0 < +0
TTINTERP_BINARY(fmax, maxNum(x, y))
TTINTERP_BINARY(copysign, std::copysign(x, y))
TTINTERP_BINARY(fdim, x > y ? x - y : (std::isnan(x) || std::isnan(y) ? kNaN : 0.0))
// + - * / of two floats computed in double and rounded once are correctly rounded.
TTINTERP_BINARY(add, x + y)
TTINTERP_BINARY(sub, x - y)
TTINTERP_BINARY(mul, x *y)
TTINTERP_BINARY(div, x / y)
#undef TTINTERP_BINARY
float nextafter_f(float x, float y) { return std::nextafter(x, y); }
double nextafter_d(double x, double y) { return std::nextafter(x, y); }

float fma_f(float x, float y, float z) { return std::fma(x, y, z); } // rounded once, in float
double fma_d(double x, double y, double z) { return std::fma(x, y, z); }

#define TTINTERP_FLOAT_INT(NAME, EXPR)                                                             \
  double NAME##_d(double x, int32_t n) { return EXPR; }                                            \
  float NAME##_f(float x, int32_t n) { return float(NAME##_d(double(x), n)); }
TTINTERP_FLOAT_INT(ldexp, std::ldexp(x, n))
TTINTERP_FLOAT_INT(scalbn, std::scalbn(x, n))
TTINTERP_FLOAT_INT(powi, std::pow(x, double(n)))
#undef TTINTERP_FLOAT_INT

#define TTINTERP_PREDICATE(NAME, EXPR)                                                             \
  int32_t NAME##_d(double x) { return EXPR; }                                                      \
  int32_t NAME##_f(float x) { return NAME##_d(double(x)); }
TTINTERP_PREDICATE(isnan, std::isnan(x) ? 1 : 0)
TTINTERP_PREDICATE(isinf, std::isinf(x) ? 1 : 0)
TTINTERP_PREDICATE(isfinite, std::isfinite(x) ? 1 : 0)
TTINTERP_PREDICATE(signbit, std::signbit(x) ? 1 : 0)
// ilogb(0) and ilogb(NaN) are INT_MIN, ilogb(inf) INT_MAX (CUDA's documented values).
TTINTERP_PREDICATE(ilogb, x == 0 || std::isnan(x) ? std::numeric_limits<int32_t>::min()
                          : std::isinf(x)         ? std::numeric_limits<int32_t>::max()
                                                  : std::ilogb(x))
#undef TTINTERP_PREDICATE

/// float -> int32 as cvt.{rni,rzi,rmi,rpi}.s32.f32: saturating, NaN to 0.
template <int Mode> int32_t float2int(float x) {
  if (std::isnan(x))
    return 0;
  double v = Mode == 0   ? std::nearbyint(double(x))
             : Mode == 1 ? std::trunc(double(x))
             : Mode == 2 ? std::floor(double(x))
                         : std::ceil(double(x));
  if (v <= -2147483648.0)
    return std::numeric_limits<int32_t>::min();
  if (v >= 2147483647.0)
    return std::numeric_limits<int32_t>::max();
  return int32_t(v);
}
int32_t floatAsInt(float x) { return int32_t(floatBits(x)); }
float intAsFloat(int32_t x) { return bitsFloat(uint32_t(x)); }
int64_t doubleAsLongLong(double x) {
  int64_t v;
  std::memcpy(&v, &x, 8);
  return v;
}
double longLongAsDouble(int64_t x) {
  double v;
  std::memcpy(&v, &x, 8);
  return v;
}

// Integer functions (libdevice's int, unsigned, long long and unsigned long long).
int32_t clz32(int32_t x) { return x == 0 ? 32 : __builtin_clz(uint32_t(x)); }
int32_t clz64(int64_t x) { return x == 0 ? 64 : __builtin_clzll(uint64_t(x)); }
int32_t popc32(int32_t x) { return __builtin_popcount(uint32_t(x)); }
int32_t popc64(int64_t x) { return __builtin_popcountll(uint64_t(x)); }
int32_t ffs32(int32_t x) { return __builtin_ffs(x); }
int32_t ffs64(int64_t x) { return __builtin_ffsll(x); }
int32_t brev32(int32_t x) {
  uint32_t v = uint32_t(x), r = 0;
  for (int i = 0; i < 32; ++i, v >>= 1)
    r = (r << 1) | (v & 1);
  return int32_t(r);
}
int64_t brev64(int64_t x) {
  uint64_t v = uint64_t(x), r = 0;
  for (int i = 0; i < 64; ++i, v >>= 1)
    r = (r << 1) | (v & 1);
  return int64_t(r);
}
int32_t abs32(int32_t x) { return x < 0 ? int32_t(0u - uint32_t(x)) : x; } // abs(INT_MIN) wraps
int64_t abs64(int64_t x) { return x < 0 ? int64_t(0ull - uint64_t(x)) : x; }
int32_t min32(int32_t a, int32_t b) { return a < b ? a : b; }
int32_t max32(int32_t a, int32_t b) { return a > b ? a : b; }
int32_t umin32(int32_t a, int32_t b) { return uint32_t(a) < uint32_t(b) ? a : b; }
int32_t umax32(int32_t a, int32_t b) { return uint32_t(a) > uint32_t(b) ? a : b; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t umin64(int64_t a, int64_t b) { return uint64_t(a) < uint64_t(b) ? a : b; }
int64_t umax64(int64_t a, int64_t b) { return uint64_t(a) > uint64_t(b) ? a : b; }
int32_t mulhi32(int32_t a, int32_t b) { return int32_t((int64_t(a) * int64_t(b)) >> 32); }
int32_t umulhi32(int32_t a, int32_t b) {
  return int32_t(uint32_t((uint64_t(uint32_t(a)) * uint32_t(b)) >> 32));
}
int64_t mulhi64(int64_t a, int64_t b) { return int64_t((__int128(a) * __int128(b)) >> 64); }
int64_t umulhi64(int64_t a, int64_t b) {
  return int64_t(uint64_t(((unsigned __int128)uint64_t(a) * uint64_t(b)) >> 64));
}
// Averages without intermediate overflow (the GPU computes them in 33 bits).
int32_t hadd32(int32_t a, int32_t b) { return int32_t((int64_t(a) + b) >> 1); }
int32_t rhadd32(int32_t a, int32_t b) { return int32_t((int64_t(a) + b + 1) >> 1); }
int32_t uhadd32(int32_t a, int32_t b) {
  return int32_t(uint32_t((uint64_t(uint32_t(a)) + uint32_t(b)) >> 1));
}
int32_t urhadd32(int32_t a, int32_t b) {
  return int32_t(uint32_t((uint64_t(uint32_t(a)) + uint32_t(b) + 1) >> 1));
}
/// Products of the low 24 bits (signed / unsigned), low 32 bits of the result.
int32_t mul24(int32_t a, int32_t b) {
  // Sign-extend bit 23 (the shifts move it to bit 31 and back).
  int64_t x = int32_t(uint32_t(a) << 8) >> 8, y = int32_t(uint32_t(b) << 8) >> 8;
  return int32_t(uint32_t(uint64_t(x * y)));
}
int32_t umul24(int32_t a, int32_t b) {
  return int32_t(uint32_t((uint64_t(uint32_t(a) & 0xFFFFFF)) * (uint32_t(b) & 0xFFFFFF)));
}

//===----------------------------------------------------------------------===//
// Directed rounding, conversions and the rest of libdevice
//===----------------------------------------------------------------------===//

/// J_n and Y_n are the C library's, which recurs over n: beyond kLongRecurrence orders that would
/// take seconds an element. Where |x| < |n| / 2 there, |J_n(x)| < (e|x| / 2|n|)^|n| underflows
/// (a zero) and Y_n overflows (an infinity, of the sign Y_{-n} = (-1)^n Y_n gives it); larger |x|
/// with such orders still recurs.
constexpr int64_t kLongRecurrence = 10000;
bool beyondRecurrence(int32_t n, double x) {
  const int64_t order = n < 0 ? -int64_t(n) : int64_t(n);
  return order > kLongRecurrence && std::fabs(x) < double(order) / 2;
}
double jn_d(int32_t n, double x) {
  if (!std::isnan(x) && beyondRecurrence(n, x))
    return 0.0;
  return ::jn(n, x);
}
float jn_f(int32_t n, float x) { return float(jn_d(n, double(x))); }
double yn_d(int32_t n, double x) {
  if (!std::isnan(x) && x > 0 && beyondRecurrence(n, x))
    return n < 0 && (n % 2) != 0 ? kInf : -kInf;
  return ::yn(n, x);
}
float yn_f(int32_t n, float x) { return float(yn_d(n, double(x))); }

/// sqrt of a sum of squares, in extended precision (no overflow, one rounding of the root
/// that matters); an infinite argument gives +inf even beside a NaN, as hypot does.
template <class T, class... Ts> T normOf(bool reciprocal, Ts... xs) {
  if ((std::isinf(xs) || ...))
    return reciprocal ? T(0) : T(kInf);
  const long double sum = ((static_cast<long double>(xs) * xs) + ...);
  const long double norm = sqrtl(sum);
  return T(reciprocal ? 1 / norm : norm);
}
float norm3d_f(float a, float b, float c) { return normOf<float>(false, a, b, c); }
double norm3d_d(double a, double b, double c) { return normOf<double>(false, a, b, c); }
float rnorm3d_f(float a, float b, float c) { return normOf<float>(true, a, b, c); }
double rnorm3d_d(double a, double b, double c) { return normOf<double>(true, a, b, c); }
float norm4d_f(float a, float b, float c, float d) { return normOf<float>(false, a, b, c, d); }
double norm4d_d(double a, double b, double c, double d) {
  return normOf<double>(false, a, b, c, d);
}
float rnorm4d_f(float a, float b, float c, float d) { return normOf<float>(true, a, b, c, d); }
double rnorm4d_d(double a, double b, double c, double d) {
  return normOf<double>(true, a, b, c, d);
}
/// 1/sqrt(x) rounded once to f32 from extended precision.
float frsqrtRn(float x) { return float(1 / sqrtl(x)); }

// Arithmetic in the result's own type: run under a rounding mode (`rounded`), the hardware
// rounds it once in that mode.
template <class T> T addIn(T x, T y) { return x + y; }
template <class T> T subIn(T x, T y) { return x - y; }
template <class T> T mulIn(T x, T y) { return x * y; }
template <class T> T divIn(T x, T y) { return x / y; }
template <class T> T rcpIn(T x) { return T(1) / x; }
template <class T> T sqrtIn(T x) { return std::sqrt(x); }
template <class T> T fmaIn(T x, T y, T z) { return std::fma(x, y, z); }
template <class To, class From> To convertIn(From x) { return To(x); }

/// A float to an integer as cvt.{rni,rzi,rmi,rpi}: rounded in the current mode (nearbyint),
/// saturated to the integer's range, NaN to 0.
template <class Int, class F> Int toIntIn(F x) {
  if (std::isnan(x))
    return 0;
  const long double v = std::nearbyint(static_cast<long double>(x));
  // Both bounds are powers of two or zero: exact in long double.
  const long double lo = static_cast<long double>(std::numeric_limits<Int>::min());
  const long double hiExclusive = static_cast<long double>(std::numeric_limits<Int>::max()) + 1;
  if (v <= lo)
    return std::numeric_limits<Int>::min();
  if (v >= hiExclusive)
    return std::numeric_limits<Int>::max();
  return Int(v);
}
/// As toIntIn for an unsigned integer, which TTIR holds in the signless integer of its width.
template <class Signless, class F> Signless toUnsignedIn(F x) {
  using U = std::make_unsigned_t<Signless>;
  return Signless(toIntIn<U>(x));
}
/// An unsigned integer (held signless) to a float in the current mode.
template <class To, class Signless> To fromUnsignedIn(Signless x) {
  return To(std::make_unsigned_t<Signless>(x));
}

int64_t llrint_f(float x) { return toIntIn<int64_t>(x); } // the current mode: to nearest
int64_t llrint_d(double x) { return toIntIn<int64_t>(x); }
/// llround: halfway cases away from zero, saturated.
template <class F> int64_t llroundOf(F x) {
  return std::isnan(x) ? 0 : toIntIn<int64_t>(std::round(static_cast<long double>(x)));
}
int64_t llround_f(float x) { return llroundOf(x); }
int64_t llround_d(double x) { return llroundOf(x); }

int32_t floatAsUint(float x) { return int32_t(floatBits(x)); }
float uintAsFloat(int32_t x) { return bitsFloat(uint32_t(x)); }
double hiLoIntToDouble(int32_t hi, int32_t lo) {
  const uint64_t bits = uint64_t(uint32_t(hi)) << 32 | uint32_t(lo);
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}
int32_t doubleHiInt(double x) { return int32_t(uint64_t(doubleAsLongLong(x)) >> 32); }
int32_t doubleLoInt(double x) { return int32_t(uint32_t(uint64_t(doubleAsLongLong(x)))); }

/// __byte_perm: byte i of the result is byte (s >> 4i) & 7 of the eight bytes y:x.
int32_t bytePerm(int32_t x, int32_t y, int32_t s) {
  const uint64_t bytes = uint64_t(uint32_t(y)) << 32 | uint32_t(x);
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i)
    r |= uint32_t((bytes >> (8 * ((uint32_t(s) >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return int32_t(r);
}
/// |x - y| + z (x, y signed or unsigned), modulo 2^32.
int32_t sad32(int32_t x, int32_t y, int32_t z) {
  const int64_t d = int64_t(x) - int64_t(y);
  return int32_t(uint32_t(uint64_t(d < 0 ? -d : d) + uint32_t(z)));
}
int32_t usad32(int32_t x, int32_t y, int32_t z) {
  const uint32_t a = uint32_t(x), b = uint32_t(y);
  return int32_t((a > b ? a - b : b - a) + uint32_t(z));
}

//===----------------------------------------------------------------------===//
// Kernels and the symbol table
//===----------------------------------------------------------------------===//

template <class R, class A, R (*Fn)(A)> void map1(Frame &f, const Instr &in) {
  const A *a = f.at<A>(in.operands[0]);
  R *r = f.at<R>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = Fn(a[i]);
}
template <class R, class A, class B, R (*Fn)(A, B)> void map2(Frame &f, const Instr &in) {
  const A *a = f.at<A>(in.operands[0]);
  const B *b = f.at<B>(in.operands[1]);
  R *r = f.at<R>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = Fn(a[i], b[i]);
}
template <class T, T (*Fn)(T, T, T)> void map3(Frame &f, const Instr &in) {
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]), *c = f.at<T>(in.operands[2]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = Fn(a[i], b[i], c[i]);
}

template <class T, T (*Fn)(T, T, T, T)> void map4(Frame &f, const Instr &in) {
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]), *c = f.at<T>(in.operands[2]),
          *d = f.at<T>(in.operands[3]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = Fn(a[i], b[i], c[i], d[i]);
}
/// map1 and map2 of one type T (ARITH1's and ARITH2's kernels).
template <class T, T (*Fn)(T)> void sameType1(Frame &f, const Instr &in) { map1<T, T, Fn>(f, in); }
template <class T, T (*Fn)(T, T)> void sameType2(Frame &f, const Instr &in) {
  map2<T, T, T, Fn>(f, in);
}

/// The FPU in one of PTX's rounding modes while a block is computed (FE_TONEAREST for `_rn`).
template <int Mode> class RoundingScope {
public:
  RoundingScope() : saved_(std::fegetround()) { std::fesetround(Mode); }
  ~RoundingScope() { std::fesetround(saved_); }
  RoundingScope(const RoundingScope &) = delete;
  RoundingScope &operator=(const RoundingScope &) = delete;

private:
  int saved_;
};
template <int Mode, ExecFn Kernel> void rounded(Frame &f, const Instr &in) {
  RoundingScope<Mode> scope;
  Kernel(f, in);
}

/// One libdevice function: its signature and its kernel.
struct Entry {
  const char *symbol;
  DType result;
  std::vector<DType> arguments;
  ExecFn fn;
};

constexpr DType F32 = DType::F32, F64 = DType::F64, I32 = DType::I32, I64 = DType::I64;

#define UNARY(SYM, NAME)                                                                           \
  { SYM, F32, {F32}, &map1<float, float, &NAME##_f> }
#define UNARY_D(SYM, NAME)                                                                         \
  { SYM, F64, {F64}, &map1<double, double, &NAME##_d> }
#define BINARY(SYM, NAME)                                                                          \
  { SYM, F32, {F32, F32}, &map2<float, float, float, &NAME##_f> }
#define BINARY_D(SYM, NAME)                                                                        \
  { SYM, F64, {F64, F64}, &map2<double, double, double, &NAME##_d> }
// The usual pair: __nv_NAMEf on f32 and __nv_NAME on f64.
#define PAIR1(NAME) UNARY("__nv_" #NAME "f", NAME), UNARY_D("__nv_" #NAME, NAME)
#define PAIR2(NAME) BINARY("__nv_" #NAME "f", NAME), BINARY_D("__nv_" #NAME, NAME)
// A function of f32 or f64 in each directed mode: SYM_rz, SYM_rd, SYM_ru.
#define DIRECTED(SYM, RESULT, ARGS, KERNEL)                                                        \
  {SYM "_rz", RESULT, ARGS, &rounded<FE_TOWARDZERO, KERNEL>},                                      \
      {SYM "_rd", RESULT, ARGS, &rounded<FE_DOWNWARD, KERNEL>}, {                                  \
    SYM "_ru", RESULT, ARGS, &rounded<FE_UPWARD, KERNEL>                                           \
  }
// The same and SYM_rn, for the conversions that have all four.
#define ALL_MODES(SYM, RESULT, ARGS, KERNEL)                                                       \
  {SYM "_rn", RESULT, ARGS, &rounded<FE_TONEAREST, KERNEL>}, DIRECTED(SYM, RESULT, ARGS, KERNEL)
// NAME's f32 and f64 forms in each directed mode (__nv_fNAME_rz, __nv_dNAME_rz, ...), from
// NAME##In: ARITH2 for the binary operations, ARITH1 for the unary ones.
#define ARITH2(NAME)                                                                               \
  DIRECTED("__nv_f" #NAME, F32, {F32 COMMA F32}, (&sameType2<float, NAME##In<float>>)),            \
      DIRECTED("__nv_d" #NAME, F64, {F64 COMMA F64}, (&sameType2<double, NAME##In<double>>))
#define ARITH1(NAME)                                                                               \
  DIRECTED("__nv_f" #NAME, F32, {F32}, (&sameType1<float, NAME##In<float>>)),                      \
      DIRECTED("__nv_d" #NAME, F64, {F64}, (&sameType1<double, NAME##In<double>>))
#define COMMA ,

const std::vector<Entry> &table() {
  static const std::vector<Entry> entries = {
      PAIR1(exp),
      PAIR1(exp2),
      PAIR1(exp10),
      PAIR1(expm1),
      PAIR1(log),
      PAIR1(log2),
      PAIR1(log10),
      PAIR1(log1p),
      PAIR1(logb),
      PAIR1(sin),
      PAIR1(cos),
      PAIR1(tan),
      PAIR1(asin),
      PAIR1(acos),
      PAIR1(atan),
      PAIR1(sinh),
      PAIR1(cosh),
      PAIR1(tanh),
      PAIR1(asinh),
      PAIR1(acosh),
      PAIR1(atanh),
      PAIR1(erf),
      PAIR1(erfc),
      PAIR1(erfinv),
      PAIR1(normcdf),
      PAIR1(lgamma),
      PAIR1(tgamma),
      PAIR1(sqrt),
      PAIR1(rsqrt),
      PAIR1(cbrt),
      PAIR1(rcbrt),
      PAIR1(floor),
      PAIR1(ceil),
      PAIR1(trunc),
      PAIR1(round),
      PAIR1(rint),
      UNARY("__nv_nearbyintf", rint),
      UNARY_D("__nv_nearbyint", rint),
      PAIR1(fabs),
      PAIR1(j0),
      PAIR1(j1),
      PAIR1(y0),
      PAIR1(y1),
      UNARY("__nv_saturatef", saturate),
      UNARY("__nv_frcp_rn", rcp),
      UNARY_D("__nv_drcp_rn", rcp),
      UNARY("__nv_fsqrt_rn", sqrt),
      UNARY_D("__nv_dsqrt_rn", sqrt),
      // The fast variants are approximations on the GPU; here they are the accurate ones.
      UNARY("__nv_fast_expf", exp),
      UNARY("__nv_fast_exp10f", exp10),
      UNARY("__nv_fast_logf", log),
      UNARY("__nv_fast_log2f", log2),
      UNARY("__nv_fast_log10f", log10),
      UNARY("__nv_fast_sinf", sin),
      UNARY("__nv_fast_cosf", cos),
      UNARY("__nv_fast_tanf", tan),
      PAIR2(pow),
      PAIR2(atan2),
      PAIR2(hypot),
      PAIR2(rhypot),
      PAIR2(fmod),
      PAIR2(remainder),
      PAIR2(fmin),
      PAIR2(fmax),
      PAIR2(copysign),
      PAIR2(fdim),
      PAIR2(nextafter),
      BINARY("__nv_fast_powf", pow),
      BINARY("__nv_fdividef", div),
      BINARY("__nv_fast_fdividef", div),
      BINARY("__nv_fdiv_rn", div),
      BINARY_D("__nv_ddiv_rn", div),
      BINARY("__nv_fadd_rn", add),
      BINARY_D("__nv_dadd_rn", add),
      BINARY("__nv_fsub_rn", sub),
      BINARY_D("__nv_dsub_rn", sub),
      BINARY("__nv_fmul_rn", mul),
      BINARY_D("__nv_dmul_rn", mul),
      {"__nv_fmaf", F32, {F32, F32, F32}, &map3<float, &fma_f>},
      {"__nv_fmaf_rn", F32, {F32, F32, F32}, &map3<float, &fma_f>},
      {"__nv_fma", F64, {F64, F64, F64}, &map3<double, &fma_d>},
      {"__nv_fma_rn", F64, {F64, F64, F64}, &map3<double, &fma_d>},
      {"__nv_ldexpf", F32, {F32, I32}, &map2<float, float, int32_t, &ldexp_f>},
      {"__nv_ldexp", F64, {F64, I32}, &map2<double, double, int32_t, &ldexp_d>},
      {"__nv_scalbnf", F32, {F32, I32}, &map2<float, float, int32_t, &scalbn_f>},
      {"__nv_scalbn", F64, {F64, I32}, &map2<double, double, int32_t, &scalbn_d>},
      {"__nv_powif", F32, {F32, I32}, &map2<float, float, int32_t, &powi_f>},
      {"__nv_powi", F64, {F64, I32}, &map2<double, double, int32_t, &powi_d>},
      {"__nv_isnanf", I32, {F32}, &map1<int32_t, float, &isnan_f>},
      {"__nv_isnand", I32, {F64}, &map1<int32_t, double, &isnan_d>},
      {"__nv_isinff", I32, {F32}, &map1<int32_t, float, &isinf_f>},
      {"__nv_isinfd", I32, {F64}, &map1<int32_t, double, &isinf_d>},
      {"__nv_finitef", I32, {F32}, &map1<int32_t, float, &isfinite_f>},
      {"__nv_isfinited", I32, {F64}, &map1<int32_t, double, &isfinite_d>},
      {"__nv_signbitf", I32, {F32}, &map1<int32_t, float, &signbit_f>},
      {"__nv_signbitd", I32, {F64}, &map1<int32_t, double, &signbit_d>},
      {"__nv_ilogbf", I32, {F32}, &map1<int32_t, float, &ilogb_f>},
      {"__nv_ilogb", I32, {F64}, &map1<int32_t, double, &ilogb_d>},
      {"__nv_float2int_rn", I32, {F32}, &map1<int32_t, float, &float2int<0>>},
      {"__nv_float2int_rz", I32, {F32}, &map1<int32_t, float, &float2int<1>>},
      {"__nv_float2int_rd", I32, {F32}, &map1<int32_t, float, &float2int<2>>},
      {"__nv_float2int_ru", I32, {F32}, &map1<int32_t, float, &float2int<3>>},
      {"__nv_float_as_int", I32, {F32}, &map1<int32_t, float, &floatAsInt>},
      {"__nv_int_as_float", F32, {I32}, &map1<float, int32_t, &intAsFloat>},
      {"__nv_double_as_longlong", I64, {F64}, &map1<int64_t, double, &doubleAsLongLong>},
      {"__nv_longlong_as_double", F64, {I64}, &map1<double, int64_t, &longLongAsDouble>},
      {"__nv_clz", I32, {I32}, &map1<int32_t, int32_t, &clz32>},
      {"__nv_clzll", I32, {I64}, &map1<int32_t, int64_t, &clz64>},
      {"__nv_popc", I32, {I32}, &map1<int32_t, int32_t, &popc32>},
      {"__nv_popcll", I32, {I64}, &map1<int32_t, int64_t, &popc64>},
      {"__nv_ffs", I32, {I32}, &map1<int32_t, int32_t, &ffs32>},
      {"__nv_ffsll", I32, {I64}, &map1<int32_t, int64_t, &ffs64>},
      {"__nv_brev", I32, {I32}, &map1<int32_t, int32_t, &brev32>},
      {"__nv_brevll", I64, {I64}, &map1<int64_t, int64_t, &brev64>},
      {"__nv_abs", I32, {I32}, &map1<int32_t, int32_t, &abs32>},
      {"__nv_llabs", I64, {I64}, &map1<int64_t, int64_t, &abs64>},
      {"__nv_min", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &min32>},
      {"__nv_max", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &max32>},
      {"__nv_umin", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &umin32>},
      {"__nv_umax", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &umax32>},
      {"__nv_llmin", I64, {I64, I64}, &map2<int64_t, int64_t, int64_t, &min64>},
      {"__nv_llmax", I64, {I64, I64}, &map2<int64_t, int64_t, int64_t, &max64>},
      {"__nv_ullmin", I64, {I64, I64}, &map2<int64_t, int64_t, int64_t, &umin64>},
      {"__nv_ullmax", I64, {I64, I64}, &map2<int64_t, int64_t, int64_t, &umax64>},
      {"__nv_mulhi", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &mulhi32>},
      {"__nv_umulhi", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &umulhi32>},
      {"__nv_mul64hi", I64, {I64, I64}, &map2<int64_t, int64_t, int64_t, &mulhi64>},
      {"__nv_umul64hi", I64, {I64, I64}, &map2<int64_t, int64_t, int64_t, &umulhi64>},
      {"__nv_hadd", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &hadd32>},
      {"__nv_rhadd", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &rhadd32>},
      {"__nv_uhadd", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &uhadd32>},
      {"__nv_urhadd", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &urhadd32>},
      {"__nv_mul24", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &mul24>},
      {"__nv_umul24", I32, {I32, I32}, &map2<int32_t, int32_t, int32_t, &umul24>},
      // Directed rounding.
      ARITH2(add),
      ARITH2(sub),
      ARITH2(mul),
      ARITH2(div),
      ARITH1(rcp),
      ARITH1(sqrt),
      DIRECTED("__nv_fmaf", F32, {F32 COMMA F32 COMMA F32}, (&map3<float, &fmaIn<float>>)),
      DIRECTED("__nv_fma", F64, {F64 COMMA F64 COMMA F64}, (&map3<double, &fmaIn<double>>)),
      // Conversions.
      ALL_MODES("__nv_double2float", F32, {F64}, (&map1<float, double, &convertIn<float, double>>)),
      ALL_MODES("__nv_double2int", I32, {F64}, (&map1<int32_t, double, &toIntIn<int32_t, double>>)),
      ALL_MODES("__nv_double2uint", I32, {F64},
                (&map1<int32_t, double, &toUnsignedIn<int32_t, double>>)),
      ALL_MODES("__nv_double2ll", I64, {F64}, (&map1<int64_t, double, &toIntIn<int64_t, double>>)),
      ALL_MODES("__nv_double2ull", I64, {F64},
                (&map1<int64_t, double, &toUnsignedIn<int64_t, double>>)),
      ALL_MODES("__nv_float2uint", I32, {F32},
                (&map1<int32_t, float, &toUnsignedIn<int32_t, float>>)),
      ALL_MODES("__nv_float2ll", I64, {F32}, (&map1<int64_t, float, &toIntIn<int64_t, float>>)),
      ALL_MODES("__nv_float2ull", I64, {F32},
                (&map1<int64_t, float, &toUnsignedIn<int64_t, float>>)),
      ALL_MODES("__nv_int2float", F32, {I32}, (&map1<float, int32_t, &convertIn<float, int32_t>>)),
      ALL_MODES("__nv_uint2float", F32, {I32},
                (&map1<float, int32_t, &fromUnsignedIn<float, int32_t>>)),
      ALL_MODES("__nv_ll2float", F32, {I64}, (&map1<float, int64_t, &convertIn<float, int64_t>>)),
      ALL_MODES("__nv_ull2float", F32, {I64},
                (&map1<float, int64_t, &fromUnsignedIn<float, int64_t>>)),
      ALL_MODES("__nv_ll2double", F64, {I64},
                (&map1<double, int64_t, &convertIn<double, int64_t>>)),
      ALL_MODES("__nv_ull2double", F64, {I64},
                (&map1<double, int64_t, &fromUnsignedIn<double, int64_t>>)),
      // Exact either way: every 32-bit integer is a double.
      {"__nv_int2double_rn", F64, {I32}, &map1<double, int32_t, &convertIn<double, int32_t>>},
      {"__nv_uint2double_rn", F64, {I32}, &map1<double, int32_t, &fromUnsignedIn<double, int32_t>>},
      {"__nv_llrintf", I64, {F32}, &map1<int64_t, float, &llrint_f>},
      {"__nv_llrint", I64, {F64}, &map1<int64_t, double, &llrint_d>},
      {"__nv_llroundf", I64, {F32}, &map1<int64_t, float, &llround_f>},
      {"__nv_llround", I64, {F64}, &map1<int64_t, double, &llround_d>},
      {"__nv_float_as_uint", I32, {F32}, &map1<int32_t, float, &floatAsUint>},
      {"__nv_uint_as_float", F32, {I32}, &map1<float, int32_t, &uintAsFloat>},
      {"__nv_hiloint2double", F64, {I32, I32}, &map2<double, int32_t, int32_t, &hiLoIntToDouble>},
      {"__nv_double2hiint", I32, {F64}, &map1<int32_t, double, &doubleHiInt>},
      {"__nv_double2loint", I32, {F64}, &map1<int32_t, double, &doubleLoInt>},
      // Special functions.
      UNARY("__nv_sinpif", sinpi),
      UNARY_D("__nv_sinpi", sinpi),
      UNARY("__nv_cospif", cospi),
      UNARY_D("__nv_cospi", cospi),
      PAIR1(erfcx),
      PAIR1(erfcinv),
      PAIR1(normcdfinv),
      UNARY("__nv_cyl_bessel_i0f", besselI0),
      UNARY_D("__nv_cyl_bessel_i0", besselI0),
      UNARY("__nv_cyl_bessel_i1f", besselI1),
      UNARY_D("__nv_cyl_bessel_i1", besselI1),
      {"__nv_jnf", F32, {I32, F32}, &map2<float, int32_t, float, &jn_f>},
      {"__nv_jn", F64, {I32, F64}, &map2<double, int32_t, double, &jn_d>},
      {"__nv_ynf", F32, {I32, F32}, &map2<float, int32_t, float, &yn_f>},
      {"__nv_yn", F64, {I32, F64}, &map2<double, int32_t, double, &yn_d>},
      {"__nv_norm3df", F32, {F32, F32, F32}, &map3<float, &norm3d_f>},
      {"__nv_norm3d", F64, {F64, F64, F64}, &map3<double, &norm3d_d>},
      {"__nv_rnorm3df", F32, {F32, F32, F32}, &map3<float, &rnorm3d_f>},
      {"__nv_rnorm3d", F64, {F64, F64, F64}, &map3<double, &rnorm3d_d>},
      {"__nv_norm4df", F32, {F32, F32, F32, F32}, &map4<float, &norm4d_f>},
      {"__nv_norm4d", F64, {F64, F64, F64, F64}, &map4<double, &norm4d_d>},
      {"__nv_rnorm4df", F32, {F32, F32, F32, F32}, &map4<float, &rnorm4d_f>},
      {"__nv_rnorm4d", F64, {F64, F64, F64, F64}, &map4<double, &rnorm4d_d>},
      {"__nv_frsqrt_rn", F32, {F32}, &map1<float, float, &frsqrtRn>},
      // Bytes.
      {"__nv_byte_perm", I32, {I32, I32, I32}, &map3<int32_t, &bytePerm>},
      {"__nv_sad", I32, {I32, I32, I32}, &map3<int32_t, &sad32>},
      {"__nv_usad", I32, {I32, I32, I32}, &map3<int32_t, &usad32>},
  };
  return entries;
}
#undef UNARY
#undef UNARY_D
#undef BINARY
#undef BINARY_D
#undef PAIR1
#undef PAIR2
#undef DIRECTED
#undef ALL_MODES
#undef ARITH1
#undef ARITH2
#undef COMMA

std::string signature(const std::vector<DType> &arguments, DType result) {
  std::string s = "(";
  for (size_t i = 0; i < arguments.size(); ++i)
    s += (i ? ", " : "") + std::string(name(arguments[i]));
  return s + ") -> " + std::string(name(result));
}

/// libdevice's f32 functions that compute what a math-dialect op computes, each within
/// libdevice's own documented error bound when computed as that op: the transcendentals on
/// SLEEF's vector functions (1.0 ulp; libdevice documents 1 to 4), the rounding functions and
/// the square root exactly, as here. Run as the math op, a call works on whole blocks and joins
/// compiled chains; evaluated in double one element at a time, as the rest of this file does,
/// it cost some 20 ns an element, which made Liger-Kernel's GELU (tanh) and DyT ten times
/// slower than torch (docs/performance.md, twenty-seventh round). The `__nv_fast_*` variants
/// are approximations on the GPU and accurate here either way.
const llvm::StringMap<llvm::StringRef> &mathTwins() {
  static const llvm::StringMap<llvm::StringRef> twins = {
      {"__nv_expf", "math.exp"},        {"__nv_fast_expf", "math.exp"},
      {"__nv_exp2f", "math.exp2"},      {"__nv_expm1f", "math.expm1"},
      {"__nv_logf", "math.log"},        {"__nv_fast_logf", "math.log"},
      {"__nv_log2f", "math.log2"},      {"__nv_fast_log2f", "math.log2"},
      {"__nv_log10f", "math.log10"},    {"__nv_fast_log10f", "math.log10"},
      {"__nv_log1pf", "math.log1p"},    {"__nv_sinf", "math.sin"},
      {"__nv_fast_sinf", "math.sin"},   {"__nv_cosf", "math.cos"},
      {"__nv_fast_cosf", "math.cos"},   {"__nv_tanf", "math.tan"},
      {"__nv_fast_tanf", "math.tan"},   {"__nv_tanhf", "math.tanh"},
      {"__nv_sinhf", "math.sinh"},      {"__nv_coshf", "math.cosh"},
      {"__nv_erff", "math.erf"},        {"__nv_atanf", "math.atan"},
      {"__nv_asinf", "math.asin"},      {"__nv_acosf", "math.acos"},
      {"__nv_cbrtf", "math.cbrt"},      {"__nv_sqrtf", "math.sqrt"},
      {"__nv_fsqrt_rn", "math.sqrt"},   {"__nv_fabsf", "math.absf"},
      {"__nv_floorf", "math.floor"},    {"__nv_ceilf", "math.ceil"},
      {"__nv_truncf", "math.trunc"},    {"__nv_roundf", "math.round"},
      {"__nv_rintf", "math.roundeven"}, {"__nv_nearbyintf", "math.roundeven"},
  };
  return twins;
}

bool lowerExternElementwise(mlir::Operation *op, Lowerer &L) {
  if (llvm::StringRef twin = elementwiseOpName(op); twin != op->getName().getStringRef())
    return OpTable::get().find(twin)(op, L);
  auto symbolAttr = op->getAttrOfType<mlir::StringAttr>("symbol");
  std::string symbol = symbolAttr ? symbolAttr.getValue().str() : "";
  const Entry *entry = nullptr;
  for (const Entry &e : table())
    if (symbol == e.symbol)
      entry = &e;
  if (!entry)
    return L.error(op, fmt::format("unknown external function '{}' (the interpreter knows "
                                   "CUDA libdevice's __nv_* math functions)",
                                   symbol));
  std::vector<SlotId> operands;
  std::vector<DType> types;
  for (mlir::Value v : op->getOperands()) {
    operands.push_back(L.use(v));
    types.push_back(L.slot(operands.back()).dtype);
  }
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (types != entry->arguments || L.slot(r).dtype != entry->result)
    return L.error(op, fmt::format("{} takes {}, not {}", symbol,
                                   signature(entry->arguments, entry->result),
                                   signature(types, L.slot(r).dtype)));
  for (SlotId s : operands)
    if (L.slot(s).numel != L.slot(r).numel)
      return L.error(op, "operands and result must have one shape");
  L.emit(op, entry->fn, operands, {r});
  return true;
}

} // namespace

llvm::StringRef elementwiseOpName(mlir::Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  if (name != "tt.extern_elementwise" || op->getNumOperands() != 1 || op->getNumResults() != 1)
    return name;
  auto symbol = op->getAttrOfType<mlir::StringAttr>("symbol");
  auto twin = symbol ? mathTwins().find(symbol.getValue()) : mathTwins().end();
  // Only libdevice's own signature: another is the lowering error that names it.
  if (twin == mathTwins().end() ||
      !mlir::getElementTypeOrSelf(op->getOperand(0).getType()).isF32() ||
      !mlir::getElementTypeOrSelf(op->getResult(0).getType()).isF32())
    return name;
  return twin->second;
}

void registerLibdeviceOps(OpTable &t) { t.add("tt.extern_elementwise", &lowerExternElementwise); }

} // namespace ttinterp::interp
