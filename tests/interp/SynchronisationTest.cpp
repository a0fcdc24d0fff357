//===- SynchronisationTest.cpp - Hazard checking that honours release and acquire -===//
//
// Programs that hand data to each other through a flag or a lock (decoupled look-back,
// the layer norm tutorial's locked gradient sums) are ordered by their atomics' release
// and acquire semantics, so hazard checking reports nothing; the same kernels with the
// ordering taken away (relaxed, or CTA scope, which orders nothing between programs) race.
// Kernels: tests/data/kernels/spin_wait (Triton 3.9), variants by editing their `sem` and
// `scope`. Expected sums are worked out here.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include "ttinterp/memory/Hazards.h"

#include <fstream>
#include <numeric>
#include <sstream>

using namespace ttinterp;
using namespace ttinterp::test;
using Order = interp::LaunchOptions::Order;

namespace {

std::string kernelText(const std::string &name) {
  std::ifstream in(source("tests/data/kernels/spin_wait/" + name + ".ttir"));
  std::stringstream text;
  text << in.rdbuf();
  REQUIRE(!text.str().empty());
  return text.str();
}

/// One launch with hazard tracking on, in `order`; the hazards found, and the fault if any.
struct Tracked {
  std::optional<interp::Fault> fault;
  std::vector<Hazard> hazards;
};

Tracked launchTracked(const std::string &text, const std::vector<PointerArgument> &ptrs,
                      const std::vector<interp::ArgumentValue> &args, int64_t programs,
                      Order order) {
  LoadedKernel k = loadKernel(text);
  REQUIRE_MESSAGE(k.kernel, k.error);
  Session session;
  LaunchMemory memory;
  std::string error;
  REQUIRE_MESSAGE(session.prepare(withKernelAccess(*k.kernel, ptrs, args), memory, error), error);
  HazardTracker tracker;
  memory.setHazardTracker(&tracker);
  interp::LaunchOptions options;
  options.grid = {programs, 1, 1};
  options.order = order;
  options.shuffleSeed = 5;
  Tracked t;
  t.fault = k.kernel->run(args, memory, options);
  t.hazards = tracker.hazards();
  if (t.fault)
    session.abandon();
  else
    REQUIRE_MESSAGE(session.step(error), error);
  return t;
}

constexpr int kPrograms = 6, kBlock = 8;

/// Runs locked_sum (from `text`) over six programs' blocks; checks the sum, returns hazards.
std::vector<Hazard> lockedSum(const std::string &text, Order order) {
  std::vector<int32_t> x(kPrograms * kBlock), acc(kBlock, -1), lock(1, 0), count(1, 0);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = int32_t(i * 7 % 13) - 6;
  Tracked t = launchTracked(
      text,
      {pointer("x", viewOf(x, DType::I32)), pointer("acc", viewOf(acc, DType::I32)),
       pointer("lock", viewOf(lock, DType::I32)), pointer("count", viewOf(count, DType::I32))},
      {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3)}, kPrograms, order);
  REQUIRE_MESSAGE(!t.fault, (t.fault ? t.fault->message : ""));
  // Column j of the sum: every program's element j, whoever took the lock first.
  for (int j = 0; j < kBlock; ++j) {
    int32_t expected = 0;
    for (int p = 0; p < kPrograms; ++p)
      expected += x[size_t(p * kBlock + j)];
    CHECK(acc[size_t(j)] == expected);
  }
  CHECK(lock[0] == 0);
  CHECK(count[0] == 1);
  return t.hazards;
}

/// `text` with the first occurrence of `from` replaced by `to` (one op's ordering).
std::string edited(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("a lock handing an accumulator from program to program is not a hazard") {
  const std::string text = kernelText("locked_sum");
  for (Order order : {Order::Forward, Order::Reverse, Order::Shuffled}) {
    CAPTURE(int(order));
    CHECK(lockedSum(text, order).empty());
  }
}

TEST_CASE("a lock released without release semantics, or at CTA scope, orders nothing") {
  const std::string text = kernelText("locked_sum");
  const std::string unlock = "tt.atomic_rmw exch, acq_rel, gpu, %lock_ptr";
  for (const std::string &release : {std::string("tt.atomic_rmw exch, relaxed, gpu, %lock_ptr"),
                                     std::string("tt.atomic_rmw exch, acq_rel, cta, %lock_ptr")}) {
    CAPTURE(release);
    std::vector<Hazard> hazards = lockedSum(edited(text, unlock, release), Order::Forward);
    REQUIRE(!hazards.empty());
    // Program 1 reads the accumulator program 0 stored: nothing orders the two now.
    CHECK(hazards[0].kind == HazardKind::ReadAfterWrite);
    CHECK(hazards[0].firstProgram == 0);
    CHECK(hazards[0].secondProgram == 1);
  }
}

TEST_CASE("decoupled look-back is ordered by its flags in every program order") {
  const std::string text = kernelText("lookback_cumsum");
  auto run = [](const std::string &kernel, Order order) {
    std::vector<int32_t> x(kPrograms * kBlock), out(x.size(), -1), flags(kPrograms, 0),
        carry(kPrograms, 0);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = int32_t(i * 5 % 9) - 4;
    Tracked t = launchTracked(
        kernel,
        {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32)),
         pointer("flags", viewOf(flags, DType::I32)), pointer("carry", viewOf(carry, DType::I32))},
        {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3)}, kPrograms, order);
    REQUIRE_MESSAGE(!t.fault, (t.fault ? t.fault->message : ""));
    std::vector<int32_t> expected(x.size());
    std::partial_sum(x.begin(), x.end(), expected.begin());
    CHECK(out == expected);
    return t.hazards;
  };
  // In reverse order every program but the first waits for its predecessor: the waiting
  // program keeps what it acquired across the programs that run meanwhile.
  for (Order order : {Order::Forward, Order::Reverse, Order::Shuffled}) {
    CAPTURE(int(order));
    CHECK(run(text, order).empty());
  }
  // The flag read relaxed: program p reads carry[p - 1] unordered after program p - 1 wrote it.
  std::vector<Hazard> relaxed = run(
      edited(text, "tt.atomic_load acquire, gpu", "tt.atomic_load relaxed, gpu"), Order::Forward);
  REQUIRE(relaxed.size() == size_t(kPrograms - 1));
  for (int p = 1; p < kPrograms; ++p) {
    const Hazard &h = relaxed[size_t(p - 1)];
    CHECK(h.kind == HazardKind::ReadAfterWrite);
    CHECK(h.firstProgram == p - 1);
    CHECK(h.secondProgram == p);
    CHECK(h.hi - h.lo == 4); // one carry
  }
}
