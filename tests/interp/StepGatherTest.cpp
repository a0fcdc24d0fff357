//===- StepGatherTest.cpp - Loads through offsets that step: `w + c + offs // d` -===//
//
// A 1-D tt.load through `addptr(splat(w), splat(c) + (splat(start) + make_range) / splat(d))`
// (a group norm's weight per channel) reads one element a run of lanes that share a
// quotient (Fusion.h, StepGather), and falls back to the offsets as the unfused ops make them
// when the divisor is not above 1, a numerator or an offset wraps, or the mask is not the
// numerator's bound. Every expected value and fault here is worked out by plain loops from
// the ops' definitions: i32 sums wrap, arith.divsi truncates, a quotient by zero is all ones
// (docs/semantics.md), MIN / -1 is MIN, masked-off lanes take `other`.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <climits>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// out[pid * 64 + i] = load(w + c + (start + 64 * pid + i) / d, mask, -7.0) for 64 lanes;
/// the mask is `start + 64 * pid + i < n` (the numerator's bound) or, with `rangeMask`,
/// `i < n` (a mask of another range).
std::string kernel(bool rangeMask) {
  return subst(R"(
module {
  tt.func public @k(%w: !tt.ptr<f32>, %out: !tt.ptr<f32>, %start: i32, %d: i32, %c: i32, %n: i32) {
    %pid = tt.get_program_id x : i32
    %c64 = arith.constant 64 : i32
    %row = arith.muli %pid, %c64 : i32
    %first = arith.addi %start, %row : i32
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %s = tt.splat %first : i32 -> tensor<64xi32>
    %num = arith.addi %s, %r : tensor<64xi32>
    %ds = tt.splat %d : i32 -> tensor<64xi32>
    %q = arith.divsi %num, %ds : tensor<64xi32>
    %cs = tt.splat %c : i32 -> tensor<64xi32>
    %off = arith.addi %cs, %q : tensor<64xi32>
    %ns = tt.splat %n : i32 -> tensor<64xi32>
    %mask = arith.cmpi slt, $MASKED, %ns : tensor<64xi32>
    %wb = tt.splat %w : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %wp = tt.addptr %wb, %off : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %other = arith.constant dense<-7.0> : tensor<64xf32>
    %v = tt.load %wp, %mask, %other : tensor<64x!tt.ptr<f32>>
    %rs = tt.splat %row : i32 -> tensor<64xi32>
    %to = arith.addi %rs, %r : tensor<64xi32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %op = tt.addptr %ob, %to : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %op, %v : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$MASKED", rangeMask ? "%r" : "%num"}});
}

struct Case {
  int32_t start, d, c, n;
  int programs = 1;
};

/// The unfused ops, lane by lane: the offset each lane loads from, and whether it is active.
int32_t laneOffset(const Case &k, int pid, int i) {
  const int32_t num = int32_t(uint32_t(k.start) + uint32_t(64 * pid + i));
  int32_t q;
  if (k.d == 0)
    q = -1;
  else if (num == INT32_MIN && k.d == -1)
    q = INT32_MIN;
  else
    q = num / k.d;
  return int32_t(uint32_t(k.c) + uint32_t(q));
}
bool laneActive(const Case &k, int pid, int i, bool rangeMask) {
  const int32_t num = int32_t(uint32_t(k.start) + uint32_t(64 * pid + i));
  return (rangeMask ? i : num) < k.n;
}

std::vector<float> weights(size_t n) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i)
    w[i] = 0.5f * float(i) + 1.0f;
  return w;
}

/// Runs the kernel on `threads` threads; out must equal the lane-by-lane definition.
void check(const Case &k, bool rangeMask, unsigned threads = 1) {
  LoadedKernel lk = loadKernel(kernel(rangeMask));
  REQUIRE_MESSAGE(lk.kernel, lk.error);
  std::vector<float> w = weights(64), out(size_t(64 * k.programs), 3.0f);
  std::vector<float> expected(out.size());
  for (int pid = 0; pid < k.programs; ++pid)
    for (int i = 0; i < 64; ++i)
      expected[size_t(64 * pid + i)] =
          laneActive(k, pid, i, rangeMask) ? w.at(size_t(laneOffset(k, pid, i))) : -7.0f;
  LaunchResult r = launch(
      *lk.kernel, {pointer("w", viewOf(w, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      {ptrArg(0), ptrArg(1), intArg(k.start), intArg(k.d), intArg(k.c), intArg(k.n)},
      {k.programs, 1, 1}, threads);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  CHECK(out == expected);
}

} // namespace

TEST_CASE("a load through offs // d reads each run's element: channels, a masked tail, programs") {
  // Runs of 8 lanes (w[c + q]); the second and third programs start at 64 and 128.
  SUBCASE("whole runs") { check({0, 8, 0, 1 << 30, 3}, false); }
  SUBCASE("two threads") { check({0, 8, 0, 1 << 30, 3}, false, 2); }
  // 5 + i < 40: lanes 35..63 are masked off (other); runs of 7 start mid-run (5 / 7 = 0).
  SUBCASE("a bound inside a run") { check({5, 7, 3, 40}, false); }
  // Negative numerators truncate toward zero: -10 / 4 = -2, and quotient 0 spans -3..3.
  SUBCASE("negative numerators") { check({-10, 4, 5, 64}, false); }
  // A divisor larger than every numerator: one run.
  SUBCASE("one run") { check({0, 1000, 17, 64}, false); }
}

TEST_CASE("offs // d that the run form does not take gives the ops' own offsets") {
  // d = 1: every lane its own element (offset c + start + i).
  SUBCASE("divisor 1") { check({0, 1, 0, 64}, false); }
  // A negative divisor: offsets fall as lanes rise (63 - i).
  SUBCASE("negative divisor") { check({0, -1, 63, 64}, false); }
  // A quotient by zero is all ones: every lane reads w[c - 1].
  SUBCASE("divisor 0") { check({0, 0, 1, 64}, false); }
  // start + i wraps after lane 10: quotients 31, then -32 (INT32_MIN / 2^26) and -31.
  SUBCASE("wrapping numerators") { check({INT32_MAX - 10, 1 << 26, 32, INT32_MAX}, false); }
  // Every lane masked off: nothing is read, whatever the offsets (here they would wrap).
  SUBCASE("no active lane") { check({0, 1 << 5, INT32_MAX - 1, 0}, false); }
  // The mask bounds the range itself, not the numerator: read as a block of lanes.
  SUBCASE("a mask of another range") { check({4, 8, 2, 50}, true); }
}

TEST_CASE("a step gather outside its buffer faults at the first lane of the first bad run") {
  // Offsets 60 + i / 4: lane 16 is the first to reach w[64], one past the end. Offsets
  // INT32_MIN + 2 + (i - 40) / 8 wrap for quotients below -2 (lane 0's -40 / 8 = -5 gives
  // INT32_MAX - 2, 8 GiB past w): the ops' offsets, with lane 0 the first fault.
  struct Bad {
    int32_t start, c;
    int64_t element;
  };
  for (Bad bad : {Bad{0, 60, 16}, Bad{-40, INT32_MIN + 2, 0}}) {
    LoadedKernel lk = loadKernel(kernel(false));
    REQUIRE_MESSAGE(lk.kernel, lk.error);
    std::vector<float> w = weights(64), out(64, 3.0f);
    const std::vector<float> before = out;
    for (unsigned threads : {1u, 2u}) {
      LaunchResult r =
          launch(*lk.kernel,
                 {pointer("w", viewOf(w, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                 {ptrArg(0), ptrArg(1), intArg(bad.start), intArg(bad.start < 0 ? 8 : 4),
                  intArg(bad.c), intArg(1 << 30)},
                 {1, 1, 1}, threads);
      REQUIRE(r.error.empty());
      REQUIRE(r.fault);
      CHECK(r.fault->kind == "out_of_bounds");
      CHECK(r.fault->op == "tt.load");
      REQUIRE(r.fault->element);
      CHECK(*r.fault->element == bad.element);
      CHECK(out == before);
    }
  }
}

TEST_CASE("a step gather is one instruction: its offsets, division and mask are not run") {
  // A constant divisor, the addend on the right: load and store are the block's only two
  // instructions (3 steps); had the offsets been built, the step limit would stop it.
  LoadedKernel lk = loadKernel(R"(
module {
  tt.func public @k(%w: !tt.ptr<f32>, %out: !tt.ptr<f32>, %c: i32, %n: i32) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %d = arith.constant dense<16> : tensor<64xi32>
    %q = arith.divsi %r, %d : tensor<64xi32>
    %cs = tt.splat %c : i32 -> tensor<64xi32>
    %off = arith.addi %q, %cs : tensor<64xi32>
    %ns = tt.splat %n : i32 -> tensor<64xi32>
    %mask = arith.cmpi slt, %r, %ns : tensor<64xi32>
    %wb = tt.splat %w : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %wp = tt.addptr %wb, %off : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %v = tt.load %wp, %mask : tensor<64x!tt.ptr<f32>>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %op, %v : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(lk.kernel, lk.error);
  std::vector<float> w = weights(8), out(64, 3.0f);
  LaunchResult r = launch(
      *lk.kernel, {pointer("w", viewOf(w, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      {ptrArg(0), ptrArg(1), intArg(2), intArg(50)}, {1, 1, 1}, 1, /*maxSteps=*/3);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  // Lane i < 50 reads w[2 + i / 16]: 2.0, 2.5, 3.0, 3.5 by sixteens; lanes 50.. are 0
  // (masked off without `other`).
  for (int i = 0; i < 64; ++i)
    CHECK(out[size_t(i)] == (i < 50 ? 0.5f * float(2 + i / 16) + 1.0f : 0.0f));
}
