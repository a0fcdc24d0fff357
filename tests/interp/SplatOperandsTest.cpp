//===- SplatOperandsTest.cpp - Elementwise ops reading a splat's scalar ---===//
//
// `x - splat(mean)`, `offsets < splat(n)`, `ptrs + splat(step)`: a tt.splat whose
// every user can read the scalar is never written out as a block (OpTable's
// scalar operands). These kernels put the splat on either side, on both, or
// also where the block is needed, and check values worked out by hand (IEEE
// rounding of the one operation, two's-complement wrap, the documented shift
// rule).
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// out[i] = BODY over x[i] (%v) and the scalar %s splat as %ss, 8 lanes of type T.
///   @k(%x: !tt.ptr<T>, %out: !tt.ptr<T>, %s: T)
std::string elementwiseTTIR(const std::string &type, const std::string &body,
                            const std::string &resultType = "") {
  std::string rt = resultType.empty() ? type : resultType;
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<$T>, %out: !tt.ptr<$R>, %s: $T) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<$T> -> tensor<8x!tt.ptr<$T>>
    %xp = tt.addptr %xb, %r : tensor<8x!tt.ptr<$T>>, tensor<8xi32>
    %v = tt.load %xp : tensor<8x!tt.ptr<$T>>
    %ss = tt.splat %s : $T -> tensor<8x$T>
$BODY
    %ob = tt.splat %out : !tt.ptr<$R> -> tensor<8x!tt.ptr<$R>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<$R>>, tensor<8xi32>
    tt.store %op, %y : tensor<8x!tt.ptr<$R>>
    tt.return
  }
}
)",
               {{"$BODY", body}, {"$T", type}, {"$R", rt}});
}

LoadedKernel lowered(const std::string &ttir) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return k;
}

/// Runs an elementwiseTTIR kernel over x with scalar s; returns out.
template <class T, class R = T>
std::vector<R> run(const std::string &ttir, std::vector<T> x, DType dtype,
                   interp::ArgumentValue s, DType resultDtype, uint64_t maxSteps = 0) {
  LoadedKernel k = lowered(ttir);
  std::vector<R> out(x.size(), R(99));
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, dtype)), pointer("out", viewOf(out, resultDtype))},
                          {ptrArg(0), ptrArg(1), s}, {1, 1, 1}, 1, maxSteps);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}

const std::vector<float> kOneToEight{1, 2, 3, 4, 5, 6, 7, 8};

} // namespace

TEST_CASE("splat operands: float ops with the splat on either side") {
  CHECK(run<float>(elementwiseTTIR("f32", "    %y = arith.subf %v, %ss : tensor<8xf32>"),
                   kOneToEight, DType::F32, floatArg(0.5), DType::F32) ==
        std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f});
  CHECK(run<float>(elementwiseTTIR("f32", "    %y = arith.subf %ss, %v : tensor<8xf32>"),
                   kOneToEight, DType::F32, floatArg(0.5), DType::F32) ==
        std::vector<float>{-0.5f, -1.5f, -2.5f, -3.5f, -4.5f, -5.5f, -6.5f, -7.5f});
  // 1 / x, each quotient correctly rounded to f32 (C++ float division is IEEE too).
  std::vector<float> reciprocals;
  for (float v : kOneToEight)
    reciprocals.push_back(1.0f / v);
  CHECK(run<float>(elementwiseTTIR("f32", "    %y = arith.divf %ss, %v : tensor<8xf32>"),
                   kOneToEight, DType::F32, floatArg(1.0), DType::F32) == reciprocals);
}

TEST_CASE("splat operands: f16 rounds after the op, as without the splat") {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even, 1 (0x3C00).
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties to even, 1 + 2^-9 (0x3C02).
  // 2^-11 is 0x1000, 3 * 2^-11 is 0x1600; 1 + 0 is exact.
  std::vector<uint16_t> x{0x1000, 0x1600, 0x0000, 0x1000, 0x1600, 0x0000, 0x1000, 0x1600};
  std::vector<uint16_t> expected{0x3C00, 0x3C02, 0x3C00, 0x3C00, 0x3C02, 0x3C00, 0x3C00, 0x3C02};
  CHECK(run<uint16_t>(elementwiseTTIR("f16", "    %y = arith.addf %ss, %v : tensor<8xf16>"), x,
                      DType::F16, floatArg(1.0), DType::F16) == expected);
  CHECK(run<uint16_t>(elementwiseTTIR("f16", "    %y = arith.addf %v, %ss : tensor<8xf16>"), x,
                      DType::F16, floatArg(1.0), DType::F16) == expected);
}

TEST_CASE("splat operands: integers wrap and shift by a splatted amount") {
  std::vector<int32_t> x{1, 2, 3, -1, 0, 7, INT32_MAX, INT32_MIN};
  // INT32_MIN - x, wrapping: INT32_MIN - 1 = INT32_MAX, INT32_MIN - (-1) = INT32_MIN + 1,
  // INT32_MIN - INT32_MAX = 1, INT32_MIN - INT32_MIN = 0.
  CHECK(run<int32_t>(elementwiseTTIR("i32", "    %y = arith.subi %ss, %v : tensor<8xi32>"), x,
                     DType::I32, intArg(INT32_MIN), DType::I32) ==
        std::vector<int32_t>{INT32_MAX, INT32_MAX - 1, INT32_MAX - 2, INT32_MIN + 1, INT32_MIN,
                             INT32_MAX - 6, 1, 0});
  // x << 3, wrapping: 7 << 3 = 56; INT32_MAX << 3 = -8; INT32_MIN << 3 = 0.
  CHECK(run<int32_t>(elementwiseTTIR("i32", "    %y = arith.shli %v, %ss : tensor<8xi32>"), x,
                     DType::I32, intArg(3), DType::I32) ==
        std::vector<int32_t>{8, 16, 24, -8, 0, 56, -8, 0});
  // A shift by 40 >= 32 gives 0, or the sign for an arithmetic right shift (docs/semantics.md).
  CHECK(run<int32_t>(elementwiseTTIR("i32", "    %y = arith.shli %v, %ss : tensor<8xi32>"), x,
                     DType::I32, intArg(40), DType::I32) == std::vector<int32_t>(8, 0));
  CHECK(run<int32_t>(elementwiseTTIR("i32", "    %y = arith.shrsi %v, %ss : tensor<8xi32>"), x,
                     DType::I32, intArg(40), DType::I32) ==
        std::vector<int32_t>{0, 0, 0, -1, 0, 0, 0, -1});
}

TEST_CASE("splat operands: both operands splatted, and a splat also needed as a block") {
  // s * s on every lane (the same splat on both sides).
  CHECK(run<int32_t>(elementwiseTTIR("i32", "    %y = arith.muli %ss, %ss : tensor<8xi32>"),
                     std::vector<int32_t>(8, 5), DType::I32, intArg(-7), DType::I32) ==
        std::vector<int32_t>(8, 49));
  // The splat is also an operand of select, which needs the block: it is materialised,
  // and the add still reads it. y = select(x > 4, x + s, s) with s = 10.
  std::string body = "    %add = arith.addf %v, %ss : tensor<8xf32>\n"
                     "    %four = arith.constant dense<4.000000e+00> : tensor<8xf32>\n"
                     "    %big = arith.cmpf ogt, %v, %four : tensor<8xf32>\n"
                     "    %y = arith.select %big, %add, %ss : tensor<8xi1>, tensor<8xf32>";
  CHECK(run<float>(elementwiseTTIR("f32", body), kOneToEight, DType::F32, floatArg(10.0),
                   DType::F32) == std::vector<float>{10, 10, 10, 10, 15, 16, 17, 18});
}

TEST_CASE("splat operands: integer compares against a splatted bound") {
  std::vector<int32_t> x{-2, -1, 0, 1, 2, 3, INT32_MIN, INT32_MAX};
  // Signed: x < 1. Unsigned: only 0 is below 1 (negatives are 2^32 - |x|).
  CHECK(run<int32_t>(elementwiseTTIR("i32",
                                     "    %c = arith.cmpi slt, %v, %ss : tensor<8xi32>\n"
                                     "    %y = arith.extui %c : tensor<8xi1> to tensor<8xi32>"),
                     x, DType::I32, intArg(1), DType::I32) ==
        std::vector<int32_t>{1, 1, 1, 0, 0, 0, 1, 0});
  CHECK(run<int32_t>(elementwiseTTIR("i32",
                                     "    %c = arith.cmpi ult, %v, %ss : tensor<8xi32>\n"
                                     "    %y = arith.extui %c : tensor<8xi1> to tensor<8xi32>"),
                     x, DType::I32, intArg(1), DType::I32) ==
        std::vector<int32_t>{0, 0, 1, 0, 0, 0, 0, 0});
  // The splat on the left is not read as a scalar (compares take it on the right only):
  // 1 > x is x < 1 again, through the materialised block.
  CHECK(run<int32_t>(elementwiseTTIR("i32",
                                     "    %c = arith.cmpi sgt, %ss, %v : tensor<8xi32>\n"
                                     "    %y = arith.extui %c : tensor<8xi1> to tensor<8xi32>"),
                     x, DType::I32, intArg(1), DType::I32) ==
        std::vector<int32_t>{1, 1, 1, 0, 0, 0, 1, 0});
  // i64 against a bound past 2^32: x <= 2^33 signed; unsigned -1 is 2^64 - 1.
  std::vector<int64_t> wide{-1, 0, int64_t(1) << 33, (int64_t(1) << 33) + 1, 5, INT64_MIN,
                            INT64_MAX, 1};
  CHECK(run<int64_t>(elementwiseTTIR("i64",
                                     "    %c = arith.cmpi sle, %v, %ss : tensor<8xi64>\n"
                                     "    %y = arith.extui %c : tensor<8xi1> to tensor<8xi64>"),
                     wide, DType::I64, intArg(int64_t(1) << 33), DType::I64) ==
        std::vector<int64_t>{1, 1, 1, 0, 1, 1, 0, 1});
  CHECK(run<int64_t>(elementwiseTTIR("i64",
                                     "    %c = arith.cmpi ule, %v, %ss : tensor<8xi64>\n"
                                     "    %y = arith.extui %c : tensor<8xi1> to tensor<8xi64>"),
                     wide, DType::I64, intArg(int64_t(1) << 33), DType::I64) ==
        std::vector<int64_t>{0, 1, 1, 0, 1, 0, 0, 1});
}

TEST_CASE("splat operands: the splat is not an instruction") {
  // load, mulf, store and the return: 4 steps. A materialised splat would be a fifth.
  CHECK(run<float>(elementwiseTTIR("f32", "    %y = arith.mulf %v, %ss : tensor<8xf32>"),
                   kOneToEight, DType::F32, floatArg(-2.0), DType::F32, /*maxSteps=*/4) ==
        std::vector<float>{-2, -4, -6, -8, -10, -12, -14, -16});
}

namespace {
/// out[i] = *(ADVANCED + i): pointers x + i advanced by a splatted offset %k.
///   @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %k: i32)
std::string advanceTTIR(const std::string &pointers) {
  return subst(R"(
#x = loc("x"("k.py":1:1))
module {
  tt.func public @k(%x: !tt.ptr<i32> loc(#x), %out: !tt.ptr<i32>, %k: i32) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %ks = tt.splat %k : i32 -> tensor<8xi32>
$POINTERS
    %v = tt.load %p : tensor<8x!tt.ptr<i32>> loc("k.py":4:8)
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %v : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)",
               {{"$POINTERS", pointers}});
}
} // namespace

TEST_CASE("splat operands: tt.addptr advanced by a splatted offset") {
  const std::string advanced = "    %xp = tt.addptr %xb, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>\n"
                               "    %p = tt.addptr %xp, %ks : tensor<8x!tt.ptr<i32>>, tensor<8xi32>";
  std::vector<int32_t> x{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
  SUBCASE("in bounds: x[k + i]") {
    LoadedKernel k = lowered(advanceTTIR(advanced));
    std::vector<int32_t> out(8, 99);
    LaunchResult r = launch(
        *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32))},
        {ptrArg(0), ptrArg(1), intArg(3)}, {1, 1, 1});
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    CHECK(out == std::vector<int32_t>{13, 14, 15, 16, 17, 18, 19, 20});
  }
  SUBCASE("past the end: lane 12 - k is the first out of bounds") {
    LoadedKernel k = lowered(advanceTTIR(advanced));
    std::vector<int32_t> out(8, 99);
    LaunchResult r = launch(
        *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32))},
        {ptrArg(0), ptrArg(1), intArg(7)}, {1, 1, 1});
    REQUIRE(r.fault);
    CHECK(r.fault->kind == "out_of_bounds");
    CHECK(r.fault->element == 5);
    CHECK(r.fault->location == "k.py:4:8");
    CHECK(r.fault->message.find("element 12 of argument 'x'") != std::string::npos);
    CHECK(out == std::vector<int32_t>(8, 99));
  }
  SUBCASE("splat base and splat offset: every lane is x[k]") {
    LoadedKernel k =
        lowered(advanceTTIR("    %p = tt.addptr %xb, %ks : tensor<8x!tt.ptr<i32>>, tensor<8xi32>"));
    std::vector<int32_t> out(8, 99);
    LaunchResult r = launch(
        *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32))},
        {ptrArg(0), ptrArg(1), intArg(9)}, {1, 1, 1});
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    CHECK(out == std::vector<int32_t>(8, 19));
  }
}

TEST_CASE("splat operands: a splat constant is read as its one value") {
  // x + 3 and x < 3 through `arith.constant dense<3>`, held as one scalar.
  std::vector<int32_t> x{-1, 0, 1, 2, 3, 4, INT32_MAX, INT32_MIN};
  CHECK(run<int32_t>(elementwiseTTIR("i32",
                                     "    %c = arith.constant dense<3> : tensor<8xi32>\n"
                                     "    %y = arith.addi %v, %c : tensor<8xi32>"),
                     x, DType::I32, intArg(0), DType::I32) ==
        std::vector<int32_t>{2, 3, 4, 5, 6, 7, INT32_MIN + 2, INT32_MIN + 3});
  CHECK(run<int32_t>(elementwiseTTIR("i32",
                                     "    %c = arith.constant dense<3> : tensor<8xi32>\n"
                                     "    %b = arith.cmpi slt, %v, %c : tensor<8xi32>\n"
                                     "    %y = arith.extui %b : tensor<8xi1> to tensor<8xi32>"),
                     x, DType::I32, intArg(0), DType::I32) ==
        std::vector<int32_t>{1, 1, 1, 1, 0, 0, 0, 1});
  // f16: 1.0 (0x3C00) + 2^-11 ties to even (1.0), + 3 * 2^-11 rounds to 1 + 2^-9.
  std::vector<uint16_t> h{0x1000, 0x1600, 0x0000, 0x1000, 0x1600, 0x0000, 0x1000, 0x1600};
  CHECK(run<uint16_t>(elementwiseTTIR("f16",
                                      "    %c = arith.constant dense<1.000000e+00> : tensor<8xf16>\n"
                                      "    %y = arith.addf %c, %v : tensor<8xf16>"),
                      h, DType::F16, floatArg(0), DType::F16) ==
        std::vector<uint16_t>{0x3C00, 0x3C02, 0x3C00, 0x3C00, 0x3C02, 0x3C00, 0x3C00, 0x3C02});
  // The constant is also a select operand, which needs the block: both read 10.
  std::string body = "    %c = arith.constant dense<1.000000e+01> : tensor<8xf32>\n"
                     "    %add = arith.addf %v, %c : tensor<8xf32>\n"
                     "    %four = arith.constant dense<4.000000e+00> : tensor<8xf32>\n"
                     "    %big = arith.cmpf ogt, %v, %four : tensor<8xf32>\n"
                     "    %y = arith.select %big, %add, %c : tensor<8xi1>, tensor<8xf32>";
  CHECK(run<float>(elementwiseTTIR("f32", body), kOneToEight, DType::F32, floatArg(0), DType::F32) ==
        std::vector<float>{10, 10, 10, 10, 15, 16, 17, 18});
  // Pointers advanced by `dense<2>`: x + i + 2.
  LoadedKernel k = lowered(advanceTTIR(
      "    %xp = tt.addptr %xb, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>\n"
      "    %two = arith.constant dense<2> : tensor<8xi32>\n"
      "    %p = tt.addptr %xp, %two : tensor<8x!tt.ptr<i32>>, tensor<8xi32>"));
  std::vector<int32_t> src{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, out(8, 99);
  LaunchResult r = launch(
      *k.kernel, {pointer("x", viewOf(src, DType::I32)), pointer("out", viewOf(out, DType::I32))},
      {ptrArg(0), ptrArg(1), intArg(0)}, {1, 1, 1});
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  CHECK(out == std::vector<int32_t>{12, 13, 14, 15, 16, 17, 18, 19});
}

TEST_CASE("f32 add, sub, mul and div over a block that is not a whole number of vectors") {
  // 13 lanes: one or more full vectors on any ISA, then a tail. Each result is the one IEEE
  // operation on the two values, as C++ float arithmetic computes it; the splat on the
  // left, on the right, or neither.
  const std::vector<float> x = {1.5f, -2.25f, 3.0f, 1e-30f, 7.0f, -0.0f, 1e30f, 0.1f,
                                2.0f,  3.0f,   -5.5f, 9.75f, 1.0f / 3.0f};
  const float s = 0.3f;
  auto kernel = [](const std::string &op, const std::string &lhs, const std::string &rhs) {
    return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %s: f32) {
    %r = tt.make_range {end = 13 : i32, start = 0 : i32} : tensor<13xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<13x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %r : tensor<13x!tt.ptr<f32>>, tensor<13xi32>
    %v = tt.load %xp : tensor<13x!tt.ptr<f32>>
    %ss = tt.splat %s : f32 -> tensor<13xf32>
    %w = arith.mulf %v, %v : tensor<13xf32>
    %y = $OP $L, $R : tensor<13xf32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<13x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<13x!tt.ptr<f32>>, tensor<13xi32>
    tt.store %op, %y : tensor<13x!tt.ptr<f32>>
    tt.return
  }
}
)",
                 {{"$OP", op}, {"$L", lhs}, {"$R", rhs}});
  };
  auto runOp = [&](const std::string &op, const std::string &lhs, const std::string &rhs) {
    LoadedKernel k = lowered(kernel(op, lhs, rhs));
    std::vector<float> in = x, out(x.size(), 99.0f);
    LaunchResult r = launch(*k.kernel,
                            {pointer("x", viewOf(in, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                            {ptrArg(0), ptrArg(1), floatArg(s)}, {1, 1, 1});
    REQUIRE_FALSE(r.fault);
    return out;
  };
  auto expect = [&](auto f, int form) {
    std::vector<float> e;
    for (float v : x) {
      float w = v * v;
      e.push_back(form == 0 ? f(v, w) : form == 1 ? f(s, v) : f(v, s));
    }
    return e;
  };
  auto bits = [](const std::vector<float> &v) {
    std::vector<uint32_t> b(v.size());
    std::memcpy(b.data(), v.data(), v.size() * 4);
    return b;
  };
  const std::pair<const char *, float (*)(float, float)> ops[] = {
      {"arith.addf", [](float a, float b) { return a + b; }},
      {"arith.subf", [](float a, float b) { return a - b; }},
      {"arith.mulf", [](float a, float b) { return a * b; }},
      {"arith.divf", [](float a, float b) { return a / b; }}};
  for (const auto &entry : ops) {
    const auto &op = entry.first; // named: INFO cannot capture a structured binding (clang 14)
    const auto &f = entry.second;
    INFO(op);
    CHECK(bits(runOp(op, "%v", "%w")) == bits(expect(f, 0)));
    CHECK(bits(runOp(op, "%ss", "%v")) == bits(expect(f, 1)));
    CHECK(bits(runOp(op, "%v", "%ss")) == bits(expect(f, 2)));
  }
}
