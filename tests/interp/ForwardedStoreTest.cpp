//===- ForwardedStoreTest.cpp - A fused store that runs the op defining its value -===//
//
// `tt.store(ptrs, x OP y)` where the store is fused (Fusion.h) and OP (an element-wise
// binary arith op on 8- to 64-bit integers, f32 or f64) has no other use: the store runs
// OP with its block going straight to the destination (the shadow, or the caller's memory
// in place). These kernels check that results are what OP gives element by element
// (computed here with the same IEEE or wrapping operation), that masked tails, faults,
// aliasing views, in-place mode and hazard tracking behave as for any store, and that the
// op really is folded into the store.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include "ttinterp/interp/Launch.h"

#include <functional>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// Program p computes lanes i = 0..7 at offset 8p + i: out[o] = x[o] OP y[o] (or a splat of
/// %s on one side), masked by o < n when `masked`; elements of type T (f32 unless given).
///   @k(%x: !tt.ptr<T>, %y: !tt.ptr<T>, %out: !tt.ptr<T>, %n: i32, %s: T)
std::string kernelText(const std::string &op, const std::string &lhs, const std::string &rhs,
                       bool masked, const std::string &type = "f32") {
  return subst(
      R"(
#st = loc("k.py":9:4)
module {
  tt.func public @k(%x: !tt.ptr<$T>, %y: !tt.ptr<$T>, %out: !tt.ptr<$T>, %n: i32, %s: $T) {
    %c8 = arith.constant 8 : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c8 : i32
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ss = tt.splat %start : i32 -> tensor<8xi32>
    %offs = arith.addi %ss, %r : tensor<8xi32>
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<$T> -> tensor<8x!tt.ptr<$T>>
    %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<$T>>, tensor<8xi32>
    %xv = tt.load %xp$MASK : tensor<8x!tt.ptr<$T>>
    %yb = tt.splat %y : !tt.ptr<$T> -> tensor<8x!tt.ptr<$T>>
    %yp = tt.addptr %yb, %offs : tensor<8x!tt.ptr<$T>>, tensor<8xi32>
    %yv = tt.load %yp$MASK : tensor<8x!tt.ptr<$T>>
    %sv = tt.splat %s : $T -> tensor<8x$T>
    %v = $OP $LHS, $RHS : tensor<8x$T>
    %ob = tt.splat %out : !tt.ptr<$T> -> tensor<8x!tt.ptr<$T>>
    %op = tt.addptr %ob, %offs : tensor<8x!tt.ptr<$T>>, tensor<8xi32>
    tt.store %op, %v$MASK : tensor<8x!tt.ptr<$T>> loc(#st)
    tt.return
  }
}
)",
      {{"$OP", op}, {"$LHS", lhs}, {"$RHS", rhs}, {"$MASK", masked ? ", %m" : ""}, {"$T", type}});
}

LoadedKernel lowered(const std::string &ttir) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return k;
}

/// x[i] = i + 1, y[i] = 3 - i / 4 (never 0, so divf stays finite).
std::vector<float> xs(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i + 1);
  return v;
}
std::vector<float> ys(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = 3.0f - float(i) / 4.0f + (float(i) / 4.0f == 3.0f ? 0.5f : 0.0f);
  return v;
}

std::vector<interp::ArgumentValue> args(int64_t n, double s) {
  return {ptrArg(0), ptrArg(1), ptrArg(2), intArg(n), floatArg(s)};
}

/// One launch of a kernelText kernel over x, y and out, as n = `n` and s = `s`.
LaunchResult launchOn(const LoadedKernel &k, std::vector<float> &x, std::vector<float> &y,
                      std::vector<float> &out, int64_t n, double s, int64_t programs,
                      unsigned threads = 1, uint64_t maxSteps = 0) {
  return launch(*k.kernel,
                {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
                 pointer("out", viewOf(out, DType::F32))},
                args(n, s), {programs, 1, 1}, threads, maxSteps);
}

} // namespace

TEST_CASE("a fused store of an f32 op's only result runs the op: one instruction fewer") {
  // The block is get_program_id, muli, the range compare %m and the splat %sv (unused here,
  // but made), load, load, and the store with the add: 7 instructions, 8 steps with the block
  // itself. Were the add its own instruction, 8 steps would not be enough.
  LoadedKernel k = lowered(kernelText("arith.addf", "%xv", "%yv", false));
  std::vector<float> x = xs(16), y = ys(16), out(16, -1.0f);
  LaunchResult r = launchOn(k, x, y, out, 16, 0, 2, 1, /*maxSteps=*/8);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  for (size_t i = 0; i < 16; ++i)
    CHECK(out[i] == x[i] + y[i]);
  CHECK(r.stats.bytesOut == 64);
}

TEST_CASE("forwarded stores give each op's IEEE result, with splats on either side") {
  struct Case {
    const char *op, *lhs, *rhs;
    std::function<float(float, float, float)> want; // (x, y, s)
  };
  const float s = 0.3f; // not exact in binary: rounding shows if the operation differs
  const std::vector<Case> cases = {
      {"arith.addf", "%xv", "%yv", [](float a, float b, float) { return a + b; }},
      {"arith.subf", "%sv", "%xv", [](float a, float, float c) { return c - a; }},
      {"arith.mulf", "%xv", "%sv", [](float a, float, float c) { return a * c; }},
      {"arith.divf", "%xv", "%yv", [](float a, float b, float) { return a / b; }},
      {"arith.divf", "%sv", "%yv", [](float, float b, float c) { return c / b; }},
      {"arith.mulf", "%sv", "%sv", [](float, float, float c) { return c * c; }},
  };
  for (const Case &c : cases)
    for (unsigned threads : {1u, 2u}) {
      CAPTURE(c.op);
      CAPTURE(c.lhs);
      CAPTURE(c.rhs);
      CAPTURE(threads);
      LoadedKernel k = lowered(kernelText(c.op, c.lhs, c.rhs, false));
      std::vector<float> x = xs(32), y = ys(32), out(32, -1.0f);
      LaunchResult r = launchOn(k, x, y, out, 32, s, 4, threads);
      REQUIRE(r.error.empty());
      REQUIRE_FALSE(r.fault);
      for (size_t i = 0; i < 32; ++i) {
        CAPTURE(i);
        CHECK(out[i] == c.want(x[i], y[i], s));
      }
    }
}

namespace {
/// Runs kernelText(op, lhs, rhs, unmasked, type) over x and y (8 lanes per program) with
/// %s = s, within `maxSteps` ops per program; returns out.
template <class T>
std::vector<T> runTyped(const std::string &op, const std::string &lhs, const std::string &rhs,
                        const std::string &type, DType dtype, std::vector<T> x, std::vector<T> y,
                        interp::ArgumentValue s, uint64_t maxSteps = 0) {
  LoadedKernel k = lowered(kernelText(op, lhs, rhs, false, type));
  std::vector<T> out(x.size(), T(-1));
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, dtype)), pointer("y", viewOf(y, dtype)),
                           pointer("out", viewOf(out, dtype))},
                          {ptrArg(0), ptrArg(1), ptrArg(2), intArg(int64_t(x.size())), s},
                          {int64_t(x.size() / 8), 1, 1}, 1, maxSteps);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}
} // namespace

TEST_CASE("integer and f64 ops run in the store too, wrapping and rounding as they do alone") {
  const size_t n = 16;
  std::vector<int8_t> x8(n), y8(n, 0);
  std::vector<int32_t> x32(n), y32(n);
  std::vector<int64_t> x64(n), y64(n, int64_t(1) << 40);
  std::vector<double> xd(n), yd(n, 3.0);
  for (size_t i = 0; i < n; ++i) {
    x8[i] = int8_t(uint8_t(i * 10));
    x32[i] = int32_t(100000 + i);
    y32[i] = int32_t(50000 - i);
    x64[i] = int64_t(i + 1) << 30;
    xd[i] = double(i + 1);
  }
  // i8: 100 + x wraps past 127.
  std::vector<int8_t> sum8 =
      runTyped<int8_t>("arith.addi", "%sv", "%xv", "i8", DType::I8, x8, y8, intArg(100));
  // i32: the products pass 2^31 and wrap; 8 steps only if the muli runs in the store (as the
  // f32 count above).
  std::vector<int32_t> mul32 = runTyped<int32_t>("arith.muli", "%xv", "%yv", "i32", DType::I32, x32,
                                                 y32, intArg(0), /*maxSteps=*/8);
  std::vector<int32_t> xor32 = runTyped<int32_t>("arith.xori", "%xv", "%sv", "i32", DType::I32, x32,
                                                 y32, intArg(0x5a5a5a5a));
  std::vector<int32_t> sub32 =
      runTyped<int32_t>("arith.subi", "%sv", "%xv", "i32", DType::I32, x32, y32, intArg(7));
  // i64: x * 2^40 passes 2^63 from x = 2^23 on, and wraps.
  std::vector<int64_t> mul64 =
      runTyped<int64_t>("arith.muli", "%xv", "%yv", "i64", DType::I64, x64, y64, intArg(0));
  std::vector<double> divd =
      runTyped<double>("arith.divf", "%xv", "%yv", "f64", DType::F64, xd, yd, floatArg(0));
  for (size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(sum8[i] == int8_t(uint8_t(uint8_t(x8[i]) + 100u)));
    CHECK(mul32[i] == int32_t(uint32_t(x32[i]) * uint32_t(y32[i])));
    CHECK(xor32[i] == (x32[i] ^ 0x5a5a5a5a));
    CHECK(sub32[i] == 7 - x32[i]);
    CHECK(mul64[i] == int64_t(uint64_t(x64[i]) * uint64_t(y64[i])));
    CHECK(divd[i] == xd[i] / 3.0);
  }
}

TEST_CASE("a forwarded store's masked tail stores only the active lanes") {
  // n = 19 over 3 programs of 8: the last program has 3 active lanes (o = 16, 17, 18).
  LoadedKernel k = lowered(kernelText("arith.mulf", "%xv", "%yv", true));
  std::vector<float> x = xs(24), y = ys(24), out(24, -1.0f);
  LaunchResult r = launchOn(k, x, y, out, 19, 0, 3);
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  for (size_t i = 0; i < 24; ++i) {
    CAPTURE(i);
    CHECK(out[i] == (i < 19 ? x[i] * y[i] : -1.0f));
  }
  CHECK(r.stats.bytesOut == 19 * 4);
}

TEST_CASE("a forwarded store out of bounds faults at its lane and writes nothing") {
  // out holds 12 elements; program 1's lanes 4..7 (elements 12..15) lie past it.
  LoadedKernel k = lowered(kernelText("arith.addf", "%xv", "%yv", false));
  std::vector<float> x = xs(16), y = ys(16), out(12, -1.0f);
  LaunchResult r = launchOn(k, x, y, out, 16, 0, 2);
  REQUIRE(r.error.empty());
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->op == "tt.store");
  CHECK(r.fault->location == "k.py:9:4");
  CHECK(r.fault->program == std::array<int64_t, 3>{1, 0, 0});
  CHECK(r.fault->element == 4);
  CHECK(out == std::vector<float>(12, -1.0f)); // program 0's block was not written back either
}

TEST_CASE("a forwarded store into a view overlapping its input reads the input first") {
  // One buffer b = 1..9; x = b[0..8), out = b[1..9): out[i] = x[i] * 2 reads the old b[i]
  // for every lane, since the load made its block before the store wrote any of them.
  LoadedKernel k = lowered(kernelText("arith.mulf", "%xv", "%sv", false));
  std::vector<float> b = xs(9), y = ys(8);
  View x = viewOf(b, DType::F32), out = viewOf(b, DType::F32);
  x.shape = {8};
  out.shape = {8};
  out.address += 4;
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", x), pointer("y", viewOf(y, DType::F32)),
                           pointer("out", out)},
                          args(8, 2.0), {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  CHECK(b == std::vector<float>{1, 2, 4, 6, 8, 10, 12, 14, 16});
}

namespace {
/// One launch through the launch layer, with the plan options given.
interp::LaunchResult launchWith(const interp::Kernel &kernel, std::vector<float> &x,
                                std::vector<float> &y, std::vector<float> &out, int64_t programs,
                                interp::PlanOptions plan, Session &session) {
  interp::Launcher launcher(session);
  interp::LaunchRequest request;
  request.kernel = &kernel;
  request.kernelHash = "forwarded-store-test";
  request.pointers = {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
                      pointer("out", viewOf(out, DType::F32))};
  request.values = args(int64_t(out.size()), 0);
  request.plan = plan;
  request.run.grid = {programs, 1, 1};
  return launcher.launch(request);
}
} // namespace

TEST_CASE("in place, a forwarded store writes the caller's memory directly") {
  LoadedKernel k = lowered(kernelText("arith.subf", "%xv", "%yv", false));
  std::vector<float> x = xs(16), y = ys(16), out(16, -1.0f);
  Session::Options options;
  options.inPlace = true;
  Session session(options);
  interp::PlanOptions plan;
  plan.inPlace = true;
  interp::LaunchResult r = launchWith(*k.kernel, x, y, out, 2, plan, session);
  REQUIRE(r.status == interp::LaunchResult::Status::Ran);
  for (size_t i = 0; i < 16; ++i) // before any step: the stores went to the caller's bytes
    CHECK(out[i] == x[i] - y[i]);
}

TEST_CASE("hazard tracking sees a forwarded store's writes") {
  // out has 8 elements and both programs store all 8: a write-after-write between them.
  LoadedKernel k = lowered(R"(
#st = loc("k.py":9:4)
module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32, %s: f32) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %xv = tt.load %xp : tensor<8x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %yv = tt.load %yp : tensor<8x!tt.ptr<f32>>
    %v = arith.addf %xv, %yv : tensor<8xf32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %op, %v : tensor<8x!tt.ptr<f32>> loc(#st)
    tt.return
  }
}
)");
  std::vector<float> x = xs(8), y = ys(8), out(8, -1.0f);
  Session session;
  interp::PlanOptions plan;
  plan.hazards = true;
  interp::LaunchResult r = launchWith(*k.kernel, x, y, out, 2, plan, session);
  REQUIRE(r.status == interp::LaunchResult::Status::Ran);
  REQUIRE(r.hazards.size() == 1);
  CHECK(r.hazards[0].kind == "write-after-write");
  CHECK(r.hazards[0].first == std::array<int64_t, 3>{0, 0, 0});
  CHECK(r.hazards[0].second == std::array<int64_t, 3>{1, 0, 0});
  CHECK(r.hazards[0].bytes == 32);
  CHECK(r.hazards[0].firstOp == "tt.store");
  CHECK(r.hazards[0].secondLocation == "k.py:9:4");
  std::string error;
  REQUIRE(session.step(error));
  for (size_t i = 0; i < 8; ++i)
    CHECK(out[i] == x[i] + y[i]);
}
