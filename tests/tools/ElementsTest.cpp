//===- ElementsTest.cpp - Narrow float encodings, integer wrapping, buffer inits -----===//
//
// Expected bit patterns come from the formats' definitions (IEEE 754 binary16, bfloat16,
// and the OCP / FNUZ fp8 formats), worked out by hand, not from the code under test.
//
//===----------------------------------------------------------------------===//
#include "Elements.h"
#include "Buffers.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace ttinterp;
using namespace ttinterp::driver;

TEST_CASE("f16 encoding rounds to nearest even and overflows to infinity") {
  CHECK(encodeFloat(DType::F16, 1.0) == 0x3C00);
  CHECK(encodeFloat(DType::F16, -2.0) == 0xC000);
  CHECK(encodeFloat(DType::F16, 65504.0) == 0x7BFF);           // largest finite
  CHECK(encodeFloat(DType::F16, 65519.0) == 0x7BFF);           // below the halfway point
  CHECK(encodeFloat(DType::F16, 65520.0) == 0x7C00);           // halfway: to even, i.e. infinity
  CHECK(encodeFloat(DType::F16, 1.0 + 0x1p-11) == 0x3C00);     // tie: mantissa 0 is even
  CHECK(encodeFloat(DType::F16, 1.0 + 3 * 0x1p-11) == 0x3C02); // tie: up to even mantissa 2
  CHECK(encodeFloat(DType::F16, 0x1p-24) == 0x0001);           // smallest subnormal
  CHECK(encodeFloat(DType::F16, 0x1p-25) == 0x0000);           // tie between 0 and 2^-24: 0
  CHECK(encodeFloat(DType::F16, 1.5 * 0x1p-25) == 0x0001);
  CHECK(encodeFloat(DType::F16, 0x1p-14) == 0x0400); // smallest normal
  CHECK(encodeFloat(DType::F16, -0.0) == 0x8000);
  CHECK(encodeFloat(DType::F16, HUGE_VAL) == 0x7C00);
  uint64_t nan = encodeFloat(DType::F16, std::nan(""));
  CHECK((nan & 0x7C00) == 0x7C00);
  CHECK((nan & 0x03FF) != 0);
  // Rounding straight from double: 1 + 2^-11 + 2^-40 is just above the tie, so it rounds
  // up (going through float first would lose the 2^-40 and round down to even).
  CHECK(encodeFloat(DType::F16, 1.0 + 0x1p-11 + 0x1p-40) == 0x3C01);
}

TEST_CASE("bf16 encoding") {
  CHECK(encodeFloat(DType::BF16, 1.0) == 0x3F80);
  CHECK(encodeFloat(DType::BF16, 3.140625) == 0x4049);
  CHECK(encodeFloat(DType::BF16, 1.0 + 0x1p-8) == 0x3F80);     // tie to even
  CHECK(encodeFloat(DType::BF16, 1.0 + 3 * 0x1p-8) == 0x3F82); // tie to even
  CHECK(encodeFloat(DType::BF16, -HUGE_VAL) == 0xFF80);
  CHECK(decodeFloat(DType::BF16, 0x7F7F) == largestFinite(DType::BF16));
  CHECK(largestFinite(DType::BF16) == 0x1.FEp127);
}

TEST_CASE("fp8 encodings follow each format's limits and special values") {
  // e4m3fn: bias 7, no infinity, S.1111.111 is NaN, largest 1.75 * 2^8 = 448.
  CHECK(encodeFloat(DType::F8E4M3FN, 1.0) == 0x38);
  CHECK(encodeFloat(DType::F8E4M3FN, -1.0) == 0xB8);
  CHECK(encodeFloat(DType::F8E4M3FN, 448.0) == 0x7E);
  CHECK(encodeFloat(DType::F8E4M3FN, 464.0) == 0x7E); // tie between 448 (even) and 480
  CHECK(encodeFloat(DType::F8E4M3FN, 480.0) == 0x7F); // beyond 448: NaN, no saturation
  CHECK(encodeFloat(DType::F8E4M3FN, 0x1p-9) == 0x01);
  CHECK(std::isnan(decodeFloat(DType::F8E4M3FN, 0x7F)));
  CHECK(largestFinite(DType::F8E4M3FN) == 448.0);
  // e4m3fnuz: bias 8, largest 1.875 * 2^7 = 240, NaN is 0x80, no negative zero.
  CHECK(encodeFloat(DType::F8E4M3FNUZ, 1.0) == 0x40);
  CHECK(encodeFloat(DType::F8E4M3FNUZ, 240.0) == 0x7F);
  CHECK(encodeFloat(DType::F8E4M3FNUZ, -0.0) == 0x00);
  CHECK(encodeFloat(DType::F8E4M3FNUZ, 1000.0) == 0x80);
  CHECK(std::isnan(decodeFloat(DType::F8E4M3FNUZ, 0x80)));
  CHECK(decodeFloat(DType::F8E4M3FNUZ, 0x01) == 0x1p-10);
  // e5m2: IEEE-like, bias 15, largest 1.75 * 2^15 = 57344.
  CHECK(encodeFloat(DType::F8E5M2, 1.0) == 0x3C);
  CHECK(encodeFloat(DType::F8E5M2, 57344.0) == 0x7B);
  CHECK(encodeFloat(DType::F8E5M2, 61440.0) == 0x7C); // tie rounds to even = 2^16: infinity
  CHECK(encodeFloat(DType::F8E5M2, -HUGE_VAL) == 0xFC);
  // e5m2fnuz: bias 16, largest 57344, NaN 0x80.
  CHECK(encodeFloat(DType::F8E5M2FNUZ, 1.0) == 0x40);
  CHECK(encodeFloat(DType::F8E5M2FNUZ, 57344.0) == 0x7F);
  CHECK(encodeFloat(DType::F8E5M2FNUZ, HUGE_VAL) == 0x80);
}

TEST_CASE("every non-NaN narrow float decodes and re-encodes to itself") {
  for (DType d : {DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2, DType::F8E5M2FNUZ}) {
    for (uint64_t bits = 0; bits < 256; ++bits) {
      double v = decodeFloat(d, bits);
      if (!std::isnan(v))
        CHECK_MESSAGE(encodeFloat(d, v) == bits, name(d) << " " << bits);
    }
  }
  for (DType d : {DType::F16, DType::BF16}) {
    int mismatches = 0;
    for (uint64_t bits = 0; bits < 65536; ++bits) {
      double v = decodeFloat(d, bits);
      if (!std::isnan(v) && encodeFloat(d, v) != bits)
        ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("integer ranges and wrapping") {
  CHECK(integerMin(DType::I8) == -128);
  CHECK(integerMax(DType::I8) == 255);
  CHECK(integerMin(DType::I1) == 0);
  CHECK(integerMax(DType::I1) == 1);
  CHECK(integerMin(DType::I64) == std::numeric_limits<int64_t>::min());
  CHECK(integerMax(DType::I64) == std::numeric_limits<uint64_t>::max());
  CHECK(wrapInteger(DType::I8, 200) == -56);
  CHECK(wrapInteger(DType::I16, 65536 + 5) == 5);
  CHECK(wrapInteger(DType::I1, 3) == 1);
}

TEST_CASE("splitmix64 from seed 0 gives the published sequence") {
  uint64_t state = 0;
  CHECK(splitmix64(state) == 0xE220A8397B1DCDAFull);
  CHECK(splitmix64(state) == 0x6E789E6AA1B965F4ull);
  CHECK(splitmix64(state) == 0x06C45D188009454Full);
}

namespace {
BufferSpec buffer(DType d, int64_t n, InitKind init) {
  BufferSpec b;
  b.name = "b";
  b.dtype = d;
  b.shape = {n};
  b.numElements = n;
  b.byteSize = uint64_t(n) * byteSize(d);
  b.init = init;
  return b;
}
} // namespace

TEST_CASE("arange converts indices to the dtype") {
  SUBCASE("f16 rounds indices above 2048 to even") {
    BufferSpec b = buffer(DType::F16, 2052, InitKind::Arange);
    std::vector<uint8_t> data(b.byteSize);
    fillBuffer(b, data.data());
    auto at = [&](int i) { return loadAsDouble(DType::F16, data.data() + 2 * i); };
    CHECK(at(3) == 3.0);
    CHECK(at(2048) == 2048.0);
    CHECK(at(2049) == 2048.0); // tie between 2048 and 2050: even mantissa
    CHECK(at(2051) == 2052.0);
  }
  SUBCASE("i8 wraps") {
    BufferSpec b = buffer(DType::I8, 300, InitKind::Arange);
    std::vector<uint8_t> data(b.byteSize);
    fillBuffer(b, data.data());
    CHECK(int8_t(data[127]) == 127);
    CHECK(int8_t(data[200]) == -56);
    CHECK(int8_t(data[256]) == 0);
  }
  SUBCASE("i1 is index != 0") {
    BufferSpec b = buffer(DType::I1, 3, InitKind::Arange);
    std::vector<uint8_t> data(b.byteSize);
    fillBuffer(b, data.data());
    CHECK(data == std::vector<uint8_t>{0, 1, 1});
  }
}

TEST_CASE("uniform f64 over a range wider than the largest double stays finite") {
  // hi - lo = 2 * DBL_MAX overflows to inf; element i must still be about lo + u_i * (hi - lo)
  // = DBL_MAX * (2 u_i - 1), with u_i as in "fill and uniform inits" (seed 0).
  constexpr double kMax = std::numeric_limits<double>::max();
  BufferSpec uni = buffer(DType::F64, 3, InitKind::Uniform);
  uni.low = -kMax;
  uni.high = kMax;
  std::vector<double> reals(3);
  fillBuffer(uni, reinterpret_cast<uint8_t *>(reals.data()));
  const double u[3] = {0.8833108082136426, 0.43152799704850997, 0.026433771592597743};
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(std::isfinite(reals[i]));
    CHECK(reals[i] == doctest::Approx(kMax * (2 * u[i] - 1)).epsilon(1e-12));
  }
}

TEST_CASE("fill and uniform inits") {
  BufferSpec fill = buffer(DType::I32, 3, InitKind::Fill);
  fill.fill.integer = -7;
  std::vector<int32_t> ints(3);
  fillBuffer(fill, reinterpret_cast<uint8_t *>(ints.data()));
  CHECK(ints == std::vector<int32_t>{-7, -7, -7});

  // Element i is lo + u_i * (hi - lo) with u_i = (splitmix64 output i >> 11) * 2^-53.
  // For seed 0: u = 0.8833108082136426, 0.43152799704850997, 0.026433771592597743.
  BufferSpec uni = buffer(DType::F64, 3, InitKind::Uniform);
  uni.low = -1;
  uni.high = 2;
  std::vector<double> reals(3);
  fillBuffer(uni, reinterpret_cast<uint8_t *>(reals.data()));
  CHECK(reals[0] == 1.649932424640928);
  CHECK(reals[1] == 0.2945839911455299);
  CHECK(reals[2] == -0.9206986852222068);

  uni.dtype = DType::F32;
  uni.byteSize = 12;
  std::vector<float> floats(3);
  fillBuffer(uni, reinterpret_cast<uint8_t *>(floats.data()));
  CHECK(floats[0] == 1.6499324f);

  // Integers: lo + floor(u * (hi - lo)) in [lo, hi).
  BufferSpec dice = buffer(DType::I64, 3, InitKind::Uniform);
  dice.low = 0;
  dice.high = 10;
  std::vector<int64_t> rolls(3);
  fillBuffer(dice, reinterpret_cast<uint8_t *>(rolls.data()));
  CHECK(rolls == std::vector<int64_t>{8, 4, 0});
}

TEST_CASE("formatElement prints integers exactly and floats briefly") {
  int32_t i = -42;
  CHECK(formatElement(DType::I32, reinterpret_cast<uint8_t *>(&i)) == "-42");
  float f = 0.1f;
  CHECK(formatElement(DType::F32, reinterpret_cast<uint8_t *>(&f)) == "0.1");
  uint8_t e4 = 0x38;
  CHECK(formatElement(DType::F8E4M3FN, &e4) == "1");
}
