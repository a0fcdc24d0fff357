//===- LibdeviceTest.cpp - tt.extern_elementwise with __nv_* functions ----===//
//
// Expected values are exact mathematical facts (floor(-1.5) = -2, hypot(3, 4) = 5,
// clz(1) = 31, ...) or correctly rounded constants checked within 1 ulp.
//
//===----------------------------------------------------------------------===//
#include "StoreKernel.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// %r = SYMBOL(args...) on tensor<8x...> constants; `args` are (values, type) pairs.
std::string externKernel(const std::string &symbol,
                         const std::vector<std::pair<std::string, std::string>> &args,
                         const std::string &result) {
  std::string body, operands, types;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = "%a" + std::to_string(i);
    body += "    " + name + " = arith.constant dense<" + args[i].first + "> : tensor<8x" +
            args[i].second + ">\n";
    operands += (i ? ", " : "") + name;
    types += (i ? ", " : "") + std::string("tensor<8x") + args[i].second + ">";
  }
  body += "    %r = tt.extern_elementwise " + operands +
          " {libname = \"\", libpath = \"\", pure = true, symbol = \"" + symbol + "\"} : (" +
          types + ") -> tensor<8x" + result + "> loc(#at)";
  return storeKernel(result, body);
}

std::vector<float> f32(const std::string &symbol, const std::string &a, const std::string &b = "") {
  std::vector<std::pair<std::string, std::string>> args{{a, "f32"}};
  if (!b.empty())
    args.push_back({b, "f32"});
  return runStoreKernel<float>(externKernel(symbol, args, "f32"), DType::F32);
}

float ulp(float x) { return std::nextafter(std::fabs(x), INFINITY) - std::fabs(x); }
} // namespace

TEST_CASE("f32 rounding and remainder functions are exact") {
  CHECK(f32("__nv_floorf", "[-1.5, 1.5, -0.0, 2.0, -2.5, 0.5, 1.0e+10, -1.0e-3]") ==
        std::vector<float>{-2, 1, -0.0f, 2, -3, 0, 1.0e10f, -1});
  // roundf: halfway away from zero; rintf/nearbyintf: halfway to even.
  CHECK(f32("__nv_roundf", "[2.5, -2.5, 0.5, 1.5, 2.4, -0.4, 3.5, 7.0]") ==
        std::vector<float>{3, -3, 1, 2, 2, -0.0f, 4, 7});
  CHECK(f32("__nv_rintf", "[2.5, -2.5, 0.5, 1.5, 2.4, -0.4, 3.5, 7.0]") ==
        std::vector<float>{2, -2, 0, 2, 2, -0.0f, 4, 7});
  CHECK(f32("__nv_nearbyintf", "[2.5, -2.5, 0.5, 1.5, 2.4, -0.4, 3.5, 7.0]") ==
        std::vector<float>{2, -2, 0, 2, 2, -0.0f, 4, 7});
  CHECK(f32("__nv_truncf", "[2.7, -2.7, 0.5, -0.5, 1.0, 9.99, -9.99, 0.0]") ==
        std::vector<float>{2, -2, 0, -0.0f, 1, 9, -9, 0});
  CHECK(f32("__nv_ceilf", "[2.1, -2.1, 0.5, -0.5, 1.0, 9.99, -9.99, 0.0]") ==
        std::vector<float>{3, -2, 1, -0.0f, 1, 10, -9, 0});
  // fmod keeps the dividend's sign; remainder rounds the quotient to even (5/2 -> 2).
  CHECK(f32("__nv_fmodf", "[7.0, -7.0, 7.0, 5.5, 1.0, 0.0, 9.0, 6.0]",
            "[3.0, 3.0, -3.0, 2.0, 0.25, 1.0, 4.5, 4.0]") ==
        std::vector<float>{1, -1, 1, 1.5f, 0, 0, 0, 2});
  CHECK(f32("__nv_remainderf", "[7.0, -7.0, 5.0, 5.5, 1.0, 0.0, 9.0, 6.0]",
            "[3.0, 3.0, 2.0, 2.0, 0.25, 1.0, 4.5, 4.0]") ==
        std::vector<float>{1, -1, 1, -0.5f, 0, 0, 0, -2});
}

TEST_CASE("f32 min and max ignore NaN, and copysign, hypot, cbrt, ldexp are exact") {
  std::vector<float> mins = f32("__nv_fminf", "[0x7FC00000, 1.0, -0.5, 3.0, 0.0, 0.0, 0.0, 0.0]",
                                "[1.0, 0x7FC00000, 2.0, -3.0, 0.0, 0.0, 0.0, 0.0]");
  CHECK(mins[0] == 1.0f);
  CHECK(mins[1] == 1.0f);
  CHECK(mins[2] == -0.5f);
  CHECK(mins[3] == -3.0f);
  std::vector<float> maxs = f32("__nv_fmaxf", "[0x7FC00000, 1.0, -0.5, 3.0, 0.0, 0.0, 0.0, 0.0]",
                                "[1.0, 0x7FC00000, 2.0, -3.0, 0.0, 0.0, 0.0, 0.0]");
  CHECK(maxs[0] == 1.0f);
  CHECK(maxs[2] == 2.0f);
  // As PTX max/min: +0 > -0, in either order.
  std::vector<float> zeroMax = f32("__nv_fmaxf", "[-0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0]",
                                   "[0.0, -0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0]");
  std::vector<float> zeroMin = f32("__nv_fminf", "[-0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0]",
                                   "[0.0, -0.0, -0.0, 0.0, 0.0, 0.0, 0.0, 0.0]");
  CHECK_FALSE(std::signbit(zeroMax[0]));
  CHECK_FALSE(std::signbit(zeroMax[1]));
  CHECK(std::signbit(zeroMax[2]));
  CHECK(std::signbit(zeroMin[0]));
  CHECK(std::signbit(zeroMin[1]));
  CHECK_FALSE(std::signbit(zeroMin[3]));
  std::vector<float> cs = f32("__nv_copysignf", "[3.0, 3.0, -2.0, 0.0, 1.0, 1.0, 1.0, 1.0]",
                              "[-0.0, 1.0, 5.0, -1.0, 1.0, 1.0, 1.0, 1.0]");
  CHECK(cs[0] == -3.0f);
  CHECK(cs[1] == 3.0f);
  CHECK(cs[2] == 2.0f);
  CHECK(std::signbit(cs[3]));
  std::vector<float> h = f32("__nv_hypotf", "[3.0, 5.0, -8.0, 0.0, 1.0, 1.0, 1.0, 1.0]",
                             "[4.0, 12.0, 15.0, 0.0, 0.0, 0.0, 0.0, 0.0]");
  CHECK(h[0] == 5.0f);
  CHECK(h[1] == 13.0f);
  CHECK(h[2] == 17.0f);
  CHECK(h[3] == 0.0f);
  CHECK(f32("__nv_cbrtf", "[-27.0, 8.0, 0.0, 1.0, 64.0, -1.0, 125.0, 1000.0]") ==
        std::vector<float>{-3, 2, 0, 1, 4, -1, 5, 10});
  std::vector<float> ld =
      runStoreKernel<float>(externKernel("__nv_ldexpf",
                                         {{"[1.5, 1.0, -3.0, 1.0, 1.0, 1.0, 1.0, 1.0]", "f32"},
                                          {"[3, -149, 1, 128, 0, 0, 0, 0]", "i32"}},
                                         "f32"),
                            DType::F32);
  CHECK(ld[0] == 12.0f);
  CHECK(ld[1] == std::numeric_limits<float>::denorm_min());
  CHECK(ld[2] == -6.0f);
  CHECK(std::isinf(ld[3]));
}

TEST_CASE("f32 transcendentals at exactly known points, and within 1 ulp elsewhere") {
  CHECK(f32("__nv_exp2f", "[10.0, -1.0, 0.0, 3.0, 0.5, 1.0, 2.0, -2.0]")[0] == 1024.0f);
  CHECK(f32("__nv_exp10f", "[2.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.0, 0.0]") ==
        std::vector<float>{100, 1, 10, 1000, 1, 1, 1, 1});
  CHECK(f32("__nv_log2f", "[8.0, 1.0, 0.5, 1024.0, 2.0, 4.0, 16.0, 0.25]") ==
        std::vector<float>{3, 0, -1, 10, 1, 2, 4, -2});
  CHECK(f32("__nv_tgammaf", "[5.0, 1.0, 2.0, 3.0, 4.0, 6.0, 7.0, 0.5]")[0] == 24.0f);
  CHECK(f32("__nv_lgammaf", "[1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]")[1] == 0.0f);
  CHECK(f32("__nv_expm1f", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]")[0] == 0.0f);
  // sqrt(2) correctly rounded to f32 is 0x3FB504F3 = 1.41421353816986083984375.
  CHECK(f32("__nv_sqrtf", "[2.0, 4.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]")[0] ==
        1.41421353816986083984375f);
  CHECK(f32("__nv_rsqrtf", "[4.0, 0.25, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]")[1] == 2.0f);
  // atan2(1, -1) = 3 pi / 4 = 2.35619449019...; erfinv(0.5) = 0.476936276204469873...
  float a = f32("__nv_atan2f", "[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]",
                "[-1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]")[0];
  CHECK(std::fabs(a - 2.35619449019234492885f) <= ulp(2.3561945f));
  std::vector<float> inv = f32("__nv_erfinvf", "[0.5, 0.0, 1.0, -1.0, 2.0, -0.5, 0.9, 0.0]");
  CHECK(std::fabs(inv[0] - 0.476936276204469873f) <= ulp(0.47693628f));
  CHECK(inv[1] == 0.0f);
  CHECK(std::isinf(inv[2]));
  CHECK(inv[2] > 0);
  CHECK(std::isinf(inv[3]));
  CHECK(inv[3] < 0);
  CHECK(std::isnan(inv[4]));
  CHECK(inv[5] == -inv[0]);
  CHECK(std::fabs(inv[6] - 1.16308715367667425f) <= ulp(1.1630871f)); // erfinv(0.9)
}

TEST_CASE("predicates return i32 0/1, ilogb returns the exponent") {
  auto pred = [](const std::string &symbol, const std::string &values) {
    return runStoreKernel<int32_t>(externKernel(symbol, {{values, "f32"}}, "i32"), DType::I32);
  };
  std::string v = "[0x7FC00000, 0x7F800000, 0xFF800000, -0.0, 0.0, -1.0, 1.0e-40, 3.0]";
  CHECK(pred("__nv_isnanf", v) == std::vector<int32_t>{1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(pred("__nv_isinff", v) == std::vector<int32_t>{0, 1, 1, 0, 0, 0, 0, 0});
  CHECK(pred("__nv_finitef", v) == std::vector<int32_t>{0, 0, 0, 1, 1, 1, 1, 1});
  CHECK(pred("__nv_signbitf", v) == std::vector<int32_t>{0, 0, 1, 1, 0, 1, 0, 0});
  // ilogb: NaN and 0 give INT_MIN, inf INT_MAX; 1e-40 is 2^-132.9 (subnormal), exponent -133.
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  CHECK(pred("__nv_ilogbf", v) == std::vector<int32_t>{lo, hi, hi, lo, lo, 0, -133, 1});
}

TEST_CASE("f64 libdevice functions run in double") {
  std::vector<double> p =
      runStoreKernel<double>(externKernel("__nv_pow",
                                          {{"[2.0, 9.0, 2.0, 10.0, 1.0, 1.0, 1.0, 1.0]", "f64"},
                                           {"[0.5, 0.5, -1.0, 3.0, 0.0, 0.0, 0.0, 0.0]", "f64"}},
                                          "f64"),
                             DType::F64);
  CHECK(std::fabs(p[0] - 1.4142135623730951) <= 2.3e-16);
  CHECK(p[1] == 3.0);
  CHECK(p[2] == 0.5);
  CHECK(p[3] == 1000.0);
  // fma rounds once: (1 + 2^-30)^2 - 1 keeps the 2^-60 term a separate multiply would lose.
  std::vector<double> f =
      runStoreKernel<double>(externKernel("__nv_fma",
                                          {{"1.0000000009313225746154785", "f64"},
                                           {"1.0000000009313225746154785", "f64"},
                                           {"-1.0", "f64"}},
                                          "f64"),
                             DType::F64);
  CHECK(f[0] == std::ldexp(1.0, -29) + std::ldexp(1.0, -60));
  std::vector<int32_t> isnan = runStoreKernel<int32_t>(
      externKernel("__nv_isnand",
                   {{"[0x7FF8000000000000, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]", "f64"}}, "i32"),
      DType::I32);
  CHECK(isnan == std::vector<int32_t>{1, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("integer libdevice functions") {
  auto i1 = [](const std::string &symbol, const std::string &values) {
    return runStoreKernel<int32_t>(externKernel(symbol, {{values, "i32"}}, "i32"), DType::I32);
  };
  auto i2 = [](const std::string &symbol, const std::string &a, const std::string &b) {
    return runStoreKernel<int32_t>(externKernel(symbol, {{a, "i32"}, {b, "i32"}}, "i32"),
                                   DType::I32);
  };
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  CHECK(i1("__nv_clz", "[1, 0, -1, 256, 2147483647, 65535, 2, 3]") ==
        std::vector<int32_t>{31, 32, 0, 23, 1, 16, 30, 30});
  CHECK(i1("__nv_popc", "[1, 0, -1, 256, 2147483647, 65535, 2, 3]") ==
        std::vector<int32_t>{1, 0, 32, 1, 31, 16, 1, 2});
  CHECK(i1("__nv_ffs", "[1, 0, -1, 256, 8, 65535, 2, 3]") ==
        std::vector<int32_t>{1, 0, 1, 9, 4, 1, 2, 1});
  CHECK(i1("__nv_brev", "[1, 0, -1, 2, 0, 0, 0, 0]") ==
        std::vector<int32_t>{lo, 0, -1, 0x40000000, 0, 0, 0, 0});
  CHECK(i1("__nv_abs", "[-5, 5, -2147483648, 0, 0, 0, 0, 0]") ==
        std::vector<int32_t>{5, 5, lo, 0, 0, 0, 0, 0});
  // umulhi(0xFFFFFFFF, 2) = 1; mulhi(-1, 1) = -1 (the product -1 is all ones).
  CHECK(i2("__nv_umulhi", "[-1, 65536, 0, 0, 0, 0, 0, 0]", "[2, 65536, 0, 0, 0, 0, 0, 0]")[0] == 1);
  CHECK(i2("__nv_umulhi", "[-1, 65536, 0, 0, 0, 0, 0, 0]", "[2, 65536, 0, 0, 0, 0, 0, 0]")[1] == 1);
  CHECK(i2("__nv_mulhi", "[-1, 0, 0, 0, 0, 0, 0, 0]", "[1, 0, 0, 0, 0, 0, 0, 0]")[0] == -1);
  // Averages in 33 bits: (MAX + MAX) >> 1 = MAX; rounding up: (1 + 2 + 1) >> 1 = 2.
  CHECK(i2("__nv_hadd", "[2147483647, 1, -3, 0, 0, 0, 0, 0]",
           "[2147483647, 2, 0, 0, 0, 0, 0, 0]") == std::vector<int32_t>{hi, 1, -2, 0, 0, 0, 0, 0});
  CHECK(i2("__nv_rhadd", "[2147483647, 1, -3, 0, 0, 0, 0, 0]",
           "[2147483647, 2, 0, 0, 0, 0, 0, 0]") == std::vector<int32_t>{hi, 2, -1, 0, 0, 0, 0, 0});
  // mul24 reads the low 24 bits as signed: 0xFFFFFF is -1; umul24 as unsigned.
  CHECK(i2("__nv_mul24", "[16777215, 33554431, 3, 0, 0, 0, 0, 0]", "[2, 2, -4, 0, 0, 0, 0, 0]") ==
        std::vector<int32_t>{-2, -2, -12, 0, 0, 0, 0, 0});
  CHECK(i2("__nv_umul24", "[16777215, 33554431, 3, 0, 0, 0, 0, 0]", "[2, 2, 4, 0, 0, 0, 0, 0]") ==
        std::vector<int32_t>{0x1FFFFFE, 0x1FFFFFE, 12, 0, 0, 0, 0, 0});
  CHECK(i2("__nv_umax", "[-1, 1, 0, 0, 0, 0, 0, 0]", "[1, 2, 0, 0, 0, 0, 0, 0]")[0] == -1);
  CHECK(i2("__nv_max", "[-1, 1, 0, 0, 0, 0, 0, 0]", "[1, 2, 0, 0, 0, 0, 0, 0]")[0] == 1);
}

TEST_CASE("an unknown symbol or a wrong signature is a lowering error with the source line") {
  std::string error = loweringError(externKernel("__nv_nosuchf", {{"1.0", "f32"}}, "f32"));
  CHECK(error.find("k.py:3:4") != std::string::npos);
  CHECK(error.find("__nv_nosuchf") != std::string::npos);
  error = loweringError(externKernel("__nv_expf", {{"1.0", "f64"}}, "f64"));
  CHECK(error.find("__nv_expf takes (f32) -> f32, not (f64) -> f64") != std::string::npos);
}

TEST_CASE("f32 transcendentals are within 1 ulp of double precision over a sweep") {
  // They run on SLEEF's vector functions (1.0-ulp bound, within libdevice's own 1 to 4 ulp),
  // as the math dialect's ops do; the reference is the C library in double, rounded once.
  struct Case {
    const char *symbol;
    double (*exact)(double);
    double lo, hi;
  };
  const Case cases[] = {
      {"__nv_tanhf", [](double v) { return std::tanh(v); }, -12, 12},
      {"__nv_expf", [](double v) { return std::exp(v); }, -80, 80},
      {"__nv_fast_expf", [](double v) { return std::exp(v); }, -80, 80},
      {"__nv_logf", [](double v) { return std::log(v); }, 1e-6, 1e6},
      {"__nv_log1pf", [](double v) { return std::log1p(v); }, -0.99, 50},
      {"__nv_sinf", [](double v) { return std::sin(v); }, -40, 40},
      {"__nv_cosf", [](double v) { return std::cos(v); }, -40, 40},
      {"__nv_erff", [](double v) { return std::erf(v); }, -4, 4},
      {"__nv_atanf", [](double v) { return std::atan(v); }, -30, 30},
      {"__nv_sinhf", [](double v) { return std::sinh(v); }, -20, 20},
  };
  for (const Case &c : cases) {
    CAPTURE(c.symbol);
    for (int chunk = 0; chunk < 8; ++chunk) {
      std::string text = "[";
      std::vector<float> in;
      for (int i = 0; i < 8; ++i) {
        // 64 points spread over [lo, hi], off the grid a little so none is special.
        double t = (chunk * 8 + i + 0.37) / 64.0;
        in.push_back(float(c.lo + (c.hi - c.lo) * t));
        text += (i ? ", " : "") + fmt::format("{:.9g}", in.back());
      }
      std::vector<float> got = f32(c.symbol, text + "]");
      for (int i = 0; i < 8; ++i) {
        CAPTURE(in[i]);
        double exact = c.exact(double(in[i]));
        CHECK(std::fabs(double(got[i]) - exact) <= double(ulp(float(exact))));
      }
    }
  }
  // Signed zeros and infinities keep their IEEE results.
  std::vector<float> t =
      f32("__nv_tanhf", "[-0.0, 0.0, 0x7F800000, 0xFF800000, 1.0, 1.0, 1.0, 1.0]");
  CHECK((t[0] == 0.0f && std::signbit(t[0])));
  CHECK((t[1] == 0.0f && !std::signbit(t[1])));
  CHECK(t[2] == 1.0f);
  CHECK(t[3] == -1.0f);
  std::vector<float> e = f32("__nv_expf", "[0xFF800000, 0x7F800000, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]");
  CHECK(e[0] == 0.0f);
  CHECK(std::isinf(e[1]));
  CHECK(e[2] == 1.0f);
}

namespace {
/// SYMBOL over 8-lane constants of the given types; out[0..8) as T.
template <class T>
std::vector<T> call(const std::string &symbol,
                    const std::vector<std::pair<std::string, std::string>> &args,
                    const std::string &result, DType dtype) {
  return runStoreKernel<T>(externKernel(symbol, args, result), dtype);
}
const float kOneUp = std::nextafter(1.0f, 2.0f);
} // namespace

TEST_CASE("_rz, _rd and _ru round the exact result toward zero, down and up") {
  // 1 + 2^-30 and -1 - 2^-30 lie strictly between floats; 1 + 3 * 2^-25 is 3/4 of the way up.
  const std::pair<std::string, std::string> a{"[1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, 1.0]", "f32"},
      b{"[0x30800000, 0xB0800000, 0x30800000, 0xB0800000, 0.0, 0.0, 0x34000000, 0x33C00000]",
        "f32"};
  CHECK(call<float>("__nv_fadd_rz", {a, b}, "f32", DType::F32) ==
        std::vector<float>{1, -1, 1, -1, 1, -1, kOneUp, 1});
  CHECK(call<float>("__nv_fadd_rd", {a, b}, "f32", DType::F32) ==
        std::vector<float>{1, -kOneUp, 1, -kOneUp, 1, -1, kOneUp, 1});
  CHECK(call<float>("__nv_fadd_ru", {a, b}, "f32", DType::F32) ==
        std::vector<float>{kOneUp, -1, kOneUp, -1, 1, -1, kOneUp, kOneUp});
  CHECK(call<float>("__nv_fadd_rn", {a, b}, "f32", DType::F32) ==
        std::vector<float>{1, -1, 1, -1, 1, -1, kOneUp, kOneUp});
  // x - y = x + (-y): the same sums.
  const std::pair<std::string, std::string> negB{
      "[0xB0800000, 0x30800000, 0xB0800000, 0x30800000, 0.0, 0.0, 0xB4000000, 0xB3C00000]", "f32"};
  CHECK(call<float>("__nv_fsub_rd", {a, negB}, "f32", DType::F32) ==
        std::vector<float>{1, -kOneUp, 1, -kOneUp, 1, -1, kOneUp, 1});
  // (1 + 2^-52)^2 = 1 + 2^-51 + 2^-104: down is 1 + 2^-51, up one ulp more; negated, mirrored.
  const double x = std::nextafter(1.0, 2.0), sq = 1 + std::ldexp(1.0, -51),
               sqUp = std::nextafter(sq, 2.0);
  const std::pair<std::string, std::string> m{
      "[0x3FF0000000000001, 0xBFF0000000000001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]", "f64"},
      n{"[0x3FF0000000000001, 0x3FF0000000000001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]", "f64"};
  std::vector<double> rz = call<double>("__nv_dmul_rz", {m, n}, "f64", DType::F64),
                      rd = call<double>("__nv_dmul_rd", {m, n}, "f64", DType::F64),
                      ru = call<double>("__nv_dmul_ru", {m, n}, "f64", DType::F64);
  CHECK(x * x == sq); // round to nearest, for comparison
  CHECK(rz[0] == sq);
  CHECK(rd[0] == sq);
  CHECK(ru[0] == sqUp);
  CHECK(rz[1] == -sq);
  CHECK(rd[1] == -sqUp);
  CHECK(ru[1] == -sq);
  // 1/3 and sqrt(2) are not floats: down and up are adjacent and bracket them; toward zero is
  // down for a positive result.
  const std::pair<std::string, std::string> three{"[3.0, -3.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0]",
                                                  "f32"};
  std::vector<float> rcpDown = call<float>("__nv_frcp_rd", {three}, "f32", DType::F32),
                     rcpUp = call<float>("__nv_frcp_ru", {three}, "f32", DType::F32),
                     rcpZero = call<float>("__nv_frcp_rz", {three}, "f32", DType::F32);
  CHECK(std::nextafter(rcpDown[0], 1.0f) == rcpUp[0]);
  CHECK(double(rcpDown[0]) < 1.0 / 3);
  CHECK(double(rcpUp[0]) > 1.0 / 3);
  CHECK(rcpZero[0] == rcpDown[0]);
  CHECK(rcpZero[1] == rcpUp[1]); // -1/3 toward zero is the one above
  std::vector<float> sqrtDown = call<float>("__nv_fsqrt_rd", {three}, "f32", DType::F32),
                     sqrtUp = call<float>("__nv_fsqrt_ru", {three}, "f32", DType::F32);
  CHECK(std::nextafter(sqrtDown[2], 2.0f) == sqrtUp[2]);
  CHECK(double(sqrtDown[2]) * sqrtDown[2] < 2.0);
  CHECK(double(sqrtUp[2]) * sqrtUp[2] > 2.0);
  // fma rounds once: (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46, which needs 25 bits.
  const std::pair<std::string, std::string> up{"0x3F800001", "f32"}, minusOne{"-1.0", "f32"};
  const float exactHigh = std::ldexp(1.0f, -22);
  CHECK(call<float>("__nv_fmaf_rz", {up, up, minusOne}, "f32", DType::F32)[0] == exactHigh);
  CHECK(call<float>("__nv_fmaf_ru", {up, up, minusOne}, "f32", DType::F32)[0] ==
        std::nextafter(exactHigh, 1.0f));
}

TEST_CASE("conversions round in their mode, saturate, and take NaN to 0") {
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  const std::pair<std::string, std::string> d{
      "[-1.5, 2.5, -2.5, 1.0e+10, -1.0e+10, 0x7FF8000000000000, 0.5, -0.5]", "f64"};
  CHECK(call<int32_t>("__nv_double2int_rn", {d}, "i32", DType::I32) ==
        std::vector<int32_t>{-2, 2, -2, hi, lo, 0, 0, 0});
  CHECK(call<int32_t>("__nv_double2int_rz", {d}, "i32", DType::I32) ==
        std::vector<int32_t>{-1, 2, -2, hi, lo, 0, 0, 0});
  CHECK(call<int32_t>("__nv_double2int_rd", {d}, "i32", DType::I32) ==
        std::vector<int32_t>{-2, 2, -3, hi, lo, 0, 0, -1});
  CHECK(call<int32_t>("__nv_double2int_ru", {d}, "i32", DType::I32) ==
        std::vector<int32_t>{-1, 3, -2, hi, lo, 0, 1, 0});
  // Unsigned: negative values saturate to 0, large ones to all ones (-1 as i32).
  CHECK(call<int32_t>("__nv_double2uint_ru", {d}, "i32", DType::I32) ==
        std::vector<int32_t>{0, 3, 0, -1, 0, 0, 1, 0});
  CHECK(call<int64_t>("__nv_double2ll_rd", {d}, "i64", DType::I64) ==
        std::vector<int64_t>{-2, 2, -3, 10000000000, -10000000000, 0, 0, -1});
  CHECK(call<int64_t>("__nv_float2ull_ru",
                      {{"[1.5, 1.0e+30, -0.5, 0x7FC00000, 3.0, 0.0, 0.25, 7.5]", "f32"}}, "i64",
                      DType::I64) == std::vector<int64_t>{2, -1, 0, 0, 3, 0, 1, 8});
  // 2^24 + 1 and 2^24 + 3 are not floats (the spacing there is 2).
  const std::pair<std::string, std::string> ints{
      "[16777217, -16777217, 16777219, 0, 1, -1, 2147483647, -2147483648]", "i32"};
  CHECK(call<float>("__nv_int2float_rn", {ints}, "f32", DType::F32) ==
        std::vector<float>{16777216, -16777216, 16777220, 0, 1, -1, 2147483648.0f, -2147483648.0f});
  CHECK(call<float>("__nv_int2float_rz", {ints}, "f32", DType::F32) ==
        std::vector<float>{16777216, -16777216, 16777218, 0, 1, -1, 2147483520.0f, -2147483648.0f});
  CHECK(call<float>("__nv_int2float_rd", {ints}, "f32", DType::F32) ==
        std::vector<float>{16777216, -16777218, 16777218, 0, 1, -1, 2147483520.0f, -2147483648.0f});
  CHECK(call<float>("__nv_int2float_ru", {ints}, "f32", DType::F32) ==
        std::vector<float>{16777218, -16777216, 16777220, 0, 1, -1, 2147483648.0f, -2147483648.0f});
  // The signless -1 read as unsigned: 2^32 - 1 and 2^64 - 1.
  CHECK(call<float>("__nv_uint2float_rz", {ints}, "f32", DType::F32)[5] == 4294967040.0f);
  CHECK(call<float>("__nv_uint2float_ru", {ints}, "f32", DType::F32)[5] == 4294967296.0f);
  const std::pair<std::string, std::string> allOnes{"[-1, 1, 0, 0, 0, 0, 0, 0]", "i64"};
  CHECK(call<double>("__nv_ull2double_rz", {allOnes}, "f64", DType::F64)[0] ==
        18446744073709549568.0);
  CHECK(call<double>("__nv_ull2double_ru", {allOnes}, "f64", DType::F64)[0] ==
        18446744073709551616.0);
  CHECK(call<double>("__nv_uint2double_rn", {{"[-1, 0, 0, 0, 0, 0, 0, 0]", "i32"}}, "f64",
                     DType::F64)[0] == 4294967295.0);
  // 1 + 2^-30 is between floats; 1 + 2^-24 is halfway (to even: 1).
  const std::pair<std::string, std::string> narrow{
      "[0x3FF0000000400000, 0xBFF0000000400000, 0x3FF0000010000000, 0.0, 0.0, 0.0, 0.0, 0.0]",
      "f64"};
  CHECK(call<float>("__nv_double2float_rn", {narrow}, "f32", DType::F32) ==
        std::vector<float>{1, -1, 1, 0, 0, 0, 0, 0});
  CHECK(call<float>("__nv_double2float_rd", {narrow}, "f32", DType::F32) ==
        std::vector<float>{1, -kOneUp, 1, 0, 0, 0, 0, 0});
  CHECK(call<float>("__nv_double2float_ru", {narrow}, "f32", DType::F32) ==
        std::vector<float>{kOneUp, -1, kOneUp, 0, 0, 0, 0, 0});
  // llrint to nearest even, llround away from zero; both saturate.
  const std::pair<std::string, std::string> halves{
      "[2.5, -2.5, 3.5, 1.0e+30, -1.0e+30, 0x7FC00000, 0.4, -0.6]", "f32"};
  const int64_t big = std::numeric_limits<int64_t>::max(),
                small = std::numeric_limits<int64_t>::min();
  CHECK(call<int64_t>("__nv_llrintf", {halves}, "i64", DType::I64) ==
        std::vector<int64_t>{2, -2, 4, big, small, 0, 0, -1});
  CHECK(call<int64_t>("__nv_llroundf", {halves}, "i64", DType::I64) ==
        std::vector<int64_t>{3, -3, 4, big, small, 0, 0, -1});
}

TEST_CASE("bit casts, byte permutes and sums of absolute differences") {
  CHECK(call<int32_t>("__nv_float_as_uint", {{"[-0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]", "f32"}},
                      "i32", DType::I32)[0] == std::numeric_limits<int32_t>::min());
  CHECK(call<float>("__nv_uint_as_float", {{"[1065353216, 0, 0, 0, 0, 0, 0, 0]", "i32"}}, "f32",
                    DType::F32)[0] == 1.0f);
  std::vector<double> joined = call<double>(
      "__nv_hiloint2double",
      {{"[1072693248, 1073741824, 0, 0, 0, 0, 0, 0]", "i32"}, {"[0, 1, 0, 0, 0, 0, 0, 0]", "i32"}},
      "f64", DType::F64);
  CHECK(joined[0] == 1.0);
  CHECK(joined[1] == std::nextafter(2.0, 3.0));
  const std::pair<std::string, std::string> one{
      "[1.0, 0x3FF0000000000001, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]", "f64"};
  CHECK(call<int32_t>("__nv_double2hiint", {one}, "i32", DType::I32)[0] == 0x3FF00000);
  CHECK(call<int32_t>("__nv_double2loint", {one}, "i32", DType::I32)[1] == 1);
  // Bytes 0-3 of x = 0x33221100 and 4-7 of y = 0x77665544; selectors 1, 3, 5, 7 from the
  // low nibble up, and 4 everywhere.
  CHECK(call<int32_t>("__nv_byte_perm",
                      {{"[857870592, 857870592, 0, 0, 0, 0, 0, 0]", "i32"},
                       {"[2003195204, 2003195204, 0, 0, 0, 0, 0, 0]", "i32"},
                       {"[30001, 17476, 0, 0, 0, 0, 0, 0]", "i32"}},
                      "i32", DType::I32) ==
        std::vector<int32_t>{0x77553311, 0x44444444, 0, 0, 0, 0, 0, 0});
  CHECK(call<int32_t>("__nv_sad",
                      {{"[-3, 5, 0, 0, 0, 0, 0, 0]", "i32"},
                       {"[4, -5, 0, 0, 0, 0, 0, 0]", "i32"},
                       {"[10, 0, 0, 0, 0, 0, 0, 0]", "i32"}},
                      "i32", DType::I32)
            .at(0) == 17);
  // Unsigned: |3 - (2^32 - 1)| + 1 = 2^32 - 3.
  CHECK(call<int32_t>("__nv_usad",
                      {{"[3, 0, 0, 0, 0, 0, 0, 0]", "i32"},
                       {"[-1, 0, 0, 0, 0, 0, 0, 0]", "i32"},
                       {"[1, 0, 0, 0, 0, 0, 0, 0]", "i32"}},
                      "i32", DType::I32)[0] == -3);
}

TEST_CASE("sinpi and cospi are exact at integers and halves, with IEEE's signed zeros") {
  const std::pair<std::string, std::string> x{"[0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, 1.0e+07]",
                                              "f32"};
  std::vector<float> s = call<float>("__nv_sinpif", {x}, "f32", DType::F32);
  CHECK(s == std::vector<float>{0, -0.0f, 0, -0.0f, 1, -1, 1, 0});
  CHECK_FALSE(std::signbit(s[2])); // sinpi(1) = +0
  CHECK(std::signbit(s[3]));
  CHECK_FALSE(std::signbit(s[7]));
  std::vector<float> c = call<float>("__nv_cospif", {x}, "f32", DType::F32);
  CHECK(c == std::vector<float>{1, 1, -1, -1, 0, 0, 0, 1});
  CHECK_FALSE(std::signbit(c[4])); // cospi(1/2) = +0
  std::vector<double> quarter =
      call<double>("__nv_sinpi", {{"[0.25, -0.75, 1.0e+15, 0.0, 0.0, 0.0, 0.0, 0.0]", "f64"}},
                   "f64", DType::F64);
  const double half = 0.70710678118654752440; // sqrt(2) / 2
  CHECK(std::fabs(quarter[0] - half) <= std::ldexp(1.0, -53));
  CHECK(std::fabs(quarter[1] + half) <= std::ldexp(1.0, -53));
  CHECK(quarter[2] == 0.0); // a huge integer: exactly 0, which sin(pi * x) is not
}

TEST_CASE("Bessel functions at large arguments and orders overflow or underflow, not fail") {
  // I0(1e6) and I1(1e6) are about e^1e6: infinite in f64; I1 is odd, I0 even; I0(0) = 1.
  std::vector<double> i0 = call<double>(
      "__nv_cyl_bessel_i0", {{"[1.0e+06, -1.0e+06, 0.0, 2.5, -2.5, 0.0, 0.0, 0.0]", "f64"}}, "f64",
      DType::F64);
  CHECK(i0[0] == INFINITY);
  CHECK(i0[1] == INFINITY);
  CHECK(i0[2] == 1.0);
  CHECK(i0[3] == i0[4]);
  std::vector<double> i1 = call<double>(
      "__nv_cyl_bessel_i1", {{"[1.0e+06, -1.0e+06, 0.0, 2.5, -2.5, 0.0, 0.0, 0.0]", "f64"}}, "f64",
      DType::F64);
  CHECK(i1[0] == INFINITY);
  CHECK(i1[1] == -INFINITY);
  CHECK(i1[2] == 0.0);
  CHECK(i1[3] == -i1[4]);
  // |J_n(2)| < (e / n)^n underflows for n = 100,000; Y_n(2) overflows, Y_{-n} = (-1)^n Y_n.
  const std::pair<std::string, std::string> orders{
      "[100000, -100001, -100000, 2147483647, -2147483648, 0, 0, 0]", "i32"},
      two{"[2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]", "f64"};
  std::vector<double> j = call<double>("__nv_jn", {orders, two}, "f64", DType::F64),
                      y = call<double>("__nv_yn", {orders, two}, "f64", DType::F64);
  CHECK(j == std::vector<double>{0, 0, 0, 0, 0, j[5], j[6], j[7]});
  CHECK(y[0] == -INFINITY);
  CHECK(y[1] == INFINITY);
  CHECK(y[2] == -INFINITY);
  CHECK(y[3] == -INFINITY);
  CHECK(y[4] == -INFINITY);
  CHECK(std::fabs(j[5] - 0.22389077914123567) <= 1e-15); // J0(2)
}
