//===- CompareTest.cpp - ulp distances, tolerances and buffer comparison of check --native ---===//
//
// Expected distances are counted by hand from the formats' bit layouts: a finite value's
// magnitude bits count the representable values up from zero, so neighbours differ by one, 1.0f
// (0x3F800000) and 2.0f (0x40000000) by 2^23, and values of opposite signs by the sum of their
// magnitudes. Decimal texts are the values' exact binary expansions, shortened by hand to the
// fewest digits that still round back (5 + 2^-21 = 5.000000476837158...: "5.0000005").
//
//===----------------------------------------------------------------------===//
#include "Compare.h"

#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <vector>

using namespace ttinterp;
using namespace ttinterp::driver;

namespace {

/// Bit patterns of `d` as little-endian element bytes.
std::vector<uint8_t> bytesOf(DType d, const std::vector<uint64_t> &bits) {
  std::vector<uint8_t> out(bits.size() * byteSize(d));
  for (size_t i = 0; i < bits.size(); ++i)
    std::memcpy(out.data() + i * byteSize(d), &bits[i], byteSize(d));
  return out;
}

bool match(DType d, uint64_t a, uint64_t b, const Tolerance &t = {}) {
  std::vector<uint8_t> x = bytesOf(d, {a}), y = bytesOf(d, {b});
  return elementsMatch(d, x.data(), y.data(), t);
}

std::string text(DType d, uint64_t bits) { return formatValue(d, bytesOf(d, {bits}).data()); }

Tolerance ulps(uint64_t n) {
  Tolerance t;
  t.ulp = n;
  return t;
}

} // namespace

TEST_CASE("compare: ulp distance of f32 neighbours, binades, signs and zeros") {
  CHECK(ulpDistance(DType::F32, 0x3F800000, 0x3F800001) == 1u);       // 1.0f and the next float up
  CHECK(ulpDistance(DType::F32, 0x3F800001, 0x3F800000) == 1u);       // symmetric
  CHECK(ulpDistance(DType::F32, 0x3F800000, 0x3F7FFFFF) == 1u);       // the float below 1.0f
  CHECK(ulpDistance(DType::F32, 0x3F7FFFFF, 0x3F800001) == 2u);       // across the binade boundary
  CHECK(ulpDistance(DType::F32, 0x3F800000, 0x40000000) == 8388608u); // 1 to 2: 2^23 floats
  CHECK(ulpDistance(DType::F32, 0x80000000, 0x00000000) == 0u);       // -0 and +0: one point
  CHECK(ulpDistance(DType::F32, 0x80000000, 0x00000001) == 1u); // -0 to the smallest subnormal
  CHECK(ulpDistance(DType::F32, 0x80000001, 0x00000001) == 2u); // -min through zero to +min
  CHECK(ulpDistance(DType::F32, 0xBF800000, 0x3F800000) == 2130706432u); // -1 to 1: 2 * 0x3F800000
  CHECK(ulpDistance(DType::F32, 0x40A00000, 0x40A80000) == 524288u);     // 5 to 5.25: 2^19
}

TEST_CASE("compare: NaN has no ulp distance, an infinity only to itself") {
  CHECK_FALSE(ulpDistance(DType::F32, 0x7FC00000, 0x7FC00000)); // NaN, even the same bits
  CHECK_FALSE(ulpDistance(DType::F32, 0x7FC00000, 0x3F800000));
  CHECK(ulpDistance(DType::F32, 0x7F800000, 0x7F800000) == 0u); // +inf, +inf
  CHECK_FALSE(ulpDistance(DType::F32, 0x7F800000, 0x7F7FFFFF)); // +inf, FLT_MAX: not close
  CHECK_FALSE(ulpDistance(DType::F32, 0x7F800000, 0xFF800000)); // +inf, -inf
}

TEST_CASE("compare: ulp distance in f64, f16, bf16 and the fp8 formats") {
  CHECK(ulpDistance(DType::F64, 0x3FF0000000000000, 0x3FF0000000000001) == 1u);
  // -DBL_MAX to DBL_MAX: twice the magnitude 0x7FEFFFFFFFFFFFFF, which still fits 64 bits.
  CHECK(ulpDistance(DType::F64, 0xFFEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF) == 0xFFDFFFFFFFFFFFFEu);
  CHECK(ulpDistance(DType::F16, 0x3C00, 0x3C01) == 1u);    // 1 and 1 + 2^-10
  CHECK(ulpDistance(DType::F16, 0x3C00, 0x4000) == 1024u); // 1 to 2: 2^10 halfs
  CHECK(ulpDistance(DType::BF16, 0x3F80, 0x3F81) == 1u);   // 1 and 1 + 2^-7
  CHECK(ulpDistance(DType::F8E4M3FN, 0x7D, 0x7E) == 1u);   // 416 and 448, the largest
  CHECK_FALSE(ulpDistance(DType::F8E4M3FN, 0x7E, 0x7F));   // 0x7F is NaN (no infinity)
  CHECK(ulpDistance(DType::F8E4M3FNUZ, 0x01, 0x00) == 1u);
  CHECK_FALSE(ulpDistance(DType::F8E4M3FNUZ, 0x80, 0x00)); // 0x80 is NaN, not -0
  CHECK(ulpDistance(DType::F8E5M2, 0xBC, 0x3C) == 120u);   // -1 to 1: 2 * 0x3C
  CHECK_FALSE(ulpDistance(DType::F8E5M2, 0x7B, 0x7C));     // 57344 and +inf
  CHECK(ulpDistance(DType::F8E5M2FNUZ, 0x7E, 0x7F) == 1u);
}

TEST_CASE("compare: default ulp bounds per dtype") {
  Tolerance t;
  CHECK(t.ulpFor(DType::F64) == 4);
  CHECK(t.ulpFor(DType::F32) == 8);
  CHECK(t.ulpFor(DType::F16) == 2);
  CHECK(t.ulpFor(DType::BF16) == 2);
  for (DType d : {DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2, DType::F8E5M2FNUZ})
    CHECK(t.ulpFor(d) == 1);
  CHECK(ulps(3).ulpFor(DType::F16) == 3); // --ulp applies to every float dtype
  CHECK(ulps(3).ulpFor(DType::F32) == 3);
}

TEST_CASE("compare: floats match within the ulp bound") {
  CHECK(match(DType::F32, 0x40A00000, 0x40A00001));       // 1 ulp, default 8
  CHECK(match(DType::F32, 0x40A00000, 0x40A00008));       // 8 ulp
  CHECK_FALSE(match(DType::F32, 0x40A00000, 0x40A00009)); // 9 ulp
  CHECK_FALSE(match(DType::F32, 0x40A00000, 0x40A00001, ulps(0)));
  CHECK(match(DType::F64, 0x3FF0000000000000, 0x3FF0000000000004));
  CHECK_FALSE(match(DType::F64, 0x3FF0000000000000, 0x3FF0000000000005));
  CHECK(match(DType::F16, 0x3C00, 0x3C02));
  CHECK_FALSE(match(DType::F16, 0x3C00, 0x3C03));
  CHECK(match(DType::F8E4M3FN, 0x38, 0x39)); // 1 and 1.125
  CHECK_FALSE(match(DType::F8E4M3FN, 0x38, 0x3A));

  std::optional<uint64_t> distance;
  std::vector<uint8_t> a = bytesOf(DType::F32, {0x40A00000}), b = bytesOf(DType::F32, {0x40A80000});
  CHECK_FALSE(elementsMatch(DType::F32, a.data(), b.data(), {}, &distance));
  CHECK(distance == 524288u);
}

TEST_CASE("compare: rtol and atol widen the float match") {
  // 5 and 5.25: |a - b| = 0.25, max(|a|, |b|) = 5.25.
  Tolerance t;
  t.rtol = 0.05; // 0.2625
  CHECK(match(DType::F32, 0x40A00000, 0x40A80000, t));
  t.rtol = 0.04; // 0.21
  CHECK_FALSE(match(DType::F32, 0x40A00000, 0x40A80000, t));
  t.rtol = 0;
  t.atol = 0.25; // exactly the difference
  CHECK(match(DType::F32, 0x40A00000, 0x40A80000, t));
  t.atol = 0.24;
  CHECK_FALSE(match(DType::F32, 0x40A00000, 0x40A80000, t));
  t.atol = 0.2;
  t.rtol = 0.01; // 0.2 + 0.0525
  CHECK(match(DType::F32, 0x40A00000, 0x40A80000, t));
}

TEST_CASE("compare: NaN equals NaN, -0 equals +0, infinities only themselves") {
  CHECK(match(DType::F32, 0x7FC00000, 0xFFC00001, ulps(0))); // payload and sign do not matter
  CHECK(match(DType::F16, 0x7E00, 0x7C01, ulps(0)));
  CHECK(match(DType::F8E4M3FN, 0x7F, 0xFF, ulps(0)));
  Tolerance loose;
  loose.rtol = 1e30;
  loose.atol = 1e30;
  CHECK_FALSE(match(DType::F32, 0x7FC00000, 0x3F800000, loose)); // NaN and 1
  CHECK(match(DType::F32, 0x80000000, 0x00000000, ulps(0)));     // -0 and +0
  CHECK(match(DType::F32, 0x7F800000, 0x7F800000, ulps(0)));
  CHECK_FALSE(match(DType::F32, 0x7F800000, 0xFF800000, loose));
  CHECK_FALSE(match(DType::F32, 0x7F800000, 0x7F7FFFFF, loose)); // inf is not near FLT_MAX
}

TEST_CASE("compare: integers, i1, pointers and the bitwise tolerance compare bits") {
  Tolerance loose;
  loose.ulp = 1000;
  loose.rtol = 1;
  loose.atol = 100;
  CHECK_FALSE(match(DType::I32, 1, 2, loose));
  CHECK(match(DType::I32, 0xFFFFFFFF, 0xFFFFFFFF, loose));
  CHECK_FALSE(match(DType::I8, 0x00, 0x80, loose));
  CHECK(match(DType::I1, 1, 1));
  CHECK_FALSE(match(DType::Ptr, 0x1000, 0x1008, loose));
  Tolerance exact;
  exact.bitwise = true;
  CHECK_FALSE(match(DType::F32, 0x80000000, 0x00000000, exact)); // -0 and +0 differ in bits
  CHECK_FALSE(match(DType::F32, 0x7FC00000, 0x7FC00001, exact));
  CHECK(match(DType::F32, 0x7FC00000, 0x7FC00000, exact));
}

TEST_CASE("compare: tolerance descriptions") {
  Tolerance t;
  CHECK(t.describe(DType::F32) == "within 8 ulp");
  CHECK(t.describe(DType::I32) == "bitwise");
  t.rtol = 1e-05;
  CHECK(t.describe(DType::BF16) == "within 2 ulp or |a - b| <= 0 + 1e-05 * max(|a|, |b|)");
  t.bitwise = true;
  CHECK(t.describe(DType::F32) == "bitwise");
}

TEST_CASE("compare: values print exactly, in the fewest digits that read back") {
  CHECK(text(DType::F32, 0x40A00000) == "5");
  CHECK(text(DType::F32, 0x40A00001) == "5.0000005"); // 5 + 2^-21
  CHECK(text(DType::F32, 0x40A80000) == "5.25");
  CHECK(text(DType::F32, 0x80000000) == "-0");
  CHECK(text(DType::F32, 0x7FC00000) == "nan");
  CHECK(text(DType::F32, 0xFF800000) == "-inf");
  CHECK(text(DType::F64, 0x3FF0000000000001) == "1.0000000000000002"); // 1 + 2^-52
  CHECK(text(DType::F16, 0x3C01) == "1.0009765625");                   // 1 + 2^-10
  CHECK(text(DType::BF16, 0x3F81) == "1.0078125");                     // 1 + 2^-7
  CHECK(text(DType::F8E4M3FN, 0x7E) == "448");
  CHECK(text(DType::I32, 0xFFFFFFF9) == "-7");
  CHECK(text(DType::I8, 0xFF) == "-1");
  CHECK(text(DType::I1, 1) == "1");
}

TEST_CASE("compare: C-order indices") {
  CHECK(unflatten(7, {2, 3, 4}) == std::vector<int64_t>{0, 1, 3});  // 0*12 + 1*4 + 3
  CHECK(unflatten(23, {2, 3, 4}) == std::vector<int64_t>{1, 2, 3}); // the last element
  CHECK(unflatten(5, {10}) == std::vector<int64_t>{5});
  CHECK(unflatten(0, {}).empty());
}

TEST_CASE("compare: buffers list the first non-matching elements with indices") {
  // 2x3 f32: a = 0..5; b has 4 -> the next float up (within tolerance) and 5 -> 6 (beyond).
  std::vector<uint8_t> a =
      bytesOf(DType::F32, {0x00000000, 0x3F800000, 0x40000000, 0x40400000, 0x40800000, 0x40A00000});
  std::vector<uint8_t> b =
      bytesOf(DType::F32, {0x00000000, 0x3F800000, 0x40000000, 0x40400000, 0x40800001, 0x40C00000});
  BufferComparison c = compareBuffers(DType::F32, {2, 3}, a.data(), b.data(), {}, 10);
  CHECK(c.elements == 6);
  CHECK(c.differing == 1);
  CHECK(c.inexact == 1);
  CHECK(c.maxUlp == 2097152); // 5 (0x40A00000) to 6 (0x40C00000): 0x200000
  REQUIRE(c.first.size() == 1);
  CHECK(c.first[0].index == std::vector<int64_t>{1, 2});
  CHECK(c.first[0].a == "5");
  CHECK(c.first[0].b == "6");
  CHECK(c.first[0].ulp == 2097152u);

  // The limit caps the listing, not the count.
  c = compareBuffers(DType::F32, {2, 3}, a.data(), b.data(), ulps(0), 1);
  CHECK(c.differing == 2);
  CHECK(c.inexact == 0);
  REQUIRE(c.first.size() == 1);
  CHECK(c.first[0].index == std::vector<int64_t>{1, 1});

  // Bytes an alias judges are left out: [16, 20) is element 4; [18, 22) touches 4 and 5.
  c = compareBuffers(DType::F32, {2, 3}, a.data(), b.data(), {}, 10, {{16, 20}});
  CHECK(c.elements == 5);
  CHECK(c.inexact == 0);
  CHECK(c.differing == 1);
  c = compareBuffers(DType::F32, {2, 3}, a.data(), b.data(), {}, 10, {{18, 22}});
  CHECK(c.elements == 4);
  CHECK(c.differing == 0);
}

TEST_CASE("compare: integer buffers under the bitwise tolerance") {
  std::vector<uint8_t> a = bytesOf(DType::I32, {1, 2, 3}), b = bytesOf(DType::I32, {1, 5, 3});
  Tolerance exact;
  exact.bitwise = true;
  BufferComparison c = compareBuffers(DType::I32, {3}, a.data(), b.data(), exact, 5);
  CHECK(c.differing == 1);
  REQUIRE(c.first.size() == 1);
  CHECK(c.first[0].index == std::vector<int64_t>{1});
  CHECK(c.first[0].a == "2");
  CHECK(c.first[0].b == "5");
  CHECK_FALSE(c.first[0].ulp);
}
