//===- ScalarAccessTest.cpp - Loads and stores of one element through a scalar pointer -===//
//
// Scalar accesses (a row's mean, a flag, a parameter read from memory) skip the lane-run
// machinery of tensor accesses. These kernels check that they keep its rules: a masked-off
// store writes nothing, a masked-off load gives `other` (or 0) without touching memory,
// even where the pointer is out of bounds, and an unmasked out-of-bounds access faults.
// Expected values are worked out by hand in each test.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// Program p of 4: active = p is even; `ptr` = x + p, or x + 1000 (out of bounds) for odd p.
const char *kPrologue = R"(
    %pid = tt.get_program_id x : i32
    %c2 = arith.constant 2 : i32
    %c0 = arith.constant 0 : i32
    %c1000 = arith.constant 1000 : i32
    %rem = arith.remsi %pid, %c2 : i32
    %active = arith.cmpi eq, %rem, %c0 : i32
    %far = arith.select %active, %pid, %c1000 : i32
    %xp = tt.addptr %x, %far : !tt.ptr<f32>, i32
    %op = tt.addptr %out, %pid : !tt.ptr<f32>, i32
)";

LaunchResult run(const std::string &body, std::vector<float> &x, std::vector<float> &out) {
  LoadedKernel k = loadKernel(subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
$PROLOGUE
$BODY
    tt.return
  }
}
)",
                                    {{"$PROLOGUE", kPrologue}, {"$BODY", body}}));
  REQUIRE_MESSAGE(k.kernel, k.error);
  return launch(*k.kernel,
                {pointer("x", viewOf(x, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                {ptrArg(0), ptrArg(1)}, {4, 1, 1});
}

} // namespace

TEST_CASE("a masked-off scalar load gives other without reading its out-of-bounds pointer") {
  std::vector<float> x = {10, 11, 12, 13}, out(4, -1.0f);
  LaunchResult r = run(R"(
    %other = arith.constant 7.5 : f32
    %v = tt.load %xp, %active, %other : !tt.ptr<f32>
    tt.store %op, %v : !tt.ptr<f32>
)",
                       x, out);
  REQUIRE_FALSE(r.fault);
  CHECK(out == std::vector<float>{10, 7.5f, 12, 7.5f});
}

TEST_CASE("a masked-off scalar load without other gives 0") {
  std::vector<float> x = {10, 11, 12, 13}, out(4, -1.0f);
  LaunchResult r = run(R"(
    %v = tt.load %xp, %active : !tt.ptr<f32>
    tt.store %op, %v : !tt.ptr<f32>
)",
                       x, out);
  REQUIRE_FALSE(r.fault);
  CHECK(out == std::vector<float>{10, 0, 12, 0});
}

TEST_CASE("a masked-off scalar store writes nothing, even through an out-of-bounds pointer") {
  std::vector<float> x = {10, 11, 12, 13}, out(4, -1.0f);
  // Even programs store 2.5 * pid to x[pid]; odd ones point 1000 past x, masked off.
  LaunchResult r = run(R"(
    %f = arith.sitofp %pid : i32 to f32
    %k = arith.constant 2.5 : f32
    %v = arith.mulf %f, %k : f32
    tt.store %xp, %v, %active : !tt.ptr<f32>
)",
                       x, out);
  REQUIRE_FALSE(r.fault);
  CHECK(x == std::vector<float>{0, 11, 5, 13});
}

TEST_CASE("an unmasked out-of-bounds scalar load faults at element 0 of program 1") {
  std::vector<float> x = {10, 11, 12, 13}, out(4, -1.0f);
  LaunchResult r = run(R"(
    %v = tt.load %xp : !tt.ptr<f32>
    tt.store %op, %v : !tt.ptr<f32>
)",
                       x, out);
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->op == "tt.load");
  CHECK(r.fault->program[0] == 1);
  CHECK(r.fault->element == 0);
  CHECK(out == std::vector<float>{-1, -1, -1, -1}); // a failed launch writes nothing back
}
