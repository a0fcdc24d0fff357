//===- TileViewTest.cpp - A dot's left tile read where it lies in memory -===//
//
// A tile loaded only for the left operand of an ieee f32 tt.dot, every lane active, from
// memory no program of the launch writes, is not copied: the dot reads it in the matrix
// (readsTileViews, Frame::rowStride). These launches of the tutorial's matmul mix such
// tiles with ones that must be copied (a masked K tail right after in-place steps, rows
// past M, a matrix the launch also writes) and check every element against sums worked
// out here in double: the operands are small integers, so every product and sum is exact
// in any order.
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
