//===- ConversionTest.cpp - tt.fp_to_fp and fp8 casts on hand-written TTIR -===//
//
// Every expected bit pattern is worked out by hand from the formats (f16: 10
// mantissa bits, bias 15; bf16: 7, 127; E4M3FN: 3, 7, max 448, NaN S.1111.111;
// E5M2: 2, 15, max 57344) and the GPU's rules (rtne with satfinite for fp8,
// cvt.rz for rtz).
//
//===----------------------------------------------------------------------===//
#include "StoreKernel.h"

#include <cmath>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// Converts %x (f32 constants) with tt.fp_to_fp to `to` under `rounding` and stores the bits.
std::string convertF32(const std::string &values, const std::string &to,
                       const std::string &rounding, const std::string &bitsType) {
  return storeKernel(bitsType, "    %x = arith.constant dense<" + values + "> : tensor<8xf32>\n" +
                                   "    %c = tt.fp_to_fp %x, rounding = " + rounding +
                                   " : tensor<8xf32> -> tensor<8x" + to + ">\n" +
                                   "    %r = tt.bitcast %c : tensor<8x" + to + "> -> tensor<8x" +
                                   bitsType + ">");
}

std::vector<uint16_t> bits16(const std::string &ttir) {
  std::vector<int16_t> out = runStoreKernel<int16_t>(ttir, DType::I16);
  return std::vector<uint16_t>(out.begin(), out.end());
}
std::vector<uint8_t> bits8(const std::string &ttir) {
  std::vector<int8_t> out = runStoreKernel<int8_t>(ttir, DType::I8);
  return std::vector<uint8_t>(out.begin(), out.end());
}
} // namespace

TEST_CASE("f32 -> f16 rounds to nearest even (rtne) or toward zero (rtz)") {
  // 1 + 2^-11 + 2^-20: just above the tie between 1 and 1 + 2^-10.
  // 70000: beyond 65520, rtne overflows to inf; rtz stops at 65504 (0x7BFF).
  // 2^-25: a tie between 0 and the smallest subnormal 2^-24: even is 0.
  // 3 * 2^-26 = 0.75 * 2^-24: rtne up to 2^-24 (0x0001), rtz down to 0.
  // -1.999: mantissa 1022.976 / 1024: rtne 1023 (0xBFFF), rtz 1022 (0xBFFE).
  // 65519 < 65520 rounds to 65504 either way.
  std::string x = "[1.00048923492431640625, 7.0e+04, -7.0e+04, 2.98023223876953125E-8, "
                  "4.470348358154296875E-8, -1.999, 0x7F800000, 65519.0]";
  CHECK(bits16(convertF32(x, "f16", "rtne", "i16")) ==
        std::vector<uint16_t>{0x3C01, 0x7C00, 0xFC00, 0x0000, 0x0001, 0xBFFF, 0x7C00, 0x7BFF});
  CHECK(bits16(convertF32(x, "f16", "rtz", "i16")) ==
        std::vector<uint16_t>{0x3C00, 0x7BFF, 0xFBFF, 0x0000, 0x0000, 0xBFFE, 0x7C00, 0x7BFF});
}

TEST_CASE("f32 -> bf16 under rtne and rtz") {
  // 1 + 2^-8 + 2^-20: above the tie: rtne 0x3F81, rtz 0x3F80.
  // 3.4e38 = 0x7F7FC99E: the dropped half 0xC99E rounds up to inf; rtz keeps 0x7F7F.
  // 2^-149 is far below bf16's smallest subnormal 2^-133: zero.
  std::string x = "[1.00390720367431640625, 3.4e+38, -1.0, 1.0e-45, -3.4e+38, 0.0, -0.0, 2.0]";
  CHECK(bits16(convertF32(x, "bf16", "rtne", "i16")) ==
        std::vector<uint16_t>{0x3F81, 0x7F80, 0xBF80, 0x0000, 0xFF80, 0x0000, 0x8000, 0x4000});
  CHECK(bits16(convertF32(x, "bf16", "rtz", "i16")) ==
        std::vector<uint16_t>{0x3F80, 0x7F7F, 0xBF80, 0x0000, 0xFF7F, 0x0000, 0x8000, 0x4000});
}

TEST_CASE("f32 -> E5M2: rtne saturates like cvt.rn.satfinite, rtz truncates and keeps inf") {
  // 1.875 lies halfway between 1.75 (0x3F, odd) and 2 (0x40): rtne 2, rtz 1.75.
  // 1e6 saturates to 57344 (0x7B); inf saturates under rtne, stays inf (0x7C) under rtz
  // (the GPU's rtz path is f32 -> f16 rz -> top byte). NaN is 0x7F.
  // 3 * 2^-17 is 1.5 subnormal quanta (2^-16): rtne ties to 2 quanta, rtz to 1.
  std::string x = "[1.875, 1.0e+06, 0x7F800000, 0xFF800000, 0x7FC00000, -1.875, "
                  "2.288818359375E-5, 1.0e-10]";
  CHECK(bits8(convertF32(x, "f8E5M2", "rtne", "i8")) ==
        std::vector<uint8_t>{0x40, 0x7B, 0x7B, 0xFB, 0x7F, 0xC0, 0x02, 0x00});
  CHECK(bits8(convertF32(x, "f8E5M2", "rtz", "i8")) ==
        std::vector<uint8_t>{0x3F, 0x7B, 0x7C, 0xFC, 0x7F, 0xBF, 0x01, 0x00});
}

TEST_CASE("f32 -> E4M3FN: saturation to 448 and NaN 0x7F under both roundings") {
  // 1.1875 is the tie between 1.125 (0x39) and 1.25 (0x3A, even).
  // 500 and inf saturate to 448 (0x7E); 3 * 2^-10 is 1.5 quanta of 2^-9.
  std::string x = "[1.1875, 500.0, 0x7F800000, 0xFF800000, 0x7FC00000, -1.1875, "
                  "0.0029296875, 1.0e-10]";
  CHECK(bits8(convertF32(x, "f8E4M3FN", "rtne", "i8")) ==
        std::vector<uint8_t>{0x3A, 0x7E, 0x7E, 0xFE, 0x7F, 0xBA, 0x02, 0x00});
  CHECK(bits8(convertF32(x, "f8E4M3FN", "rtz", "i8")) ==
        std::vector<uint8_t>{0x39, 0x7E, 0x7E, 0xFE, 0x7F, 0xB9, 0x01, 0x00});
}

TEST_CASE("fp8 -> f32 is exact, infinities and NaN included") {
  // E5M2 bytes 0x7C inf, 0x01 2^-16, 0xFF NaN, 0x3C 1.0, 0x7B 57344, 0x80 -0, 0xC0 -2, 0x02 2^-15.
  std::string body = R"(
    %b = arith.constant dense<[124, 1, -1, 60, 123, -128, -64, 2]> : tensor<8xi8>
    %e = tt.bitcast %b : tensor<8xi8> -> tensor<8xf8E5M2>
    %r = tt.fp_to_fp %e : tensor<8xf8E5M2> -> tensor<8xf32>)";
  std::vector<float> out = runStoreKernel<float>(storeKernel("f32", body), DType::F32);
  CHECK(std::isinf(out[0]));
  CHECK(out[0] > 0);
  CHECK(out[1] == std::ldexp(1.0f, -16));
  CHECK(std::isnan(out[2]));
  CHECK(out[3] == 1.0f);
  CHECK(out[4] == 57344.0f);
  CHECK(out[5] == 0.0f);
  CHECK(std::signbit(out[5]));
  CHECK(out[6] == -2.0f);
  CHECK(out[7] == std::ldexp(1.0f, -15));
}

TEST_CASE("f16 <-> bf16 round once in the requested mode") {
  // f16 1 + 6*2^-10 -> bf16: nearer 1 + 2^-7 (0x3F81); rtz 1.0.
  // f16 65504 = 1.9990234375 * 2^15: bf16 rtne rounds up to 2^16 (0x4780), rtz 0x477F.
  std::string toBF16 = storeKernel("i16", R"(
    %h = arith.constant dense<[1.005859375, 65504.0, -1.005859375, 0.0, 1.0, -65504.0, 2.0, 0.5]> : tensor<8xf16>
    %c = tt.fp_to_fp %h, rounding = ROUND : tensor<8xf16> -> tensor<8xbf16>
    %r = tt.bitcast %c : tensor<8xbf16> -> tensor<8xi16>)");
  auto with = [](std::string text, const std::string &mode) {
    return text.replace(text.find("ROUND"), 5, mode);
  };
  CHECK(bits16(with(toBF16, "rtne")) ==
        std::vector<uint16_t>{0x3F81, 0x4780, 0xBF81, 0x0000, 0x3F80, 0xC780, 0x4000, 0x3F00});
  CHECK(bits16(with(toBF16, "rtz")) ==
        std::vector<uint16_t>{0x3F80, 0x477F, 0xBF80, 0x0000, 0x3F80, 0xC77F, 0x4000, 0x3F00});
  // bf16 99840 overflows f16: inf under rtne, 65504 under rtz; bf16 2^-30 underflows to 0.
  std::string toF16 = storeKernel("i16", R"(
    %h = arith.constant dense<[99840.0, 9.3132257461547852E-10, -99840.0, 1.0, 0.0, 0.0, 0.0, 0.0]> : tensor<8xbf16>
    %c = tt.fp_to_fp %h, rounding = ROUND : tensor<8xbf16> -> tensor<8xf16>
    %r = tt.bitcast %c : tensor<8xf16> -> tensor<8xi16>)");
  CHECK(bits16(with(toF16, "rtne")) ==
        std::vector<uint16_t>{0x7C00, 0x0000, 0xFC00, 0x3C00, 0, 0, 0, 0});
  CHECK(bits16(with(toF16, "rtz")) ==
        std::vector<uint16_t>{0x7BFF, 0x0000, 0xFBFF, 0x3C00, 0, 0, 0, 0});
}

TEST_CASE("f64 -> f16 rounds once, not through an f32 tie") {
  // 1 + 2^-11 + 2^-40 is above the f16 tie 1 + 2^-11: 0x3C01. Rounding to f32 first
  // would drop 2^-40, land on the tie and give 0x3C00. 1 + 2^-11 itself ties to even.
  std::string ttir = storeKernel("i16", R"(
    %d = arith.constant dense<[1.0004882812509094947017729282379150390625, 1.00048828125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]> : tensor<8xf64>
    %c = tt.fp_to_fp %d, rounding = rtne : tensor<8xf64> -> tensor<8xf16>
    %r = tt.bitcast %c : tensor<8xf16> -> tensor<8xi16>)");
  std::vector<uint16_t> out = bits16(ttir);
  CHECK(out[0] == 0x3C01);
  CHECK(out[1] == 0x3C00);
}

TEST_CASE("arith.truncf f64 -> f32 rounds to nearest even") {
  // 1 + 2^-25 is below the tie 1 + 2^-24: 1. 1 + 2^-24 ties to even (1), 1 + 3*2^-24 ties
  // up to 1 + 2^-22, and 1 + 2^-24 + 2^-50 is just above the tie: 1 + 2^-23.
  std::string ttir = storeKernel("f32", R"(
    %d = arith.constant dense<[1.0000000298023223876953125, 1.000000059604644775390625, 1.000000178813934326171875, 1.00000005960464566356904470012523233890533447265625, 0.0, 0.0, 0.0, 0.0]> : tensor<8xf64>
    %r = arith.truncf %d : tensor<8xf64> to tensor<8xf32>)");
  std::vector<float> out = runStoreKernel<float>(ttir, DType::F32);
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == 1.0f);
  CHECK(out[2] == 1.0f + std::ldexp(1.0f, -22));
  CHECK(out[3] == 1.0f + std::ldexp(1.0f, -23));
}

TEST_CASE("arith.truncf to fp8 saturates as tt.fp_to_fp does, and extf is exact") {
  std::string ttir = storeKernel("f32", R"(
    %x = arith.constant dense<[1000.0, -1000.0, 1.1875, 0x7FC00000, 0.0, 1.0, 2.0, 3.0]> : tensor<8xf32>
    %e = arith.truncf %x : tensor<8xf32> to tensor<8xf8E4M3FN>
    %r = arith.extf %e : tensor<8xf8E4M3FN> to tensor<8xf32>)");
  std::vector<float> out = runStoreKernel<float>(ttir, DType::F32);
  CHECK(out[0] == 448.0f);
  CHECK(out[1] == -448.0f);
  CHECK(out[2] == 1.25f);
  CHECK(std::isnan(out[3]));
  CHECK(out[5] == 1.0f);
}
