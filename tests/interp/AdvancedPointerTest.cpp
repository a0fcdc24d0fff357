//===- AdvancedPointerTest.cpp - Pointer tensors a loop advances by one offset -===//
//
// A loop that only loads through a pointer tensor and advances it by one offset for every
// lane (matmul's tiles walking along K) keeps the pointers it began with and a count of the
// bytes added; its loads reuse the runs of the starting pointers (Lowerer::AdvancedPointer).
// These kernels walk tiles forwards and backwards, with ragged masks, from several programs,
// in a loop entered again with other pointers, and off the end of a buffer; expected values
// are sums worked out by plain loops here, and the fault is the element the walk leaves at.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// A's element i is i + 1 (small integers: every sum below is exact in f32).
std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i + 1);
  return v;
}
} // namespace

TEST_CASE("a 4x8 tile walking along K with a ragged last step sums what a plain loop sums") {
  // Program p sums the 4x8 tiles of rows 4p..4p+3 of a K-wide matrix (row stride `stride`),
  // stepping 8 columns at a time; columns at or past K are masked off (other = 0).
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%a: !tt.ptr<f32>, %out: !tt.ptr<f32>, %K: i32, %stride: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c7 = arith.constant 7 : i32
    %c8 = arith.constant 8 : i32
    %zero = arith.constant dense<0.0> : tensor<4x8xf32>
    %step = arith.constant dense<8> : tensor<4x8xi32>
    %pid = tt.get_program_id x : i32
    %row0 = arith.muli %pid, %c4 : i32
    %rows = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %row0s = tt.splat %row0 : i32 -> tensor<4xi32>
    %myRows = arith.addi %rows, %row0s : tensor<4xi32>
    %cols = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %r2 = tt.expand_dims %myRows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
    %strides = tt.splat %stride : i32 -> tensor<4x1xi32>
    %rowOff = arith.muli %r2, %strides : tensor<4x1xi32>
    %aBase = tt.splat %a : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
    %rowPtrs = tt.addptr %aBase, %rowOff : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
    %c2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %rowPtrsB = tt.broadcast %rowPtrs : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %colsB = tt.broadcast %c2 : tensor<1x8xi32> -> tensor<4x8xi32>
    %ptrs = tt.addptr %rowPtrsB, %colsB : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    %k7 = arith.addi %K, %c7 : i32
    %steps = arith.divsi %k7, %c8 : i32
    %r:2 = scf.for %i = %c0 to %steps step %c1 iter_args(%p = %ptrs, %acc = %zero) -> (tensor<4x8x!tt.ptr<f32>>, tensor<4x8xf32>) : i32 {
      %done = arith.muli %i, %c8 : i32
      %left = arith.subi %K, %done : i32
      %lefts = tt.splat %left : i32 -> tensor<1x8xi32>
      %m1 = arith.cmpi slt, %c2, %lefts : tensor<1x8xi32>
      %m = tt.broadcast %m1 : tensor<1x8xi1> -> tensor<4x8xi1>
      %x = tt.load %p, %m, %zero : tensor<4x8x!tt.ptr<f32>>
      %acc2 = arith.addf %acc, %x : tensor<4x8xf32>
      %p2 = tt.addptr %p, %step : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
      scf.yield %p2, %acc2 : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xf32>
    }
    %o4 = arith.constant dense<8> : tensor<4x1xi32>
    %oRow = arith.muli %r2, %o4 : tensor<4x1xi32>
    %oBase = tt.splat %out : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
    %oRowPtrs = tt.addptr %oBase, %oRow : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
    %oRowPtrsB = tt.broadcast %oRowPtrs : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %oPtrs = tt.addptr %oRowPtrsB, %colsB : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    tt.store %oPtrs, %r#1 : tensor<4x8x!tt.ptr<f32>>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  for (const std::array<int, 4> &c :
       {std::array<int, 4>{21, 21, 1, 1}, {16, 19, 2, 2}, {5, 8, 3, 2}, {40, 45, 2, 1}}) {
    // Named, not structured bindings: CAPTURE and INFO capture them, which clang 14 refuses.
    const int K = c[0], stride = c[1], programs = c[2], threads = c[3];
    CAPTURE(K);
    CAPTURE(stride);
    CAPTURE(programs);
    const int rows = 4 * programs;
    std::vector<float> a = iota(size_t(rows * stride)), out(size_t(rows * 8), -1.0f);
    LaunchResult r = launch(
        *k.kernel, {pointer("a", viewOf(a, DType::F32)), pointer("out", viewOf(out, DType::F32))},
        {ptrArg(0), ptrArg(1), intArg(K), intArg(stride)}, {programs, 1, 1}, unsigned(threads));
    REQUIRE(r.error.empty());
    REQUIRE_FALSE(r.fault);
    for (int row = 0; row < rows; ++row)
      for (int c = 0; c < 8; ++c) {
        float sum = 0;
        for (int k0 = 0; k0 < K; k0 += 8)
          if (k0 + c < K)
            sum += a[size_t(row * stride + k0 + c)];
        CAPTURE(row);
        CAPTURE(c);
        CHECK(out[size_t(row * 8 + c)] == sum);
      }
  }
}

namespace {
/// `@k(%a, %out, %n)`: for each of 3 rows, a loop of %n steps walks 8 lanes backwards by 8
/// elements (the offset is a splat of a scalar computed in the loop), summing them; lane c
/// starts at a[24r + 16 + c], plus 1 from lane r + 2 on (so each row's pointers break at
/// another lane), and row r's sums go to out[8r..8r+8). The inner loop is entered once per
/// row, each time with other starting pointers.
std::string backwardsKernel() {
  return R"(
module {
  tt.func public @k(%a: !tt.ptr<f32>, %out: !tt.ptr<f32>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %c16 = arith.constant 16 : i32
    %c24 = arith.constant 24 : i32
    %zero = arith.constant dense<0.0> : tensor<8xf32>
    %cols = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    scf.for %row = %c0 to %c3 step %c1 : i32 {
      %rowStart = arith.muli %row, %c24 : i32
      %first = arith.addi %rowStart, %c16 : i32
      %firsts = tt.splat %first : i32 -> tensor<8xi32>
      %offs0 = arith.addi %firsts, %cols : tensor<8xi32>
      %g = arith.addi %row, %c2 : i32
      %gs = tt.splat %g : i32 -> tensor<8xi32>
      %after = arith.cmpi sge, %cols, %gs : tensor<8xi32>
      %gap = arith.extui %after : tensor<8xi1> to tensor<8xi32>
      %offs = arith.addi %offs0, %gap : tensor<8xi32>
      %aBase = tt.splat %a : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
      %ptrs = tt.addptr %aBase, %offs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
      %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %ptrs, %acc = %zero) -> (tensor<8x!tt.ptr<f32>>, tensor<8xf32>) : i32 {
        %x = tt.load %p : tensor<8x!tt.ptr<f32>>
        %acc2 = arith.addf %acc, %x : tensor<8xf32>
        %by = arith.subi %c16, %c24 : i32
        %bys = tt.splat %by : i32 -> tensor<8xi32>
        %p2 = tt.addptr %p, %bys : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
        scf.yield %p2, %acc2 : tensor<8x!tt.ptr<f32>>, tensor<8xf32>
      }
      %oRow = arith.muli %row, %c1 : i32
      %o8 = arith.constant 8 : i32
      %oFirst = arith.muli %oRow, %o8 : i32
      %oFirsts = tt.splat %oFirst : i32 -> tensor<8xi32>
      %oOffs = arith.addi %oFirsts, %cols : tensor<8xi32>
      %oBase = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
      %oPtrs = tt.addptr %oBase, %oOffs : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
      tt.store %oPtrs, %r#1 : tensor<8x!tt.ptr<f32>>
    }
    tt.return
  }
}
)";
}

LaunchResult runBackwards(int64_t n, std::vector<float> &a, std::vector<float> &out) {
  LoadedKernel k = loadKernel(backwardsKernel());
  REQUIRE_MESSAGE(k.kernel, k.error);
  return launch(*k.kernel,
                {pointer("a", viewOf(a, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                {ptrArg(0), ptrArg(1), intArg(n)}, {1, 1, 1});
}
} // namespace

TEST_CASE("a loop entered again with other pointers walks backwards from each row's own start") {
  // by = 16 - 24 = -8. Row r, lane c, n = 3: a[s] + a[s - 8] + a[s - 16] with
  // s = 24r + 16 + c + (c >= r + 2) (0-based elements; a[i] = i + 1).
  std::vector<float> a = iota(80), out(24, -1.0f);
  LaunchResult r = runBackwards(3, a, out);
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  for (int row = 0; row < 3; ++row)
    for (int c = 0; c < 8; ++c) {
      CAPTURE(row);
      CAPTURE(c);
      int s = 24 * row + 16 + c + (c >= row + 2 ? 1 : 0);
      float expected = a[size_t(s)] + a[size_t(s - 8)] + a[size_t(s - 16)];
      CHECK(out[size_t(row * 8 + c)] == expected);
    }
}

TEST_CASE("a walk that leaves its buffer faults at the first lane outside, and writes nothing") {
  // Row 0 with n = 4: the fourth step reads a[-8..0), before the buffer; lane 0 is the
  // first lane checked. Nothing is stored (the stores come after the loop).
  std::vector<float> a = iota(80), out(24, -1.0f);
  LaunchResult r = runBackwards(4, a, out);
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->op == "tt.load");
  CHECK(r.fault->element == 0);
  CHECK(r.fault->message.find("argument 'a'") != std::string::npos);
  CHECK(out == std::vector<float>(24, -1.0f));
}

namespace {
/// `@k(%a, %out)`: a 3-step loop over 8 lanes starting at a[c], stepping 8 elements, with
/// $LOOP as its body (it must yield %p2 and %acc2), then $AFTER; the sums go to out[0..8).
void runForward(const std::string &loop, const std::string &after, std::vector<float> &out) {
  std::string ttir = subst(R"(
module {
  tt.func public @k(%a: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %zero = arith.constant dense<0.0> : tensor<8xf32>
    %step = arith.constant dense<8> : tensor<8xi32>
    %cols = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %aBase = tt.splat %a : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %ptrs = tt.addptr %aBase, %cols : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%p = %ptrs, %acc = %zero) -> (tensor<8x!tt.ptr<f32>>, tensor<8xf32>) : i32 {
$LOOP
      scf.yield %p2, %acc2 : tensor<8x!tt.ptr<f32>>, tensor<8xf32>
    }
$AFTER
    %oBase = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %oPtrs = tt.addptr %oBase, %cols : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %oPtrs, %sums : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
)",
                           {{"$LOOP", loop}, {"$AFTER", after}});
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> a = iota(40);
  out.assign(8, -1.0f);
  LaunchResult r = launch(
      *k.kernel, {pointer("a", viewOf(a, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
}
} // namespace

TEST_CASE("loads before and after the advance in a loop body read their own pointers") {
  // Each step advances first, then loads its old pointers (%p: a[c + 8i]) and its new ones
  // (%p2: a[c + 8i + 8]): sums of a[c] + a[c + 8] + a[c + 16] and of the next three.
  std::vector<float> out;
  runForward(R"(
      %p2 = tt.addptr %p, %step : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
      %old = tt.load %p : tensor<8x!tt.ptr<f32>>
      %new = tt.load %p2 : tensor<8x!tt.ptr<f32>>
      %both = arith.addf %old, %new : tensor<8xf32>
      %acc2 = arith.addf %acc, %both : tensor<8xf32>
)",
             "    %sums = arith.addf %r#1, %zero : tensor<8xf32>", out);
  for (int c = 0; c < 8; ++c) {
    CAPTURE(c);
    float old = float(c + 1) + float(c + 9) + float(c + 17);
    float next = float(c + 9) + float(c + 17) + float(c + 25);
    CHECK(out[size_t(c)] == old + next);
  }
}

TEST_CASE("a load of the old pointers after the advance in a loop body reads the old ones") {
  // The advance comes first in the block, the load of %p after it: a[c] + a[c + 8] + a[c + 16].
  std::vector<float> out;
  runForward(R"(
      %p2 = tt.addptr %p, %step : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
      %x = tt.load %p : tensor<8x!tt.ptr<f32>>
      %acc2 = arith.addf %acc, %x : tensor<8xf32>
)",
             "    %sums = arith.addf %r#1, %zero : tensor<8xf32>", out);
  for (int c = 0; c < 8; ++c) {
    CAPTURE(c);
    CHECK(out[size_t(c)] == float(c + 1) + float(c + 9) + float(c + 17));
  }
}

TEST_CASE("pointers a loop advances and then hands on read where the loop left them") {
  // The loop sums a[c] + a[c + 8] + a[c + 16]; after it, the pointers have moved 24 elements
  // and a load through the loop's result reads a[c + 24], added to the sums.
  std::vector<float> out;
  runForward(R"(
      %x = tt.load %p : tensor<8x!tt.ptr<f32>>
      %acc2 = arith.addf %acc, %x : tensor<8xf32>
      %p2 = tt.addptr %p, %step : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
)",
             "    %last = tt.load %r#0 : tensor<8x!tt.ptr<f32>>\n"
             "    %sums = arith.addf %r#1, %last : tensor<8xf32>",
             out);
  for (int c = 0; c < 8; ++c) {
    CAPTURE(c);
    CHECK(out[size_t(c)] == float(c + 1) + float(c + 9) + float(c + 17) + float(c + 25));
  }
}

TEST_CASE("consecutive pointers whose sum carries into the next buffer's tag are two runs") {
  // Lane 0 points 4 bytes below the top of a's address bits, lane 1 at address 0 of b (the
  // next argument: a's tag + 1), so as 64-bit words lane 1 is lane 0 plus one element. The
  // loop first loads nothing (masked off), then advances both by a's address + 4 bytes: lane
  // 0 wraps to a[0], lane 1 lands outside b. Lane 1 is b's pointer and must fault, not read
  // a[1] as part of lane 0's run.
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i64
    %z64 = arith.constant 0 : i64
    %top = arith.constant 281474976710652 : i64
    %zeros = arith.constant dense<0.0> : tensor<2xf32>
    %zero32 = arith.constant dense<0> : tensor<2xi32>
    %aAddr = tt.ptr_to_int %a : !tt.ptr<f32> -> i64
    %bAddr = tt.ptr_to_int %b : !tt.ptr<f32> -> i64
    %toTop = arith.subi %top, %aAddr : i64
    %offA = arith.divsi %toTop, %c4 : i64
    %negB = arith.subi %z64, %bAddr : i64
    %offB = arith.divsi %negB, %c4 : i64
    %range = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32>
    %isFirst = arith.cmpi eq, %range, %zero32 : tensor<2xi32>
    %offAs = tt.splat %offA : i64 -> tensor<2xi64>
    %offBs = tt.splat %offB : i64 -> tensor<2xi64>
    %offs = arith.select %isFirst, %offAs, %offBs : tensor<2xi1>, tensor<2xi64>
    %as = tt.splat %a : !tt.ptr<f32> -> tensor<2x!tt.ptr<f32>>
    %bs = tt.splat %b : !tt.ptr<f32> -> tensor<2x!tt.ptr<f32>>
    %bases = arith.select %isFirst, %as, %bs : tensor<2xi1>, tensor<2x!tt.ptr<f32>>
    %ptrs = tt.addptr %bases, %offs : tensor<2x!tt.ptr<f32>>, tensor<2xi64>
    %stepBytes = arith.addi %aAddr, %c4 : i64
    %step = arith.divsi %stepBytes, %c4 : i64
    %r:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%p = %ptrs, %acc = %zeros) -> (tensor<2x!tt.ptr<f32>>, tensor<2xf32>) : i32 {
      %on = arith.cmpi sge, %i, %c1 : i32
      %m = tt.splat %on : i1 -> tensor<2xi1>
      %x = tt.load %p, %m, %zeros : tensor<2x!tt.ptr<f32>>
      %acc2 = arith.addf %acc, %x : tensor<2xf32>
      %steps = tt.splat %step : i64 -> tensor<2xi64>
      %p2 = tt.addptr %p, %steps : tensor<2x!tt.ptr<f32>>, tensor<2xi64>
      scf.yield %p2, %acc2 : tensor<2x!tt.ptr<f32>>, tensor<2xf32>
    }
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<2x!tt.ptr<f32>>
    %op = tt.addptr %os, %range : tensor<2x!tt.ptr<f32>>, tensor<2xi32>
    tt.store %op, %r#1 : tensor<2x!tt.ptr<f32>>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> a = iota(4), b = iota(4), out(2, -1.0f);
  LaunchResult r = launch(*k.kernel,
                          {pointer("a", viewOf(a, DType::F32)), pointer("b", viewOf(b, DType::F32)),
                           pointer("out", viewOf(out, DType::F32))},
                          {ptrArg(0), ptrArg(1), ptrArg(2)}, {1, 1, 1});
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->element == 1);
  CHECK(out == std::vector<float>{-1.0f, -1.0f});
}
