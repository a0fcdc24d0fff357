//===- ReduceOrderTest.cpp - tt.reduce's tree order, on every path ---------===//
//
// tt.reduce combines in a fixed tree (32 lanes, each folding its elements in
// order, then a butterfly; docs/semantics.md). Float sums show the order; the
// typed path (one op), the general path (a longer combine region) and a major
// axis must all follow it. Order-free combiners (wrapping integer ops, bitwise
// ops, max/min) must give their order-free result. Each expectation is the op's
// definition applied by a plain loop here, or worked out by hand.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// `@k(%in, %out)`: in[0, rows*length) as rows x length, reduced along the rows
/// with `op` (an arith op name, or a whole combine body over %a and %b), stored to
/// out[0, rows).
std::string reduceRowsKernel(const std::string &type, const std::string &op, int rows, int length) {
  return subst(R"(
module {
  tt.func public @k(%in: !tt.ptr<$T>, %out: !tt.ptr<$T>) {
    %range = tt.make_range {end = $N : i32, start = 0 : i32} : tensor<$Nxi32>
    %base = tt.splat %in : !tt.ptr<$T> -> tensor<$Nx!tt.ptr<$T>>
    %ptrs = tt.addptr %base, %range : tensor<$Nx!tt.ptr<$T>>, tensor<$Nxi32>
    %flat = tt.load %ptrs : tensor<$Nx!tt.ptr<$T>>
    %x = tt.reshape %flat : tensor<$Nx$T> -> tensor<$Rx$Lx$T>
    %m = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: $T, %b: $T):
      $COMBINE
    }) : (tensor<$Rx$Lx$T>) -> tensor<$Rx$T>
    %rowRange = tt.make_range {end = $R : i32, start = 0 : i32} : tensor<$Rxi32>
    %outBase = tt.splat %out : !tt.ptr<$T> -> tensor<$Rx!tt.ptr<$T>>
    %outPtrs = tt.addptr %outBase, %rowRange : tensor<$Rx!tt.ptr<$T>>, tensor<$Rxi32>
    tt.store %outPtrs, %m : tensor<$Rx!tt.ptr<$T>>
    tt.return
  }
}
)",
               {{"$COMBINE", op.find('%') == std::string::npos
                                 ? "%s = " + op + " %a, %b : $T\n      tt.reduce.return %s : $T"
                                 : op},
                {"$T", type},
                {"$N", std::to_string(rows * length)},
                {"$R", std::to_string(rows)},
                {"$L", std::to_string(length)}});
}

template <class T>
std::vector<T> reduceRows(const std::string &type, DType dtype, const std::string &op,
                          std::vector<T> in, int rows) {
  int length = int(in.size()) / rows;
  LoadedKernel k = loadKernel(reduceRowsKernel(type, op, rows, length));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<T> out(size_t(rows), T(0));
  LaunchResult r =
      launch(*k.kernel, {pointer("in", viewOf(in, dtype)), pointer("out", viewOf(out, dtype))},
             {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}

/// Row r of `in` (rows of equal length).
template <class T> std::vector<T> row(const std::vector<T> &in, int rows, int r) {
  size_t length = in.size() / size_t(rows);
  return std::vector<T>(in.begin() + long(r * length), in.begin() + long((r + 1) * length));
}

uint32_t bitsOf(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}
float floatOf(uint32_t b) {
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}

/// 3 rows of 37 i32 values spread over the whole range (a fixed LCG).
std::vector<int32_t> wideInts() {
  std::vector<int32_t> v(3 * 37);
  uint32_t state = 12345;
  for (int32_t &x : v) {
    state = state * 1664525u + 1013904223u;
    x = int32_t(state);
  }
  return v;
}

} // namespace

TEST_CASE("integer reductions over long rows wrap as the left fold does") {
  std::vector<int32_t> in = wideInts();
  SUBCASE("addi") {
    std::vector<int32_t> out = reduceRows<int32_t>("i32", DType::I32, "arith.addi", in, 3);
    for (int r = 0; r < 3; ++r) {
      uint32_t sum = 0; // unsigned: wraps modulo 2^32, as two's complement does
      for (int32_t x : row(in, 3, r))
        sum += uint32_t(x);
      CHECK(out[size_t(r)] == int32_t(sum));
    }
  }
  SUBCASE("maxsi and minui") {
    std::vector<int32_t> mx = reduceRows<int32_t>("i32", DType::I32, "arith.maxsi", in, 3);
    std::vector<int32_t> mn = reduceRows<int32_t>("i32", DType::I32, "arith.minui", in, 3);
    for (int r = 0; r < 3; ++r) {
      int32_t best = std::numeric_limits<int32_t>::min();
      uint32_t least = std::numeric_limits<uint32_t>::max();
      for (int32_t x : row(in, 3, r)) {
        best = std::max(best, x);
        least = std::min(least, uint32_t(x));
      }
      CHECK(mx[size_t(r)] == best);
      CHECK(uint32_t(mn[size_t(r)]) == least);
    }
  }
  SUBCASE("xori on i64") {
    std::vector<int64_t> wide(2 * 21);
    for (size_t i = 0; i < wide.size(); ++i)
      wide[i] = int64_t(uint64_t(in[i]) << 32 | uint32_t(in[i + 50]));
    std::vector<int64_t> out = reduceRows<int64_t>("i64", DType::I64, "arith.xori", wide, 2);
    for (int r = 0; r < 2; ++r) {
      int64_t x = 0;
      for (int64_t v : row(wide, 2, r))
        x ^= v;
      CHECK(out[size_t(r)] == x);
    }
  }
  SUBCASE("muli on i8: 3^19 * (-1) modulo 256") {
    // Nineteen 3s and one -1: 3^19 = 1162261467 = 0x4546B3DB, low byte 0xDB = -37; times -1: 37.
    std::vector<int8_t> v(20, 3);
    v[11] = -1;
    std::vector<int8_t> out = reduceRows<int8_t>("i8", DType::I8, "arith.muli", v, 1);
    CHECK(int(out[0]) == 37);
  }
}

TEST_CASE("float max and min over long rows: NaN rules and zero ordering survive the tree") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  SUBCASE("maxnumf ignores NaN wherever it sits; maximumf returns it") {
    // Row 0: NaN first; row 1: NaN last; row 2: no NaN. 23 values per row.
    std::vector<float> in(3 * 23);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = float(int(i * 7 % 23) - 11) * 0.5f; // -5.5 .. 5.5, each value once per row
    in[0] = nan;
    in[2 * 23 - 1] = nan;
    std::vector<float> num = reduceRows<float>("f32", DType::F32, "arith.maxnumf", in, 3);
    std::vector<float> imum = reduceRows<float>("f32", DType::F32, "arith.maximumf", in, 3);
    std::vector<float> minNum = reduceRows<float>("f32", DType::F32, "arith.minnumf", in, 3);
    // Row 0 lost i = 0 (value -5.5); row 1 lost i = 45, whose value is (45*7 % 23 - 11) / 2 = 2.5.
    CHECK(num[0] == 5.5f);
    CHECK(num[1] == 5.5f);
    CHECK(num[2] == 5.5f);
    CHECK(minNum[0] == -5.0f);
    CHECK(minNum[1] == -5.5f);
    CHECK(minNum[2] == -5.5f);
    CHECK(std::isnan(imum[0]));
    CHECK(std::isnan(imum[1]));
    CHECK(imum[2] == 5.5f);
  }
  SUBCASE("+0 beats -0 in maxnumf and -0 beats +0 in minnumf, at any position") {
    std::vector<float> maxIn(40, -0.0f), minIn(40, 0.0f);
    maxIn[29] = 0.0f;
    minIn[17] = -0.0f;
    float mx = reduceRows<float>("f32", DType::F32, "arith.maxnumf", maxIn, 1)[0];
    float mn = reduceRows<float>("f32", DType::F32, "arith.minnumf", minIn, 1)[0];
    CHECK(mx == 0.0f);
    CHECK_FALSE(std::signbit(mx));
    CHECK(mn == 0.0f);
    CHECK(std::signbit(mn));
  }
  SUBCASE("maxnumf of only NaNs is the NaN the reduction tree ends with") {
    // maxnum(NaN a, NaN b) is b, so each butterfly step (lane l with lane l + w)
    // keeps the partner's payload. Element i (payload i + 1) starts in lane i.
    // w = 16: lanes 0..10 take 17..27 (lanes 11..15 keep 12..16); w = 8: lanes 0..7
    // take lanes 8..15's: 25, 26, 27, 12, 13, 14, 15, 16; w = 4: lanes 0..3 take
    // 13, 14, 15, 16; w = 2: lanes 0, 1 take 15, 16; w = 1: lane 0 takes 16.
    std::vector<float> in(27);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = floatOf(0x7FC00000u | uint32_t(i + 1));
    float out = reduceRows<float>("f32", DType::F32, "arith.maxnumf", in, 1)[0];
    CHECK(bitsOf(out) == (0x7FC00000u | 16u));
  }
}

TEST_CASE("selecting reductions over wide rows give the order-free answer, and NaN rows the tree's") {
  // max/min pick one element, so over rows of numbers the result is fixed whatever the
  // combining order: the greatest (least) value, +0 above -0. Expectations here come
  // from that definition applied by a plain scan (not the tree), on rows long enough
  // to take every vector path: 1024, 1000 and 37 (ragged tails past four and one vector's
  // worth, at any vector width) and 2.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto greatest = [](const std::vector<float> &r) {
    float best = -std::numeric_limits<float>::infinity();
    bool any = false;
    for (float v : r)
      if (!std::isnan(v) && (!any || v > best || (v == best && !std::signbit(v)))) {
        best = v;
        any = true;
      }
    return best;
  };
  auto least = [](const std::vector<float> &r) {
    float best = std::numeric_limits<float>::infinity();
    bool any = false;
    for (float v : r)
      if (!std::isnan(v) && (!any || v < best || (v == best && std::signbit(v)))) {
        best = v;
        any = true;
      }
    return best;
  };
  for (int length : {1024, 1000, 37, 2}) {
    CAPTURE(length);
    const int rows = 7;
    std::vector<float> in(size_t(rows * length));
    uint32_t state = 777;
    for (float &x : in) {
      state = state * 1664525u + 1013904223u;
      x = float(int32_t(state >> 8) % 20000 - 10000) * 0.25f; // -2500 .. 2500
    }
    auto at = [&](int r, int i) -> float & { return in[size_t(r * length + i % length)]; };
    // Row 0: numbers only. Row 1: NaNs (one signalling) among negative numbers.
    for (int i = 0; i < length; ++i)
      at(1, i) = -std::fabs(at(1, i)) - 1.0f;
    at(1, 3) = nan;
    at(1, length - 1) = floatOf(0x7F800001u); // a signalling NaN
    // Row 2: zeros of both signs only. Row 3: -0 everywhere but one +0 late.
    for (int i = 0; i < length; ++i) {
      at(2, i) = (i % 3) ? -0.0f : 0.0f;
      at(3, i) = -0.0f;
    }
    at(3, length - 2) = 0.0f;
    // Row 4: infinities of both signs among numbers. Row 5: one number among NaNs.
    at(4, 1) = -std::numeric_limits<float>::infinity();
    at(4, length / 2) = std::numeric_limits<float>::infinity();
    for (int i = 0; i < length; ++i)
      at(5, i) = floatOf(0x7FC00000u | uint32_t(i + 1));
    at(5, length / 3) = -7.5f;
    // Row 6: numbers with zeros of both signs, the extremes in the last element and the first.
    at(6, 1) = 0.0f;
    at(6, 2) = -0.0f;
    at(6, 0) = -3000.0f;
    at(6, length - 1) = 3000.0f;

    std::vector<float> mx = reduceRows<float>("f32", DType::F32, "arith.maxnumf", in, rows);
    std::vector<float> mn = reduceRows<float>("f32", DType::F32, "arith.minnumf", in, rows);
    std::vector<float> mxm = reduceRows<float>("f32", DType::F32, "arith.maximumf", in, rows);
    std::vector<float> mnm = reduceRows<float>("f32", DType::F32, "arith.minimumf", in, rows);
    for (int r = 0; r < rows; ++r) {
      CAPTURE(r);
      std::vector<float> values = row(in, rows, r);
      CHECK(bitsOf(mx[size_t(r)]) == bitsOf(greatest(values)));
      CHECK(bitsOf(mn[size_t(r)]) == bitsOf(least(values)));
      bool anyNaN = std::any_of(values.begin(), values.end(), [](float v) { return std::isnan(v); });
      // maximumf/minimumf: a NaN anywhere gives the canonical quiet NaN (each combine makes it).
      CHECK(bitsOf(mxm[size_t(r)]) == (anyNaN ? 0x7FC00000u : bitsOf(greatest(values))));
      CHECK(bitsOf(mnm[size_t(r)]) == (anyNaN ? 0x7FC00000u : bitsOf(least(values))));
    }
    // Hand-checked anchors: row 3's one +0, row 5's one number.
    CHECK_FALSE(std::signbit(mx[3]));
    CHECK(std::signbit(mn[3]));
    CHECK(mx[5] == -7.5f);
    CHECK(mn[5] == -7.5f);
    CHECK(mx[6] == 3000.0f);
    CHECK(mn[6] == -3000.0f);
  }
  SUBCASE("a row of one element is returned as it is: no combine canonicalises its NaN") {
    std::vector<float> one{floatOf(0x7FC00005u)};
    CHECK(bitsOf(reduceRows<float>("f32", DType::F32, "arith.maximumf", one, 1)[0]) == 0x7FC00005u);
  }
  SUBCASE("f64 rows: the same rules") {
    std::vector<double> in(300);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = double(int(i * 37 % 300) - 150) / 8.0; // -18.75 .. 18.625, each once
    in[10] = std::numeric_limits<double>::quiet_NaN();
    CHECK(reduceRows<double>("f64", DType::F64, "arith.maxnumf", in, 1)[0] == 149.0 / 8.0);
    CHECK(reduceRows<double>("f64", DType::F64, "arith.minnumf", in, 1)[0] == -150.0 / 8.0);
    CHECK(std::isnan(reduceRows<double>("f64", DType::F64, "arith.maximumf", in, 1)[0]));
  }
}

TEST_CASE("float sums follow the documented tree: lanes first, then the butterfly") {
  // 33 elements: 2^24, then 31 ones, then -2^24. Lane 0 holds elements 0 and 32,
  // whose sum is exactly 0; lanes 1..31 hold one 1 each; the butterfly adds
  // integers below 2^24 exactly: 31. (A left fold would lose every 1 against
  // 2^24, rounding to even, and give 0.)
  std::vector<float> in(33, 1.0f);
  in[0] = 16777216.0f;
  in[32] = -16777216.0f;
  SUBCASE("typed path") {
    CHECK(reduceRows<float>("f32", DType::F32, "arith.addf", in, 1)[0] == 31.0f);
  }
  SUBCASE("general path (a combine region of two ops)") {
    std::string body = "%s = arith.addf %a, %b : f32\n"
                       "      %zero = arith.constant 0.0 : f32\n"
                       "      %t = arith.addf %s, %zero : f32\n"
                       "      tt.reduce.return %t : f32";
    CHECK(reduceRows<float>("f32", DType::F32, body, in, 1)[0] == 31.0f);
  }
  SUBCASE("a major axis: every column reduced by the same tree") {
    // in2 is 33 x 2, both columns the sequence above (the second negated).
    std::vector<float> in2(66);
    for (size_t j = 0; j < 33; ++j) {
      in2[2 * j] = in[j];
      in2[2 * j + 1] = -in[j];
    }
    LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%in: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %range = tt.make_range {end = 66 : i32, start = 0 : i32} : tensor<66xi32>
    %base = tt.splat %in : !tt.ptr<f32> -> tensor<66x!tt.ptr<f32>>
    %ptrs = tt.addptr %base, %range : tensor<66x!tt.ptr<f32>>, tensor<66xi32>
    %flat = tt.load %ptrs : tensor<66x!tt.ptr<f32>>
    %x = tt.reshape %flat : tensor<66xf32> -> tensor<33x2xf32>
    %m = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<33x2xf32>) -> tensor<2xf32>
    %r2 = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<2x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r2 : tensor<2x!tt.ptr<f32>>, tensor<2xi32>
    tt.store %op, %m : tensor<2x!tt.ptr<f32>>
    tt.return
  }
}
)");
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<float> out(2, 0.0f);
    LaunchResult r = launch(*k.kernel,
                            {pointer("in", viewOf(in2, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                            {ptrArg(0), ptrArg(1)}, {1, 1, 1});
    REQUIRE_FALSE(r.fault);
    CHECK(out == std::vector<float>{31.0f, -31.0f});
  }
}

TEST_CASE("rows shorter than the tree's 32 lanes combine in the butterfly's order") {
  // A row of 12: lanes 0..11 hold one element each. The butterfly (docs/semantics.md)
  // combines lane l with l + 8 for l < 4 (lanes 8..11 are the only ones past 8),
  // then l with l + 4, l + 2, l + 1. Elements 0 and 8 are 2^24 and -2^24, the other ten
  // are ones: lane 0 becomes exactly 0 before any 1 meets 2^24, so the sum is 10.
  // Pairing 0 with any other lane first loses a 1 against 2^24 (ties to even), and a
  // left fold gives 3.
  std::vector<double> row12(12, 1.0);
  row12[0] = 16777216.0;
  row12[8] = -16777216.0;
  // Row 2 reaches lane 8 from the other side: -2^24 at 0, 2^24 at 8; row 3 puts the pair
  // at lanes 3 and 11, the last pair the first step combines.
  std::vector<double> row12b = row12;
  std::swap(row12b[0], row12b[8]);
  std::vector<double> row12c(12, 1.0);
  row12c[3] = 16777216.0;
  row12c[11] = -16777216.0;
  std::vector<double> rows = row12;
  rows.insert(rows.end(), row12b.begin(), row12b.end());
  rows.insert(rows.end(), row12c.begin(), row12c.end());
  SUBCASE("f32 (the per-ISA row reduction)") {
    std::vector<float> in(rows.begin(), rows.end());
    CHECK(reduceRows<float>("f32", DType::F32, "arith.addf", in, 3) ==
          std::vector<float>{10.0f, 10.0f, 10.0f});
  }
  SUBCASE("f64") {
    // 2^53 in f64: the same cancellation one precision up.
    std::vector<double> in = rows;
    for (double &v : in)
      if (std::abs(v) > 2)
        v = std::copysign(9007199254740992.0, v);
    CHECK(reduceRows<double>("f64", DType::F64, "arith.addf", in, 3) ==
          std::vector<double>{10.0, 10.0, 10.0});
  }
  SUBCASE("a product of three: lane 0 meets lane 2 first") {
    // Length 3: only w = 2 (0 with 2) and w = 1 (0 with 1) have partners present:
    // (2^100 * 2^-100) * 2^100 = 2^100, where a left fold overflows to infinity.
    std::vector<float> in = {std::ldexp(1.0f, 100), std::ldexp(1.0f, 100), std::ldexp(1.0f, -100)};
    CHECK(reduceRows<float>("f32", DType::F32, "arith.mulf", in, 1)[0] == std::ldexp(1.0f, 100));
  }
  SUBCASE("every length from 1 to 31 sums small integers exactly") {
    for (int length = 1; length < 32; ++length) {
      CAPTURE(length);
      std::vector<float> in(size_t(2 * length));
      for (int i = 0; i < 2 * length; ++i)
        in[size_t(i)] = float(i + 1);
      // Row 0 holds 1..length, row 1 holds length+1..2*length.
      float first = float(length * (length + 1) / 2);
      float second = float(length * (3 * length + 1) / 2);
      CHECK(reduceRows<float>("f32", DType::F32, "arith.addf", in, 2) ==
            std::vector<float>{first, second});
    }
  }
}
