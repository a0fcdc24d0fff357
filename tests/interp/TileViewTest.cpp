//===- TileViewTest.cpp - A dot's left tile read where it lies in memory -===//
//
// A tile loaded only for the left operand of an ieee f32 tt.dot, every lane active, from
// memory no program of the launch writes, is not copied: the dot reads it in the matrix
// (readsTileViews, Frame::rowStride). These launches of the tutorial's matmul mix such
// tiles with ones that must be copied (a masked K tail right after in-place steps, rows
// past M, a matrix the launch also writes, a recursive call between a tile's load and its
// dot) and check every element against sums worked out here in double: the operands are
// small integers, so every product and sum is exact in any order.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

constexpr int64_t M = 80, N = 64, K = 80;
constexpr int64_t kStrideA = 88; // A's rows hold 8 more columns than K, never read

/// Small integers from a simple generator: exact products and sums.
std::vector<float> smallIntegers(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = float(int((seed >> 16) % 9) - 4);
  }
  return v;
}

/// C = A B over the first K columns of A's rows (kStrideA apart).
std::vector<float> expectedProduct(const float *a, const std::vector<float> &b) {
  std::vector<float> c(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < K; ++p)
        sum += double(a[i * kStrideA + p]) * double(b[size_t(p * N + j)]);
      c[size_t(i * N + j)] = float(sum);
    }
  return c;
}

View matrix(const float *at, int64_t rows, int64_t cols, int64_t rowStride) {
  View v;
  v.address = reinterpret_cast<uint64_t>(at);
  v.dtype = DType::F32;
  v.shape = {rows, cols};
  v.strides = {rowStride, 1};
  return v;
}

std::vector<interp::ArgumentValue> matmulArguments() {
  // (a, b, c, M, N, K, stride_am, stride_bk, stride_cm)
  return {ptrArg(0),    ptrArg(1),    ptrArg(2),         intArg(M), intArg(N),
          intArg(K),    intArg(kStrideA), intArg(N), intArg(N)};
}

} // namespace

TEST_CASE("a dot reads read-only tiles in place and copied ones densely, with the same values") {
  LoadedKernel k = loadKernel(source("examples/matmul/matmul.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  // The example's tiles are 32 x 32. Programs (0, y) and (1, y) read rows 0-63: two whole
  // steps along K (tiles left in place), then a step masked to 16 columns (copied: the dot
  // must see a dense block again). Programs (2, y) read rows 64-79 and mask rows 80-95 off:
  // every step copied.
  std::vector<float> a = smallIntegers(size_t(M * kStrideA), 1);
  std::vector<float> b = smallIntegers(size_t(K * N), 2);
  const std::vector<float> want = expectedProduct(a.data(), b);
  for (unsigned threads : {1u, 2u}) {
    INFO(threads << " thread(s)");
    std::vector<float> c(size_t(M * N), -1.0f);
    LaunchResult r = launch(*k.kernel,
                            {pointer("a", matrix(a.data(), M, K, kStrideA)),
                             pointer("b", matrix(b.data(), K, N, N)),
                             pointer("c", matrix(c.data(), M, N, N))},
                            matmulArguments(), {3, 2, 1}, threads);
    REQUIRE_MESSAGE(!r.fault, r.fault->message);
    REQUIRE(r.error.empty());
    CHECK(c == want);
  }
}

TEST_CASE("tiles of a matrix the launch also writes are copied, and give the same values") {
  LoadedKernel k = loadKernel(source("examples/matmul/matmul.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  // A's argument is the whole buffer, whose rows past M hold C: one storage region that the
  // launch writes, so no tile of A is immutable and each is copied when loaded.
  constexpr int64_t rows = M + 64;
  static_assert(rows * kStrideA >= M * kStrideA + M * N, "C fits after A");
  std::vector<float> ac = smallIntegers(size_t(rows * kStrideA), 3);
  std::vector<float> b = smallIntegers(size_t(K * N), 4);
  const std::vector<float> want = expectedProduct(ac.data(), b);
  const std::vector<float> aBefore(ac.begin(), ac.begin() + M * kStrideA);
  LaunchResult r = launch(*k.kernel,
                          {pointer("ac", matrix(ac.data(), rows, kStrideA, kStrideA)),
                           pointer("b", matrix(b.data(), K, N, N)),
                           pointer("ac", matrix(ac.data() + M * kStrideA, M, N, N))},
                          matmulArguments(), {3, 2, 1});
  REQUIRE_MESSAGE(!r.fault, r.fault->message);
  REQUIRE(r.error.empty());
  std::vector<float> c(ac.begin() + M * kStrideA, ac.begin() + M * kStrideA + M * N);
  CHECK(c == want);
  CHECK(std::vector<float>(ac.begin(), ac.begin() + M * kStrideA) == aBefore);
}

TEST_CASE("a recursive call between a tile's load and its dot leaves the caller's view whole") {
  // g(out, depth, K) sums each row's first K of A's 16 columns through a dot with ones, 8
  // columns a step; between each step's load and dot, depth 1 calls g(out + 16, 0, 4), whose
  // only step is masked, so its load of the same slot is a dense copy. The caller's tile,
  // read in place, must come back with its row stride as well as its address.
  LoadedKernel k = loadKernel(R"(
module {
  tt.func private @g(%a: !tt.ptr<f32>, %out: !tt.ptr<f32>, %depth: i32, %K: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c7 = arith.constant 7 : i32
    %c8 = arith.constant 8 : i32
    %ones = arith.constant dense<1.0> : tensor<8x4xf32>
    %zero = arith.constant dense<0.0> : tensor<4x4xf32>
    %zeroA = arith.constant dense<0.0> : tensor<4x8xf32>
    %step = arith.constant dense<8> : tensor<4x8xi32>
    %stride = arith.constant dense<16> : tensor<4x1xi32>
    %rows = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %r2 = tt.expand_dims %rows {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
    %rowOff = arith.muli %r2, %stride : tensor<4x1xi32>
    %aBase = tt.splat %a : !tt.ptr<f32> -> tensor<4x1x!tt.ptr<f32>>
    %rowPtrs = tt.addptr %aBase, %rowOff : tensor<4x1x!tt.ptr<f32>>, tensor<4x1xi32>
    %cols = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %c2 = tt.expand_dims %cols {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
    %rowPtrsB = tt.broadcast %rowPtrs : tensor<4x1x!tt.ptr<f32>> -> tensor<4x8x!tt.ptr<f32>>
    %colsB = tt.broadcast %c2 : tensor<1x8xi32> -> tensor<4x8xi32>
    %ptrs = tt.addptr %rowPtrsB, %colsB : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
    %k7 = arith.addi %K, %c7 : i32
    %steps = arith.divsi %k7, %c8 : i32
    %r:2 = scf.for %i = %c0 to %steps step %c1 iter_args(%p = %ptrs, %acc = %zero) -> (tensor<4x8x!tt.ptr<f32>>, tensor<4x4xf32>) : i32 {
      %done = arith.muli %i, %c8 : i32
      %left = arith.subi %K, %done : i32
      %lefts = tt.splat %left : i32 -> tensor<1x8xi32>
      %m1 = arith.cmpi slt, %c2, %lefts : tensor<1x8xi32>
      %m = tt.broadcast %m1 : tensor<1x8xi1> -> tensor<4x8xi1>
      %t = tt.load %p, %m, %zeroA : tensor<4x8x!tt.ptr<f32>>
      %deeper = arith.cmpi sgt, %depth, %c0 : i32
      scf.if %deeper {
        %c4 = arith.constant 4 : i32
        %c16 = arith.constant 16 : i32
        %d1 = arith.subi %depth, %c1 : i32
        %out16 = tt.addptr %out, %c16 : !tt.ptr<f32>, i32
        tt.call @g(%a, %out16, %d1, %c4) : (!tt.ptr<f32>, !tt.ptr<f32>, i32, i32) -> ()
      }
      %acc2 = tt.dot %t, %ones, %acc : tensor<4x8xf32> * tensor<8x4xf32> -> tensor<4x4xf32>
      %p2 = tt.addptr %p, %step : tensor<4x8x!tt.ptr<f32>>, tensor<4x8xi32>
      scf.yield %p2, %acc2 : tensor<4x8x!tt.ptr<f32>>, tensor<4x4xf32>
    }
    %o = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>>
    %op = tt.addptr %ob, %o : tensor<16x!tt.ptr<f32>>, tensor<16xi32>
    %flat = tt.reshape %r#1 : tensor<4x4xf32> -> tensor<16xf32>
    tt.store %op, %flat : tensor<16x!tt.ptr<f32>>
    tt.return
  }
  tt.func public @k(%a: !tt.ptr<f32>, %out: !tt.ptr<f32>, %K: i32) {
    %c1 = arith.constant 1 : i32
    tt.call @g(%a, %out, %c1, %K) : (!tt.ptr<f32>, !tt.ptr<f32>, i32, i32) -> ()
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> a(4 * 16);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i + 1);
  std::vector<float> out(32, -1.0f);
  LaunchResult r = launch(*k.kernel,
                          {pointer("a", matrix(a.data(), 4, 16, 16)),
                           pointer("out", matrix(out.data(), 2, 16, 16))},
                          {ptrArg(0), ptrArg(1), intArg(16)}, {1, 1, 1});
  REQUIRE_MESSAGE(!r.fault, r.fault->message);
  REQUIRE(r.error.empty());
  // Row i holds 16i + 1 ... 16i + 16: the first 16 sum to 256i + 136, the first 4 to 64i + 10.
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      CHECK(out[size_t(i * 4 + j)] == float(256 * i + 136));
      CHECK(out[size_t(16 + i * 4 + j)] == float(64 * i + 10));
    }
}
