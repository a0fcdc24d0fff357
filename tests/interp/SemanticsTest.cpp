//===- SemanticsTest.cpp - Op semantics on hand-written TTIR --------------===//
//
// Each expectation is worked out by hand from the op's definition (two's
// complement wrap, NVIDIA shift behaviour, IEEE rounding, ...).
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// A kernel `@k(%out: !tt.ptr<T>, ...)` whose body computes a tensor<8xT> %r
/// and stores it to out[0..8).
std::string storeKernel(const std::string &outType, const std::string &params,
                        const std::string &body) {
  return R"(
module {
  tt.func public @k(%out: !tt.ptr<)" +
         outType + ">" + params + R"() {
    %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %base = tt.splat %out : !tt.ptr<)" +
         outType + "> -> tensor<8x!tt.ptr<" + outType + R"(>>
    %ptrs = tt.addptr %base, %range : tensor<8x!tt.ptr<)" +
         outType + ">>, tensor<8xi32>\n" + body + R"(
    tt.store %ptrs, %r : tensor<8x!tt.ptr<)" +
         outType + R"(>>
    tt.return
  }
}
)";
}

template <class T>
std::vector<T> runStore(const std::string &ttir, DType dtype,
                        std::vector<interp::ArgumentValue> extra = {}) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<T> out(8, T(0));
  std::vector<interp::ArgumentValue> args{ptrArg(0)};
  args.insert(args.end(), extra.begin(), extra.end());
  LaunchResult r = launch(*k.kernel, {pointer("out", viewOf(out, dtype))}, args, {1, 1, 1});
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}
} // namespace

TEST_CASE("integer add and multiply wrap around") {
  std::string body = R"(
    %big = arith.constant dense<2147483647> : tensor<8xi32>
    %one = arith.constant dense<1> : tensor<8xi32>
    %sum = arith.addi %big, %one : tensor<8xi32>
    %r = arith.muli %sum, %range : tensor<8xi32>)";
  std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
  // INT_MAX + 1 wraps to INT_MIN; INT_MIN * i is 0 for even i and INT_MIN for odd i.
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == (i % 2 ? std::numeric_limits<int32_t>::min() : 0));
}

TEST_CASE("shifts by the bit width or more behave as on NVIDIA hardware") {
  std::string body = R"(
    %amount = arith.constant dense<[0, 1, 31, 32, 33, 64, -1, 4]> : tensor<8xi32>
    %neg = arith.constant dense<-16> : tensor<8xi32>
    %shl = arith.shli %neg, %amount : tensor<8xi32>
    %shrs = arith.shrsi %neg, %amount : tensor<8xi32>
    %shru = arith.shrui %neg, %amount : tensor<8xi32>
    %t = arith.addi %shl, %shrs : tensor<8xi32>
    %r = arith.xori %t, %shru : tensor<8xi32>)";
  std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
  auto expect = [](int64_t amount) {
    uint32_t x = uint32_t(-16);
    uint64_t a = uint64_t(uint32_t(int32_t(amount)));
    int32_t shl = a >= 32 ? 0 : int32_t(x << a);
    int32_t shrs = a >= 32 ? -1 : (-16 >> a);
    int32_t shru = a >= 32 ? 0 : int32_t(x >> a);
    return int32_t(uint32_t(shl + shrs) ^ uint32_t(shru));
  };
  int64_t amounts[8] = {0, 1, 31, 32, 33, 64, -1, 4};
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == expect(amounts[i]));
  // Spelled out for two lanes: shift by 1 -> shl -32, shrs -8, shru 0x7FFFFFF8.
  CHECK(out[1] == int32_t(uint32_t(-32 + -8) ^ 0x7FFFFFF8u));
  // Shift by 32 -> 0, -1 (sign fill), 0.
  CHECK(out[3] == -1);
}

TEST_CASE("integer division by zero gives all ones, and a remainder by zero the dividend") {
  // Lane 3 divides 10 by zero, as a masked-off lane loaded as 0 does before a masked store:
  // no fault, and q * 0 + r == a still holds. Worked out by hand from
  // a = [-20, -10, 0, 10, 20, 30, 40, 50], d = [1, 2, 3, 0, 5, 6, 7, 8]; unsigned, -20 and -10
  // are 2^32 - 20 and 2^32 - 10 (i8: 236 and 246).
  struct Case {
    const char *op, *type;
    std::vector<int64_t> expected;
  };
  const std::vector<Case> cases = {
      {"arith.divsi", "i32", {-20, -5, 0, -1, 4, 5, 5, 6}},
      {"arith.divui", "i32", {-20, 2147483643, 0, -1, 4, 5, 5, 6}},
      {"arith.remsi", "i32", {0, 0, 0, 10, 0, 0, 5, 2}},
      {"arith.remui", "i32", {0, 0, 0, 10, 0, 0, 5, 2}},
      {"arith.floordivsi", "i32", {-20, -5, 0, -1, 4, 5, 5, 6}},
      {"arith.ceildivsi", "i32", {-20, -5, 0, -1, 4, 5, 6, 7}},
      {"arith.divsi", "i64", {-20, -5, 0, -1, 4, 5, 5, 6}},
      {"arith.remsi", "i64", {0, 0, 0, 10, 0, 0, 5, 2}},
      {"arith.divui", "i8", {-20, 123, 0, -1, 4, 5, 5, 6}},
      {"arith.remui", "i8", {0, 0, 0, 10, 0, 0, 5, 2}},
  };
  for (const Case &c : cases) {
    const std::string t = c.type;
    const std::string body =
        "    %a = arith.constant dense<[-20, -10, 0, 10, 20, 30, 40, 50]> : tensor<8x" + t +
        ">\n    %d = arith.constant dense<[1, 2, 3, 0, 5, 6, 7, 8]> : tensor<8x" + t +
        ">\n    %r = " + c.op + " %a, %d : tensor<8x" + t + ">";
    CAPTURE(c.op);
    CAPTURE(t);
    std::vector<int64_t> out;
    if (t == "i32")
      for (int32_t v : runStore<int32_t>(storeKernel(t, "", body), DType::I32))
        out.push_back(v);
    else if (t == "i64")
      out = runStore<int64_t>(storeKernel(t, "", body), DType::I64);
    else
      for (int8_t v : runStore<int8_t>(storeKernel(t, "", body), DType::I8))
        out.push_back(v);
    CHECK(out == c.expected);
  }
}

TEST_CASE("signed division truncates toward zero and floordivsi rounds down") {
  std::string body = R"(
    %a = arith.constant dense<[7, -7, 7, -7, -2147483648, 0, 9, -9]> : tensor<8xi32>
    %b = arith.constant dense<[2, 2, -2, -2, -1, 5, 3, 4]> : tensor<8xi32>
    %q = arith.divsi %a, %b : tensor<8xi32>
    %m = arith.remsi %a, %b : tensor<8xi32>
    %f = arith.floordivsi %a, %b : tensor<8xi32>
    %c100 = arith.constant dense<100> : tensor<8xi32>
    %c10000 = arith.constant dense<10000> : tensor<8xi32>
    %qs = arith.muli %q, %c10000 : tensor<8xi32>
    %ms = arith.muli %m, %c100 : tensor<8xi32>
    %t = arith.addi %qs, %ms : tensor<8xi32>
    %r = arith.addi %t, %f : tensor<8xi32>)";
  std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
  // q, rem, floor by hand: 7/2=3 r1 f3; -7/2=-3 r-1 f-4; 7/-2=-3 r1 f-4; -7/-2=3 r-1 f3;
  // MIN/-1 wraps to MIN r0 f MIN; 0/5=0; 9/3=3 r0 f3; -9/4=-2 r-1 f-3.
  int64_t q[8] = {3, -3, -3, 3, INT32_MIN, 0, 3, -2}, m[8] = {1, -1, 1, -1, 0, 0, 0, -1},
          f[8] = {3, -4, -4, 3, INT32_MIN, 0, 3, -3};
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == int32_t(uint32_t(q[i] * 10000 + m[i] * 100 + f[i])));
}

TEST_CASE("fptosi saturates and maps NaN to zero") {
  std::string body = R"(
    %x = arith.constant dense<[1.5, -1.5, 3.0e+10, -3.0e+10, 0x7FC00000, 2.147483647e+09, -0.99, 127.9]> : tensor<8xf32>
    %r = arith.fptosi %x : tensor<8xf32> to tensor<8xi32>)";
  std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
  // 2.147483647e9 rounds to the f32 2^31, which saturates.
  int32_t expect[8] = {1, -1, INT32_MAX, INT32_MIN, 0, INT32_MAX, 0, 127};
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == expect[i]);
}

TEST_CASE("f16 arithmetic rounds to f16 after every op") {
  // 2048 + 1 is not representable in f16 (spacing 2 there): rounds to even, 2048.
  std::string body = R"(
    %a = arith.constant dense<2048.0> : tensor<8xf16>
    %b = arith.sitofp %range : tensor<8xi32> to tensor<8xf16>
    %s = arith.addf %a, %b : tensor<8xf16>
    %r = arith.extf %s : tensor<8xf16> to tensor<8xf32>)";
  std::vector<float> out = runStore<float>(storeKernel("f32", "", body), DType::F32);
  // 2048+i for i=0..7 in f16 (ties to even): 2048,2048,2050,2052,2052,2052,2054,2056.
  float expect[8] = {2048, 2048, 2050, 2052, 2052, 2052, 2054, 2056};
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == expect[i]);
}

TEST_CASE("f16 and bf16 scalar arithmetic rounds after every op, as blocks do") {
  // A scalar op runs its own kernel (no block loop), which must round as the block kernels
  // do. f16: 2048 + 3 = 2051 lies between 2050 and 2052 (spacing 2), a tie: to even, 2052;
  // then 2052 * 1.0009765625 (1 + 2^-10) = 2054.00390625, spacing 2: 2054. bf16: 256 + 1 =
  // 257 (spacing 2 at 256, a tie: to even, 256); 256 - 0.5 = 255.5 (spacing 1 below 256,
  // a tie: to even, 256). Each result splatted into its half of the block.
  std::string body = R"(
    %a = arith.constant 2048.0 : f16
    %b = arith.constant 3.0 : f16
    %c = arith.constant 1.0009765625 : f16
    %s = arith.addf %a, %b : f16
    %m = arith.mulf %s, %c : f16
    %x = arith.constant 256.0 : bf16
    %one = arith.constant 1.0 : bf16
    %half = arith.constant 0.5 : bf16
    %t = arith.addf %x, %one : bf16
    %u = arith.subf %t, %half : bf16
    %m32 = arith.extf %m : f16 to f32
    %s32 = arith.extf %s : f16 to f32
    %u32 = arith.extf %u : bf16 to f32
    %t32 = arith.extf %t : bf16 to f32
    %four = arith.constant dense<4> : tensor<8xi32>
    %low = arith.cmpi slt, %range, %four : tensor<8xi32>
    %two = arith.constant dense<2> : tensor<8xi32>
    %parity = arith.remsi %range, %two : tensor<8xi32>
    %zero = arith.constant dense<0> : tensor<8xi32>
    %even = arith.cmpi eq, %parity, %zero : tensor<8xi32>
    %vs = tt.splat %s32 : f32 -> tensor<8xf32>
    %vm = tt.splat %m32 : f32 -> tensor<8xf32>
    %vt = tt.splat %t32 : f32 -> tensor<8xf32>
    %vu = tt.splat %u32 : f32 -> tensor<8xf32>
    %f16s = arith.select %even, %vs, %vm : tensor<8xi1>, tensor<8xf32>
    %bf16s = arith.select %even, %vt, %vu : tensor<8xi1>, tensor<8xf32>
    %r = arith.select %low, %f16s, %bf16s : tensor<8xi1>, tensor<8xf32>)";
  std::vector<float> out = runStore<float>(storeKernel("f32", "", body), DType::F32);
  float expect[8] = {2052, 2054, 2052, 2054, 256, 256, 256, 256};
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == expect[i]);
}

TEST_CASE("maximumf propagates NaN, maxnumf does not") {
  std::string body = R"(
    %x = arith.constant dense<[1.0, 0x7FC00000, 2.0, -0.0, 5.0, 0x7FC00000, -3.0, 0.0]> : tensor<8xf32>
    %y = arith.constant dense<[2.0, 1.0, 0x7FC00000, 0.0, 4.0, 0x7FC00000, -4.0, -0.0]> : tensor<8xf32>
    %m = arith.maximumf %x, %y : tensor<8xf32>
    %n = arith.maxnumf %x, %y : tensor<8xf32>
    %j = tt.join %m, %n : tensor<8xf32> -> tensor<8x2xf32>
    %a, %b = tt.split %j : tensor<8x2xf32> -> tensor<8xf32>
    %zero = arith.constant dense<0.0> : tensor<8xf32>
    %isnan = arith.cmpf uno, %a, %a : tensor<8xf32>
    %tagged = arith.select %isnan, %b, %a : tensor<8xi1>, tensor<8xf32>
    %r = arith.addf %tagged, %zero : tensor<8xf32>)";
  std::vector<float> out = runStore<float>(storeKernel("f32", "", body), DType::F32);
  // maximumf gives NaN in lanes 1, 2, 5; there we see maxnumf instead: 1, 2, NaN.
  CHECK(out[0] == 2.0f);
  CHECK(out[1] == 1.0f);
  CHECK(out[2] == 2.0f);
  CHECK(out[3] == 0.0f);
  CHECK(out[4] == 5.0f);
  CHECK(std::isnan(out[5]));
  CHECK(out[6] == -3.0f);
  CHECK(out[7] == 0.0f);
}

TEST_CASE("maxnumf and minnumf order -0 below +0, as PTX max and min do") {
  // PTX ISA, max/min: "If values of both inputs are 0.0, then +0.0 > -0.0"; a NaN
  // operand yields the other one. Lanes: (-0, +0), (+0, -0), (-0, -0), (+0, +0),
  // (NaN, -0), (-0, NaN), (1, -0), (-1, +0).
  const std::string operands = R"(
    %x = arith.constant dense<[-0.0, 0.0, -0.0, 0.0, 0x7FC00000, -0.0, 1.0, -1.0]> : tensor<8xf32>
    %y = arith.constant dense<[0.0, -0.0, -0.0, 0.0, -0.0, 0x7FC00000, -0.0, 0.0]> : tensor<8xf32>)";
  std::vector<float> mx = runStore<float>(
      storeKernel("f32", "", operands + "\n    %r = arith.maxnumf %x, %y : tensor<8xf32>"),
      DType::F32);
  std::vector<float> mn = runStore<float>(
      storeKernel("f32", "", operands + "\n    %r = arith.minnumf %x, %y : tensor<8xf32>"),
      DType::F32);
  const float values[8] = {0, 0, 0, 0, 0, 0, 1, 0};
  const bool maxNegative[8] = {false, false, true, false, true, true, false, false};
  const float minValues[8] = {0, 0, 0, 0, 0, 0, 0, -1};
  const bool minNegative[8] = {true, true, true, false, true, true, true, true};
  for (int i = 0; i < 8; ++i) {
    INFO("lane ", i);
    CHECK(mx[i] == values[i]);
    CHECK(std::signbit(mx[i]) == maxNegative[i]);
    CHECK(mn[i] == minValues[i]);
    CHECK(std::signbit(mn[i]) == minNegative[i]);
  }
  // A maxnumf reduction of -0 and +0 in either order is +0.
  std::string reduce = R"(
    %v = arith.constant dense<[-0.0, 0.0, -0.0, -0.0, 0.0, -0.0, -0.0, -0.0]> : tensor<8xf32>
    %m = "tt.reduce"(%v) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.maxnumf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<8xf32>) -> f32
    %r = tt.splat %m : f32 -> tensor<8xf32>)";
  for (float v : runStore<float>(storeKernel("f32", "", reduce), DType::F32))
    CHECK_FALSE(std::signbit(v));
}

TEST_CASE("scf.for carries values and scf.if picks a branch per program") {
  std::string body = R"(
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c5 = arith.constant 5 : i32
    %init = arith.constant dense<0> : tensor<8xi32>
    %sum = scf.for %iv = %c0 to %c5 step %c1 iter_args(%acc = %init) -> (tensor<8xi32>) : i32 {
      %s = tt.splat %iv : i32 -> tensor<8xi32>
      %t = arith.muli %s, %range : tensor<8xi32>
      %n = arith.addi %acc, %t : tensor<8xi32>
      scf.yield %n : tensor<8xi32>
    }
    %pid = tt.get_program_id x : i32
    %isZero = arith.cmpi eq, %pid, %c0 : i32
    %r = scf.if %isZero -> (tensor<8xi32>) {
      scf.yield %sum : tensor<8xi32>
    } else {
      scf.yield %range : tensor<8xi32>
    })";
  std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
  // sum over iv=0..4 of iv*i = 10*i (program 0 only ran).
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == 10 * i);
}

TEST_CASE("a two-operand tt.reduce computes argmax with the first index on ties") {
  std::string body = R"(
    %v = arith.constant dense<[3.0, 9.0, 1.0, 9.0, -2.0, 9.0, 0.0, 4.0]> : tensor<8xf32>
    %m:2 = "tt.reduce"(%v, %range) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
      %gt = arith.cmpf ogt, %a, %b : f32
      %eq = arith.cmpf oeq, %a, %b : f32
      %lt = arith.cmpi slt, %ai, %bi : i32
      %tie = arith.andi %eq, %lt : i1
      %keep = arith.ori %gt, %tie : i1
      %rv = arith.select %keep, %a, %b : f32
      %ri = arith.select %keep, %ai, %bi : i32
      tt.reduce.return %rv, %ri : f32, i32
    }) : (tensor<8xf32>, tensor<8xi32>) -> (f32, i32)
    %r = tt.splat %m#1 : i32 -> tensor<8xi32>)";
  std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
  for (int v : out)
    CHECK(v == 1);
}

TEST_CASE("a reverse tt.scan accumulates from the end") {
  std::string body = R"(
    %r = "tt.scan"(%range) <{axis = 0 : i32, reverse = true}> ({
    ^bb0(%a: i32, %b: i32):
      %s = arith.addi %a, %b : i32
      tt.scan.return %s : i32
    }) : (tensor<8xi32>) -> tensor<8xi32>)";
  std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
  // Suffix sums of 0..7: sum_{j>=i} j = 28 - i(i-1)/2.
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == 28 - i * (i - 1) / 2);
}

TEST_CASE("a store one element past the argument faults even when the next buffer follows") {
  // Two arguments carved out of one allocation, back to back: a store to
  // a[n] lands in b's memory, but its pointer came from a.
  std::string ttir = R"(
module {
  tt.func public @k(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>) {
    %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %one = arith.constant dense<1> : tensor<8xi32>
    %idx = arith.addi %range, %one : tensor<8xi32>
    %base = tt.splat %a : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %ptrs = tt.addptr %base, %idx : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = arith.constant dense<5.0> : tensor<8xf32>
    tt.store %ptrs, %v : tensor<8x!tt.ptr<f32>> loc(#at)
    tt.return
  }
}
#at = loc("kernel.py":17:4)
)";
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> memory(16, 2.0f);
  View a{reinterpret_cast<uint64_t>(memory.data()), DType::F32, {8}, {1}};
  View b{reinterpret_cast<uint64_t>(memory.data() + 8), DType::F32, {8}, {1}};
  LaunchResult r =
      launch(*k.kernel, {pointer("a", a), pointer("b", b)}, {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->location == "kernel.py:17:4");
  CHECK(r.fault->element == 7);
  CHECK(r.fault->message.find("element 8 of argument 'a'") != std::string::npos);
  CHECK(r.fault->message.find("4 bytes past its end") != std::string::npos);
  // The faulting launch wrote nothing back: lanes 0..6 were in bounds but the op stopped.
  for (float v : memory)
    CHECK(v == 2.0f);
}

TEST_CASE("threads give the same result and report the first fault in program order") {
  LoadedKernel k = loadKernel(source("examples/vector_add/vector_add.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  const int n = 1024 * 40;
  std::vector<float> x(n), y(n), out(n, 0.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i % 97);
    y[i] = float(i % 13);
  }
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
                           pointer("out", viewOf(out, DType::F32))},
                          {ptrArg(0), ptrArg(1), ptrArg(2), intArg(n)}, {40, 1, 1}, 2);
  REQUIRE_FALSE(r.fault);
  for (int i = 0; i < n; ++i)
    REQUIRE(out[i] == float(i % 97 + i % 13));
  // With n larger than the buffers, programs 10.. fault; the first is program 10.
  std::vector<float> small(10 * 1024, 0.0f);
  r = launch(*k.kernel,
             {pointer("x", viewOf(small, DType::F32)), pointer("y", viewOf(small, DType::F32)),
              pointer("out", viewOf(small, DType::F32))},
             {ptrArg(0), ptrArg(1), ptrArg(2), intArg(n)}, {40, 1, 1}, 2);
  REQUIRE(r.fault);
  CHECK(r.fault->program[0] == 10);
  CHECK(r.fault->element == 0);
}

namespace {
/// select(mask, a, b) over 8 lanes of `type`, with a = 1..8 and b = -1..-8
/// (i1: a all true, b all false), stored and read back as T.
template <class T>
std::vector<T> selectLanes(const std::string &type, DType dtype, const std::string &mask) {
  bool isBool = type == "i1";
  bool isFloat = type[0] == 'f';
  std::string a = isBool    ? "dense<true>"
                  : isFloat ? "dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>"
                            : "dense<[1, 2, 3, 4, 5, 6, 7, 8]>";
  std::string b = isBool    ? "dense<false>"
                  : isFloat ? "dense<[-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0]>"
                            : "dense<[-1, -2, -3, -4, -5, -6, -7, -8]>";
  std::string body = "    %a = arith.constant " + a + " : tensor<8x" + type + ">\n" +
                     "    %b = arith.constant " + b + " : tensor<8x" + type + ">\n" +
                     "    %m = arith.constant " + mask + " : tensor<8xi1>\n" +
                     "    %r = arith.select %m, %a, %b : tensor<8xi1>, tensor<8x" + type + ">";
  return runStore<T>(storeKernel(type, "", body), dtype);
}
} // namespace

TEST_CASE("arith.select takes a where the mask is set and b elsewhere, for every width") {
  const std::string some = "dense<[true, false, true, true, false, false, true, false]>";
  const bool someLanes[8] = {true, false, true, true, false, false, true, false};
  for (int which = 0; which < 3; ++which) {
    std::string mask = which == 0 ? some : which == 1 ? "dense<true>" : "dense<false>";
    auto taken = [&](int i) { return which == 0 ? someLanes[i] : which == 1; };
    INFO("mask ", mask);
    std::vector<int8_t> i8 = selectLanes<int8_t>("i8", DType::I8, mask);
    std::vector<int16_t> i16 = selectLanes<int16_t>("i16", DType::I16, mask);
    std::vector<int32_t> i32 = selectLanes<int32_t>("i32", DType::I32, mask);
    std::vector<int64_t> i64 = selectLanes<int64_t>("i64", DType::I64, mask);
    std::vector<double> f64 = selectLanes<double>("f64", DType::F64, mask);
    std::vector<uint8_t> i1 = selectLanes<uint8_t>("i1", DType::I1, mask);
    for (int i = 0; i < 8; ++i) {
      int expected = taken(i) ? i + 1 : -(i + 1);
      CHECK(int(i8[i]) == expected);
      CHECK(int(i16[i]) == expected);
      CHECK(i32[i] == expected);
      CHECK(i64[i] == expected);
      CHECK(f64[i] == double(expected));
      CHECK(int(i1[i]) == (taken(i) ? 1 : 0));
    }
  }
}

TEST_CASE("arith.select with a scalar condition picks a whole tensor") {
  for (bool cond : {true, false}) {
    std::string body = std::string("    %a = arith.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : "
                                   "tensor<8xi32>\n") +
                       "    %b = arith.constant dense<-7> : tensor<8xi32>\n" +
                       "    %c = arith.constant " + (cond ? "true" : "false") + "\n" +
                       "    %r = arith.select %c, %a, %b : tensor<8xi32>";
    std::vector<int32_t> out = runStore<int32_t>(storeKernel("i32", "", body), DType::I32);
    for (int i = 0; i < 8; ++i)
      CHECK(out[size_t(i)] == (cond ? i + 1 : -7));
  }
}

namespace {
/// out = OP(a, b) over 256 lanes of TYPE, read from memory.
std::string binaryOverMemory(const std::string &op, const std::string &type) {
  return subst(R"(
module {
  tt.func public @k(%a: !tt.ptr<$T>, %b: !tt.ptr<$T>, %out: !tt.ptr<$T>) {
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %ab = tt.splat %a : !tt.ptr<$T> -> tensor<256x!tt.ptr<$T>>
    %ap = tt.addptr %ab, %r : tensor<256x!tt.ptr<$T>>, tensor<256xi32>
    %av = tt.load %ap : tensor<256x!tt.ptr<$T>>
    %bb = tt.splat %b : !tt.ptr<$T> -> tensor<256x!tt.ptr<$T>>
    %bp = tt.addptr %bb, %r : tensor<256x!tt.ptr<$T>>, tensor<256xi32>
    %bv = tt.load %bp : tensor<256x!tt.ptr<$T>>
    %v = $OP %av, %bv : tensor<256x$T>
    %ob = tt.splat %out : !tt.ptr<$T> -> tensor<256x!tt.ptr<$T>>
    %op = tt.addptr %ob, %r : tensor<256x!tt.ptr<$T>>, tensor<256xi32>
    tt.store %op, %v : tensor<256x!tt.ptr<$T>>
    tt.return
  }
}
)",
               {{"$T", type}, {"$OP", op}});
}

/// Runs binaryOverMemory on a and b (256 values of T each).
template <class T>
std::vector<T> runBinary(const std::string &op, const std::string &type, DType dtype,
                         std::vector<T> a, std::vector<T> b) {
  LoadedKernel k = loadKernel(binaryOverMemory(op, type));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<T> out(256);
  LaunchResult r = launch(*k.kernel,
                          {pointer("a", viewOf(a, dtype)), pointer("b", viewOf(b, dtype)),
                           pointer("out", viewOf(out, dtype))},
                          {ptrArg(0), ptrArg(1), ptrArg(2)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}

/// 256 pairs of T: the extremes and their neighbours against small and extreme divisors,
/// then random ones; no divisor is 0.
template <class T> std::pair<std::vector<T>, std::vector<T>> divisionPairs(uint32_t seed) {
  using L = std::numeric_limits<T>;
  const T edges[] = {L::min(),        T(L::min() + 1), T(-1), T(0),  T(1),
                     T(L::max() - 1), L::max(),        T(7),  T(-7), T(100)};
  std::vector<T> a, b;
  for (T x : edges)
    for (T y : edges)
      if (y != 0) {
        a.push_back(x);
        b.push_back(y);
      }
  std::mt19937 rng(seed);
  while (a.size() < 256) {
    T x = T(rng()), y = T(rng() >> (rng() % 31));
    if (y == 0)
      continue;
    a.push_back(x);
    b.push_back(y);
  }
  return {a, b};
}
} // namespace

TEST_CASE("division and remainder of 8- to 32-bit integers agree with C++ over a sweep") {
  // The quotients come from double division truncated (exact up to 32 bits); the reference
  // is C++'s integer division in 64 bits, with MIN / -1 wrapping as arith defines it.
  auto check = [](auto tag, const std::string &type, DType dtype, uint32_t seed) {
    using T = decltype(tag);
    using U = std::make_unsigned_t<T>;
    const auto pairs = divisionPairs<T>(seed);
    const std::vector<T> &a = pairs.first, &b = pairs.second;
    std::vector<T> q = runBinary<T>("arith.divsi", type, dtype, a, b);
    std::vector<T> m = runBinary<T>("arith.remsi", type, dtype, a, b);
    std::vector<T> uq = runBinary<T>("arith.divui", type, dtype, a, b);
    std::vector<T> um = runBinary<T>("arith.remui", type, dtype, a, b);
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(type);
      CAPTURE(int64_t(a[i]));
      CAPTURE(int64_t(b[i]));
      int64_t x = a[i], y = b[i];
      CHECK(q[i] == T(U(uint64_t(x / y)))); // MIN / -1 = -MIN, wrapped back to MIN
      CHECK(m[i] == T(x % y));
      uint64_t ux = U(a[i]), uy = U(b[i]);
      CHECK(U(uq[i]) == U(ux / uy));
      CHECK(U(um[i]) == U(ux % uy));
    }
  };
  check(int32_t(), "i32", DType::I32, 1);
  check(int16_t(), "i16", DType::I16, 2);
  check(int8_t(), "i8", DType::I8, 3);
}

namespace {
/// `a OP d` over a block of $N i32 loaded from memory, d a splatted scalar argument: the
/// divisor every lane shares (interp reads the splat's scalar, simd::intDivide32's
/// reciprocal path); $N not a multiple of any vector width, so a scalar tail runs too.
std::string divideBySplat(const std::string &op, int64_t n) {
  return subst(R"(
module {
  tt.func public @k(%a: !tt.ptr<i32>, %out: !tt.ptr<i32>, %d: i32) {
    %r = tt.make_range {end = $N : i32, start = 0 : i32} : tensor<$Nxi32>
    %ab = tt.splat %a : !tt.ptr<i32> -> tensor<$Nx!tt.ptr<i32>>
    %ap = tt.addptr %ab, %r : tensor<$Nx!tt.ptr<i32>>, tensor<$Nxi32>
    %av = tt.load %ap : tensor<$Nx!tt.ptr<i32>>
    %ds = tt.splat %d : i32 -> tensor<$Nxi32>
    %v = $OP %av, %ds : tensor<$Nxi32>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<$Nx!tt.ptr<i32>>
    %op = tt.addptr %ob, %r : tensor<$Nx!tt.ptr<i32>>, tensor<$Nxi32>
    tt.store %op, %v : tensor<$Nx!tt.ptr<i32>>
    tt.return
  }
}
)",
               {{"$N", std::to_string(n)}, {"$OP", op}});
}
} // namespace

TEST_CASE("i32 division by a splatted divisor agrees with C++ for every kind of divisor") {
  // One reciprocal per divisor and a floor per lane, corrected by the exact remainder: the
  // dividends that test the correction are the multiples of the divisor and their
  // neighbours (where a product rounded below an integer shows), across the whole range,
  // and pairs found to need it (A * fl(1 / y) just below the integer A / y, by a search).
  const int32_t divisors[] = {1,
                              -1,
                              2,
                              -2,
                              3,
                              7,
                              -7,
                              100,
                              4096,
                              65535,
                              46341,
                              -46341,
                              INT32_MAX,
                              INT32_MIN,
                              INT32_MIN + 1,
                              int32_t(0x80000001u),
                              1000000007,
                              -999999937,
                              12345,
                              int32_t(0xFFFF0001u),
                              98,
                              2006,
                              1646,
                              1525535668};
  const int32_t corrected[] = {287933898, 765822596, int32_t(2181366438u), 1525535668};
  std::mt19937 rng(7);
  const int64_t n = 1003;
  for (int32_t d : divisors) {
    std::vector<int32_t> a = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX, d};
    for (int32_t c : corrected)
      a.insert(a.end(), {c, int32_t(0u - uint32_t(c))});
    const int64_t ud = int64_t(uint32_t(d));
    while (a.size() < size_t(n)) {
      // k * d + e for k across the quotient's range, e in -1..1: signed and unsigned.
      const int64_t k = int64_t(rng()) % (int64_t(1) << (1 + rng() % 32));
      const int64_t e = int64_t(rng() % 3) - 1;
      // Only the low 32 bits are kept: the products wrap, in unsigned arithmetic.
      a.push_back(int32_t(uint32_t(uint64_t(k) * uint64_t(int64_t(d)) + uint64_t(e))));
      a.push_back(int32_t(uint32_t(uint64_t(k) * uint64_t(ud) + uint64_t(e))));
      a.push_back(int32_t(rng()));
    }
    a.resize(size_t(n));
    auto run = [&](const char *op) {
      LoadedKernel k = loadKernel(divideBySplat(op, n));
      REQUIRE_MESSAGE(k.kernel, k.error);
      std::vector<int32_t> out(static_cast<size_t>(n), 0);
      LaunchResult r = launch(
          *k.kernel, {pointer("a", viewOf(a, DType::I32)), pointer("out", viewOf(out, DType::I32))},
          {ptrArg(0), ptrArg(1), intArg(d)}, {1, 1, 1});
      REQUIRE(r.error.empty());
      REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
      return out;
    };
    std::vector<int32_t> q = run("arith.divsi"), m = run("arith.remsi");
    std::vector<int32_t> uq = run("arith.divui"), um = run("arith.remui");
    int wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t x = a[size_t(i)];
      const uint64_t ux = uint32_t(a[size_t(i)]);
      // MIN / -1 = 2^31 wraps to MIN, remainder 0.
      wrong += q[size_t(i)] != int32_t(uint32_t(uint64_t(x / d)));
      wrong += m[size_t(i)] != int32_t(x % d);
      wrong += uint32_t(uq[size_t(i)]) != uint32_t(ux / uint64_t(ud));
      wrong += uint32_t(um[size_t(i)]) != uint32_t(ux % uint64_t(ud));
    }
    CAPTURE(d);
    CHECK(wrong == 0);
  }
}

TEST_CASE("a splatted zero divisor gives all ones, and a remainder by it the dividend") {
  std::vector<int32_t> a(64);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = int32_t(i * 977) - 20000;
  for (const char *op : {"arith.divsi", "arith.divui", "arith.remsi", "arith.remui"}) {
    LoadedKernel k = loadKernel(divideBySplat(op, 64));
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<int32_t> out(64, 42);
    LaunchResult r = launch(
        *k.kernel, {pointer("a", viewOf(a, DType::I32)), pointer("out", viewOf(out, DType::I32))},
        {ptrArg(0), ptrArg(1), intArg(0)}, {1, 1, 1});
    CAPTURE(op);
    REQUIRE_FALSE(r.fault);
    const bool remainder = std::string(op).rfind("arith.rem", 0) == 0;
    for (size_t i = 0; i < a.size(); ++i)
      CHECK(out[i] == (remainder ? a[i] : -1));
  }
}
