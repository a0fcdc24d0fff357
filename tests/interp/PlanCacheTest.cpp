//===- PlanCacheTest.cpp - What makes two launches share a launch plan ---===//
#include "ttinterp/interp/Caches.h"

#include <doctest/doctest.h>

using namespace ttinterp;
using namespace ttinterp::interp;

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
