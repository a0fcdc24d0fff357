//===- PlanCacheTest.cpp - The launch layer: what shares a plan, what a launch reports ---===//
#include "Harness.h"

#include "ttinterp/interp/Caches.h"
#include "ttinterp/interp/Launch.h"

#include <doctest/doctest.h>

using namespace ttinterp;
using namespace ttinterp::interp;
using ttinterp::test::intArg;

namespace {
View f32(uint64_t address, int64_t n) { return View{address, DType::F32, {n}, {1}}; }
} // namespace

TEST_CASE("plan cache: everything that changes how aliasing is handled is part of the key") {
  PlanCache cache;
  const std::vector<View> distinct = {f32(0x1000, 64), f32(0x2000, 64)};
  const PlanOptions base;
  PlanCache::Result first = cache.get("k", distinct, {}, base);
  CHECK_FALSE(first.hit);

  SUBCASE("the same pattern elsewhere in memory, donors in another order, hits") {
    CHECK(cache.get("k", {f32(0x9000, 64), f32(0x5000, 64)}, {}, base).hit);
    PlanCache::Result donating = cache.get("k", distinct, {1, 0}, base);
    CHECK_FALSE(donating.hit);
    CHECK(cache.get("k", distinct, {0, 1, 1}, base).plan == donating.plan);
  }
  SUBCASE("each difference misses, and gets a plan of its own") {
    PlanOptions region = base, inPlace = base, hazards = base, threads = base;
    region.bounds = BoundsMode::Region;
    inPlace.inPlace = true;
    hazards.hazards = true;
    threads.threads = 2;
    std::vector<PlanCache::Result> others = {
        cache.get("other kernel", distinct, {}, base),
        cache.get("k", {f32(0x1000, 64), f32(0x1000, 64)}, {}, base), // the same buffer twice
        cache.get("k", {f32(0x1000, 64), f32(0x1004, 64)}, {}, base), // overlapping
        cache.get("k", {f32(0x1000, 64), f32(0x1008, 64)}, {}, base), // overlapping elsewhere
        cache.get("k", distinct, {0}, base),
        cache.get("k", distinct, {1}, base),
        cache.get("k", distinct, {}, region),
        cache.get("k", distinct, {}, inPlace),
        cache.get("k", distinct, {}, hazards),
        cache.get("k", distinct, {}, threads),
    };
    for (size_t i = 0; i < others.size(); ++i) {
      INFO("launch " << i);
      CHECK_FALSE(others[i].hit);
      CHECK(others[i].plan->key != first.plan->key);
      for (size_t j = 0; j < i; ++j)
        CHECK(others[i].plan->key != others[j].plan->key);
    }
    CHECK(cache.size() == 1 + others.size());
  }
}

TEST_CASE("a launch that is not described runs alike and leaves the reports empty") {
  auto k = test::loadKernel(test::source("examples/vector_add/vector_add.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x(3000), y(3000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = float(i) * 0.5f;
    y[i] = 7.0f - float(i % 13);
  }
  Session session;
  Launcher launcher(session);
  auto launch = [&](std::vector<float> &out, bool describe) {
    LaunchRequest request;
    request.kernel = k.kernel.get();
    request.kernelHash = "vector add";
    request.pointers = {test::pointer("x", test::viewOf(x, DType::F32)),
                        test::pointer("y", test::viewOf(y, DType::F32)),
                        test::pointer("out", test::viewOf(out, DType::F32))};
    for (uint32_t p = 0; p < 3; ++p) {
      ArgumentValue v;
      v.pointerIndex = p;
      request.values.push_back(v);
    }
    request.values.push_back(intArg(int64_t(out.size())));
    request.run.grid = {3, 1, 1}; // BLOCK_SIZE 1024
    request.describe = describe;
    LaunchResult r = launcher.launch(request);
    std::string error;
    REQUIRE(r.status == LaunchResult::Status::Ran);
    REQUIRE_MESSAGE(session.step(error), error);
    return r;
  };
  std::vector<float> described(3000, -1.0f), plain(3000, -1.0f);
  LaunchResult full = launch(described, true);
  LaunchResult quiet = launch(plain, false);
  CHECK(full.regions.size() == 3);
  CHECK(full.regionOfPointer == std::vector<size_t>{0, 1, 2});
  CHECK(full.pairs.size() == 3);
  CHECK(quiet.regions.empty());
  CHECK(quiet.regionOfPointer.empty());
  CHECK(quiet.pairs.empty());
  CHECK(quiet.planKey == full.planKey); // describing is not part of the plan
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(described[i] == x[i] + y[i]);
    CHECK(plain[i] == x[i] + y[i]);
  }
}
