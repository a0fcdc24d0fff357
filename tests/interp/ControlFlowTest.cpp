//===- ControlFlowTest.cpp - Calls, recursion, branches and the step limit -===//
//
// Expected values are worked out by hand (5! = 120; the branch taken by each program).
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// Runs a kernel `@k(%out: !tt.ptr<i32>)` over one program and returns out[0].
std::pair<int32_t, std::optional<interp::Fault>> runScalar(const std::string &ttir,
                                                           uint64_t maxSteps = 0,
                                                           int64_t programs = 1) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> out(size_t(programs), -1);
  LaunchResult r = launch(*k.kernel, {pointer("out", viewOf(out, DType::I32))}, {ptrArg(0)},
                          {programs, 1, 1}, 1, maxSteps);
  return {out[0], r.fault};
}
} // namespace

TEST_CASE("tt.call runs a recursive callee, each activation with its own values") {
  std::string ttir = R"(
module {
  tt.func private @fact(%n: i32) -> i32 {
    %c1 = arith.constant 1 : i32
    %small = arith.cmpi sle, %n, %c1 : i32
    %r = scf.if %small -> (i32) {
      scf.yield %c1 : i32
    } else {
      %m = arith.subi %n, %c1 : i32
      %f = tt.call @fact(%m) : (i32) -> i32
      %p = arith.muli %n, %f : i32
      scf.yield %p : i32
    }
    tt.return %r : i32
  }
  tt.func public @k(%out: !tt.ptr<i32>) {
    %c5 = arith.constant 5 : i32
    %v = tt.call @fact(%c5) : (i32) -> i32
    tt.store %out, %v : !tt.ptr<i32>
    tt.return
  }
}
)";
  auto [value, fault] = runScalar(ttir);
  REQUIRE_FALSE(fault);
  CHECK(value == 120);
}

TEST_CASE("runaway recursion is a call_depth fault, not a crash") {
  std::string ttir = R"(
module {
  tt.func private @forever(%n: i32) -> i32 {
    %r = tt.call @forever(%n) : (i32) -> i32
    tt.return %r : i32
  }
  tt.func public @k(%out: !tt.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %v = tt.call @forever(%c0) : (i32) -> i32 loc(#site)
    tt.store %out, %v : !tt.ptr<i32>
    tt.return
  }
}
#site = loc("rec.py":4:8)
)";
  auto [value, fault] = runScalar(ttir);
  REQUIRE(fault);
  CHECK(fault->kind == "call_depth");
  CHECK(value == -1);
}

TEST_CASE("a top-level if with an early return branches per program (cf.cond_br)") {
  // Program 0 returns before its store; program 1 stores 7.
  std::string ttir = R"(
module {
  tt.func public @k(%out: !tt.ptr<i32>) {
    %pid = tt.get_program_id x : i32
    %c0 = arith.constant 0 : i32
    %first = arith.cmpi eq, %pid, %c0 : i32
    cf.cond_br %first, ^bb1, ^bb2
  ^bb1:
    tt.return
  ^bb2:
    %p = tt.addptr %out, %pid : !tt.ptr<i32>, i32
    %c7 = arith.constant 7 : i32
    tt.store %p, %c7 : !tt.ptr<i32>
    tt.return
  }
}
)";
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> out(2, -1);
  LaunchResult r = launch(*k.kernel, {pointer("out", viewOf(out, DType::I32))}, {ptrArg(0)},
                          {2, 1, 1});
  REQUIRE_FALSE(r.fault);
  CHECK(out[0] == -1);
  CHECK(out[1] == 7);
}

TEST_CASE("--max-steps stops a runaway loop with a step_limit fault at the loop") {
  // The counter changes every iteration: not a wait for another program (SpinWaitTest),
  // a loop that would run for 2^31 iterations.
  std::string ttir = R"(
module {
  tt.func public @k(%out: !tt.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.while (%i = %c0) : (i32) -> i32 {
      %go = arith.cmpi sge, %i, %c0 : i32
      scf.condition(%go) %i : i32
    } do {
    ^bb0(%j: i32):
      %n = arith.addi %j, %c1 : i32
      scf.yield %n : i32
    } loc(#loop)
    tt.store %out, %r : !tt.ptr<i32>
    tt.return
  }
}
#loop = loc("spin.py":9:4)
)";
  auto [value, fault] = runScalar(ttir, 10000);
  REQUIRE(fault);
  CHECK(fault->kind == "step_limit");
  CHECK(fault->location == "spin.py:9:4");
  CHECK(fault->message.find("10000") != std::string::npos);
  CHECK(value == -1);
}

TEST_CASE("gdc_wait and gdc_launch_dependents run as no-ops in 3.9's ops and in 3.8's PTX") {
  // Triton 3.9 prints tt.grid_dependency_*; 3.8 and earlier the same instructions as inline
  // PTX with a dummy result. Either way the kernel stores 7; any other PTX is refused.
  for (
      const char *wait :
      {"tt.grid_dependency_wait",
       R"(%d0 = tt.elementwise_inline_asm "griddepcontrol.wait; // dummy $0" {constraints = "=r", packed_element = 1 : i32, pure = false} -> i32)"})
    for (
        const char *launch :
        {"tt.grid_dependency_launch_dependents",
         R"(%d1 = tt.elementwise_inline_asm "griddepcontrol.launch_dependents; // dummy $0" {constraints = "=r", packed_element = 1 : i32, pure = false} -> i32)"}) {
      CAPTURE(wait);
      CAPTURE(launch);
      std::string ttir = subst(R"(
module {
  tt.func public @k(%out: !tt.ptr<i32>) {
    $WAIT
    %c7 = arith.constant 7 : i32
    $LAUNCH
    tt.store %out, %c7 : !tt.ptr<i32>
    tt.return
  }
}
)",
                               {{"$WAIT", wait}, {"$LAUNCH", launch}});
      auto [value, fault] = runScalar(ttir);
      REQUIRE_FALSE(fault);
      CHECK(value == 7);
    }
  LoadedKernel other = loadKernel(R"(
module {
  tt.func public @k(%out: !tt.ptr<i32>) {
    %d = tt.elementwise_inline_asm "griddepcontrol.wait; nanosleep.u32 1;" {constraints = "=r", packed_element = 1 : i32, pure = false} -> i32
    tt.store %out, %d : !tt.ptr<i32>
    tt.return
  }
}
)");
  CHECK_FALSE(other.kernel);
  CHECK(other.error.find("inline PTX assembly cannot be interpreted on the CPU") !=
        std::string::npos);
}
