//===- ExamplesTest.cpp - Bundled Triton kernels through the C++ API ------===//
//
// Expected values are worked out by hand from each kernel's definition.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

TEST_CASE("vector_add adds the first n elements and leaves the tail alone") {
  LoadedKernel k = loadKernel(source("examples/vector_add/vector_add.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  const int n = 3000; // 3 programs of 1024; the last is partly masked
  std::vector<float> x(4096), y(4096), out(4096, -1.0f);
  for (int i = 0; i < 4096; ++i) {
    x[i] = float(i);
    y[i] = 0.5f * float(i);
  }
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
                           pointer("out", viewOf(out, DType::F32))},
                          {ptrArg(0), ptrArg(1), ptrArg(2), intArg(n)}, {3, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  for (int i = 0; i < 4096; ++i)
    CHECK(out[i] == (i < n ? 1.5f * float(i) : -1.0f));
  // Only the n written floats went back.
  CHECK(r.stats.bytesOut == uint64_t(n) * 4);
}

TEST_CASE("Triton #5791: a store through one alias survives write-back of the other") {
  LoadedKernel k = loadKernel(source("examples/alias_5791/alias_5791.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> b(8, 7.0f);
  LaunchResult r = launch(*k.kernel,
                          {pointer("buffer", viewOf(b, DType::F32)),
                           pointer("buffer2", viewOf(b, DType::F32))},
                          {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  CHECK(b[0] == 1.0f);
  for (int i = 1; i < 8; ++i)
    CHECK(b[i] == 7.0f);
  // One region; the kernel only stores (buffer2 is unused), so it is written only and
  // nothing is copied in; one float written back.
  CHECK(r.stats.bytesIn == 0);
  CHECK(r.stats.bytesOut == 4);
}

TEST_CASE("in-place x += y with y aliasing x doubles x") {
  LoadedKernel k = loadKernel(source("examples/inplace_add/inplace_add.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x(1000);
  for (int i = 0; i < 1000; ++i)
    x[i] = float(i) - 300.0f;
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(x, DType::F32))},
                          {ptrArg(0), ptrArg(1), intArg(1000)}, {4, 1, 1});
  REQUIRE_FALSE(r.fault);
  for (int i = 0; i < 1000; ++i)
    CHECK(x[i] == 2.0f * (float(i) - 300.0f));
}
