//===- RowSumTest.cpp - Row sums folded by the chain that makes the row --------===//
//
// A tt.reduce adding up a chain's result (FusionPlan::rowSum) takes the sum from the chain's
// compiled loop, which adds the lanes up in the tree's order as it makes them. Every sum
// here must have the bits of docs/semantics.md's tree worked out in the test itself (lanes in
// index order, then the butterfly), interpreted and compiled, whatever ran before it.
//
//===----------------------------------------------------------------------===//
#include "ChainTesting.h"
#include "Harness.h"

#include <cmath>
#include <random>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// Runs `check(threads)` with chains interpreted and compiled at their first run, on one
/// thread and on two.
template <class Check> void inEveryMode(Check check) {
  for (auto mode : {interp::ChainCompilation::Off, interp::ChainCompilation::Eager})
    for (unsigned threads : {1u, 2u}) {
      CAPTURE(int(mode));
      CAPTURE(threads);
      ChainMode scoped(mode);
      check(threads);
    }
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// semantics.md's sum of a row of at least 32: element j joins lane j % 32, each lane adds its
/// elements in index order (the first as it is), then lane l takes lane l + w, w = 16 .. 1.
float treeSum(const std::vector<float> &row) {
  float lanes[32];
  for (size_t j = 0; j < row.size(); ++j)
    lanes[j % 32] = j < 32 ? row[j] : lanes[j % 32] + row[j];
  for (int w = 16; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l)
      lanes[l] = lanes[l] + lanes[l + w];
  return lanes[0];
}

/// Ordinary values with signed zeros, a subnormal and exact small integers mixed in (no
/// infinities: a sum with one is NaN or infinite whatever its order, and would show nothing).
std::vector<float> values(size_t n, uint32_t seed) {
  const float specials[] = {0.0f, -0.0f, 1e-40f, 3.0f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ordinary(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = rng() % 16 == 0 ? specials[rng() % std::size(specials)] : ordinary(rng);
  return v;
}

/// Program p sums q = x * y + x over its block of N: the chain mulf, addf folds the sum.
std::string directSum(int64_t n) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %pid = tt.get_program_id x : i32
    %cN = arith.constant $N : i32
    %start = arith.muli %pid, %cN : i32
    %r = tt.make_range {end = $N : i32, start = 0 : i32} : tensor<$Nxi32>
    %ss = tt.splat %start : i32 -> tensor<$Nxi32>
    %offs = arith.addi %ss, %r : tensor<$Nxi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<$Nx!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<$Nx!tt.ptr<f32>>, tensor<$Nxi32>
    %xv = tt.load %xp : tensor<$Nx!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<$Nx!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<$Nx!tt.ptr<f32>>, tensor<$Nxi32>
    %yv = tt.load %yp : tensor<$Nx!tt.ptr<f32>>
    %p = arith.mulf %xv, %yv : tensor<$Nxf32>
    %q = arith.addf %p, %xv : tensor<$Nxf32>
    %s = "tt.reduce"(%q) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<$Nxf32>) -> f32
    %o = tt.addptr %out, %pid : !tt.ptr<f32>, i32
    tt.store %o, %s : !tt.ptr<f32>
    tt.return
  }
}
)",
               {{"$N", std::to_string(n)}});
}

/// Program p runs trips[p] iterations over its blocks p * 4 + i of N, carrying
/// a1 += x * x (a chain of two) and a2 += x (a chain of one), and sums both after the loop.
std::string loopSums(int64_t n) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %trips: !tt.ptr<i32>) {
    %pid = tt.get_program_id x : i32
    %tp = tt.addptr %trips, %pid : !tt.ptr<i32>, i32
    %t = tt.load %tp : !tt.ptr<i32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %cN = arith.constant $N : i32
    %zero = arith.constant dense<0.0> : tensor<$Nxf32>
    %first = arith.muli %pid, %c4 : i32
    %r = tt.make_range {end = $N : i32, start = 0 : i32} : tensor<$Nxi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<$Nx!tt.ptr<f32>>
    %a1, %a2 = scf.for %i = %c0 to %t step %c1 iter_args(%s1 = %zero, %s2 = %zero) -> (tensor<$Nxf32>, tensor<$Nxf32>) : i32 {
      %blk = arith.addi %first, %i : i32
      %st = arith.muli %blk, %cN : i32
      %ss = tt.splat %st : i32 -> tensor<$Nxi32>
      %offs = arith.addi %ss, %r : tensor<$Nxi32>
      %xp = tt.addptr %xb, %offs : tensor<$Nx!tt.ptr<f32>>, tensor<$Nxi32>
      %xv = tt.load %xp : tensor<$Nx!tt.ptr<f32>>
      %sq = arith.mulf %xv, %xv : tensor<$Nxf32>
      %n1 = arith.addf %s1, %sq : tensor<$Nxf32>
      %n2 = arith.addf %s2, %xv : tensor<$Nxf32>
      scf.yield %n1, %n2 : tensor<$Nxf32>, tensor<$Nxf32>
    }
    %r1 = "tt.reduce"(%a1) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %a, %b : f32
      tt.reduce.return %c : f32
    }) : (tensor<$Nxf32>) -> f32
    %r2 = "tt.reduce"(%a2) <{axis = 0 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %c = arith.addf %b, %a : f32
      tt.reduce.return %c : f32
    }) : (tensor<$Nxf32>) -> f32
    %o1i = arith.muli %pid, %c2 : i32
    %o1 = tt.addptr %out, %o1i : !tt.ptr<f32>, i32
    tt.store %o1, %r1 : !tt.ptr<f32>
    %o2i = arith.addi %o1i, %c1 : i32
    %o2 = tt.addptr %out, %o2i : !tt.ptr<f32>, i32
    tt.store %o2, %r2 : !tt.ptr<f32>
    tt.return
  }
}
)",
               {{"$N", std::to_string(n)}});
}

} // namespace

TEST_CASE("the compiled loop of a row sum's chain adds the row up in the tree's order") {
  // The chain r = a * b + a with its sum: every lane of out as the plain loop makes it, and the
  // sum of r's lanes as semantics.md's tree adds them (worked out here by treeSum).
  interp::ChainCode code;
  using Leaf = interp::ChainCode::Leaf;
  using Node = interp::ChainCode::Node;
  code.leaves = {Leaf{Leaf::Tensor, 0}, Leaf{Leaf::Tensor, 0}};
  code.nodes.push_back(Node{Node::Mul, 0, {~0, ~1, 0}});
  code.nodes.push_back(Node{Node::Add, 0, {0, ~0, 0}});
  code.rowSum = true;
  std::string error;
  interp::ChainLoops loops = interp::compileChain(code, error);
  REQUIRE_MESSAGE(bool(loops), error);
  REQUIRE(bool(loops.rowSum));
  for (int64_t n : {32, 64, 96, 1024}) {
    for (bool negativeZeros : {false, true}) {
      CAPTURE(n);
      CAPTURE(negativeZeros);
      std::vector<float> a = values(size_t(n), 11), b = values(size_t(n), 12);
      // A row of -0 only sums to -0 only if each lane's first element is taken as it is.
      if (negativeZeros)
        std::fill(a.begin(), a.end(), -0.0f), std::fill(b.begin(), b.end(), 0.0f);
      std::vector<float> out(static_cast<size_t>(n)), r(static_cast<size_t>(n));
      const uint8_t *leaves[2] = {reinterpret_cast<const uint8_t *>(a.data()),
                                  reinterpret_cast<const uint8_t *>(b.data())};
      float sum = loops.rowSum(leaves, reinterpret_cast<uint8_t *>(out.data()), n);
      bool lanes = true;
      for (size_t j = 0; j < size_t(n); ++j) {
        r[j] = a[j] * b[j] + a[j];
        lanes = lanes && sameFloat(out[j], r[j]);
      }
      CHECK(lanes);
      CHECK(sameFloat(sum, treeSum(r)));
      if (negativeZeros)
        CHECK(bitsOf(sum) == 0x80000000u);
    }
  }
}

TEST_CASE("a sum of a chain's row has the tree's bits, interpreted and compiled") {
  // Rows of 32, 64 and 1024 are folded by the compiled chain; 48 is not a row of whole
  // lanes and is added up by the reduce alone. Program 2's row is -0 everywhere.
  for (int64_t n : {32, 48, 64, 1024}) {
    LoadedKernel k = loadKernel(directSum(n));
    REQUIRE_MESSAGE(k.kernel, k.error);
    const int programs = 4;
    std::vector<float> x = values(size_t(programs * n), 21), y = values(size_t(programs * n), 22);
    for (int64_t j = 2 * n; j < 3 * n; ++j)
      x[size_t(j)] = -0.0f, y[size_t(j)] = 0.0f;
    std::vector<float> want(programs);
    for (int p = 0; p < programs; ++p) {
      std::vector<float> q(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = size_t(p * n + j);
        q[size_t(j)] = x[at] * y[at] + x[at];
      }
      want[size_t(p)] = treeSum(q);
    }
    CHECK(bitsOf(want[2]) == 0x80000000u);
    CAPTURE(n);
    inEveryMode([&](unsigned threads) {
      std::vector<float> out(programs, 7.0f);
      LaunchResult r =
          launch(*k.kernel,
                 {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
                  pointer("out", viewOf(out, DType::F32))},
                 {ptrArg(0), ptrArg(1), ptrArg(2)}, {programs, 1, 1}, threads);
      REQUIRE_FALSE(r.fault);
      REQUIRE(r.error.empty());
      for (int p = 0; p < programs; ++p)
        CHECK(sameFloat(out[size_t(p)], want[size_t(p)]));
    });
  }
}

TEST_CASE("sums of a loop's carried rows have the tree's bits, whatever the loop ran before") {
  // Programs run 2, 0, 1 and 3 iterations, in that order on one thread: the second sums its
  // loop's starting zeros, though the first left sums of its own rows.
  for (int64_t n : {32, 1024}) {
    LoadedKernel k = loadKernel(loopSums(n));
    REQUIRE_MESSAGE(k.kernel, k.error);
    const std::vector<int32_t> trips = {2, 0, 1, 3};
    const int programs = int(trips.size());
    std::vector<float> x = values(size_t(programs * 4 * n), 31);
    std::vector<float> want(size_t(2 * programs));
    for (int p = 0; p < programs; ++p) {
      std::vector<float> a1(static_cast<size_t>(n), 0.0f), a2(static_cast<size_t>(n), 0.0f);
      for (int i = 0; i < trips[size_t(p)]; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const float v = x[size_t((p * 4 + i) * n + j)];
          a1[size_t(j)] = a1[size_t(j)] + v * v;
          a2[size_t(j)] = a2[size_t(j)] + v;
        }
      want[size_t(2 * p)] = treeSum(a1);
      want[size_t(2 * p + 1)] = treeSum(a2);
    }
    CHECK(bitsOf(want[2]) == 0u);
    CHECK(bitsOf(want[3]) == 0u);
    CAPTURE(n);
    inEveryMode([&](unsigned threads) {
      std::vector<int32_t> t = trips;
      std::vector<float> out(size_t(2 * programs), 7.0f);
      LaunchResult r =
          launch(*k.kernel,
                 {pointer("x", viewOf(x, DType::F32)), pointer("out", viewOf(out, DType::F32)),
                  pointer("trips", viewOf(t, DType::I32))},
                 {ptrArg(0), ptrArg(1), ptrArg(2)}, {programs, 1, 1}, threads);
      REQUIRE_FALSE(r.fault);
      REQUIRE(r.error.empty());
      for (size_t i = 0; i < out.size(); ++i) {
        CAPTURE(i);
        CHECK(sameFloat(out[i], want[i]));
      }
    });
  }
}
