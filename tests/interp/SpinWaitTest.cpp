//===- SpinWaitTest.cpp - Programs that wait for each other run in any order -===//
//
// Issue 15, item 5: a program spinning on memory that only another program sets waits
// for the others instead of hanging, in the forward, reverse and shuffled orders that
// `ttinterp check` uses; a wait nobody ends is a spin_wait fault naming the programs,
// with every caller byte unchanged. Kernels: tests/data/kernels/spin_wait (Triton 3.9).
// Expected values are prefix sums and counts worked out here.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <numeric>

using namespace ttinterp;
using namespace ttinterp::test;
using Order = interp::LaunchOptions::Order;

namespace {
LoadedKernel spinKernel(const std::string &name) {
  LoadedKernel k = loadKernel(source("tests/data/kernels/spin_wait/" + name + ".ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return k;
}
} // namespace

TEST_CASE("decoupled look-back gives the prefix sum in every program order") {
  LoadedKernel k = spinKernel("lookback_cumsum");
  const int programs = 16, block = 8, n = programs * block;
  for (const auto &run : {std::pair{Order::Forward, 0}, {Order::Reverse, 0},
                          {Order::Shuffled, 1}, {Order::Shuffled, 7}}) {
    // Named, not structured bindings: CAPTURE cannot capture those (clang 14).
    const Order order = run.first;
    const int seed = run.second;
    CAPTURE(int(order));
    CAPTURE(seed);
    std::vector<int32_t> x(n), out(n, -1), flags(programs, 0), carry(programs, 0);
    for (int i = 0; i < n; ++i)
      x[size_t(i)] = (i * 37) % 11 - 5;
    LaunchResult r = launch(*k.kernel,
                            {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32)),
                             pointer("flags", viewOf(flags, DType::I32)),
                             pointer("carry", viewOf(carry, DType::I32))},
                            {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3)}, {programs, 1, 1}, 1, 0,
                            order, uint64_t(seed));
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    std::vector<int32_t> expected(n);
    std::partial_sum(x.begin(), x.end(), expected.begin());
    CHECK(out == expected);
    CHECK(flags == std::vector<int32_t>(programs, 1));
  }
}

TEST_CASE("a grid-wide barrier completes: every program sees all arrivals") {
  LoadedKernel k = spinKernel("grid_barrier");
  for (Order order : {Order::Forward, Order::Reverse, Order::Shuffled}) {
    std::vector<int32_t> counter(1, 0), out(6, 0);
    LaunchResult r = launch(*k.kernel,
                            {pointer("counter", viewOf(counter, DType::I32)),
                             pointer("out", viewOf(out, DType::I32))},
                            {ptrArg(0), ptrArg(1), intArg(6)}, {6, 1, 1}, 1, 0, order, 3);
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    CHECK(counter[0] == 6);
    CHECK(out == std::vector<int32_t>(6, 6));
  }
}

TEST_CASE("a barrier waiting for more programs than the grid has is a spin_wait fault") {
  LoadedKernel k = spinKernel("grid_barrier");
  std::vector<int32_t> counter(1, 0), out(4, -1);
  LaunchResult r = launch(*k.kernel,
                          {pointer("counter", viewOf(counter, DType::I32)),
                           pointer("out", viewOf(out, DType::I32))},
                          {ptrArg(0), ptrArg(1), intArg(5)}, {4, 1, 1});
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "spin_wait");
  CHECK(r.fault->op == "scf.while");
  CHECK(r.fault->program == std::array<int64_t, 3>{0, 0, 0}); // the lowest waiting program
  CHECK(r.fault->message.find("4 program(s) wait") != std::string::npos);
  CHECK(r.fault->location.find("spin_wait.py:33") != std::string::npos);
  // Transactional: nothing the programs did reaches the caller.
  CHECK(counter[0] == 0);
  CHECK(out == std::vector<int32_t>(4, -1));
}

TEST_CASE("with several threads a look-back still completes: its programs run one at a time") {
  LoadedKernel k = spinKernel("lookback_cumsum");
  const int programs = 64, block = 8, n = programs * block;
  std::vector<int32_t> x(n, 1), out(n, 0), flags(programs, 0), carry(programs, 0);
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32)),
                           pointer("flags", viewOf(flags, DType::I32)),
                           pointer("carry", viewOf(carry, DType::I32))},
                          {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3)}, {programs, 1, 1}, 2);
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  for (int i = 0; i < n; ++i)
    CHECK(out[size_t(i)] == i + 1);
}
