//===- OuterMaskTest.cpp - 2-D masks spelled as broadcast rows and columns ----===//
//
// `mask = (rows[:, None] < M) & (cols[None, :] < N)` reaches the TTIR as an arith.andi of two
// tt.broadcast ops; a load or store whose mask is that (or one such broadcast alone) reads the
// [M, 1] and [1, N] masks directly (FusionPlan::outerMask, Fusion.h) and has no mask at all when
// both are all true. These kernels check, against values worked out here, that every lane is
// loaded, defaulted to `other` or stored exactly as the mask says, in every spelling, in and out
// of a loop (an advanced pointer's load), that out-of-bounds lanes fault where the mask lets
// them through and nowhere else, and that the andi and broadcasts are really not run.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <functional>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// Program p's tile: rows %rows2 (4p..4p+3, [4, 1]), columns %cols2 ([1, 8]), and %offs, the
/// [4, 8] element offsets of rows `%ld` elements apart (needs %c4 = 4 and %ld).
const char *kTile = R"(%pid = tt.get_program_id x : i32
    %r0 = arith.muli %pid, %c4 : i32
    %ri = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %rs = tt.splat %r0 : i32 -> tensor<4xi32>
    %rows = arith.addi %rs, %ri : tensor<4xi32>
    %cols = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %rows2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
    %cols2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %lds = tt.splat %ld : i32 -> tensor<4x1xi32>
    %rowoff = arith.muli %rows2, %lds : tensor<4x1xi32>
    %ro = tt.broadcast %rowoff : tensor<4x1xi32> -> tensor<4x8xi32>
    %co = tt.broadcast %cols2 : tensor<1x8xi32> -> tensor<4x8xi32>
    %offs = arith.addi %ro, %co : tensor<4x8xi32>)";

/// Program p copies the 4 x 8 tile of rows 4p..4p+3 of x (rows `ld` elements apart) to `out`
/// (the same layout) under $STOREMASK, and the tile as loaded under $LOADMASK, `other` -7.0, to
/// `dense` (rows of 8). $EXTRA is spliced in before the store (ops using the masks).
///   @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %dense: !tt.ptr<f32>, %M: i32, %N: i32, %ld: i32)
std::string tileKernel(const std::string &loadMask, const std::string &storeMask,
                       const std::string &extra = "") {
  return subst(R"(
#ld = loc("tile.py":7:8)
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %dense: !tt.ptr<f32>, %M: i32, %N: i32, %ld: i32) {
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant dense<8> : tensor<4x1xi32>
    %other = arith.constant dense<-7.000000e+00> : tensor<4x8xf32>
    $TILE
    %Ms = tt.splat %M : i32 -> tensor<4x1xi32>
    %rm = arith.cmpi slt, %rows2, %Ms : tensor<4x1xi32>
    %Ns = tt.splat %N : i32 -> tensor<1x8xi32>
    %cm = arith.cmpi slt, %cols2, %Ns : tensor<1x8xi32>
    %lr = tt.broadcast %rm : tensor<4x1xi1> -> tensor<4x8xi1>
    %lc = tt.broadcast %cm : tensor<1x8xi1> -> tensor<4x8xi1>
    %sr = tt.broadcast %rm : tensor<4x1xi1> -> tensor<4x8xi1>
    %sc = tt.broadcast %cm : tensor<1x8xi1> -> tensor<4x8xi1>
    $LOADMASK
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    %v = tt.load %xp, %lmask, %other : tensor<4x8x!tt.ptr<f32>> loc(#ld)
    %drow = arith.muli %rows2, %c8 : tensor<4x1xi32>
    %dr = tt.broadcast %drow : tensor<4x1xi32> -> tensor<4x8xi32>
    %doffs = arith.addi %dr, %co : tensor<4x8xi32>
    %db = tt.splat %dense : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %dp = tt.addptr %db, %doffs : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    tt.store %dp, %v : tensor<4x8x!tt.ptr<f32>>
    $STOREMASK
    $EXTRA
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %op = tt.addptr %ob, %offs : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    tt.store %op, %v, %smask : tensor<4x8x!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$TILE", kTile}, {"$LOADMASK", loadMask}, {"$STOREMASK", storeMask},
                {"$EXTRA", extra}});
}

// The spellings of a mask: both factors (either order), rows only, columns only.
const std::string kLoadBoth = "%lmask = arith.andi %lr, %lc : tensor<4x8xi1>";
const std::string kLoadBothSwapped = "%lmask = arith.andi %lc, %lr : tensor<4x8xi1>";
const std::string kStoreBoth = "%smask = arith.andi %sr, %sc : tensor<4x8xi1>";

struct Tile {
  int64_t rows = 12, ld = 11; ///< x and out: rows of ld elements (8 of them the tile's)
  std::vector<float> x, out, dense;
  Tile() : x(size_t(rows * ld)), out(size_t(rows * ld), -1.0f), dense(size_t(rows * 8), -2.0f) {
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i) + 0.5f;
  }
};

LaunchResult run(const std::string &ttir, Tile &t, int64_t M, int64_t N, int64_t programs = 3,
                 uint64_t maxSteps = 0) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return launch(*k.kernel,
                {pointer("x", viewOf(t.x, DType::F32)), pointer("out", viewOf(t.out, DType::F32)),
                 pointer("dense", viewOf(t.dense, DType::F32))},
                {ptrArg(0), ptrArg(1), ptrArg(2), intArg(M), intArg(N), intArg(t.ld)},
                {programs, 1, 1}, 1, maxSteps);
}

/// Checks the tile copy of rows [0, 12) under loadActive / storeActive (row, col).
void checkTile(const Tile &t, const std::function<bool(int64_t, int64_t)> &loadActive,
               const std::function<bool(int64_t, int64_t)> &storeActive) {
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t c = 0; c < 8; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      float loaded = loadActive(r, c) ? t.x[size_t(r * t.ld + c)] : -7.0f;
      CHECK(t.dense[size_t(r * 8 + c)] == loaded);
      CHECK(t.out[size_t(r * t.ld + c)] == (storeActive(r, c) ? loaded : -1.0f));
    }
  for (int64_t r = 0; r < 12; ++r) // the columns past the tile are never stored
    for (int64_t c = 8; c < t.ld; ++c)
      CHECK(t.out[size_t(r * t.ld + c)] == -1.0f);
}

/// The fewest steps one program of `ttir` runs in (its step limit does not fault).
uint64_t stepsOf(const std::string &ttir) {
  for (uint64_t steps = 1; steps < 200; ++steps) {
    Tile t;
    if (!run(ttir, t, 12, 8, 1, steps).fault)
      return steps;
  }
  FAIL("more than 200 steps");
  return 0;
}

} // namespace

TEST_CASE("an outer mask loads and stores exactly the lanes rows[i] && cols[j] lets through") {
  struct Case {
    int64_t M, N;
  };
  for (Case c : {Case{12, 8}, Case{7, 8}, Case{12, 5}, Case{6, 3}, Case{0, 8}, Case{12, 0}}) {
    for (const std::string &load : {kLoadBoth, kLoadBothSwapped}) {
      CAPTURE(c.M);
      CAPTURE(c.N);
      CAPTURE(load);
      Tile t;
      LaunchResult r = run(tileKernel(load, kStoreBoth), t, c.M, c.N);
      REQUIRE(r.error.empty());
      REQUIRE_FALSE(r.fault);
      auto active = [&](int64_t row, int64_t col) { return row < c.M && col < c.N; };
      checkTile(t, active, active);
    }
  }
}

TEST_CASE("a mask of broadcast rows alone, or of columns alone") {
  Tile t;
  std::string rowsOnly = "%lmask = tt.broadcast %rm : tensor<4x1xi1> -> tensor<4x8xi1>";
  std::string colsOnly = "%smask = tt.broadcast %cm : tensor<1x8xi1> -> tensor<4x8xi1>";
  LaunchResult r = run(tileKernel(rowsOnly, colsOnly), t, 5, 6);
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  checkTile(
      t, [](int64_t row, int64_t) { return row < 5; }, [](int64_t, int64_t col) { return col < 6; });
}

TEST_CASE("a mask another op also reads is built and read as before, with the same lanes") {
  Tile t;
  // The select reads the load's mask: it must exist, so the load reads it as a tensor.
  std::string extra = "%sel = arith.select %lmask, %v, %other : tensor<4x8xi1>, tensor<4x8xf32>";
  LaunchResult r = run(tileKernel(kLoadBoth, kStoreBoth, extra), t, 9, 4);
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  auto active = [](int64_t row, int64_t col) { return row < 9 && col < 4; };
  checkTile(t, active, active);
}

TEST_CASE("lanes an outer mask lets through fault out of bounds; lanes it masks off never do") {
  // x holds 12 rows of 11; with ld = 16, row 8 starts at element 128, past x's 132 elements
  // by its column 4 (element 132): program 2's first active lane out of bounds is row 8,
  // column 4, lane 4 of its tile.
  Tile t;
  t.ld = 16;
  t.out.assign(size_t(12 * 16), -1.0f);
  SUBCASE("columns masked to 4: nothing past the end is touched") {
    LaunchResult r = run(tileKernel(kLoadBoth, kStoreBoth), t, 9, 4);
    REQUIRE_FALSE(r.fault);
  }
  SUBCASE("columns masked to 5: the fifth column of row 8 faults") {
    std::vector<float> before = t.out;
    LaunchResult r = run(tileKernel(kLoadBoth, kStoreBoth), t, 9, 5);
    REQUIRE(r.fault);
    CHECK(r.fault->kind == "out_of_bounds");
    CHECK(r.fault->location == "tile.py:7:8");
    CHECK(r.fault->program == std::array<int64_t, 3>{2, 0, 0});
    CHECK(r.fault->element == std::optional<int64_t>(4));
    CHECK(t.out == before); // a faulting launch writes nothing back
  }
}

TEST_CASE("an outer mask's andi and broadcasts are not run") {
  // With the masks fused, the kernel runs three ops fewer for the load (its andi and two
  // broadcasts) and three for the store. Reading the load's mask once more (an extra op)
  // forces it to be built: four steps more in all, where without fusion it would be one.
  uint64_t fused = stepsOf(tileKernel(kLoadBoth, kStoreBoth));
  uint64_t built = stepsOf(tileKernel(
      kLoadBoth, kStoreBoth, "%keep = arith.xori %lmask, %lmask : tensor<4x8xi1>"));
  CHECK(built == fused + 4);
}

TEST_CASE("a tile loop's loads with outer masks (matmul's shape: K not a multiple of the tile)") {
  // Program p sums, over k, the 4 x 8 tiles x[4p + i, 8k + j] for j with 8k + j < K: the
  // loop's pointer advances by 8 columns per iteration (an advanced pointer).
  std::string ttir = subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %M: i32, %K: i32, %ld: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %c7 = arith.constant 7 : i32
    %step = arith.constant dense<8> : tensor<4x8xi32>
    %c8t = arith.constant dense<8> : tensor<4x1xi32>
    %zero = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
    $TILE
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    %Ms = tt.splat %M : i32 -> tensor<4x1xi32>
    %Kp = arith.addi %K, %c7 : i32
    %n = arith.divsi %Kp, %c8 : i32
    %acc:2 = scf.for %k = %c0 to %n step %c1 iter_args(%p = %xp, %a = %zero) -> (tensor<4x8x!tt.ptr<f32>>, tensor<4x8xf32>) : i32 {
      %left0 = arith.muli %k, %c8 : i32
      %left = arith.subi %K, %left0 : i32
      %ls = tt.splat %left : i32 -> tensor<1x8xi32>
      %cm = arith.cmpi slt, %cols2, %ls : tensor<1x8xi32>
      %rm = arith.cmpi slt, %rows2, %Ms : tensor<4x1xi32>
      %rb = tt.broadcast %rm : tensor<4x1xi1> -> tensor<4x8xi1>
      %cb = tt.broadcast %cm : tensor<1x8xi1> -> tensor<4x8xi1>
      %mask = arith.andi %rb, %cb : tensor<4x8xi1>
      %v = tt.load %p, %mask, %zero : tensor<4x8x!tt.ptr<f32>>
      %s = arith.addf %a, %v : tensor<4x8xf32>
      %next = tt.addptr %p, %step : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
      scf.yield %next, %s : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xf32>
    }
    %orow = arith.muli %rows2, %c8t : tensor<4x1xi32>
    %or = tt.broadcast %orow : tensor<4x1xi32> -> tensor<4x8xi32>
    %ooffs = arith.addi %or, %co : tensor<4x8xi32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<4x8x!tt.ptr<f32>>
    %op = tt.addptr %ob, %ooffs : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    tt.store %op, %acc#1 : tensor<4x8x!tt.ptr<f32>>
    tt.return
  }
}
)",
                           {{"$TILE", kTile}});
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  const int64_t rows = 8, ld = 21;
  std::vector<float> x(size_t(rows * ld));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 97) * 0.25f; // exact in f32, sums exact too
  for (int64_t K : {21, 16, 5}) {
    for (int64_t M : {8, 6}) {
      CAPTURE(K);
      CAPTURE(M);
      std::vector<float> out(size_t(rows * 8), -1.0f);
      LaunchResult r = launch(*k.kernel,
                              {pointer("x", viewOf(x, DType::F32)),
                               pointer("out", viewOf(out, DType::F32))},
                              {ptrArg(0), ptrArg(1), intArg(M), intArg(K), intArg(ld)}, {2, 1, 1});
      REQUIRE(r.error.empty());
      REQUIRE_FALSE(r.fault);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < 8; ++j) {
          float want = 0;
          for (int64_t kk = j; kk < K; kk += 8)
            if (i < M)
              want += x[size_t(i * ld + kk)];
          CAPTURE(i);
          CAPTURE(j);
          CHECK(out[size_t(i * 8 + j)] == want);
        }
    }
  }
}
