//===- InPlaceReadTest.cpp - Loads that read immutable memory in place -----===//
//
// A load whose lanes are all active and contiguous, from a buffer no argument
// of the launch writes, reads that buffer in place: its result slot points at
// the caller's bytes instead of holding a copy (Frame::readInPlace). These
// tests pin down what must not change with that: a buffer the launch writes is
// still copied (a later store must not show through an earlier load), a masked
// tail after an in-place read writes into the frame and never into the
// caller's input, loop-carried and recursive values keep their own contents.
// Expected values are worked out by hand.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <numeric>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// `%NAMEp`: pointers to NAME[0..8), through a fused chain or (unfused) one
/// whose offsets go through `muli 1`, which the fusion matcher does not take.
std::string pointers(const std::string &name, bool fused) {
  std::string offsets = fused ? "%r" : "%r1";
  return "    %" + name + "b = tt.splat %" + name +
         " : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>\n    %" + name + "p = tt.addptr %" + name +
         "b, " + offsets + " : tensor<8x!tt.ptr<i32>>, tensor<8xi32>\n";
}

const char *kRange = R"(
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %one = arith.constant dense<1> : tensor<8xi32>
    %r1 = arith.muli %r, %one : tensor<8xi32>
)";

/// x = load a; store b <- 100; y = load a; out = x + y.
std::string loadStoreLoad(bool fused) {
  return std::string(R"(
module {
  tt.func public @k(%a: !tt.ptr<i32>, %b: !tt.ptr<i32>, %out: !tt.ptr<i32>) {)") +
         kRange + pointers("a", fused) + pointers("b", fused) + pointers("out", fused) + R"(
    %x = tt.load %ap : tensor<8x!tt.ptr<i32>>
    %c100 = arith.constant dense<100> : tensor<8xi32>
    tt.store %bp, %c100 : tensor<8x!tt.ptr<i32>>
    %y = tt.load %ap : tensor<8x!tt.ptr<i32>>
    %s = arith.addi %x, %y : tensor<8xi32>
    tt.store %outp, %s : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)";
}

std::vector<int32_t> iota(size_t n, int32_t first) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

/// Runs `@k(%x, %out[, extra])` over `programs` programs; returns out (filled
/// with -1 before the launch). x is the caller's buffer, for checks after.
std::vector<int32_t> runOnX(const std::string &ttir, std::vector<int32_t> &x, size_t outSize,
                            int64_t programs = 1, std::vector<interp::ArgumentValue> extra = {}) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> out(outSize, -1);
  std::vector<interp::ArgumentValue> args{ptrArg(0), ptrArg(1)};
  args.insert(args.end(), extra.begin(), extra.end());
  LaunchResult r = launch(
      *k.kernel, {pointer("x", viewOf(x, DType::I32)), pointer("out", viewOf(out, DType::I32))},
      args, {programs, 1, 1});
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}

} // namespace

TEST_CASE("a load from a buffer the launch also writes is a copy: later stores do not show "
          "through it") {
  for (bool fused : {true, false}) {
    INFO("fused: ", fused);
    LoadedKernel k = loadKernel(loadStoreLoad(fused));
    REQUIRE_MESSAGE(k.kernel, k.error);
    SUBCASE("a and b are one buffer") {
      // x is the buffer before the store (1..8), y after it (100): out = x + 100.
      std::vector<int32_t> buf = iota(8, 1), out(8, 0);
      View view = viewOf(buf, DType::I32);
      LaunchResult r =
          launch(*k.kernel,
                 {pointer("a", view), pointer("b", view), pointer("out", viewOf(out, DType::I32))},
                 {ptrArg(0), ptrArg(1), ptrArg(2)}, {1, 1, 1});
      REQUIRE_FALSE(r.fault);
      for (int i = 0; i < 8; ++i) {
        CHECK(out[size_t(i)] == i + 1 + 100);
        CHECK(buf[size_t(i)] == 100);
      }
    }
    SUBCASE("a and b are distinct buffers") {
      // a is only read: it may be read in place, and both loads see 1..8.
      std::vector<int32_t> a = iota(8, 1), b(8, 0), out(8, 0);
      LaunchResult r =
          launch(*k.kernel,
                 {pointer("a", viewOf(a, DType::I32)), pointer("b", viewOf(b, DType::I32)),
                  pointer("out", viewOf(out, DType::I32))},
                 {ptrArg(0), ptrArg(1), ptrArg(2)}, {1, 1, 1});
      REQUIRE_FALSE(r.fault);
      for (int i = 0; i < 8; ++i) {
        CHECK(out[size_t(i)] == 2 * (i + 1));
        CHECK(a[size_t(i)] == i + 1);
        CHECK(b[size_t(i)] == 100);
      }
    }
  }
}

TEST_CASE("a masked tail after an in-place read is copied into the frame, never into the input") {
  // Program 0 reads x[0..8) whole (in place); program 1 reads x[8..12) under a
  // mask, into the same frame (one thread). out = x + 1 where active, and the
  // masked-off lanes of program 1 store nothing.
  std::string ttir = R"(
module {
  tt.func public @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>, %n: i32) {
    %pid = tt.get_program_id x : i32
    %c8 = arith.constant 8 : i32
    %start = arith.muli %pid, %c8 : i32
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
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %w, %m : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)";
  std::vector<int32_t> x = iota(12, 10);
  std::vector<int32_t> out = runOnX(ttir, x, 16, 2, {intArg(12)});
  for (int i = 0; i < 12; ++i) {
    CHECK(x[size_t(i)] == 10 + i);
    CHECK(out[size_t(i)] == 11 + i);
  }
  for (int i = 12; i < 16; ++i)
    CHECK(out[size_t(i)] == -1);
}

TEST_CASE("a value read in place and carried through a loop keeps each iteration's contents") {
  // Iteration j loads xj = x[8j..8j+8) and carries it to the next iteration
  // as %prev; acc gains prev + xj each time.
  std::string ttir = R"(
module {
  tt.func public @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c8 = arith.constant 8 : i32
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %zero = arith.constant dense<0> : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %last, %sum = scf.for %j = %c0 to %c3 step %c1 iter_args(%prev = %zero, %acc = %zero) -> (tensor<8xi32>, tensor<8xi32>) : i32 {
      %start = arith.muli %j, %c8 : i32
      %s = tt.splat %start : i32 -> tensor<8xi32>
      %offs = arith.addi %s, %r : tensor<8xi32>
      %xp = tt.addptr %xb, %offs : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
      %v = tt.load %xp : tensor<8x!tt.ptr<i32>>
      %t0 = arith.addi %acc, %prev : tensor<8xi32>
      %t = arith.addi %t0, %v : tensor<8xi32>
      scf.yield %v, %t : tensor<8xi32>, tensor<8xi32>
    }
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %res = arith.subi %sum, %last : tensor<8xi32>
    tt.store %op, %res : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)";
  // sum = (0 + x0) + (x0 + x1) + (x1 + x2) = 2 x0 + 2 x1 + x2 and last = x2, so
  // out = sum - last = 2 (x0 + x1); with xj[i] = 8j + i that is 2 (i + 8 + i) = 4i + 16.
  std::vector<int32_t> x = iota(24, 0);
  std::vector<int32_t> out = runOnX(ttir, x, 8);
  for (int i = 0; i < 8; ++i)
    CHECK(out[size_t(i)] == 4 * i + 16);
}

TEST_CASE("a recursive call that reads in place leaves the caller's loaded value alone") {
  // sum(p, d) = load(p[0..8)) + (d > 0 ? sum(p + 8, d - 1) : 0): the caller's
  // load is used after the inner activation loaded other bytes into the same slot.
  std::string ttir = R"(
module {
  tt.func private @sum(%p: !tt.ptr<i32>, %d: i32) -> tensor<8xi32> {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %pb = tt.splat %p : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %pp = tt.addptr %pb, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %v = tt.load %pp : tensor<8x!tt.ptr<i32>>
    %c0 = arith.constant 0 : i32
    %more = arith.cmpi sgt, %d, %c0 : i32
    %rest = scf.if %more -> (tensor<8xi32>) {
      %c1 = arith.constant 1 : i32
      %c8 = arith.constant 8 : i32
      %next = tt.addptr %p, %c8 : !tt.ptr<i32>, i32
      %d1 = arith.subi %d, %c1 : i32
      %inner = tt.call @sum(%next, %d1) : (!tt.ptr<i32>, i32) -> tensor<8xi32>
      scf.yield %inner : tensor<8xi32>
    } else {
      %z = arith.constant dense<0> : tensor<8xi32>
      scf.yield %z : tensor<8xi32>
    }
    %t = arith.addi %v, %rest : tensor<8xi32>
    tt.return %t : tensor<8xi32>
  }
  tt.func public @k(%x: !tt.ptr<i32>, %out: !tt.ptr<i32>) {
    %c2 = arith.constant 2 : i32
    %s = tt.call @sum(%x, %c2) : (!tt.ptr<i32>, i32) -> tensor<8xi32>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %op, %s : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)";
  // x[j] = j: out[i] = i + (8 + i) + (16 + i) = 3i + 24.
  std::vector<int32_t> x = iota(24, 0);
  std::vector<int32_t> out = runOnX(ttir, x, 8);
  for (int i = 0; i < 8; ++i)
    CHECK(out[size_t(i)] == 3 * i + 24);
}
