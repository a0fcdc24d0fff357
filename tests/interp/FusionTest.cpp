//===- FusionTest.cpp - Fused contiguous tt.load/tt.store against the lane-by-lane form ===//
//
// tt.load/tt.store of addptr(splat(base), splat(start) + make_range) masked by
// `offsets < splat(n)` run as one contiguous access (interp/lib/Fusion.h). Each
// kernel here comes in two spellings: the fused one, and one whose offsets go
// through `arith.muli %offsets, 1`, which the matcher does not recognise, so it
// runs lane by lane. Every expected value and fault is worked out by hand from
// the ops' definitions (i32 offsets wrap; pointers advance by offset * 4 bytes);
// both spellings must give exactly that.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <climits>
#include <utility>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// %offs = splat(%start) + make_range(0, 8), spelled so that fusion matches it or not.
std::string offsets(bool fused, bool rangeFirst = false) {
  std::string add = rangeFirst ? "arith.addi %r, %s" : "arith.addi %s, %r";
  if (fused)
    return "    %offs = " + add + " : tensor<8xi32>";
  return "    %sum = " + add + " : tensor<8xi32>\n" +
         "    %one = arith.constant dense<1> : tensor<8xi32>\n" +
         "    %offs = arith.muli %sum, %one : tensor<8xi32>";
}

/// The mask of the access under test.
enum class Mask { None, Slt, Ult, PrefixSlot, EvenSlot };

std::string maskDef(Mask m) {
  switch (m) {
  case Mask::None:
    return "";
  case Mask::Slt:
    return "    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>";
  case Mask::Ult:
    return "    %m = arith.cmpi ult, %offs, %ns : tensor<8xi32>";
  case Mask::PrefixSlot:
    return "    %m = arith.constant dense<[true, true, true, false, false, false, false, false]> : "
           "tensor<8xi1>";
  case Mask::EvenSlot:
    return "    %m = arith.constant dense<[true, false, true, false, true, false, true, false]> : "
           "tensor<8xi1>";
  }
  return "";
}

/// Load kernel: program p loads lanes i = 0..7 of x' + (start0 + 8p + i) (x' = x +
/// shift elements), masked, and stores all 8 lanes to out[8p + i].
///   @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %start0: i32, %n: i32, %shift: i64)
std::string loadTTIR(bool fused, Mask mask, bool other, bool rangeFirst = false) {
  std::string args = mask == Mask::None ? "" : other ? ", %m, %o" : ", %m";
  return subst(
      R"(
#x = loc("x"("k.py":1:1))
#out = loc("out"("k.py":1:1))
module {
  tt.func public @k(%x: !tt.ptr<i32> loc(#x), %out: !tt.ptr<i32> loc(#out), %start0: i32, %n: i32, %shift: i64) {
    %pid = tt.get_program_id x : i32
    %c8 = arith.constant 8 : i32
    %po = arith.muli %pid, %c8 : i32
    %start = arith.addi %start0, %po : i32
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
$OFFSETS
    %ns = tt.splat %n : i32 -> tensor<8xi32>
$MASK
    %o = arith.constant dense<[-1, -2, -3, -4, -5, -6, -7, -8]> : tensor<8xi32>
    %xs = tt.addptr %x, %shift : !tt.ptr<i32>, i64
    %xb = tt.splat %xs : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %v = tt.load %xp$ARGS : tensor<8x!tt.ptr<i32>> loc("k.py":7:16)
    %pos = tt.splat %po : i32 -> tensor<8xi32>
    %oo = arith.addi %pos, %r : tensor<8xi32>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %oo : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %v : tensor<8x!tt.ptr<i32>> loc("k.py":8:4)
    tt.return
  }
}
)",
      {{"$OFFSETS", offsets(fused, rangeFirst)}, {"$MASK", maskDef(mask)}, {"$ARGS", args}});
}

/// Store kernel: lane i stores i to out + (start + i), masked.
///   @k(%out: !tt.ptr<i32>, %start: i32, %n: i32)
std::string storeTTIR(bool fused, Mask mask) {
  return subst(R"(
#out = loc("out"("k.py":1:1))
module {
  tt.func public @k(%out: !tt.ptr<i32> loc(#out), %start: i32, %n: i32) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
$OFFSETS
    %ns = tt.splat %n : i32 -> tensor<8xi32>
$MASK
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %r$ARGS : tensor<8x!tt.ptr<i32>> loc("k.py":9:4)
    tt.return
  }
}
)",
               {{"$OFFSETS", offsets(fused)},
                {"$MASK", maskDef(mask)},
                {"$ARGS", mask == Mask::None ? "" : ", %m"}});
}

LoadedKernel lowered(const std::string &ttir) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return k;
}

/// Runs a loadTTIR kernel; `out` gets 8 * programs lanes (initially 99).
struct LoadRun {
  std::vector<int32_t> out;
  LaunchResult result;
};
LoadRun runLoad(const std::string &ttir, std::vector<int32_t> &x, int32_t start0, int32_t n,
                int64_t shift = 0, int64_t programs = 1) {
  LoadedKernel k = lowered(ttir);
  LoadRun run;
  run.out.assign(size_t(8 * programs), 99);
  run.result = launch(
      *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(run.out, DType::I32))},
      {ptrArg(0), ptrArg(1), intArg(start0), intArg(n), intArg(shift)}, {programs, 1, 1});
  REQUIRE(run.result.error.empty());
  return run;
}

/// Both spellings of a load kernel give `expected` (and no fault).
void checkLoad(Mask mask, bool other, std::vector<int32_t> &x, int32_t start0, int32_t n,
               const std::vector<int32_t> &expected, int64_t shift = 0, int64_t programs = 1) {
  for (bool fused : {true, false}) {
    INFO((fused ? "fused" : "lane by lane"));
    LoadRun r = runLoad(loadTTIR(fused, mask, other), x, start0, n, shift, programs);
    REQUIRE_MESSAGE(!r.result.fault, (r.result.fault ? r.result.fault->message : ""));
    CHECK(r.out == expected);
  }
}

/// Both spellings fault alike (one buffer, so even the addresses in the
/// messages agree); returns the fused form's fault.
interp::Fault checkLoadFault(Mask mask, std::vector<int32_t> &x, int32_t start0, int32_t n,
                             int64_t shift = 0) {
  LoadRun f = runLoad(loadTTIR(true, mask, false), x, start0, n, shift);
  LoadRun u = runLoad(loadTTIR(false, mask, false), x, start0, n, shift);
  REQUIRE(f.result.fault);
  REQUIRE(u.result.fault);
  CHECK(f.result.fault->kind == u.result.fault->kind);
  CHECK(f.result.fault->message == u.result.fault->message);
  CHECK(f.result.fault->location == u.result.fault->location);
  CHECK(f.result.fault->op == u.result.fault->op);
  CHECK(f.result.fault->program == u.result.fault->program);
  CHECK(f.result.fault->element == u.result.fault->element);
  CHECK(f.result.fault->kind == "out_of_bounds");
  CHECK(f.result.fault->op == "tt.load");
  CHECK(f.result.fault->location == "k.py:7:16");
  return *f.result.fault;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::vector<int32_t> iota(int n, int32_t from) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[size_t(i)] = from + i;
  return v;
}

} // namespace

TEST_CASE("fusion happens: the fused kernel runs only its load and its store") {
  // Everything but the tt.load and the tt.store is elided: one block of 2 instructions
  // counts 3 steps. The lane-by-lane spelling runs its make_range, addi, muli, cmpi and
  // addptrs too.
  for (bool fused : {true, false}) {
    std::string ttir = subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %start: i32, %n: i32) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
$OFFSETS
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %v = tt.load %xp, %m : tensor<8x!tt.ptr<i32>>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %v, %m : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)",
                             {{"$OFFSETS", offsets(fused)}});
    LoadedKernel k = lowered(ttir);
    std::vector<int32_t> x = iota(16, 100), out(16, 0);
    LaunchResult r = launch(
        *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32))},
        {ptrArg(0), ptrArg(1), intArg(2), intArg(7)}, {1, 1, 1}, 1, /*maxSteps=*/3);
    REQUIRE(r.error.empty());
    if (fused) {
      REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
      // Lanes 0..4 (offsets 2..6) are below 7: out[2..7) = x[2..7).
      CHECK(out == std::vector<int32_t>{0, 0, 102, 103, 104, 105, 106, 0, 0, 0, 0, 0, 0, 0, 0, 0});
      CHECK(r.stats.bytesOut == 20);
    } else {
      REQUIRE(r.fault);
      CHECK(r.fault->kind == "step_limit");
    }
  }
}

TEST_CASE("fused load: a masked tail over three programs, with other") {
  // n = 19 over 3 programs of 8: lanes 19..23 are masked off and read other[i % 8].
  std::vector<int32_t> x = iota(24, 100);
  std::vector<int32_t> expected = iota(24, 100);
  expected[19] = -4; // program 2, lane 3
  expected[20] = -5;
  expected[21] = -6;
  expected[22] = -7;
  expected[23] = -8;
  checkLoad(Mask::Slt, true, x, 0, 19, expected, 0, 3);
  // The same through unsigned compares (all offsets are non-negative).
  checkLoad(Mask::Ult, true, x, 0, 19, expected, 0, 3);
  // Without other, masked-off lanes read 0.
  for (int i = 19; i < 24; ++i)
    expected[size_t(i)] = 0;
  checkLoad(Mask::Slt, false, x, 0, 19, expected, 0, 3);
}

TEST_CASE("fused load: the make_range may come first in the add") {
  std::vector<int32_t> x = iota(12, 10);
  LoadRun r = runLoad(loadTTIR(true, Mask::Slt, true, /*rangeFirst=*/true), x, 3, 9);
  REQUIRE_FALSE(r.result.fault);
  // Offsets 3..10, below 9 for lanes 0..5.
  CHECK(r.out == std::vector<int32_t>{13, 14, 15, 16, 17, 18, -7, -8});
}

TEST_CASE("fused load: n at or below the start masks every lane, and nothing is read") {
  // x has 4 elements; offsets 10..17 are all out of bounds but all masked off.
  std::vector<int32_t> x = iota(4, 0);
  checkLoad(Mask::Slt, true, x, 10, 10, {-1, -2, -3, -4, -5, -6, -7, -8});
  checkLoad(Mask::Slt, true, x, 10, -3, {-1, -2, -3, -4, -5, -6, -7, -8});
}

TEST_CASE("fused load: offsets that wrap past INT32_MAX point backwards") {
  // start = INT32_MAX - 1: lanes 0, 1 have offsets 2147483646 and 2147483647; lanes
  // 2..7 wrap to INT32_MIN .. INT32_MIN + 5. The base is x + 2^31 elements, so lane
  // i >= 2 addresses x + 2^31 + (i - 2 - 2^31) = x[i - 2].
  const int32_t start = INT32_MAX - 1;
  const int64_t shift = int64_t(1) << 31;
  SUBCASE("masked by offsets < 100: lanes 0, 1 are off, the wrapped lanes read x 0 to 5") {
    std::vector<int32_t> x{7, 8, 9, 10, 11, 12};
    checkLoad(Mask::Slt, true, x, start, 100, {-1, -2, 7, 8, 9, 10, 11, 12}, shift);
  }
  SUBCASE("a wrapped lane past x's end faults, and names it") {
    // x has 5 elements: lane 7 addresses x[5].
    std::vector<int32_t> x{7, 8, 9, 10, 11};
    interp::Fault f = checkLoadFault(Mask::Slt, x, start, 100, shift);
    CHECK(f.element == 7);
    CHECK(contains(f.message, "element 5 of argument 'x'"));
    CHECK(contains(f.message, "4 bytes past its end"));
  }
  SUBCASE("unmasked, lane 0 is the first to fault: x + 2^31 + (2^31 - 2) elements") {
    std::vector<int32_t> x{7, 8, 9, 10, 11, 12};
    interp::Fault f = checkLoadFault(Mask::None, x, start, 0, shift);
    CHECK(f.element == 0);
    // Element 2^32 - 2 = 4294967294; its last byte is (2^32 - 1) * 4 - 24 past x's end.
    CHECK(contains(f.message, "element 4294967294 of argument 'x'"));
    CHECK(contains(f.message, "17179869156 bytes past its end"));
  }
}

TEST_CASE("fused load: an unsigned compare with a negative start") {
  // start = -3: offsets -3..4. ult 5: -3, -2, -1 are huge unsigned, so lanes 0..2 are
  // off and lanes 3..7 (offsets 0..4) read x[0..5).
  std::vector<int32_t> x = iota(8, 20);
  checkLoad(Mask::Ult, true, x, -3, 5, {-1, -2, -3, 20, 21, 22, 23, 24});
  // Signed, the same lanes are all below 5: lane 0 reads x[-3] and faults.
  interp::Fault f = checkLoadFault(Mask::Slt, x, -3, 5);
  CHECK(f.element == 0);
  CHECK(contains(f.message, "element -3 of argument 'x'"));
  CHECK(contains(f.message, "12 bytes before its start"));
}

TEST_CASE("fused load: n = -1 is everything unsigned and nothing signed") {
  std::vector<int32_t> x = iota(8, 20);
  checkLoad(Mask::Ult, true, x, 0, -1, iota(8, 20));
  checkLoad(Mask::Slt, true, x, 0, -1, {-1, -2, -3, -4, -5, -6, -7, -8});
}

TEST_CASE("fused load: a mask that is not the offsets compare") {
  std::vector<int32_t> x = iota(16, 50);
  SUBCASE("a prefix of lanes") {
    // Lanes 0..2 at offsets 2..4.
    checkLoad(Mask::PrefixSlot, true, x, 2, 0, {52, 53, 54, -4, -5, -6, -7, -8});
  }
  SUBCASE("even lanes") {
    checkLoad(Mask::EvenSlot, true, x, 2, 0, {52, -2, 54, -4, 56, -6, 58, -8});
  }
  SUBCASE("a prefix that stops before the lanes past the end") {
    // x has 8 elements; lanes 6, 7 (offsets 8, 9) would be out of bounds.
    std::vector<int32_t> small = iota(8, 50);
    checkLoad(Mask::PrefixSlot, true, small, 2, 0, {52, 53, 54, -4, -5, -6, -7, -8});
  }
  SUBCASE("even lanes reaching past the end fault at the first such lane") {
    // Lane 6 has offset 8, one past the 8 elements.
    std::vector<int32_t> small = iota(8, 50);
    interp::Fault f = checkLoadFault(Mask::EvenSlot, small, 2, 0);
    CHECK(f.element == 6);
    CHECK(contains(f.message, "element 8 of argument 'x'"));
    CHECK(contains(f.message, "4 bytes past its end"));
  }
}

TEST_CASE("fused load: out of bounds in the contiguous case faults like the lane-by-lane form") {
  // x has 10 elements, start 4, n 100: all lanes on, offsets 4..11; lane 6 reads x[10].
  std::vector<int32_t> x = iota(10, 0);
  interp::Fault f = checkLoadFault(Mask::Slt, x, 4, 100);
  CHECK(f.element == 6);
  CHECK(contains(f.message, "element 10 of argument 'x'"));
  CHECK(contains(f.message, "4 bytes past its end"));
  // In the second program: program (1, 0, 0), offsets 12..19 all past the end.
  LoadRun r = runLoad(loadTTIR(true, Mask::Slt, false), x, 0, 100, 0, 2);
  REQUIRE(r.result.fault);
  CHECK(r.result.fault->program == std::array<int64_t, 3>{1, 0, 0});
  CHECK(r.result.fault->element == 2); // offset 10
  CHECK(contains(r.result.fault->message, "element 10 of argument 'x'"));
  // With n = 10 the same lanes are masked: no fault.
  checkLoad(Mask::Slt, false, x, 4, 10, {4, 5, 6, 7, 8, 9, 0, 0});
}

namespace {
/// Runs a storeTTIR kernel in a session of its own and reports what the launch left
/// pending, before anything is written back or abandoned.
struct StoreRun {
  std::optional<interp::Fault> fault;
  uint64_t pending = 0;
  std::vector<int32_t> out;
};
StoreRun runStore(const std::string &ttir, size_t size, int32_t start, int32_t n) {
  LoadedKernel k = lowered(ttir);
  StoreRun run;
  run.out.assign(size, 99);
  std::vector<interp::ArgumentValue> args{ptrArg(0), intArg(start), intArg(n)};
  std::vector<PointerArgument> ptrs =
      withKernelAccess(*k.kernel, {pointer("out", viewOf(run.out, DType::I32))}, args);
  CHECK(ptrs[0].access == Access::Write);
  Session session;
  LaunchMemory memory;
  std::string error;
  REQUIRE(session.prepare(ptrs, memory, error));
  run.fault = k.kernel->run(args, memory, interp::LaunchOptions());
  run.pending = session.pendingBytes(HostMemory::instance(), ptrs[0].view.extent());
  if (run.fault)
    session.abandon();
  else
    REQUIRE(session.step(error));
  return run;
}
} // namespace

TEST_CASE("fused store: masked tail, unsigned compare, and faults that write nothing") {
  const bool forms[] = {true, false};
  SUBCASE("masked tail") {
    for (bool fused : forms) {
      INFO((fused ? "fused" : "lane by lane"));
      // out has 10 elements; start 4, n 10: lanes 0..5 store 0..5 to out[4..10).
      StoreRun r = runStore(storeTTIR(fused, Mask::Slt), 10, 4, 10);
      REQUIRE_FALSE(r.fault);
      CHECK(r.pending == 24);
      CHECK(r.out == std::vector<int32_t>{99, 99, 99, 99, 0, 1, 2, 3, 4, 5});
    }
  }
  SUBCASE("unsigned compare with a negative start") {
    for (bool fused : forms) {
      INFO((fused ? "fused" : "lane by lane"));
      // start -2, n 3 ult: lanes 2, 3, 4 (offsets 0, 1, 2) store 2, 3, 4.
      StoreRun r = runStore(storeTTIR(fused, Mask::Ult), 4, -2, 3);
      REQUIRE_FALSE(r.fault);
      CHECK(r.pending == 12);
      CHECK(r.out == std::vector<int32_t>{2, 3, 4, 99});
    }
  }
  SUBCASE("even-lane slot mask") {
    for (bool fused : forms) {
      INFO((fused ? "fused" : "lane by lane"));
      // start 1: lanes 0, 2, 4, 6 store to out[1], out[3], out[5], out[7].
      StoreRun r = runStore(storeTTIR(fused, Mask::EvenSlot), 10, 1, 0);
      REQUIRE_FALSE(r.fault);
      CHECK(r.pending == 16);
      CHECK(r.out == std::vector<int32_t>{99, 0, 99, 2, 99, 4, 99, 6, 99, 99});
    }
  }
  SUBCASE("a store past the end faults at its first bad lane and writes nothing") {
    for (bool fused : forms) {
      INFO((fused ? "fused" : "lane by lane"));
      // start 4, n 100: offsets 4..11 all on; lane 6 is out[10].
      StoreRun r = runStore(storeTTIR(fused, Mask::Slt), 10, 4, 100);
      REQUIRE(r.fault);
      CHECK(r.fault->kind == "out_of_bounds");
      CHECK(r.fault->op == "tt.store");
      CHECK(r.fault->location == "k.py:9:4");
      CHECK(r.fault->element == 6);
      CHECK(contains(r.fault->message, "element 10 of argument 'out'"));
      CHECK(contains(r.fault->message, "4 bytes past its end"));
      CHECK(r.pending == 0); // not even the six lanes in bounds
      CHECK(r.out == std::vector<int32_t>(10, 99));
    }
  }
  SUBCASE("unmasked, before the start") {
    for (bool fused : forms) {
      INFO((fused ? "fused" : "lane by lane"));
      StoreRun r = runStore(storeTTIR(fused, Mask::None), 10, -1, 0);
      REQUIRE(r.fault);
      CHECK(r.fault->element == 0);
      CHECK(contains(r.fault->message, "element -1 of argument 'out'"));
      CHECK(contains(r.fault->message, "4 bytes before its start"));
      CHECK(r.pending == 0);
    }
  }
}

TEST_CASE("fused accesses whose offsets and mask are also used as values") {
  // out[start + i] = start + i and flags[i] = (start + i < n) for all 8 lanes, the
  // first masked by the compare: the addi and the cmpi feed fused accesses and are
  // also stored, so they must still be computed.
  std::string ttir = R"(
#out = loc("out"("k.py":1:1))
#flags = loc("flags"("k.py":1:1))
module {
  tt.func public @k(%out: !tt.ptr<i32> loc(#out), %flags: !tt.ptr<i32> loc(#flags), %start: i32, %n: i32) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
    %offs = arith.addi %s, %r : tensor<8xi32>
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %offs, %m : tensor<8x!tt.ptr<i32>>
    %mi = arith.extui %m : tensor<8xi1> to tensor<8xi32>
    %fb = tt.splat %flags : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %fp = tt.addptr %fb, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %fp, %mi : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)";
  LoadedKernel k = lowered(ttir);
  std::vector<int32_t> out(12, -1), flags(8, -1);
  LaunchResult r =
      launch(*k.kernel,
             {pointer("out", viewOf(out, DType::I32)), pointer("flags", viewOf(flags, DType::I32))},
             {ptrArg(0), ptrArg(1), intArg(3), intArg(8)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  // Offsets 3..10; below 8 for lanes 0..4.
  CHECK(out == std::vector<int32_t>{-1, -1, -1, 3, 4, 5, 6, 7, -1, -1, -1, -1});
  CHECK(flags == std::vector<int32_t>{1, 1, 1, 1, 1, 0, 0, 0});
  CHECK(r.stats.bytesIn == 0); // both only written
  CHECK(r.stats.bytesOut == 5 * 4 + 8 * 4);
}

TEST_CASE("a fused load and store of one argument: the analysis makes it read-write") {
  // x[start + i] += 1 for start + i < n, through one fused pointer chain. Read-only
  // it would be read in place and the store refused; the analysis sees the store.
  std::string ttir = R"(
#x = loc("x"("k.py":1:1))
module {
  tt.func public @k(%x: !tt.ptr<i32> loc(#x), %start: i32, %n: i32) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
    %offs = arith.addi %s, %r : tensor<8xi32>
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %v = tt.load %xp, %m : tensor<8x!tt.ptr<i32>>
    %one = arith.constant dense<1> : tensor<8xi32>
    %w = arith.addi %v, %one : tensor<8xi32>
    tt.store %xp, %w, %m : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)";
  LoadedKernel k = lowered(ttir);
  REQUIRE(k.kernel->parameters()[0].access == Access::ReadWrite);
  std::vector<int32_t> x = iota(10, 0);
  LaunchResult r = launch(*k.kernel, {pointer("x", viewOf(x, DType::I32))},
                          {ptrArg(0), intArg(1), intArg(7)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  // Offsets 1..8, below 7 for lanes 0..5: x[1..7) incremented.
  CHECK(x == std::vector<int32_t>{0, 2, 3, 4, 5, 6, 7, 7, 8, 9});
  CHECK(r.stats.bytesIn == 40); // read and written: copied in whole
  CHECK(r.stats.bytesOut == 24);
}

TEST_CASE("fused load: a make_range that does not start at 0") {
  // Lane i addresses x[start + 4 + i], on while start + 4 + i < n; lane i of the
  // result goes to out[i].
  for (bool fused : {true, false}) {
    INFO((fused ? "fused" : "lane by lane"));
    std::string ttir = subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %start: i32, %n: i32) {
    %r = tt.make_range {end = 12 : i32, start = 4 : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
$OFFSETS
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %v = tt.load %xp, %m : tensor<8x!tt.ptr<i32>>
    %r0 = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %r0 : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %v : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)",
                             {{"$OFFSETS", offsets(fused)}});
    LoadedKernel k = lowered(ttir);
    std::vector<int32_t> x = iota(16, 200), out(8, 99);
    // start 1: offsets 5..12, below 10 for lanes 0..4.
    LaunchResult r = launch(
        *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32))},
        {ptrArg(0), ptrArg(1), intArg(1), intArg(10)}, {1, 1, 1});
    REQUIRE(r.error.empty());
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    CHECK(out == std::vector<int32_t>{205, 206, 207, 208, 209, 0, 0, 0});
  }
}

namespace {
/// Range-compare kernel: out[i] = (i32(start + rangeStart + i) PRED n) for i in 0..8,
/// the compare spelled so that fusion matches it or not (then it is a plain cmpi of
/// the offsets tensor).
///   @k(%out: !tt.ptr<i32>, %start: i32, %n: i32)
std::string compareTTIR(bool fused, const std::string &predicate, int rangeStart = 0) {
  return subst(R"(
module {
  tt.func public @k(%out: !tt.ptr<i32>, %start: i32, %n: i32) {
    %r = tt.make_range {end = $END : i32, start = $START : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
$OFFSETS
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi $PRED, %offs, %ns : tensor<8xi32>
    %e = arith.extui %m : tensor<8xi1> to tensor<8xi32>
    %lanes = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %lanes : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %e : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)",
               {{"$OFFSETS", offsets(fused)},
                {"$PRED", predicate},
                {"$START", std::to_string(rangeStart)},
                {"$END", std::to_string(rangeStart + 8)}});
}

/// Both spellings of a range compare give `expected` (0/1 per lane).
void checkCompare(const std::string &predicate, int32_t start, int32_t n,
                  const std::vector<int32_t> &expected, int rangeStart = 0) {
  for (bool fused : {true, false}) {
    INFO((fused ? "fused" : "lane by lane"), " ", predicate, " start ", start, " n ", n);
    LoadedKernel k = lowered(compareTTIR(fused, predicate, rangeStart));
    std::vector<int32_t> out(8, 99);
    LaunchResult r = launch(*k.kernel, {pointer("out", viewOf(out, DType::I32))},
                            {ptrArg(0), intArg(start), intArg(n)}, {1, 1, 1});
    REQUIRE(r.error.empty());
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    CHECK(out == expected);
  }
}
} // namespace

TEST_CASE("range compare: offsets < n computed from the scalars, signed and unsigned") {
  // Offsets 3..10 against 8: lanes 0..4 are below.
  checkCompare("slt", 3, 8, {1, 1, 1, 1, 1, 0, 0, 0});
  checkCompare("ult", 3, 8, {1, 1, 1, 1, 1, 0, 0, 0});
  // n at or below the first offset: no lane; n past the last: every lane.
  checkCompare("slt", 3, 3, {0, 0, 0, 0, 0, 0, 0, 0});
  checkCompare("slt", 3, -5, {0, 0, 0, 0, 0, 0, 0, 0});
  checkCompare("slt", 3, 11, {1, 1, 1, 1, 1, 1, 1, 1});
  // A make_range from 4: offsets start + 4 .. start + 11 = 5..12 against 10.
  checkCompare("slt", 1, 10, {1, 1, 1, 1, 1, 0, 0, 0}, 4);
}

TEST_CASE("range compare: negative offsets are huge unsigned, and n = -1 is everything") {
  // Offsets -3..4. Signed, all below 5; unsigned, -3, -2, -1 are 2^32 - 3 .. 2^32 - 1.
  checkCompare("slt", -3, 5, {1, 1, 1, 1, 1, 1, 1, 1});
  checkCompare("ult", -3, 5, {0, 0, 0, 1, 1, 1, 1, 1});
  // n = -1 is 2^32 - 1 unsigned: every offset but -1 itself is below it.
  checkCompare("ult", -3, -1, {1, 1, 0, 1, 1, 1, 1, 1});
  checkCompare("slt", 0, -1, {0, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("range compare: offsets that wrap past INT32_MAX") {
  // start = INT32_MAX - 2: offsets 2147483645, ..47, then INT32_MIN .. INT32_MIN + 4.
  const int32_t start = INT32_MAX - 2;
  // Signed against 0: only the wrapped (negative) lanes 3..7 are below.
  checkCompare("slt", start, 0, {0, 0, 0, 1, 1, 1, 1, 1});
  // Unsigned against 2^31 (spelled INT32_MIN): lanes 0..2 are below, the wrapped ones
  // are 2^31 .. 2^31 + 4, not below.
  checkCompare("ult", start, INT32_MIN, {1, 1, 1, 0, 0, 0, 0, 0});
  // Signed against INT32_MAX: lanes 0, 1 and the wrapped ones.
  checkCompare("slt", start, INT32_MAX, {1, 1, 0, 1, 1, 1, 1, 1});
}

TEST_CASE("range compare: the offsets tensor is never built") {
  // Fused: the cmpi, the extui and the store are the only instructions (4 steps with
  // the return); the other spelling also runs its addi and muli.
  for (bool fused : {true, false}) {
    LoadedKernel k = lowered(compareTTIR(fused, "slt"));
    std::vector<int32_t> out(8, 99);
    LaunchResult r = launch(*k.kernel, {pointer("out", viewOf(out, DType::I32))},
                            {ptrArg(0), intArg(6), intArg(9)}, {1, 1, 1}, 1, /*maxSteps=*/4);
    REQUIRE(r.error.empty());
    if (fused) {
      REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
      CHECK(out == std::vector<int32_t>{1, 1, 1, 0, 0, 0, 0, 0});
    } else {
      REQUIRE(r.fault);
      CHECK(r.fault->kind == "step_limit");
    }
  }
}

TEST_CASE("a masked load whose mask a select also reads (layernorm's variance loop)") {
  // v = load(x + offs, offs < n, other 0); out = select(offs < n, v - splat(mean), 0).
  // The load is fused; the compare, also read by the select, runs as a range compare.
  std::string ttir = R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %start: i32, %n: i32, %mean: f32) {
    %zero = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %s = tt.splat %start : i32 -> tensor<8xi32>
    %offs = arith.addi %s, %r : tensor<8xi32>
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = tt.load %xp, %m, %zero : tensor<8x!tt.ptr<f32>>
    %ms = tt.splat %mean : f32 -> tensor<8xf32>
    %d = arith.subf %v, %ms : tensor<8xf32>
    %sel = arith.select %m, %d, %zero : tensor<8xi1>, tensor<8xf32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %op, %sel : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
)";
  LoadedKernel k = lowered(ttir);
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, out(8, -1);
  // Offsets 4..11 below 10 for lanes 0..5: x[4..10) - 2.5; lanes 6, 7 select 0 (not
  // 0 - 2.5).
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                          {ptrArg(0), ptrArg(1), intArg(4), intArg(10), floatArg(2.5)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  CHECK(out == std::vector<float>{2.5f, 3.5f, 4.5f, 5.5f, 6.5f, 7.5f, 0.0f, 0.0f});
}

namespace {
/// loadTTIR with i64 offsets, as `.to(tl.int64)` spells them: program p loads lanes i = 0..7
/// of x' + (start0 + 8p + i) (x' = x + shift elements, all in i64, the range sign-extended),
/// masked by `offsets < n` ($PRED slt or ult, or no mask), and stores them to out[8p + i].
///   @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %start0: i64, %n: i64, %shift: i64)
std::string wideLoadTTIR(bool fused, const std::string &predicate) {
  std::string offs = fused ? "    %offs = arith.addi %s, %r64 : tensor<8xi64>"
                           : "    %sum = arith.addi %s, %r64 : tensor<8xi64>\n"
                             "    %one = arith.constant dense<1> : tensor<8xi64>\n"
                             "    %offs = arith.muli %sum, %one : tensor<8xi64>";
  std::string mask =
      predicate.empty() ? "" : "    %m = arith.cmpi " + predicate + ", %offs, %ns : tensor<8xi64>";
  return subst(
      R"(
module {
  tt.func public @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %start0: i64, %n: i64, %shift: i64) {
    %pid = tt.get_program_id x : i32
    %pid64 = arith.extsi %pid : i32 to i64
    %c8 = arith.constant 8 : i64
    %po = arith.muli %pid64, %c8 : i64
    %start = arith.addi %start0, %po : i64
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %r64 = arith.extsi %r : tensor<8xi32> to tensor<8xi64>
    %s = tt.splat %start : i64 -> tensor<8xi64>
$OFFSETS
    %ns = tt.splat %n : i64 -> tensor<8xi64>
$MASK
    %o = arith.constant dense<[-1, -2, -3, -4, -5, -6, -7, -8]> : tensor<8xi32>
    %xs = tt.addptr %x, %shift : !tt.ptr<i32>, i64
    %xb = tt.splat %xs : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi64>
    %v = tt.load %xp$ARGS : tensor<8x!tt.ptr<i32>> loc("k.py":7:16)
    %po32 = arith.trunci %po : i64 to i32
    %pos = tt.splat %po32 : i32 -> tensor<8xi32>
    %oo = arith.addi %pos, %r : tensor<8xi32>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %oo : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %v : tensor<8x!tt.ptr<i32>> loc("k.py":8:4)
    tt.return
  }
}
)",
      {{"$OFFSETS", offs}, {"$MASK", mask}, {"$ARGS", predicate.empty() ? "" : ", %m, %o"}});
}

LoadRun runWideLoad(bool fused, const std::string &predicate, std::vector<int32_t> &x,
                    int64_t start0, int64_t n, int64_t shift, int64_t programs,
                    uint64_t maxSteps = 0) {
  LoadedKernel k = lowered(wideLoadTTIR(fused, predicate));
  LoadRun run;
  run.out.assign(size_t(8 * programs), 99);
  run.result = launch(
      *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(run.out, DType::I32))},
      {ptrArg(0), ptrArg(1), intArg(start0), intArg(n), intArg(shift)}, {programs, 1, 1}, 1,
      maxSteps);
  REQUIRE(run.result.error.empty());
  return run;
}

/// Both spellings of the wide load kernel give `expected`, and no fault.
void checkWideLoad(const std::string &predicate, std::vector<int32_t> &x, int64_t start0, int64_t n,
                   const std::vector<int32_t> &expected, int64_t shift = 0, int64_t programs = 1) {
  for (bool fused : {true, false}) {
    INFO((fused ? "fused" : "lane by lane"));
    LoadRun r = runWideLoad(fused, predicate, x, start0, n, shift, programs);
    REQUIRE_MESSAGE(!r.result.fault, (r.result.fault ? r.result.fault->message : ""));
    CHECK(r.out == expected);
  }
}
} // namespace

TEST_CASE("fused load with i64 offsets: only the load and the store run") {
  // One program: get_program_id, extsi, muli, addi, the scalar addptr and trunci, the load
  // and the store, and the block: 9 steps. Without fusion the make_range, extsi, splats, addi,
  // muli, cmpi and addptrs run too.
  std::vector<int32_t> x = iota(16, 100);
  LoadRun tooFew = runWideLoad(true, "slt", x, 2, 7, 0, 1, /*maxSteps=*/8);
  REQUIRE(tooFew.result.fault);
  CHECK(tooFew.result.fault->kind == "step_limit");
  LoadRun fused = runWideLoad(true, "slt", x, 2, 7, 0, 1, /*maxSteps=*/9);
  REQUIRE_MESSAGE(!fused.result.fault, (fused.result.fault ? fused.result.fault->message : ""));
  // Offsets 2..9, below 7 for lanes 0..4.
  CHECK(fused.out == std::vector<int32_t>{102, 103, 104, 105, 106, -6, -7, -8});
  LoadRun unfused = runWideLoad(false, "slt", x, 2, 7, 0, 1, /*maxSteps=*/9);
  REQUIRE(unfused.result.fault);
  CHECK(unfused.result.fault->kind == "step_limit");
}

TEST_CASE("fused load with i64 offsets: a masked tail over three programs, signed and unsigned") {
  std::vector<int32_t> x = iota(24, 100);
  std::vector<int32_t> expected = iota(24, 100);
  for (int i = 19; i < 24; ++i)
    expected[size_t(i)] = -(i % 8) - 1;
  checkWideLoad("slt", x, 0, 19, expected, 0, 3);
  checkWideLoad("ult", x, 0, 19, expected, 0, 3);
  checkWideLoad("", x, 0, 0, iota(24, 100), 0, 3);
}

TEST_CASE("fused load with i64 offsets: past INT32_MAX they go on, not wrap") {
  // start = 2^31 - 2 in i64 and the base x - (2^31 - 2) elements: lane i addresses
  // x[i], where i32 offsets would have wrapped to INT32_MIN at lane 2.
  const int64_t start = int64_t(INT32_MAX) - 1;
  std::vector<int32_t> x = iota(8, 40);
  checkWideLoad("slt", x, start, start + 100, iota(8, 40), -start);
  // Bounded at start + 5 (above 2^31): lanes 5..7 read other.
  checkWideLoad("slt", x, start, start + 5, {40, 41, 42, 43, 44, -6, -7, -8}, -start);
}

TEST_CASE("fused load with i64 offsets: negative starts, unsigned compares and faults") {
  // start = -3: offsets -3..4. ult 5: the negative ones are huge unsigned, so lanes 0..2 are
  // off and lanes 3..7 (offsets 0..4) read x[0..5).
  std::vector<int32_t> x = iota(8, 20);
  checkWideLoad("ult", x, -3, 5, {-1, -2, -3, 20, 21, 22, 23, 24});
  // Signed, every lane is below 5: lane 0 reads x[-3] and faults, the same in both spellings.
  LoadRun f = runWideLoad(true, "slt", x, -3, 5, 0, 1);
  LoadRun u = runWideLoad(false, "slt", x, -3, 5, 0, 1);
  REQUIRE(f.result.fault);
  REQUIRE(u.result.fault);
  CHECK(f.result.fault->message == u.result.fault->message);
  CHECK(f.result.fault->element == 0);
  CHECK(u.result.fault->element == 0);
  CHECK(contains(f.result.fault->message, "element -3 of argument 'x'"));
  CHECK(contains(f.result.fault->message, "12 bytes before its start"));
  // n = -1: everything unsigned, nothing signed.
  checkWideLoad("ult", x, 0, -1, iota(8, 20));
  checkWideLoad("slt", x, 0, -1, {-1, -2, -3, -4, -5, -6, -7, -8});
}
