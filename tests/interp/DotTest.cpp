//===- DotTest.cpp - tt.dot precisions and tt.dot_scaled on hand-worked values -===//
//
// Every expected value is worked out by hand in the comments: the parts Triton's
// multi-pass emulations split an f32 into (bf16 keeps 8 significant bits, tf32
// 11), and for tt.dot_scaled the e2m1 codes (magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6;
// bit 3 is the sign), e4m3 codes (0x38 = 1, 0x40 = 2) and e8m0 scales 2^(s-127).
//
//===----------------------------------------------------------------------===//
#include "StoreKernel.h"

#include <cmath>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// d = a @ b + c on 1x1 f32 operands given as f32 literals, under `precision`.
float dot1(const std::string &a, const std::string &b, const std::string &c,
           const std::string &precision) {
  std::string t = "tensor<1x1xf32>";
  std::string suffix = precision == "ieee" ? "" : ", inputPrecision = " + precision;
  return runStoreKernel<float>(
      storeKernel("f32",
                  "    %a = arith.constant dense<" + a + "> : " + t + "\n" +
                      "    %b = arith.constant dense<" + b + "> : " + t + "\n" +
                      "    %c = arith.constant dense<" + c + "> : " + t + "\n" +
                      "    %d = tt.dot %a, %b, %c" + suffix + " : " + t + " * " + t + " -> " + t +
                      "\n    %r = tt.reshape %d : " + t + " -> tensor<1xf32>",
                  1),
      DType::F32, 1)[0];
}

/// Runs `body` (which defines %d : tensor<MxNxf32>) and returns d row-major.
std::vector<float> runScaled(const std::string &body, int m, int n) {
  std::string t = "tensor<" + std::to_string(m) + "x" + std::to_string(n) + "xf32>";
  std::string flat = "tensor<" + std::to_string(m * n) + "xf32>";
  return runStoreKernel<float>(
      storeKernel("f32", body + "\n    %r = tt.reshape %d : " + t + " -> " + flat, m * n),
      DType::F32, m * n);
}

/// A dense literal of `rows` x 1 alternating two values.
std::string alternatingColumn(int rows, int even, int odd) {
  std::string s = "[";
  for (int i = 0; i < rows; ++i)
    s += std::string(i ? ", " : "") + "[" + std::to_string(i % 2 ? odd : even) + "]";
  return s + "]";
}

/// The 1x32x1 e2m1 x e4m3 product used below: a = 16 bytes `aByte` (two e2m1 codes
/// each along K), b alternating 0x38 (1.0) at even k and 0x40 (2.0) at odd k, scale
/// bytes sa and sb, c = 0.5.
std::vector<float> mxfp4TimesE4M3(int aByte, int sa, int sb, bool fastMath) {
  return runScaled(
      "    %a = arith.constant dense<" + std::to_string(int8_t(aByte)) + "> : tensor<1x16xi8>\n" +
          "    %b8 = arith.constant dense<" + alternatingColumn(32, 0x38, 0x40) +
          "> : tensor<32x1xi8>\n" +
          "    %b = tt.bitcast %b8 : tensor<32x1xi8> -> tensor<32x1xf8E4M3FN>\n" +
          "    %sa = arith.constant dense<" + std::to_string(int8_t(sa)) + "> : tensor<1x1xi8>\n" +
          "    %sb = arith.constant dense<" + std::to_string(int8_t(sb)) + "> : tensor<1x1xi8>\n" +
          "    %c = arith.constant dense<0.5> : tensor<1x1xf32>\n" +
          "    %d = tt.dot_scaled %a scale %sa, %b scale %sb, %c lhs = e2m1 rhs = e4m3 "
          "{fastMath = " +
          (fastMath ? "true" : "false") +
          "} : tensor<1x16xi8>, tensor<1x1xi8> * tensor<32x1xf8E4M3FN>, "
          "tensor<1x1xi8> -> tensor<1x1xf32>",
      1, 1);
}
} // namespace

// x = 1 + 2^-9 + 2^-18 (0x3F804020) splits into bf16 parts hi = 1, mid = 2^-9,
// lo = 2^-18. With a = b = x and c = -1:
//   bf16x3: mid*hi + hi*mid = 2^-8; + hi*hi = 1 + 2^-8; + c = 2^-8 (mid*mid and the
//           lo terms are dropped);
//   bf16x6: mid*mid + lo*hi + hi*lo = 3 * 2^-18; + mid*hi + hi*mid = 2^-8 + 3 * 2^-18;
//           + hi*hi, + c = 2^-8 + 3 * 2^-18 (only lo*mid, mid*lo, lo*lo dropped).
// Every partial sum is exact in f32, so the order of the additions does not matter.
TEST_CASE("bf16x3 and bf16x6 split f32 operands into bf16 parts and drop the smallest terms") {
  std::string x = "0x3F804020";
  CHECK(dot1(x, x, "-1.0", "bf16x3") == std::ldexp(1.0f, -8));
  CHECK(dot1(x, x, "-1.0", "bf16x6") == std::ldexp(1.0f, -8) + 3 * std::ldexp(1.0f, -18));
}

// a = 1 + 2^-12 + 2^-23 (0x3F800801): big = cvt.rna.tf32(a) = 1 (2^-12 is below half a
// tf32 ulp, 2^-11), small = 2^-12 + 2^-23, which the tf32 mma truncates to 2^-12 (a
// 12-bit value; rounding it would give 2^-12 + 2^-22). With b = 1: 1 + 2^-12.
TEST_CASE("tf32x3 truncates the small parts as the tf32 tensor cores do") {
  CHECK(dot1("0x3F800801", "1.0", "0.0", "tf32x3") == 1.0f + std::ldexp(1.0f, -12));
  // tf32 alone truncates a to 1.
  CHECK(dot1("0x3F800801", "1.0", "0.0", "tf32") == 1.0f);
}

// a = inf: hi = inf and every residual part is inf - inf = NaN, so the cross terms are
// NaN; Triton replaces NaNs of that partial sum with 0, and hi*hi = inf * 2 gives inf.
// c is added last: a NaN c stays NaN even though the cleanup runs before it.
TEST_CASE("multi-pass precisions clean NaN cross terms and add c last") {
  for (const char *p : {"tf32x3", "bf16x3", "bf16x6"}) {
    INFO(p);
    CHECK(dot1("0x7F800000", "2.0", "0.0", p) == INFINITY);
    CHECK(std::isnan(dot1("1.0", "1.0", "0x7FC00000", p)));
    CHECK(dot1("1.0", "3.0", "0.5", p) == 3.5f);
  }
}

// a = 16 bytes 0xA1: low nibble 1 (0.5) is element 2j, high nibble 0xA (-1.0) element
// 2j+1. b = 1.0 at even k, 2.0 at odd k. sum = 16 * (0.5 * 1 + -1.0 * 2) = -24;
// scales 2^(128-127) * 2^(125-127) = 0.5: -12; + c = -11.5. (Nibbles read the other
// way round would give 16 * (-1.0 * 1 + 0.5 * 2) = 0, so 0.5.)
TEST_CASE("dot_scaled: e2m1 x e4m3 with e8m0 scales, low nibble first") {
  CHECK(mxfp4TimesE4M3(0xA1, 128, 125, false) == std::vector<float>{-11.5f});
}

// Scale byte 0xFF: NaN unless fastMath; under fastMath the scale is +inf, so a = 16 x
// 0x21 (0.5, 1.0: positive) gives +inf. Scale byte 0 is +0 (not 2^-127), so only c is left.
TEST_CASE("dot_scaled: NaN scale, fastMath and the zero scale byte") {
  CHECK(std::isnan(mxfp4TimesE4M3(0x21, 0xFF, 127, false)[0]));
  CHECK(std::isnan(mxfp4TimesE4M3(0x21, 127, 0xFF, false)[0]));
  CHECK(mxfp4TimesE4M3(0x21, 0xFF, 127, true)[0] == INFINITY);
  CHECK(mxfp4TimesE4M3(0x21, 0, 127, false)[0] == 0.5f);
}

// rhs e2m1 packed along N (rhs_k_pack = false): bytes 0x42 give b(k, 0) = code 2 = 1.0
// and b(k, 1) = code 4 = 2.0. lhs bf16 ones, no lhs scale. The rhs scale is N x K/32
// (not transposed), bytes [[127, 128], [126, 129]] (as i8: -128, -127): column 0
// scales 2^0 (k < 32) and 2^1; column 1 2^-1 and 2^2.
// d(m, 0) = 32 * 1 + 32 * 2 = 96; d(m, 1) = 32 * 2 * 0.5 + 32 * 2 * 4 = 288.
TEST_CASE("dot_scaled: rhs packed along N, rhs scales indexed by n then k over 32") {
  std::vector<float> d = runScaled(R"(
    %a = arith.constant dense<1.0> : tensor<2x64xbf16>
    %b = arith.constant dense<66> : tensor<64x1xi8>
    %sb = arith.constant dense<[[127, -128], [126, -127]]> : tensor<2x2xi8>
    %c = arith.constant dense<0.0> : tensor<2x2xf32>
    %d = tt.dot_scaled %a, %b scale %sb, %c lhs = bf16 rhs = e2m1 {fastMath = false, rhs_k_pack = false} : tensor<2x64xbf16> * tensor<64x1xi8>, tensor<2x2xi8> -> tensor<2x2xf32>)",
                                   2, 2);
  CHECK(d == std::vector<float>{96.0f, 288.0f, 96.0f, 288.0f});
}

// lhs e2m1 packed along M (lhs_k_pack = false): bytes 0x31 give row 0 = code 1 (0.5)
// and row 1 = code 3 (1.5); times 32 bf16 ones: 16 and 48.
TEST_CASE("dot_scaled: lhs packed along M") {
  std::vector<float> d = runScaled(R"(
    %a = arith.constant dense<49> : tensor<1x32xi8>
    %b = arith.constant dense<1.0> : tensor<32x1xbf16>
    %c = arith.constant dense<0.0> : tensor<2x1xf32>
    %d = tt.dot_scaled %a, %b, %c lhs = e2m1 rhs = bf16 {fastMath = false, lhs_k_pack = false} : tensor<1x32xi8> * tensor<32x1xbf16> -> tensor<2x1xf32>)",
                                   2, 1);
  CHECK(d == std::vector<float>{16.0f, 48.0f});
}

// An fp16 operand makes f16 the compute type: scales become f16 first, so 2^16 (byte
// 143) overflows to inf where bf16 would hold it; 2^15 (byte 142) is fine:
// 32 * 1 * 32768 = 1048576. The e4m3 operand arrives as raw i8 bytes (0x38 = 1.0).
TEST_CASE("dot_scaled: fp16 operands scale in f16, and fp8 operands may be raw bytes") {
  auto run = [](int sb) {
    return runScaled("    %a = arith.constant dense<1.0> : tensor<1x32xf16>\n"
                     "    %b = arith.constant dense<56> : tensor<32x1xi8>\n"
                     "    %sb = arith.constant dense<" +
                         std::to_string(int8_t(sb)) +
                         "> : tensor<1x1xi8>\n"
                         "    %c = arith.constant dense<0.0> : tensor<1x1xf32>\n"
                         "    %d = tt.dot_scaled %a, %b scale %sb, %c lhs = fp16 rhs = e4m3 "
                         "{fastMath = false} : tensor<1x32xf16> * tensor<32x1xi8>, tensor<1x1xi8> "
                         "-> tensor<1x1xf32>",
                     1, 1)[0];
  };
  CHECK(run(142) == 1048576.0f);
  CHECK(run(143) == INFINITY);
  // The same scale with a bf16 partner stays finite: 32 * 65536.
  std::vector<float> d = runScaled(R"(
    %a = arith.constant dense<1.0> : tensor<1x32xbf16>
    %b = arith.constant dense<56> : tensor<32x1xi8>
    %sb = arith.constant dense<-113> : tensor<1x1xi8>
    %c = arith.constant dense<0.0> : tensor<1x1xf32>
    %d = tt.dot_scaled %a, %b scale %sb, %c lhs = bf16 rhs = e4m3 {fastMath = false} : tensor<1x32xbf16> * tensor<32x1xi8>, tensor<1x1xi8> -> tensor<1x1xf32>)",
                                   1, 1);
  CHECK(d == std::vector<float>{2097152.0f});
}

// Float scales (nvfp4-style e4m3, 16 elements per scale): lhs codes 2 (1.0) scaled by 2
// for k < 16 and by 0.5 after; times bf16 ones: 16 * 2 + 16 * 0.5 = 40.
TEST_CASE("dot_scaled: float scales and a scale group of 16") {
  std::vector<float> d = runScaled(R"(
    %a = arith.constant dense<34> : tensor<1x16xi8>
    %sa = arith.constant dense<[[2.0, 0.5]]> : tensor<1x2xf8E4M3FN>
    %b = arith.constant dense<1.0> : tensor<32x1xbf16>
    %c = arith.constant dense<0.0> : tensor<1x1xf32>
    %d = tt.dot_scaled %a scale %sa, %b, %c lhs = e2m1 rhs = bf16 {fastMath = false} : tensor<1x16xi8>, tensor<1x2xf8E4M3FN> * tensor<32x1xbf16> -> tensor<1x1xf32>)",
                                   1, 1);
  CHECK(d == std::vector<float>{40.0f});
}

// Two batches of 1x32x1 e4m3 x e4m3 ones with lhs scales [[[127]], [[130]]]: 32 and 256.
TEST_CASE("dot_scaled: batched operands and scales") {
  std::vector<float> d = runScaled(R"(
    %a8 = arith.constant dense<56> : tensor<2x1x32xi8>
    %a = tt.bitcast %a8 : tensor<2x1x32xi8> -> tensor<2x1x32xf8E4M3FN>
    %sa = arith.constant dense<[[[127]], [[-126]]]> : tensor<2x1x1xi8>
    %b8 = arith.constant dense<56> : tensor<2x32x1xi8>
    %b = tt.bitcast %b8 : tensor<2x32x1xi8> -> tensor<2x32x1xf8E4M3FN>
    %c3 = arith.constant dense<0.0> : tensor<2x1x1xf32>
    %d3 = tt.dot_scaled %a scale %sa, %b, %c3 lhs = e4m3 rhs = e4m3 {fastMath = false} : tensor<2x1x32xf8E4M3FN>, tensor<2x1x1xi8> * tensor<2x32x1xf8E4M3FN> -> tensor<2x1x1xf32>
    %d = tt.reshape %d3 : tensor<2x1x1xf32> -> tensor<2x1xf32>)",
                                   2, 1);
  CHECK(d == std::vector<float>{32.0f, 256.0f});
}

TEST_CASE("dot_scaled: operands that do not match their format are lowering errors") {
  auto error = [](const std::string &op) {
    return loweringError(
        "module {\n  tt.func public @k(%a: tensor<16x32xf16>, %b: tensor<32x16xf8E4M3FN>, "
        "%p: tensor<16x16xi8>, %q: tensor<8x1xi8>, %c: tensor<16x16xf32>) {\n    " +
        op + " loc(#at)\n    tt.return\n  }\n}\n#at = loc(\"k.py\":9:8)\n");
  };
  std::string e = error("%d = tt.dot_scaled %a, %b, %c lhs = e4m3 rhs = e4m3 {fastMath = false} : "
                        "tensor<16x32xf16> * tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>");
  CHECK(e.find("k.py:9:8") != std::string::npos);
  CHECK(e.find("lhs = e4m3 needs f8E4M3FN") != std::string::npos);
  e = error("%d = tt.dot_scaled %p, %b, %c lhs = e2m3 rhs = e4m3 {fastMath = false} : "
            "tensor<16x16xi8> * tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>");
  CHECK(e.find("fp6") != std::string::npos);
  e = error("%d = tt.dot_scaled %a, %b, %c lhs = fp16 rhs = e4m3 {fastMath = false, rhs_k_pack = "
            "false} : "
            "tensor<16x32xf16> * tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>");
  CHECK(e.find("only e2m1") != std::string::npos);
  e = error("%d = tt.dot_scaled %a scale %q, %b, %c lhs = fp16 rhs = e4m3 {fastMath = false} : "
            "tensor<16x32xf16>, tensor<8x1xi8> * tensor<32x16xf8E4M3FN> -> tensor<16x16xf32>");
  CHECK(e.find("lhs scale must be [16 x K/group]") != std::string::npos);
}
