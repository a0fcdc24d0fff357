//===- LoopCarriedTest.cpp - Values handed from one iteration to the next -===//
//
// A loop hands the buffers of values defined in its body to its arguments instead
// of copying them (SlotTransfer, planned when lowered). These kernels hit each case
// where handing over would be wrong if done carelessly: arguments that rotate or swap,
// one value yielded twice, a constant defined in the body, and a load that reads the
// caller's memory in place; arguments that start from a constant, which read it without
// a copy; and counters of other types than i32. Expected values are worked out by hand
// in each test.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// Runs `@k(%in: !tt.ptr<i32>, %out: !tt.ptr<i32>)` over one program.
std::vector<int32_t> run(const std::string &body, std::vector<int32_t> &in, size_t outSize) {
  std::string ttir = subst(R"(
module {
  tt.func public @k(%in: !tt.ptr<i32>, %out: !tt.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %range = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %inBase = tt.splat %in : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
    %inPtrs = tt.addptr %inBase, %range : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    %outBase = tt.splat %out : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
    %outPtrs = tt.addptr %outBase, %range : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
$BODY
    tt.return
  }
}
)",
                           {{"$BODY", body}});
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> out(outSize, -1);
  LaunchResult r =
      launch(*k.kernel, {pointer("in", viewOf(in, DType::I32)), pointer("out", viewOf(out, DType::I32))},
             {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE_FALSE(r.fault);
  REQUIRE(r.error.empty());
  return out;
}
} // namespace

TEST_CASE("loop arguments that rotate keep their values (a, b) <- (b, a + b)") {
  std::vector<int32_t> in = {1, 2, 3, 4};
  // a0 = in, b0 = in: after 5 steps the pair is (F5 * a0 + F6 * b0 ...); per lane
  // with a0 = b0 = x: (x,x) (x,2x) (2x,3x) (3x,5x) (5x,8x) (8x,13x).
  std::vector<int32_t> out = run(R"(
    %x = tt.load %inPtrs : tensor<4x!tt.ptr<i32>>
    %c5 = arith.constant 5 : i32
    %r:2 = scf.for %i = %c0 to %c5 step %c1 iter_args(%a = %x, %b = %x) -> (tensor<4xi32>, tensor<4xi32>) : i32 {
      %s = arith.addi %a, %b : tensor<4xi32>
      scf.yield %b, %s : tensor<4xi32>, tensor<4xi32>
    }
    tt.store %outPtrs, %r#0 : tensor<4x!tt.ptr<i32>>
    %off = arith.constant dense<4> : tensor<4xi32>
    %outPtrs2 = tt.addptr %outPtrs, %off : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    tt.store %outPtrs2, %r#1 : tensor<4x!tt.ptr<i32>>
)",
                                 in, 8);
  CHECK(out == std::vector<int32_t>{8, 16, 24, 32, 13, 26, 39, 52});
}

TEST_CASE("one value yielded to two loop arguments gives both its value") {
  std::vector<int32_t> in = {1, 2, 3, 4};
  // Each step: s = a + b, then a = b = s. Start a = b = x: 2x, 4x, 8x.
  std::vector<int32_t> out = run(R"(
    %x = tt.load %inPtrs : tensor<4x!tt.ptr<i32>>
    %c3 = arith.constant 3 : i32
    %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x, %b = %x) -> (tensor<4xi32>, tensor<4xi32>) : i32 {
      %s = arith.addi %a, %b : tensor<4xi32>
      scf.yield %s, %s : tensor<4xi32>, tensor<4xi32>
    }
    %t = arith.subi %r#0, %r#1 : tensor<4xi32>
    %u = arith.addi %r#0, %t : tensor<4xi32>
    tt.store %outPtrs, %u : tensor<4x!tt.ptr<i32>>
)",
                                 in, 4);
  CHECK(out == std::vector<int32_t>{8, 16, 24, 32});
}

TEST_CASE("a constant defined in the loop body and yielded keeps its value every iteration") {
  std::vector<int32_t> in = {0, 0, 0, 0};
  // acc += 7 four times, and the yielded constant stays 7: out = 28 and 7.
  std::vector<int32_t> out = run(R"(
    %zero = arith.constant dense<0> : tensor<4xi32>
    %c4 = arith.constant 4 : i32
    %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero, %last = %zero) -> (tensor<4xi32>, tensor<4xi32>) : i32 {
      %seven = arith.constant dense<7> : tensor<4xi32>
      %next = arith.addi %acc, %seven : tensor<4xi32>
      scf.yield %next, %seven : tensor<4xi32>, tensor<4xi32>
    }
    tt.store %outPtrs, %r#0 : tensor<4x!tt.ptr<i32>>
    %off = arith.constant dense<4> : tensor<4xi32>
    %outPtrs2 = tt.addptr %outPtrs, %off : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    tt.store %outPtrs2, %r#1 : tensor<4x!tt.ptr<i32>>
)",
                                 in, 8);
  CHECK(out == std::vector<int32_t>{28, 28, 28, 28, 7, 7, 7, 7});
}

TEST_CASE("a loop argument given a load read in place is never written through") {
  // The inner loop yields a load of the read-only input (read in place, no copy);
  // the next outer iteration starts the inner loop again from zeros, which must go
  // into the argument's own buffer, not into the caller's input.
  std::vector<int32_t> in = {5, 6, 7, 8};
  std::vector<int32_t> out = run(R"(
    %zero = arith.constant dense<0> : tensor<4xi32>
    %c2 = arith.constant 2 : i32
    %total = scf.for %j = %c0 to %c2 step %c1 iter_args(%sum = %zero) -> (tensor<4xi32>) : i32 {
      %v = scf.for %i = %c0 to %c2 step %c1 iter_args(%x = %zero) -> (tensor<4xi32>) : i32 {
        %l = tt.load %inPtrs : tensor<4x!tt.ptr<i32>>
        %y = arith.addi %l, %x : tensor<4xi32>
        scf.yield %l : tensor<4xi32>
      }
      %s = arith.addi %sum, %v : tensor<4xi32>
      scf.yield %s : tensor<4xi32>
    }
    tt.store %outPtrs, %total : tensor<4x!tt.ptr<i32>>
)",
                                 in, 4);
  CHECK(out == std::vector<int32_t>{10, 12, 14, 16});
  CHECK(in == std::vector<int32_t>{5, 6, 7, 8});
}

TEST_CASE("loop arguments started from a constant read it in place and never write it") {
  // Every loop starts its accumulators from %zero, which they read without a copy
  // (ForData::constantArgs). The inner loops are entered again each outer iteration; the
  // empty one hands the constant itself on to the outer loop. x = in: inner = 2x, total
  // = 3 * 2x, the empty loop's value 0, and %zero is still 0 at the end (0 + 1 = 1).
  std::vector<int32_t> in = {1, 2, 3, 4};
  std::vector<int32_t> out = run(R"(
    %zero = arith.constant dense<0> : tensor<4xi32>
    %ones = arith.constant dense<1> : tensor<4xi32>
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %x = tt.load %inPtrs : tensor<4x!tt.ptr<i32>>
    %r:3 = scf.for %j = %c0 to %c3 step %c1 iter_args(%total = %zero, %last = %zero, %none = %ones) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) : i32 {
      %inner = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %zero) -> (tensor<4xi32>) : i32 {
        %a2 = arith.addi %acc, %x : tensor<4xi32>
        scf.yield %a2 : tensor<4xi32>
      }
      %empty = scf.for %i = %c0 to %c0 step %c1 iter_args(%acc = %zero) -> (tensor<4xi32>) : i32 {
        %a2 = arith.addi %acc, %x : tensor<4xi32>
        scf.yield %a2 : tensor<4xi32>
      }
      %t = arith.addi %total, %inner : tensor<4xi32>
      scf.yield %t, %inner, %empty : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
    }
    %four = arith.constant dense<4> : tensor<4xi32>
    tt.store %outPtrs, %r#0 : tensor<4x!tt.ptr<i32>>
    %p1 = tt.addptr %outPtrs, %four : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    tt.store %p1, %r#1 : tensor<4x!tt.ptr<i32>>
    %p2 = tt.addptr %p1, %four : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    tt.store %p2, %r#2 : tensor<4x!tt.ptr<i32>>
    %p3 = tt.addptr %p2, %four : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    %z1 = arith.addi %zero, %ones : tensor<4xi32>
    tt.store %p3, %z1 : tensor<4x!tt.ptr<i32>>
)",
                                 in, 16);
  CHECK(out == std::vector<int32_t>{6, 12, 18, 24, 2, 4, 6, 8, 0, 0, 0, 0, 1, 1, 1, 1});
}

TEST_CASE("a loop argument started from a value its block defines again is a copy of it") {
  // Only constants are read in place by a loop's arguments: %x is defined again every outer
  // iteration, and the empty inner loop hands %x of iteration j on to iteration j + 1 as
  // %o. Were %o the bytes of %x, it would read x_{j+1} there. With x_j = in + j:
  // acc = (x_0 - 0) + (x_1 - x_0) + (x_2 - x_1) = in + 2.
  std::vector<int32_t> in = {1, 2, 3, 4};
  std::vector<int32_t> out = run(R"(
    %zero = arith.constant dense<0> : tensor<4xi32>
    %c3 = arith.constant 3 : i32
    %l = tt.load %inPtrs : tensor<4x!tt.ptr<i32>>
    %r:2 = scf.for %j = %c0 to %c3 step %c1 iter_args(%o = %zero, %acc = %zero) -> (tensor<4xi32>, tensor<4xi32>) : i32 {
      %js = tt.splat %j : i32 -> tensor<4xi32>
      %x = arith.addi %l, %js : tensor<4xi32>
      %d = arith.subi %x, %o : tensor<4xi32>
      %acc2 = arith.addi %acc, %d : tensor<4xi32>
      %inner = scf.for %i = %c0 to %c0 step %c1 iter_args(%a = %x) -> (tensor<4xi32>) : i32 {
        scf.yield %a : tensor<4xi32>
      }
      scf.yield %inner, %acc2 : tensor<4xi32>, tensor<4xi32>
    }
    tt.store %outPtrs, %r#1 : tensor<4x!tt.ptr<i32>>
)",
                                 in, 4);
  CHECK(out == std::vector<int32_t>{3, 4, 5, 6});
}

TEST_CASE("loop arguments that swap, (a, b) <- (b, a), are copied as if at once") {
  // Neither value is defined in the body, so both are copies, each into the other's
  // argument: the transfer must read both before it writes either. Scalars and blocks.
  // After 3 swaps, (a, b) = (x + 10, x) for blocks and (2, 1) for scalars.
  std::vector<int32_t> in = {1, 2, 3, 4};
  std::vector<int32_t> out = run(R"(
    %x = tt.load %inPtrs : tensor<4x!tt.ptr<i32>>
    %ten = arith.constant dense<10> : tensor<4xi32>
    %y = arith.addi %x, %ten : tensor<4xi32>
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %r:4 = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x, %b = %y, %s = %c1, %t = %c2) -> (tensor<4xi32>, tensor<4xi32>, i32, i32) : i32 {
      scf.yield %b, %a, %t, %s : tensor<4xi32>, tensor<4xi32>, i32, i32
    }
    %four = arith.constant dense<4> : tensor<4xi32>
    tt.store %outPtrs, %r#0 : tensor<4x!tt.ptr<i32>>
    %p1 = tt.addptr %outPtrs, %four : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    tt.store %p1, %r#1 : tensor<4x!tt.ptr<i32>>
    %c10 = arith.constant 10 : i32
    %p2 = tt.addptr %out, %c10 : !tt.ptr<i32>, i32
    tt.store %p2, %r#2 : !tt.ptr<i32>
    %p3 = tt.addptr %p2, %c1 : !tt.ptr<i32>, i32
    tt.store %p3, %r#3 : !tt.ptr<i32>
)",
                                 in, 12);
  CHECK(std::vector<int32_t>(out.begin(), out.begin() + 8) ==
        std::vector<int32_t>{11, 12, 13, 14, 1, 2, 3, 4});
  CHECK(out[8] == -1);
  CHECK(out[9] == -1);
  CHECK(out[10] == 2);
  CHECK(out[11] == 1);
}

TEST_CASE("loops over i64 and i16 bounds read and write their counters in that type") {
  // i64: from 2^32 - 2 to 2^32 + 4 step 3 runs at 2^32 - 2 and 2^32 + 1: the counters sum
  // to 2^33 - 1, high word 1, low word -1 (counters cut to 32 bits would sum to -1, high
  // word -1). i16: from -3 to 3 step 2 runs at -3, -1, 1: sum -3, each counter
  // sign-extended from 16 bits.
  std::vector<int32_t> in = {0, 0, 0, 0};
  std::vector<int32_t> out = run(R"(
    %lo64 = arith.constant 4294967294 : i64
    %hi64 = arith.constant 4294967300 : i64
    %step64 = arith.constant 3 : i64
    %zero64 = arith.constant 0 : i64
    %c32 = arith.constant 32 : i64
    %sum64 = scf.for %i = %lo64 to %hi64 step %step64 iter_args(%acc = %zero64) -> (i64) : i64 {
      %next = arith.addi %acc, %i : i64
      scf.yield %next : i64
    }
    %low = arith.trunci %sum64 : i64 to i32
    tt.store %out, %low : !tt.ptr<i32>
    %high64 = arith.shrsi %sum64, %c32 : i64
    %high = arith.trunci %high64 : i64 to i32
    %p1 = tt.addptr %out, %c1 : !tt.ptr<i32>, i32
    tt.store %p1, %high : !tt.ptr<i32>
    %lo16 = arith.constant -3 : i16
    %hi16 = arith.constant 3 : i16
    %step16 = arith.constant 2 : i16
    %sum16 = scf.for %i = %lo16 to %hi16 step %step16 iter_args(%acc = %c0) -> (i32) : i16 {
      %wide = arith.extsi %i : i16 to i32
      %next = arith.addi %acc, %wide : i32
      scf.yield %next : i32
    }
    %p2 = tt.addptr %p1, %c1 : !tt.ptr<i32>, i32
    tt.store %p2, %sum16 : !tt.ptr<i32>
)",
                                 in, 3);
  CHECK(out == std::vector<int32_t>{-1, 1, -3});
}
