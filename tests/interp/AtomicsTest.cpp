//===- AtomicsTest.cpp - tt.atomic_rmw and tt.atomic_cas on hand-written TTIR -===//
//
// Expected memory contents and returned old values are worked out by hand from
// PTX's atom semantics (two's complement, unsigned compares for umax/umin, IEEE
// round to nearest, subnormal flushing of atom.add.f32).
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <type_traits>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
std::string substitute(std::string text, const std::map<std::string, std::string> &values) {
  for (const auto &[key, value] : values)
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

/// @k(%mem, %out): an 8-lane tt.atomic_rmw KIND whose lane i hits mem[IDX[i]] with
/// VALS[i] (under MASK when given); the old values go to out[0..8).
std::string rmwKernel(const std::string &type, const std::string &kind, const std::string &idx,
                      const std::string &vals, const std::string &mask = "") {
  std::string t = R"(
module {
  tt.func public @k(%mem: !tt.ptr<T>, %out: !tt.ptr<T>) {
    %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %idx = arith.constant dense<IDX> : tensor<8xi32>
    %mbase = tt.splat %mem : !tt.ptr<T> -> tensor<8x!tt.ptr<T>>
    %mp = tt.addptr %mbase, %idx : tensor<8x!tt.ptr<T>>, tensor<8xi32>
    %v = arith.constant dense<VALS> : tensor<8xT>
    MASKDEF
    %old = tt.atomic_rmw KIND, acq_rel, gpu, %mp, %v MASKUSE : (tensor<8x!tt.ptr<T>>, tensor<8xT>MASKTY) -> tensor<8xT> loc(#at)
    %obase = tt.splat %out : !tt.ptr<T> -> tensor<8x!tt.ptr<T>>
    %op = tt.addptr %obase, %range : tensor<8x!tt.ptr<T>>, tensor<8xi32>
    tt.store %op, %old : tensor<8x!tt.ptr<T>>
    tt.return
  }
}
#at = loc("atomics.py":7:12)
)";
  bool masked = !mask.empty();
  return substitute(
      t, {{"MASKDEF", masked ? "%m = arith.constant dense<" + mask + "> : tensor<8xi1>" : ""},
          {"MASKUSE", masked ? ", %m" : ""},
          {"MASKTY", masked ? ", tensor<8xi1>" : ""},
          {"KIND", kind},
          {"IDX", idx},
          {"VALS", vals},
          {"T", type}});
}

/// Runs a two-argument kernel on `mem` and `out`; returns the fault, if any.
template <class T>
std::optional<interp::Fault> runRmw(const std::string &ttir, std::vector<T> &mem,
                                    std::vector<T> &out, DType dtype, unsigned threads = 1) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  LaunchResult r =
      launch(*k.kernel, {pointer("mem", viewOf(mem, dtype)), pointer("out", viewOf(out, dtype))},
             {ptrArg(0), ptrArg(1)}, {1, 1, 1}, threads);
  REQUIRE(r.error.empty());
  return r.fault;
}

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
} // namespace

TEST_CASE("every integer atomic kind on i32 returns the old value and updates memory") {
  const std::vector<int32_t> init = {5, -3, 0x0F0F, kMax, -1, 7, 100, 0};
  const std::string vals = "[3, -4, 255, 1, 1, -7, 200, -1]";
  // New contents by hand (v = 3, -4, 0xFF, 1, 1, -7, 200, -1 against init).
  std::map<std::string, std::vector<int32_t>> want = {
      {"add", {8, -7, 0x100E, kMin, 0, 0, 300, -1}}, // INT_MAX + 1 wraps
      {"and", {1, -4, 0x000F, 1, 1, 1, 64, 0}},
      {"or", {7, -3, 0x0FFF, kMax, -1, -1, 236, -1}},
      {"xor", {6, 1, 0x0FF0, kMax - 1, -2, -2, 172, -1}},
      {"max", {5, -3, 0x0F0F, kMax, 1, 7, 200, 0}},
      {"min", {3, -4, 0xFF, 1, -1, -7, 100, -1}},
      // Unsigned: -1 is 0xFFFFFFFF, the largest; -7 is 0xFFFFFFF9.
      {"umax", {5, -3, 0x0F0F, kMax, -1, -7, 200, -1}},
      {"umin", {3, -4, 0xFF, 1, 1, 7, 100, 0}},
      {"exch", {3, -4, 0xFF, 1, 1, -7, 200, -1}},
  };
  for (const auto &entry : want) {
    const auto &kind = entry.first; // named: INFO cannot capture a structured binding (clang 14)
    const auto &expect = entry.second;
    INFO(kind);
    std::vector<int32_t> mem = init, out(8, 99);
    REQUIRE_FALSE(
        runRmw(rmwKernel("i32", kind, "[0, 1, 2, 3, 4, 5, 6, 7]", vals), mem, out, DType::I32));
    CHECK(mem == expect);
    CHECK(out == init);
  }
}

TEST_CASE("i64 atomics wrap and compare unsigned for umax/umin") {
  const int64_t big = int64_t(1) << 40;
  const std::vector<int64_t> init = {
      std::numeric_limits<int64_t>::max(), -1, big, -big, 0, 0, 0, 0};
  std::string vals = "[1, 1, -1099511627776, 1099511627776, 0, 0, 0, 0]";
  std::vector<int64_t> mem = init, out(8);
  REQUIRE_FALSE(
      runRmw(rmwKernel("i64", "add", "[0, 1, 2, 3, 4, 5, 6, 7]", vals), mem, out, DType::I64));
  CHECK(mem == std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0, 0, 0, 0, 0, 0, 0});
  CHECK(out == init);
  mem = init;
  REQUIRE_FALSE(
      runRmw(rmwKernel("i64", "umax", "[0, 1, 2, 3, 4, 5, 6, 7]", vals), mem, out, DType::I64));
  // umax(2^40, -2^40) is -2^40 (0xFFFFFF0000000000); umax(-1, 1) is -1.
  CHECK(mem ==
        std::vector<int64_t>{std::numeric_limits<int64_t>::max(), -1, -big, -big, 0, 0, 0, 0});
  mem = init;
  REQUIRE_FALSE(
      runRmw(rmwKernel("i64", "umin", "[0, 1, 2, 3, 4, 5, 6, 7]", vals), mem, out, DType::I64));
  CHECK(mem == std::vector<int64_t>{1, 1, big, big, 0, 0, 0, 0});
}

TEST_CASE("lanes hitting one address are applied in lane order") {
  // All lanes add to mem[0] = 0.5: old values are the running prefix sums.
  std::vector<float> mem = {0.5f, 0, 0, 0, 0, 0, 0, 0}, out(8);
  REQUIRE_FALSE(runRmw(rmwKernel("f32", "fadd", "0", "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]"),
                       mem, out, DType::F32));
  CHECK(out == std::vector<float>{0.5f, 1.5f, 3.5f, 6.5f, 10.5f, 15.5f, 21.5f, 28.5f});
  CHECK(mem[0] == 36.5f);
  // Exchange on one address: each lane gets the previous lane's value.
  std::vector<int32_t> imem = {-1, 0, 0, 0, 0, 0, 0, 0}, iout(8);
  REQUIRE_FALSE(runRmw(rmwKernel("i32", "exch", "0", "[10, 11, 12, 13, 14, 15, 16, 17]"), imem,
                       iout, DType::I32));
  CHECK(iout == std::vector<int32_t>{-1, 10, 11, 12, 13, 14, 15, 16});
  CHECK(imem[0] == 17);
}

TEST_CASE("masked-off lanes neither touch memory nor fault, and return 0") {
  // Lane 1's index is far out of bounds, but it is masked off.
  std::vector<int32_t> mem = {1, 2, 3, 4, 5, 6, 7, 8}, out(8, 99);
  REQUIRE_FALSE(runRmw(rmwKernel("i32", "add", "[0, 1000000, 2, 3, 4, 5, 6, 7]", "10",
                                 "[true, false, true, false, true, false, true, false]"),
                       mem, out, DType::I32));
  CHECK(mem == std::vector<int32_t>{11, 2, 13, 4, 15, 6, 17, 8});
  CHECK(out == std::vector<int32_t>{1, 0, 3, 0, 5, 0, 7, 0});
}

TEST_CASE("an out-of-bounds lane faults before any lane is applied") {
  std::vector<int32_t> mem = {1, 2, 3, 4, 5, 6, 7, 8}, out(8, 99);
  auto fault =
      runRmw(rmwKernel("i32", "add", "[0, 1, 2, 8, 4, 5, 6, 7]", "1"), mem, out, DType::I32);
  REQUIRE(fault);
  CHECK(fault->kind == "out_of_bounds");
  CHECK(fault->op == "tt.atomic_rmw");
  CHECK(fault->element == 3);
  CHECK(fault->location == "atomics.py:7:12");
  CHECK(fault->message.find("argument 'mem'") != std::string::npos);
  CHECK(mem == std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("atom.add.f32 flushes subnormal inputs and results to a signed zero") {
  const float minNormal = std::numeric_limits<float>::min(); // 2^-126
  // Lane 0: 2^-130 + 2^-130 = 2^-129 would be subnormal: both inputs flush, 0.
  // Lane 1: 1.5*2^-126 - 2^-126 = 2^-127 (subnormal result) flushes to +0.
  // Lane 2: the same negated flushes to -0.
  // Lane 3: normal operands and result are untouched: 1 + 2^-126 rounds to 1.
  std::vector<float>
      mem = {std::ldexp(1.0f, -130), 1.5f * minNormal, -1.5f * minNormal, 1.0f, 0, 0, 0, 0},
      out(8);
  REQUIRE_FALSE(runRmw(rmwKernel("f32", "fadd", "[0, 1, 2, 3, 4, 5, 6, 7]",
                                 "[7.34683969E-40, -1.17549435E-38, 1.17549435E-38, "
                                 "1.17549435E-38, 0.0, 0.0, 0.0, 0.0]"),
                       mem, out, DType::F32));
  CHECK(mem[0] == 0.0f);
  CHECK_FALSE(std::signbit(mem[0]));
  CHECK(mem[1] == 0.0f);
  CHECK_FALSE(std::signbit(mem[1]));
  CHECK(mem[2] == 0.0f);
  CHECK(std::signbit(mem[2]));
  CHECK(mem[3] == 1.0f);
  CHECK(out[0] == std::ldexp(1.0f, -130)); // the old value is returned unflushed
}

TEST_CASE("f16 and bf16 fadd round once to the 16-bit type") {
  // f16: 1 + 3*2^-12 = 1 + 0.75 ulp(1) rounds up to 1 + 2^-10 (0x3C01); 1 + 2^-11 is a
  // tie and stays at 1 (even); 2 + 1 = 3 exactly (0x4200).
  std::vector<uint16_t> mem = {0x3C00, 0x3C00, 0x4000, 0, 0, 0, 0, 0}, out(8);
  REQUIRE_FALSE(runRmw(rmwKernel("f16", "fadd", "[0, 1, 2, 3, 4, 5, 6, 7]",
                                 "[0.000732421875, 0.00048828125, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]"),
                       mem, out, DType::F16));
  CHECK(mem[0] == 0x3C01);
  CHECK(mem[1] == 0x3C00);
  CHECK(mem[2] == 0x4200);
  CHECK(out[0] == 0x3C00);
  // bf16: 1 + 3*2^-9 rounds up to 1 + 2^-7 (0x3F81); 1 + 2^-8 ties to 1 (0x3F80).
  std::vector<uint16_t> bmem = {0x3F80, 0x3F80, 0, 0, 0, 0, 0, 0}, bout(8);
  REQUIRE_FALSE(runRmw(rmwKernel("bf16", "fadd", "[0, 1, 2, 3, 4, 5, 6, 7]",
                                 "[0.005859375, 0.00390625, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]"),
                       bmem, bout, DType::BF16));
  CHECK(bmem[0] == 0x3F81);
  CHECK(bmem[1] == 0x3F80);
}

TEST_CASE("float max/min atomics ignore a NaN operand (maxNum/minNum)") {
  std::vector<float> mem = {1.0f, std::nanf(""), -2.0f, 0, 0, 0, 0, 0}, out(8);
  REQUIRE_FALSE(runRmw(rmwKernel("f32", "max", "[0, 1, 2, 3, 4, 5, 6, 7]",
                                 "[3.0, 4.0, 0x7FC00000, 0.0, 0.0, 0.0, 0.0, 0.0]"),
                       mem, out, DType::F32));
  CHECK(mem[0] == 3.0f);
  CHECK(mem[1] == 4.0f);
  CHECK(mem[2] == -2.0f);
}

TEST_CASE("scalar atomic_rmw with a scalar mask, and atomic_cas scalar and tensor") {
  std::string ttir = R"(
module {
  tt.func public @k(%mem: !tt.ptr<i32>, %out: !tt.ptr<i32>) {
    %true = arith.constant true
    %false = arith.constant false
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c5 = arith.constant 5 : i32
    %c40 = arith.constant 40 : i32
    %c41 = arith.constant 41 : i32
    %a = tt.atomic_rmw add, acq_rel, gpu, %mem, %c5, %true : (!tt.ptr<i32>, i32, i1) -> i32
    %b = tt.atomic_rmw add, acq_rel, gpu, %mem, %c5, %false : (!tt.ptr<i32>, i32, i1) -> i32
    %p1 = tt.addptr %mem, %c1 : !tt.ptr<i32>, i32
    %fail = tt.atomic_cas acq_rel, gpu, %p1, %c0, %c1 : (!tt.ptr<i32>, i32, i32) -> i32
    %ok = tt.atomic_cas acq_rel, gpu, %p1, %c40, %c41 : (!tt.ptr<i32>, i32, i32) -> i32
    %range = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %ones = arith.constant dense<1> : tensor<4xi32>
    %next = arith.addi %range, %ones : tensor<4xi32>
    %c2 = arith.constant 2 : i32
    %p2 = tt.addptr %mem, %c2 : !tt.ptr<i32>, i32
    %p2s = tt.splat %p2 : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
    %olds = tt.atomic_cas acq_rel, gpu, %p2s, %range, %next : (tensor<4x!tt.ptr<i32>>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    tt.store %out, %a : !tt.ptr<i32>
    %o1 = tt.addptr %out, %c1 : !tt.ptr<i32>, i32
    tt.store %o1, %b : !tt.ptr<i32>
    %o2 = tt.addptr %out, %c2 : !tt.ptr<i32>, i32
    tt.store %o2, %fail : !tt.ptr<i32>
    %c3 = arith.constant 3 : i32
    %o3 = tt.addptr %out, %c3 : !tt.ptr<i32>, i32
    tt.store %o3, %ok : !tt.ptr<i32>
    %c4 = arith.constant 4 : i32
    %o4 = tt.addptr %out, %c4 : !tt.ptr<i32>, i32
    %o4s = tt.splat %o4 : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
    %o4p = tt.addptr %o4s, %range : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    tt.store %o4p, %olds : tensor<4x!tt.ptr<i32>>
    tt.return
  }
}
)";
  std::vector<int32_t> mem = {100, 40, 0}, out(8, 99);
  REQUIRE_FALSE(runRmw(ttir, mem, out, DType::I32));
  // mem[0]: +5 once (the second add is masked off and returns 0).
  // mem[1]: CAS(0 -> 1) fails and returns 40; CAS(40 -> 41) succeeds and returns 40.
  // mem[2]: lane i swaps i -> i + 1 in lane order, so every lane succeeds: 0 -> 4.
  CHECK(mem == std::vector<int32_t>{105, 41, 4});
  CHECK(out == std::vector<int32_t>{100, 0, 40, 40, 0, 1, 2, 3});
}

TEST_CASE("a failed compare-and-swap writes nothing back, and floats compare by bits") {
  std::string ttir = R"(
module {
  tt.func public @k(%mem: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %old = tt.atomic_cas acq_rel, gpu, %mem, %zero, %one : (!tt.ptr<f32>, f32, f32) -> f32
    tt.store %out, %old : !tt.ptr<f32>
    tt.return
  }
}
)";
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> mem = {-0.0f}, out = {5.0f};
  LaunchResult r = launch(
      *k.kernel, {pointer("mem", viewOf(mem, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE_FALSE(r.fault);
  // -0.0 and +0.0 differ in bits: the swap fails and returns -0.0.
  CHECK(std::signbit(mem[0]));
  CHECK(out[0] == 0.0f);
  CHECK(std::signbit(out[0]));
  CHECK(r.stats.bytesOut == 4); // only `out` went back
}

TEST_CASE("a compare-and-swap into a large buffer written in place is put back on a fault") {
  // 4 MiB of i32, read and written: the caller's memory itself, each chunk saved before its
  // first write (memory-model.md). Program 0 swaps mem[1000] from 1000 to -1; with a fault
  // later in the launch (program 1 loads past `mem`'s end) the swap is undone.
  std::string ttir = R"(
module {
  tt.func public @k(%mem: !tt.ptr<i32>, %n: i32) {
    %pid = tt.get_program_id x : i32
    %c0 = arith.constant 0 : i32
    %first = arith.cmpi eq, %pid, %c0 : i32
    scf.if %first {
      %i = arith.constant 1000 : i32
      %p = tt.addptr %mem, %i : !tt.ptr<i32>, i32
      %new = arith.constant -1 : i32
      %old = tt.atomic_cas acq_rel, gpu, %p, %i, %new : (!tt.ptr<i32>, i32, i32) -> i32
    } else {
      %q = tt.addptr %mem, %n : !tt.ptr<i32>, i32
      %v = tt.load %q : !tt.ptr<i32>
      tt.store %mem, %v : !tt.ptr<i32>
    }
    tt.return
  }
}
)";
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  const int64_t n = int64_t(1) << 20;
  for (bool fault : {false, true}) {
    std::vector<int32_t> mem(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      mem[size_t(i)] = int32_t(i);
    LaunchResult r = launch(*k.kernel, {pointer("mem", viewOf(mem, DType::I32))},
                            {ptrArg(0), intArg(fault ? n : n - 1)}, {2, 1, 1});
    REQUIRE(r.error.empty());
    CHECK(bool(r.fault) == fault);
    CHECK(mem[1000] == (fault ? 1000 : -1));
    CHECK(mem[0] == (fault ? 0 : int32_t(n - 1)));
  }
}

TEST_CASE("atomics are atomic across threads") {
  // 64 programs; each adds 1 (i32) and 0.25 (f32) from 32 lanes to each of 4 counters
  // (lane i -> counter i % 4): every counter ends at 64 * 32 = 2048 and 512.0.
  std::string ttir = R"(
module {
  tt.func public @k(%cnt: !tt.ptr<i32>, %sum: !tt.ptr<f32>) {
    %range = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %four = arith.constant dense<4> : tensor<128xi32>
    %bin = arith.remsi %range, %four : tensor<128xi32>
    %cb = tt.splat %cnt : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>>
    %cp = tt.addptr %cb, %bin : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
    %ones = arith.constant dense<1> : tensor<128xi32>
    %a = tt.atomic_rmw add, relaxed, gpu, %cp, %ones : (tensor<128x!tt.ptr<i32>>, tensor<128xi32>) -> tensor<128xi32>
    %sb = tt.splat %sum : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
    %sp = tt.addptr %sb, %bin : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
    %q = arith.constant dense<0.25> : tensor<128xf32>
    %b = tt.atomic_rmw fadd, relaxed, gpu, %sp, %q : (tensor<128x!tt.ptr<f32>>, tensor<128xf32>) -> tensor<128xf32>
    tt.return
  }
}
)";
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  for (unsigned threads : {1u, 4u}) {
    std::vector<int32_t> cnt(4, 0);
    std::vector<float> sum(4, 0.0f);
    LaunchResult r =
        launch(*k.kernel,
               {pointer("cnt", viewOf(cnt, DType::I32)), pointer("sum", viewOf(sum, DType::F32))},
               {ptrArg(0), ptrArg(1)}, {64, 1, 1}, threads);
    REQUIRE_FALSE(r.fault);
    CHECK(cnt == std::vector<int32_t>{2048, 2048, 2048, 2048});
    CHECK(sum == std::vector<float>{512.0f, 512.0f, 512.0f, 512.0f});
  }
}

namespace {
/// An element of a test buffer as a double (f16: the positive normal numbers and zero the
/// test below uses).
template <class T> double valueOf(T v, DType dtype) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    REQUIRE(dtype == DType::F16);
    if (v == 0)
      return 0.0;
    return std::ldexp(1.0 + (v & 0x3FF) / 1024.0, int((v >> 10) & 0x1F) - 15);
  }
  return double(v);
}

/// 64 programs on `threads` threads each update mem[1..38) from lanes 0..36 of one
/// tt.atomic_rmw (one run of consecutive elements: a misaligned head, whole 16-byte groups, a
/// tail), adding 1 or exchanging in pid + 1 (`exch`), and store their old values.
/// Atomic means: for each element, the old values the programs saw and its final value are
/// its start and each program's update, each once, in some order.
template <class T>
void checkRunAtomicity(const std::string &type, DType dtype, const std::string &kind,
                       const std::string &valueOps, const std::vector<T> &start,
                       const std::function<double(double, int)> &final) {
  std::string ttir = substitute(R"(
module {
  tt.func public @k(%mem: !tt.ptr<T>, %out: !tt.ptr<T>) {
    %pid = tt.get_program_id x : i32
    %range = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %one = arith.constant dense<1> : tensor<64xi32>
    %idx = arith.addi %range, %one : tensor<64xi32>
    %len = arith.constant dense<37> : tensor<64xi32>
    %m = arith.cmpi slt, %range, %len : tensor<64xi32>
    %mb = tt.splat %mem : !tt.ptr<T> -> tensor<64x!tt.ptr<T>>
    %mp = tt.addptr %mb, %idx : tensor<64x!tt.ptr<T>>, tensor<64xi32>
    VALUE
    %old = tt.atomic_rmw KIND, acq_rel, gpu, %mp, %v, %m : (tensor<64x!tt.ptr<T>>, tensor<64xT>, tensor<64xi1>) -> tensor<64xT>
    %c64 = arith.constant 64 : i32
    %row = arith.muli %pid, %c64 : i32
    %rows = tt.splat %row : i32 -> tensor<64xi32>
    %oi = arith.addi %rows, %range : tensor<64xi32>
    %ob = tt.splat %out : !tt.ptr<T> -> tensor<64x!tt.ptr<T>>
    %op = tt.addptr %ob, %oi : tensor<64x!tt.ptr<T>>, tensor<64xi32>
    tt.store %op, %old, %m : tensor<64x!tt.ptr<T>>
    tt.return
  }
}
)",
                                {{"VALUE", valueOps}, {"KIND", kind}});
  ttir = substitute(ttir, {{"T", type}}); // VALUE's too
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  for (unsigned threads : {1u, 2u, 4u}) {
    CAPTURE(type);
    CAPTURE(kind);
    CAPTURE(threads);
    std::vector<T> mem = start, out(64 * 64, T(0));
    LaunchResult r =
        launch(*k.kernel, {pointer("mem", viewOf(mem, dtype)), pointer("out", viewOf(out, dtype))},
               {ptrArg(0), ptrArg(1)}, {64, 1, 1}, threads);
    REQUIRE(r.error.empty());
    REQUIRE_FALSE(r.fault);
    CHECK(mem.front() == start.front()); // outside the run: untouched
    CHECK(mem.back() == start.back());
    for (int lane = 0; lane < 37; ++lane) {
      CAPTURE(lane);
      const double first = valueOf(start[size_t(lane) + 1], dtype);
      std::vector<double> seen{valueOf(mem[size_t(lane) + 1], dtype)};
      for (int p = 0; p < 64; ++p)
        seen.push_back(valueOf(out[size_t(p * 64 + lane)], dtype));
      std::sort(seen.begin(), seen.end());
      std::vector<double> want{first};
      for (int p = 0; p < 64; ++p)
        want.push_back(final(first, p));
      std::sort(want.begin(), want.end());
      CHECK(seen == want);
    }
  }
}
} // namespace

TEST_CASE("a run's lanes are atomic against other threads' updates of the same elements") {
  // Adds of 1 from 64 programs to elements starting at e: each element's old values are
  // e, e + 1, ..., e + 63 and it ends at e + 64, every one seen once. Exchanges of pid + 1
  // into zeros: the old values and the final one are 0, 1, ..., 64, each once.
  auto added = [](double first, int p) { return first + p + 1; };
  auto exchanged = [](double, int p) { return double(p + 1); };
  const std::string oneF = "%v = arith.constant dense<1.0> : tensor<64xT>";
  const std::string oneI = "%v = arith.constant dense<1> : tensor<64xT>";
  auto pidAs = [](const std::string &convert) {
    return "%c1 = arith.constant 1 : i32\n    %p1 = arith.addi %pid, %c1 : i32\n    %s = " +
           convert + "\n    %v = tt.splat %s : T -> tensor<64xT>";
  };
  std::vector<float> f32(40);
  std::vector<double> f64(40);
  std::vector<int32_t> i32(40);
  std::vector<int64_t> i64(40);
  std::vector<uint16_t> f16(40);
  for (size_t e = 0; e < 40; ++e) {
    f32[e] = float(e);
    f64[e] = double(e) * 2;
    i32[e] = int32_t(e) - 20;
    i64[e] = (int64_t(1) << 40) + int64_t(e);
    f16[e] = uint16_t(0x3C00 + (e << 10) % 0x1400); // 1, 2, 4, ..., 16, 1, 2, ...
  }
  checkRunAtomicity("f32", DType::F32, "fadd", oneF, f32, added);
  checkRunAtomicity("f64", DType::F64, "fadd", oneF, f64, added);
  checkRunAtomicity("f16", DType::F16, "fadd", oneF, f16, added);
  checkRunAtomicity("i32", DType::I32, "add", oneI, i32, added);
  checkRunAtomicity("i64", DType::I64, "add", oneI, i64, added);
  std::vector<float> f32zero(40, 0.0f);
  std::vector<int64_t> i64zero(40, 0);
  checkRunAtomicity("f32", DType::F32, "exch", pidAs("arith.sitofp %p1 : i32 to f32"), f32zero,
                    exchanged);
  checkRunAtomicity("i64", DType::I64, "exch", pidAs("arith.extsi %p1 : i32 to i64"), i64zero,
                    exchanged);
}

TEST_CASE("atomics on unsupported kinds are lowering errors") {
  LoadedKernel k = loadKernel(rmwKernel("f32", "xor", "[0, 1, 2, 3, 4, 5, 6, 7]", "1.0"));
  CHECK_FALSE(k.kernel);
  CHECK(k.error.find("atomic kind 3 is not supported on f32") != std::string::npos);
  CHECK(k.error.find("atomics.py:7:12") != std::string::npos);
}

TEST_CASE(
    "a scatter of 256 lanes in runs, repeats and singles matches lane order, masks and faults") {
  // Lanes 0-69 add to mem[100..170), lanes 70-139 to the same elements again (their old values
  // include the first run's adds), lanes 140-199 to mem[500 + i % 7], lanes 200-255 to
  // mem[1000 - i], descending; every lane with i % 13 == 5 is masked off. Expected values come
  // from a plain loop over the lanes in order. Small integers: every f32 sum is exact.
  const std::string ttir = R"(
module {
  tt.func public @k(%mem: !tt.ptr<f32>, %idx: !tt.ptr<i32>, %vals: !tt.ptr<f32>, %mask: !tt.ptr<i8>, %out: !tt.ptr<f32>) {
    %range = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %ib = tt.splat %idx : !tt.ptr<i32> -> tensor<256x!tt.ptr<i32>>
    %ip = tt.addptr %ib, %range : tensor<256x!tt.ptr<i32>>, tensor<256xi32>
    %i = tt.load %ip : tensor<256x!tt.ptr<i32>>
    %vb = tt.splat %vals : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %vp = tt.addptr %vb, %range : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %v = tt.load %vp : tensor<256x!tt.ptr<f32>>
    %mb = tt.splat %mask : !tt.ptr<i8> -> tensor<256x!tt.ptr<i8>>
    %mpp = tt.addptr %mb, %range : tensor<256x!tt.ptr<i8>>, tensor<256xi32>
    %m8 = tt.load %mpp : tensor<256x!tt.ptr<i8>>
    %zero = arith.constant dense<0> : tensor<256xi8>
    %m = arith.cmpi ne, %m8, %zero : tensor<256xi8>
    %base = tt.splat %mem : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %p = tt.addptr %base, %i : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %old = tt.atomic_rmw fadd, acq_rel, gpu, %p, %v, %m : (tensor<256x!tt.ptr<f32>>, tensor<256xf32>, tensor<256xi1>) -> tensor<256xf32> loc(#at)
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %op = tt.addptr %ob, %range : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    tt.store %op, %old : tensor<256x!tt.ptr<f32>>
    tt.return
  }
}
#at = loc("scatter.py":9:4)
)";
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> idx(256);
  std::vector<float> vals(256);
  std::vector<int8_t> mask(256);
  for (int i = 0; i < 256; ++i) {
    idx[size_t(i)] = i < 70 ? 100 + i : i < 140 ? 30 + i : i < 200 ? 500 + i % 7 : 1000 - i;
    vals[size_t(i)] = float(i % 17 + 1);
    mask[size_t(i)] = i % 13 != 5;
  }
  for (unsigned threads : {1u, 2u}) {
    for (bool faulting : {false, true}) {
      CAPTURE(threads);
      CAPTURE(faulting);
      std::vector<int32_t> index = idx;
      if (faulting)
        index[230] = 5000; // past mem's 1,024 elements, in the last stretch of single lanes
      std::vector<float> mem(1024), out(256, 99.0f);
      for (size_t e = 0; e < mem.size(); ++e)
        mem[e] = float(e % 5);
      std::vector<float> wantMem = mem, wantOut(256, 0.0f);
      for (size_t i = 0; i < 256; ++i)
        if (mask[i]) {
          wantOut[i] = wantMem[size_t(idx[i])];
          wantMem[size_t(idx[i])] += vals[i];
        }
      const std::vector<float> before = mem;
      LaunchResult r = launch(
          *k.kernel,
          {pointer("mem", viewOf(mem, DType::F32)), pointer("idx", viewOf(index, DType::I32)),
           pointer("vals", viewOf(vals, DType::F32)), pointer("mask", viewOf(mask, DType::I8)),
           pointer("out", viewOf(out, DType::F32))},
          {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3), ptrArg(4)}, {1, 1, 1}, threads);
      REQUIRE(r.error.empty());
      if (faulting) {
        REQUIRE(r.fault);
        CHECK(r.fault->kind == "out_of_bounds");
        CHECK(r.fault->element == 230);
        CHECK(mem == before);
        CHECK(out == std::vector<float>(256, 99.0f));
      } else {
        REQUIRE_FALSE(r.fault);
        CHECK(mem == wantMem);
        CHECK(out == wantOut);
      }
    }
  }
}
