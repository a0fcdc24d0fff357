//===- LaneRunsTest.cpp - Unfused loads and stores whose lanes run in pieces ===//
//
// A load or store the contiguous-access matcher does not take moves its lanes in runs
// of consecutive, active pointers, found for the whole tensor by vector compares
// (simd::laneBreaks, 64 lanes to a word of bits); a 1-D load through `base + offsets`
// (OffsetGather) finds the same runs from its i32 offsets (simd::offsetBreaks). Runs that break
// inside a vector or a word (a pointer jump, a masked-off lane), a 2-D tile of a larger matrix (one
// run per row, rows and columns masked) and a short tail must each give what a lane-by-lane
// definition gives; the expected values are that definition applied by plain loops here.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <set>

using namespace ttinterp;
using namespace ttinterp::test;

TEST_CASE("1-D gather in pieces: pointer jumps and masked-off lanes inside blocks of eight") {
  // Lane i reads in[i + (i >= 20 ? 7 : 0)] unless i is 37 or 45 (then -1), and
  // writes out[the same offset] (masked lanes write nothing). 61 lanes leave a tail of 5.
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%in: !tt.ptr<i32>, %out: !tt.ptr<i32>) {
    %r0 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %c20 = arith.constant dense<20> : tensor<64xi32>
    %c7 = arith.constant dense<7> : tensor<64xi32>
    %c0 = arith.constant dense<0> : tensor<64xi32>
    %c37 = arith.constant dense<37> : tensor<64xi32>
    %c45 = arith.constant dense<45> : tensor<64xi32>
    %c61 = arith.constant dense<61> : tensor<64xi32>
    %minus1 = arith.constant dense<-1> : tensor<64xi32>
    %ge = arith.cmpi sge, %r0, %c20 : tensor<64xi32>
    %shift = arith.select %ge, %c7, %c0 : tensor<64xi1>, tensor<64xi32>
    %off = arith.addi %r0, %shift : tensor<64xi32>
    %n37 = arith.cmpi ne, %r0, %c37 : tensor<64xi32>
    %n45 = arith.cmpi ne, %r0, %c45 : tensor<64xi32>
    %lt = arith.cmpi slt, %r0, %c61 : tensor<64xi32>
    %m0 = arith.andi %n37, %n45 : tensor<64xi1>
    %mask = arith.andi %m0, %lt : tensor<64xi1>
    %ib = tt.splat %in : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
    %ip = tt.addptr %ib, %off : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
    %v = tt.load %ip, %mask, %minus1 : tensor<64x!tt.ptr<i32>>
    %ob = tt.splat %out : !tt.ptr<i32> -> tensor<64x!tt.ptr<i32>>
    %op = tt.addptr %ob, %off : tensor<64x!tt.ptr<i32>>, tensor<64xi32>
    tt.store %op, %v, %mask : tensor<64x!tt.ptr<i32>>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> in(72), out(72, 5);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int32_t(1000 + i);
  std::vector<int32_t> expected(72, 5);
  for (int i = 0; i < 61; ++i)
    if (i != 37 && i != 45) {
      int at = i + (i >= 20 ? 7 : 0);
      expected[size_t(at)] = in[size_t(at)];
    }
  LaunchResult r = launch(
      *k.kernel, {pointer("in", viewOf(in, DType::I32)), pointer("out", viewOf(out, DType::I32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  CHECK(out == expected);
}

TEST_CASE("2-D tile of a larger matrix: one run per row, rows and columns masked") {
  // A 16x16 tile at (row 3, column 5) of a 20x24 f32 matrix; rows < 12 and columns
  // < 13 of the tile are active (others read -2); the tile is stored, doubled, into the
  // same place of a second matrix.
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%a: !tt.ptr<f32>, %c: !tt.ptr<f32>) {
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %row0 = arith.constant dense<3> : tensor<16xi32>
    %col0 = arith.constant dense<5> : tensor<16xi32>
    %ld = arith.constant dense<24> : tensor<16x1xi32>
    %rows = arith.addi %r, %row0 : tensor<16xi32>
    %cols = arith.addi %r, %col0 : tensor<16xi32>
    %re = tt.expand_dims %rows {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %ce = tt.expand_dims %cols {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %rowOff = arith.muli %re, %ld : tensor<16x1xi32>
    %rb = tt.broadcast %rowOff : tensor<16x1xi32> -> tensor<16x16xi32>
    %cb = tt.broadcast %ce : tensor<1x16xi32> -> tensor<16x16xi32>
    %off = arith.addi %rb, %cb : tensor<16x16xi32>
    %rl = tt.expand_dims %r {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
    %cl = tt.expand_dims %r {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    %c12 = arith.constant dense<12> : tensor<16x1xi32>
    %c13 = arith.constant dense<13> : tensor<1x16xi32>
    %rm = arith.cmpi slt, %rl, %c12 : tensor<16x1xi32>
    %cm = arith.cmpi slt, %cl, %c13 : tensor<1x16xi32>
    %rmb = tt.broadcast %rm : tensor<16x1xi1> -> tensor<16x16xi1>
    %cmb = tt.broadcast %cm : tensor<1x16xi1> -> tensor<16x16xi1>
    %mask = arith.andi %rmb, %cmb : tensor<16x16xi1>
    %other = arith.constant dense<-2.0> : tensor<16x16xf32>
    %ab = tt.splat %a : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %ap = tt.addptr %ab, %off : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
    %v = tt.load %ap, %mask, %other : tensor<16x16x!tt.ptr<f32>>
    %two = arith.addf %v, %v : tensor<16x16xf32>
    %cbp = tt.splat %c : !tt.ptr<f32> -> tensor<16x16x!tt.ptr<f32>>
    %cp = tt.addptr %cbp, %off : tensor<16x16x!tt.ptr<f32>>, tensor<16x16xi32>
    tt.store %cp, %two, %mask : tensor<16x16x!tt.ptr<f32>>
    %sum = "tt.reduce"(%v) <{axis = 1 : i32}> ({
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      tt.reduce.return %s : f32
    }) : (tensor<16x16xf32>) -> tensor<16xf32>
    %ob = tt.splat %c : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    tt.store %op, %sum : tensor<16x!tt.ptr<f32>>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> a(20 * 24), c(20 * 24, 0.5f);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i % 97) * 0.25f;
  std::vector<float> expected(20 * 24, 0.5f);
  std::vector<float> rowSums(16, 0.0f);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      bool active = i < 12 && j < 13;
      size_t at = size_t((3 + i) * 24 + 5 + j);
      float v = active ? a[at] : -2.0f;
      if (active)
        expected[at] = v + v;
      rowSums[size_t(i)] += v; // exact: quarters, small sums
    }
  // Row sums land in c[0..16), which the tile (rows 3..14) does not touch.
  for (int i = 0; i < 16; ++i)
    expected[size_t(i)] = rowSums[size_t(i)];
  LaunchResult r =
      launch(*k.kernel, {pointer("a", viewOf(a, DType::F32)), pointer("c", viewOf(c, DType::F32))},
             {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  CHECK(c == expected);
}

namespace {
/// Lane i (of 64) reads w[i / 16 + $EXTRA] (a channel's weight repeated over 16 lanes, as a
/// group norm gathers it) unless i is 5, 16 or 40 (then -1), and stores it to out[i].
std::string repeatedGatherKernel(int extra) {
  return subst(R"(
module {
  tt.func public @k(%w: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %c16 = arith.constant dense<16> : tensor<64xi32>
    %cx = arith.constant dense<$EXTRA> : tensor<64xi32>
    %ch = arith.divsi %r, %c16 : tensor<64xi32>
    %off = arith.addi %ch, %cx : tensor<64xi32>
    %c5 = arith.constant dense<5> : tensor<64xi32>
    %c16b = arith.constant dense<16> : tensor<64xi32>
    %c40 = arith.constant dense<40> : tensor<64xi32>
    %n5 = arith.cmpi ne, %r, %c5 : tensor<64xi32>
    %n16 = arith.cmpi ne, %r, %c16b : tensor<64xi32>
    %n40 = arith.cmpi ne, %r, %c40 : tensor<64xi32>
    %m0 = arith.andi %n5, %n16 : tensor<64xi1>
    %mask = arith.andi %m0, %n40 : tensor<64xi1>
    %minus1 = arith.constant dense<-1.0> : tensor<64xf32>
    %wb = tt.splat %w : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %wp = tt.addptr %wb, %off : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %v = tt.load %wp, %mask, %minus1 : tensor<64x!tt.ptr<f32>> loc("k.py":3:8)
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %op, %v : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$EXTRA", std::to_string(extra)}});
}
} // namespace

TEST_CASE("a gather whose lanes repeat one pointer: each lane the element, masked lanes other") {
  LoadedKernel k = loadKernel(repeatedGatherKernel(0));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> w{1.5f, 2.5f, 3.5f, 4.5f}, out(64, 0.0f);
  LaunchResult r = launch(
      *k.kernel, {pointer("w", viewOf(w, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  for (int i = 0; i < 64; ++i) {
    CAPTURE(i);
    CHECK(out[size_t(i)] == (i == 5 || i == 16 || i == 40 ? -1.0f : w[size_t(i / 16)]));
  }
}

TEST_CASE("a gather whose repeated pointer leaves the buffer faults at its first active lane") {
  // w has 3 elements and lane i reads w[i / 16 + 1]: lanes 32..47 read w[3], one past the end,
  // and lane 32, active, is the first of them.
  LoadedKernel k = loadKernel(repeatedGatherKernel(1));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> w{1.5f, 2.5f, 3.5f}, out(64, 0.0f);
  LaunchResult r = launch(
      *k.kernel, {pointer("w", viewOf(w, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->element == 32);
  CHECK(r.fault->location == "k.py:3:8");
  CHECK(out == std::vector<float>(64, 0.0f)); // a failed launch writes nothing back
}

TEST_CASE("repeated pointers across words of lanes: runs of 70 over 300 lanes, masked lanes") {
  // Lane i reads w[i / 70] unless masked off (then -1): runs of one pointer that cross the
  // 64-lane words of the cursor's bits, masked lanes at a word's first lane, inside runs and
  // last, and a run that ends the block.
  const int n = 300, width = 70;
  const std::set<int> masked{5, 64, 69, 70, 140, 255, 299};
  std::string mask;
  for (int i = 0; i < n; ++i)
    mask += std::string(i ? ", " : "") + (masked.count(i) ? "false" : "true");
  LoadedKernel k = loadKernel(
      subst(R"(
module {
  tt.func public @k(%w: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %r = tt.make_range {end = $N : i32, start = 0 : i32} : tensor<$Nxi32>
    %cw = arith.constant dense<$W> : tensor<$Nxi32>
    %ch = arith.divsi %r, %cw : tensor<$Nxi32>
    %mask = arith.constant dense<[$MASK]> : tensor<$Nxi1>
    %minus1 = arith.constant dense<-1.0> : tensor<$Nxf32>
    %wb = tt.splat %w : !tt.ptr<f32> -> tensor<$Nx!tt.ptr<f32>>
    %wp = tt.addptr %wb, %ch : tensor<$Nx!tt.ptr<f32>>, tensor<$Nxi32>
    %v = tt.load %wp, %mask, %minus1 : tensor<$Nx!tt.ptr<f32>>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<$Nx!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<$Nx!tt.ptr<f32>>, tensor<$Nxi32>
    tt.store %op, %v : tensor<$Nx!tt.ptr<f32>>
    tt.return
  }
}
)",
            {{"$N", std::to_string(n)}, {"$W", std::to_string(width)}, {"$MASK", mask}}));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> w{1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, out(size_t(n), 0.0f);
  LaunchResult r = launch(
      *k.kernel, {pointer("w", viewOf(w, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += out[size_t(i)] != (masked.count(i) ? -1.0f : w[size_t(i / width)]);
  CHECK(wrong == 0);
}

namespace {
/// Lane i of 200 loads w[idx[i]] where idx[i] >= 0 (else -1) and stores it to out[i]. With
/// $ALSO_STORED, the gather's pointers are also stored through (out2[idx[i]] = 0 where
/// idx[i] >= 0), so the load is not an OffsetGather and makes its pointers lane by lane.
std::string offsetGatherKernel(bool alsoStored) {
  return subst(
      R"(
module {
  tt.func public @k(%w: !tt.ptr<f32>, %idx: !tt.ptr<i32>, %out: !tt.ptr<f32>, %out2: !tt.ptr<f32>) {
    %r = tt.make_range {end = 200 : i32, start = 0 : i32} : tensor<200xi32>
    %ib = tt.splat %idx : !tt.ptr<i32> -> tensor<200x!tt.ptr<i32>>
    %ip = tt.addptr %ib, %r : tensor<200x!tt.ptr<i32>>, tensor<200xi32>
    %i = tt.load %ip : tensor<200x!tt.ptr<i32>>
    %zero = arith.constant dense<0> : tensor<200xi32>
    %m = arith.cmpi sge, %i, %zero : tensor<200xi32>
    %minus1 = arith.constant dense<-1.0> : tensor<200xf32>
    %wb = tt.splat %w : !tt.ptr<f32> -> tensor<200x!tt.ptr<f32>>
    %wp = tt.addptr %wb, %i : tensor<200x!tt.ptr<f32>>, tensor<200xi32>
    %v = tt.load %wp, %m, %minus1 : tensor<200x!tt.ptr<f32>> loc("k.py":5:8)
$ALSO_STORED
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<200x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<200x!tt.ptr<f32>>, tensor<200xi32>
    tt.store %op, %v : tensor<200x!tt.ptr<f32>>
    tt.return
  }
}
)",
      {{"$ALSO_STORED",
        alsoStored ? "    %o2 = tt.addptr %wp, %zero : tensor<200x!tt.ptr<f32>>, tensor<200xi32>\n"
                     "    %z = arith.constant dense<0.0> : tensor<200xf32>\n"
                     "    tt.store %o2, %z, %m : tensor<200x!tt.ptr<f32>>"
                   : ""}});
}

/// idx for offsetGatherKernel: consecutive runs (one across the 64-lane words), a channel's
/// weight repeated, single lanes, masked-off lanes (negative: out of bounds if they were read).
std::vector<int32_t> gatherIndices() {
  std::vector<int32_t> idx;
  for (int32_t k = 3; k < 23; ++k) // lanes 0..19: a run of 20
    idx.push_back(k);
  for (int k = 0; k < 60; ++k) // lanes 20..79: 7 repeated across the first word's end
    idx.push_back(k == 30 ? -1 : 7);
  for (int32_t k : {40, 2, 41, 42, 43, 0, 0, -5, 0, 63}) // singles, a short run, a repeat
    idx.push_back(k);
  for (int k = 0; k < 110; ++k) // lanes 90..199: runs of 11 from 50 down to 10, some masked
    idx.push_back(k % 37 == 36 ? -2 : 50 - 10 * (k / 22) + k % 11);
  return idx;
}
} // namespace

TEST_CASE("a gather through i32 offsets: consecutive, repeated and single lanes, masked lanes") {
  const std::vector<int32_t> idx = gatherIndices();
  std::vector<float> w(64);
  for (int k = 0; k < 64; ++k)
    w[size_t(k)] = 0.5f + float(k);
  std::vector<float> expected;
  for (int32_t k : idx)
    expected.push_back(k >= 0 ? w[size_t(k)] : -1.0f);
  for (bool alsoStored : {false, true}) {
    CAPTURE(alsoStored);
    LoadedKernel k = loadKernel(offsetGatherKernel(alsoStored));
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<float> wCopy = w, out(200, 0.0f), out2(64, 9.0f);
    std::vector<int32_t> idxCopy = idx;
    // The gather form runs five instructions (the idx load, the compare, the gather, the
    // store, and the block's own step): its addptr and splat are not emitted.
    LaunchResult r = launch(
        *k.kernel,
        {pointer("w", viewOf(wCopy, DType::F32)), pointer("idx", viewOf(idxCopy, DType::I32)),
         pointer("out", viewOf(out, DType::F32)), pointer("out2", viewOf(out2, DType::F32))},
        {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3)}, {1, 1, 1}, 1, alsoStored ? 0 : 5);
    REQUIRE(r.error.empty());
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    int wrong = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      wrong += out[i] != expected[i];
    CHECK(wrong == 0);
  }
}

TEST_CASE("a gather through i32 offsets faults at its first active lane out of bounds") {
  // Lane 150 reads w[64], one past the end; lanes 50 (-1) and 87 (-5) are masked off.
  std::vector<int32_t> idx = gatherIndices();
  idx[150] = 64;
  LoadedKernel k = loadKernel(offsetGatherKernel(false));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> w(64, 1.0f), out(200, 0.0f), out2(64, 0.0f);
  LaunchResult r =
      launch(*k.kernel,
             {pointer("w", viewOf(w, DType::F32)), pointer("idx", viewOf(idx, DType::I32)),
              pointer("out", viewOf(out, DType::F32)), pointer("out2", viewOf(out2, DType::F32))},
             {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->element == 150);
  CHECK(r.fault->location == "k.py:5:8");
  CHECK(r.fault->message.find("element 64 of argument 'w'") != std::string::npos);
  CHECK(out == std::vector<float>(200, 0.0f));
}

TEST_CASE("a gather whose addresses would leave the address space makes its pointers as addptr") {
  // A base of address 16 (tt.int_to_ptr) and offset -8: the lane's address wraps below 0,
  // so the offsets' runs are not the pointers' (gatherLoadKernel's fallback); the lane, the
  // only active one, faults as the unfused load would.
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%out: !tt.ptr<f32>) {
    %c16 = arith.constant 16 : i64
    %base = tt.int_to_ptr %c16 : i64 -> !tt.ptr<f32>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %c8 = arith.constant dense<8> : tensor<8xi32>
    %off = arith.subi %r, %c8 : tensor<8xi32>
    %c3 = arith.constant dense<3> : tensor<8xi32>
    %m = arith.cmpi eq, %r, %c3 : tensor<8xi32>
    %b = tt.splat %base : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %p = tt.addptr %b, %off : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = tt.load %p, %m : tensor<8x!tt.ptr<f32>> loc("k.py":7:8)
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %op, %v : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> out(8, 2.0f);
  LaunchResult r =
      launch(*k.kernel, {pointer("out", viewOf(out, DType::F32))}, {ptrArg(0)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->element == 3);
  CHECK(r.fault->location == "k.py:7:8");
  CHECK(out == std::vector<float>(8, 2.0f));
}
