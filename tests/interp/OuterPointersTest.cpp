//===- OuterPointersTest.cpp - 2-D pointer tiles spelled as broadcast rows and columns -===//
//
// `x + rows[:, None] * ld + cols[None, :]` reaches the TTIR as tt.addptr(tt.broadcast(an [M, 1]
// pointer tensor), tt.broadcast(a [1, N] offset tensor)), or with the pointers along the
// columns; a load or store through it reads the M + N values directly (FusionPlan::
// outerPointers, Fusion.h), and so does a loop that starts an advanced pointer from it. These
// kernels check, against values worked out here, every spelling: rows consecutive or not
// (a transposed store), i64 offsets, masked lanes, a loop entered more than once, a fault's
// element, and that the broadcasts and the addptr are really not run.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// Program p copies the 4 x 8 tile of x's rows 4p..4p+3 (rows `ldx` elements apart), loaded
/// under the mask rows < M, cols < N with `other` -7.0, to `out` through the pointers $STORE
/// defines as %op under the same mask. x's pointers are the outer form, pointers along rows.
///   @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %M: i32, %N: i32, %ldx: i32, %ldo: i32)
std::string copyKernel(const std::string &store, const std::string &extra = "") {
  return subst(R"(
#st = loc("tile.py":9:4)
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %M: i32, %N: i32, %ldx: i32, %ldo: i32) {
    %c4 = arith.constant 4 : i32
    %other = arith.constant dense<-7.000000e+00> : tensor<4x8xf32>
    %pid = tt.get_program_id x : i32
    %r0 = arith.muli %pid, %c4 : i32
    %ri = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %rs = tt.splat %r0 : i32 -> tensor<4xi32>
    %rows = arith.addi %rs, %ri : tensor<4xi32>
    %cols = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
    %cols2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %Ms = tt.splat %M : i32 -> tensor<4x1xi32>
    %rm = arith.cmpi slt, %rows2, %Ms : tensor<4x1xi32>
    %Ns = tt.splat %N : i32 -> tensor<1x8xi32>
    %cm = arith.cmpi slt, %cols2, %Ns : tensor<1x8xi32>
    %lr = tt.broadcast %rm : tensor<4x1xi1> -> tensor<4x8xi1>
    %lc = tt.broadcast %cm : tensor<1x8xi1> -> tensor<4x8xi1>
    %lmask = arith.andi %lr, %lc : tensor<4x8xi1>
    %sr = tt.broadcast %rm : tensor<4x1xi1> -> tensor<4x8xi1>
    %sc = tt.broadcast %cm : tensor<1x8xi1> -> tensor<4x8xi1>
    %smask = arith.andi %sr, %sc : tensor<4x8xi1>
    %ldxs = tt.splat %ldx : i32 -> tensor<4x1xi32>
    %xro = arith.muli %rows2, %ldxs : tensor<4x1xi32>
    %xs = tt.splat %x : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
    %xrow = tt.addptr %xs, %xro : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
    %xpb = tt.broadcast %xrow : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %xcb = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
    %xp = tt.addptr %xpb, %xcb : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    %v = tt.load %xp, %lmask, %other : tensor<4x8x!tt.ptr<f32>>
    $STORE
    $EXTRA
    tt.store %op, %v, %smask : tensor<4x8x!tt.ptr<f32>> loc(#st)
    tt.return
  }
}
)",
               {{"$STORE", store}, {"$EXTRA", extra}});
}

/// out[r * ldo + c]: the same outer form as x's.
const char *kRowMajor = R"(%ldos = tt.splat %ldo : i32 -> tensor<4x1xi32>
    %oro = arith.muli %rows2, %ldos : tensor<4x1xi32>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
    %orow = tt.addptr %os, %oro : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
    %opb = tt.broadcast %orow : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %ocb = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
    %op = tt.addptr %opb, %ocb : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>)";

/// out[r * ldo + c] with i64 offsets along the columns.
const char *kRowMajorI64 = R"(%ldos = tt.splat %ldo : i32 -> tensor<4x1xi32>
    %oro = arith.muli %rows2, %ldos : tensor<4x1xi32>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
    %orow = tt.addptr %os, %oro : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
    %cols64 = arith.extsi %cols2 : tensor<1x8xi32> to tensor<1x8xi64>
    %opb = tt.broadcast %orow : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %ocb = tt.broadcast %cols64 : tensor<1x8xi64> -> tensor<4x8xi64>
    %op = tt.addptr %opb, %ocb : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi64>)";

/// out[r * ldo + c] with the pointers along the columns (out + c, consecutive) and the offsets
/// along the rows (r * ldo).
const char *kColumnPointers = R"(%os = tt.splat %out : !tt.ptr<f32> -> tensor<1x8x!tt.ptr<f32>>
    %ocol = tt.addptr %os, %cols2 : tensor<1x8x!tt.ptr<f32>>, tensor<1x8xi32>
    %ldos = tt.splat %ldo : i32 -> tensor<4x1xi32>
    %oro = arith.muli %rows2, %ldos : tensor<4x1xi32>
    %opb = tt.broadcast %ocol : tensor<1x8x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %orb = tt.broadcast %oro : tensor<4x1xi32> -> tensor<4x8xi32>
    %op = tt.addptr %opb, %orb : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>)";

/// out[c * ldo + r]: the tile transposed, no two lanes of a row consecutive.
const char *kTransposed = R"(%ldos = tt.splat %ldo : i32 -> tensor<1x8xi32>
    %oco = arith.muli %cols2, %ldos : tensor<1x8xi32>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<1x8x!tt.ptr<f32>>
    %ocol = tt.addptr %os, %oco : tensor<1x8x!tt.ptr<f32>>, tensor<1x8xi32>
    %opb = tt.broadcast %ocol : tensor<1x8x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %orb = tt.broadcast %rows2 : tensor<4x1xi32> -> tensor<4x8xi32>
    %op = tt.addptr %opb, %orb : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>)";

/// out[r * ldo + c] as Triton's `out + (rows[:, None] * ldo + cols[None, :])`: one pointer,
/// the offsets summed.
const char *kSummed = R"(%ldos = tt.splat %ldo : i32 -> tensor<4x1xi32>
    %oro = arith.muli %rows2, %ldos : tensor<4x1xi32>
    %orb = tt.broadcast %oro : tensor<4x1xi32> -> tensor<4x8xi32>
    %ocb = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
    %oo = arith.addi %ocb, %orb : tensor<4x8xi32>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %op = tt.addptr %os, %oo : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>)";

/// out[c * ldo + r], the offsets summed: the tile transposed.
const char *kSummedTransposed = R"(%ldos = tt.splat %ldo : i32 -> tensor<1x8xi32>
    %oco = arith.muli %cols2, %ldos : tensor<1x8xi32>
    %orb = tt.broadcast %rows2 : tensor<4x1xi32> -> tensor<4x8xi32>
    %ocb = tt.broadcast %oco : tensor<1x8xi32> -> tensor<4x8xi32>
    %oo = arith.addi %orb, %ocb : tensor<4x8xi32>
    %os = tt.splat %out : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %op = tt.addptr %os, %oo : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>)";

struct Copy {
  int64_t ldx = 11, ldo = 13;
  std::vector<float> x, out;
  explicit Copy(int64_t outElements) : x(size_t(12 * 11)), out(size_t(outElements), -1.0f) {
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i) + 0.5f;
  }
};

LaunchResult run(const std::string &ttir, Copy &c, int64_t M, int64_t N, uint64_t maxSteps = 0,
                 int64_t programs = 3) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return launch(*k.kernel,
                {pointer("x", viewOf(c.x, DType::F32)), pointer("out", viewOf(c.out, DType::F32))},
                {ptrArg(0), ptrArg(1), intArg(M), intArg(N), intArg(c.ldx), intArg(c.ldo)},
                {programs, 1, 1}, 1, maxSteps);
}

/// What `out` holds after the copy: element at(r, c) is x's (r, c) where the mask lets it
/// through, and every other element keeps -1.
std::vector<float> expected(const Copy &c, int64_t M, int64_t N,
                            int64_t (*at)(int64_t r, int64_t col, int64_t ldo)) {
  std::vector<float> want(c.out.size(), -1.0f);
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t col = 0; col < 8; ++col)
      if (r < M && col < N)
        want[size_t(at(r, col, c.ldo))] = c.x[size_t(r * c.ldx + col)];
  return want;
}

int64_t rowMajor(int64_t r, int64_t c, int64_t ldo) { return r * ldo + c; }
int64_t transposed(int64_t r, int64_t c, int64_t ldo) { return c * ldo + r; }

/// The fewest steps one program of `ttir` runs in (its step limit does not fault).
uint64_t stepsOf(const std::string &ttir) {
  for (uint64_t steps = 1; steps < 200; ++steps) {
    Copy c(12 * 13);
    if (!run(ttir, c, 12, 8, steps, 1).fault)
      return steps;
  }
  FAIL("more than 200 steps");
  return 0;
}

} // namespace

TEST_CASE("outer pointers load and store every lane the mask lets through, in every spelling") {
  struct Spelling {
    const char *name, *store;
    int64_t (*at)(int64_t, int64_t, int64_t);
  };
  for (Spelling s : {Spelling{"row-major", kRowMajor, rowMajor},
                     Spelling{"row-major, i64 offsets", kRowMajorI64, rowMajor},
                     Spelling{"pointers along the columns", kColumnPointers, rowMajor},
                     Spelling{"transposed", kTransposed, transposed},
                     Spelling{"offsets summed", kSummed, rowMajor},
                     Spelling{"offsets summed, transposed", kSummedTransposed, transposed}}) {
    for (std::pair<int64_t, int64_t> bounds :
         {std::pair<int64_t, int64_t>{12, 8}, {7, 8}, {12, 5}, {6, 3}, {0, 8}}) {
      // Named, not structured bindings: CAPTURE takes them in a lambda, which clang 14 refuses.
      const int64_t M = bounds.first, N = bounds.second;
      CAPTURE(s.name);
      CAPTURE(M);
      CAPTURE(N);
      Copy c(13 * 13);
      LaunchResult r = run(copyKernel(s.store), c, M, N);
      REQUIRE(r.error.empty());
      REQUIRE_FALSE(r.fault);
      CHECK(c.out == expected(c, M, N, s.at));
    }
  }
}

TEST_CASE("a row-major tile of a dense matrix is one run: rows that continue each other") {
  // ldo = 8: out's rows are the tile's, back to back (and x's too with ldx = 8).
  Copy c(12 * 8);
  c.ldx = c.ldo = 8;
  LaunchResult r = run(copyKernel(kRowMajor), c, 12, 8);
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  CHECK(c.out == expected(c, 12, 8, rowMajor));
}

TEST_CASE(
    "a store through outer pointers faults at its first lane out of bounds, writing nothing") {
  // out holds 10 rows of 13: program 2's tile (rows 8..11) leaves it at row 10, its lane (2, 0),
  // element 16 of the tile.
  for (const char *store : {kRowMajor, kColumnPointers, kSummed}) {
    Copy c(10 * 13);
    LaunchResult r = run(copyKernel(store), c, 12, 8);
    REQUIRE(r.fault);
    CHECK(r.fault->kind == "out_of_bounds");
    CHECK(r.fault->location == "tile.py:9:4");
    CHECK(r.fault->program == std::array<int64_t, 3>{2, 0, 0});
    CHECK(r.fault->element == std::optional<int64_t>(16));
    CHECK(c.out == std::vector<float>(10 * 13, -1.0f)); // a faulting launch writes nothing back
  }
}

TEST_CASE("outer pointers' broadcasts, addi and addptr are not run") {
  // Fused, neither x's pointers nor out's are built. Reading one of out's broadcasts once
  // more (one op) keeps it, and with it what out's pointers were built with: its two
  // broadcasts and addptr (four steps with the extra op), and the addi of summed offsets
  // (five). (The splat of a scalar is never a step: its readers read the scalar.)
  struct Spelling {
    const char *store, *keep;
    uint64_t more;
  };
  for (Spelling s :
       {Spelling{kRowMajor, "%keep = arith.addi %ocb, %ocb : tensor<4x8xi32>", 4},
        Spelling{kRowMajorI64, "%keep = arith.addi %ocb, %ocb : tensor<4x8xi64>", 4},
        Spelling{kColumnPointers, "%keep = arith.addi %orb, %orb : tensor<4x8xi32>", 4},
        Spelling{kTransposed, "%keep = arith.addi %orb, %orb : tensor<4x8xi32>", 4},
        Spelling{kSummed, "%keep = arith.addi %ocb, %ocb : tensor<4x8xi32>", 5},
        Spelling{kSummedTransposed, "%keep = arith.addi %orb, %orb : tensor<4x8xi32>", 5}}) {
    CAPTURE(s.store);
    CHECK(stepsOf(copyKernel(s.store, s.keep)) == stepsOf(copyKernel(s.store)) + s.more);
  }
}

TEST_CASE("a loop starting advanced pointers from outer pointers, entered once per outer step") {
  // For t in 0, 1, program p sums over k the 4 x 8 tiles x[t * 8 + 4p + i, 8k + j] for
  // 8k + j < K into out[t * 8 + 4p + i, j]: each entry into the inner loop starts its pointers
  // from another block of rows, so what a load learned on one entry must not serve the next.
  // x's pointers as Triton spells `x + rows[:, None] * ld + cols[None, :]`, and with the
  // offsets summed (the matmul tutorial's `x + (rows[:, None] * ld + cols[None, :])`).
  const char *broadcastPointers = R"(%xs = tt.splat %x : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
      %xrow = tt.addptr %xs, %xro : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
      %xpb = tt.broadcast %xrow : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
      %xcb = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
      %xp = tt.addptr %xpb, %xcb : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>)";
  const char *summedOffsets = R"(%xrb = tt.broadcast %xro : tensor<4x1xi32> -> tensor<4x8xi32>
      %xcb = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
      %xo = arith.addi %xrb, %xcb : tensor<4x8xi32>
      %xs = tt.splat %x : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
      %xp = tt.addptr %xs, %xo : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>)";
  for (const char *spelling : {broadcastPointers, summedOffsets}) {
    std::string ttir = subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %K: i32, %ld: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %c7 = arith.constant 7 : i32
    %step = arith.constant dense<8> : tensor<4x8xi32>
    %c8t = arith.constant dense<8> : tensor<4x1xi32>
    %zero = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
    %pid = tt.get_program_id x : i32
    %r0 = arith.muli %pid, %c4 : i32
    %ri = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %cols = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %cols2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %Kp = arith.addi %K, %c7 : i32
    %n = arith.divsi %Kp, %c8 : i32
    scf.for %t = %c0 to %c2 step %c1 : i32 {
      %t8 = arith.muli %t, %c8 : i32
      %first = arith.addi %t8, %r0 : i32
      %rs = tt.splat %first : i32 -> tensor<4xi32>
      %rows = arith.addi %rs, %ri : tensor<4xi32>
      %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
      %lds = tt.splat %ld : i32 -> tensor<4x1xi32>
      %xro = arith.muli %rows2, %lds : tensor<4x1xi32>
      $XP
      %acc:2 = scf.for %k = %c0 to %n step %c1 iter_args(%p = %xp, %a = %zero) -> (tensor<4x8x!tt.ptr<f32>>, tensor<4x8xf32>) : i32 {
        %left0 = arith.muli %k, %c8 : i32
        %left = arith.subi %K, %left0 : i32
        %ls = tt.splat %left : i32 -> tensor<1x8xi32>
        %cm = arith.cmpi slt, %cols2, %ls : tensor<1x8xi32>
        %mask = tt.broadcast %cm : tensor<1x8xi1> -> tensor<4x8xi1>
        %v = tt.load %p, %mask, %zero : tensor<4x8x!tt.ptr<f32>>
        %s = arith.addf %a, %v : tensor<4x8xf32>
        %next = tt.addptr %p, %step : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
        scf.yield %next, %s : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xf32>
      }
      %oro = arith.muli %rows2, %c8t : tensor<4x1xi32>
      %os = tt.splat %out : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
      %orow = tt.addptr %os, %oro : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
      %opb = tt.broadcast %orow : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
      %ocb = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
      %op = tt.addptr %opb, %ocb : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
      tt.store %op, %acc#1 : tensor<4x8x!tt.ptr<f32>>
    }
    tt.return
  }
}
)",
                             {{"$XP", spelling}});
    CAPTURE(spelling);
    LoadedKernel k = loadKernel(ttir);
    REQUIRE_MESSAGE(k.kernel, k.error);
    const int64_t rows = 16, ld = 21;
    std::vector<float> x(size_t(rows * ld));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i % 97) * 0.25f; // exact in f32, sums exact too
    for (int64_t K : {21, 16, 5}) {
      CAPTURE(K);
      std::vector<float> out(size_t(rows * 8), -1.0f);
      LaunchResult r = launch(
          *k.kernel, {pointer("x", viewOf(x, DType::F32)), pointer("out", viewOf(out, DType::F32))},
          {ptrArg(0), ptrArg(1), intArg(K), intArg(ld)}, {2, 1, 1});
      REQUIRE(r.error.empty());
      REQUIRE_FALSE(r.fault);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < 8; ++j) {
          float want = 0;
          for (int64_t kk = j; kk < K; kk += 8)
            want += x[size_t(i * ld + kk)];
          CAPTURE(i);
          CAPTURE(j);
          CHECK(out[size_t(i * 8 + j)] == want);
        }
    }
  }
}
