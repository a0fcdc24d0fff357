//===- AliasingTest.cpp - Alias patterns of launches, worked out by hand --===//
#include "ttinterp/memory/Aliasing.h"

#include <doctest/doctest.h>

using namespace ttinterp;

namespace {
View f32(uint64_t address, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  return View{address, DType::F32, std::move(shape), std::move(strides)};
}
} // namespace

TEST_CASE("alias pattern: the same buffer twice is one region, identical, offset 0") {
  AliasPattern p = analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x1000, {8}, {1})});
  CHECK(p.region == std::vector<uint32_t>{0, 0});
  CHECK(p.offset == std::vector<int64_t>{0, 0});
  CHECK(p.regionBytes == std::vector<uint64_t>{32});
  CHECK(p.pair(0, 1) == OverlapClass::Identical);
  CHECK_FALSE(p.hasPartialOverlap());
}

TEST_CASE("alias pattern: regions are numbered in argument order, not address order") {
  // arg0 at a high address, arg1 low, arg2 overlapping arg0 shifted by one element.
  AliasPattern p = analyzeAliasing(
      {f32(0x9000, {16}, {1}), f32(0x1000, {4}, {1}), f32(0x9004, {16}, {1})});
  CHECK(p.region == std::vector<uint32_t>{0, 1, 0});
  CHECK(p.offset == std::vector<int64_t>{0, 0, 4});
  CHECK(p.regionBytes == std::vector<uint64_t>{68, 16});
  CHECK(p.pair(0, 2) == OverlapClass::Overlapping);
  CHECK(p.pair(0, 1) == OverlapClass::Disjoint);
  CHECK(p.hasPartialOverlap());
}

TEST_CASE("alias pattern: interleaved views share a region but not bytes") {
  AliasPattern p = analyzeAliasing({f32(0x1000, {8}, {2}), f32(0x1004, {8}, {2})});
  CHECK(p.region == std::vector<uint32_t>{0, 0});
  CHECK(p.offset == std::vector<int64_t>{0, 4});
  CHECK(p.pair(0, 1) == OverlapClass::Disjoint);
  CHECK_FALSE(p.hasPartialOverlap());
}

TEST_CASE("alias pattern: an empty view neither joins nor splits a chain") {
  // a = [0x1000, 0x1040), empty at 0x1010, b = [0x1020, 0x1060): a and b chain.
  AliasPattern p = analyzeAliasing(
      {f32(0x1000, {16}, {1}), f32(0x1010, {0}, {1}), f32(0x1020, {16}, {1})});
  CHECK(p.region[0] == p.region[2]);
  CHECK(p.region[1] != p.region[0]);
  CHECK(p.regionBytes[p.region[0]] == 0x60);
}

TEST_CASE("alias pattern: canonical text depends on the pattern, not the addresses") {
  auto a = analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x1000, {8}, {1})});
  auto b = analyzeAliasing({f32(0x7000, {8}, {1}), f32(0x7000, {8}, {1})});
  auto c = analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x2000, {8}, {1})});
  CHECK(a.canonical() == b.canonical());
  CHECK(a.canonical() != c.canonical());
}

TEST_CASE("alias pattern: the binary key tells patterns apart exactly as the canonical text does") {
  // A plan cache looks plans up by appendKey (PlanCache::get): two launches may share a plan
  // only if their canonical texts are equal, and must when they are.
  std::vector<AliasPattern> patterns = {
      analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x1000, {8}, {1})}),  // identical
      analyzeAliasing({f32(0x7000, {8}, {1}), f32(0x7000, {8}, {1})}),  // the same, elsewhere
      analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x2000, {8}, {1})}),  // disjoint
      analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x1004, {8}, {1})}),  // overlapping by 28 bytes
      analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x1008, {8}, {1})}),  // overlapping by 24
      analyzeAliasing({f32(0x1000, {4}, {2}), f32(0x1004, {4}, {2})}),  // interleaved
      analyzeAliasing({f32(0x2000, {8}, {1}), f32(0x1000, {8}, {1})}),  // disjoint, swapped
      analyzeAliasing({f32(0x1000, {8}, {1})}),                          // one argument
      analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x1000, {8}, {1}), f32(0x3000, {2}, {1})}),
      analyzeAliasing({f32(0x1000, {8}, {1}), f32(0x3000, {2}, {1}), f32(0x1000, {8}, {1})}),
      analyzeAliasing({}),
  };
  for (size_t i = 0; i < patterns.size(); ++i)
    for (size_t j = 0; j < patterns.size(); ++j) {
      std::string ki, kj;
      patterns[i].appendKey(ki);
      patterns[j].appendKey(kj);
      INFO("patterns " << i << " and " << j);
      CHECK((ki == kj) == (patterns[i].canonical() == patterns[j].canonical()));
    }
  // The two placements of one pattern share a key; the others differ from it.
  std::string k0, k1, k2;
  patterns[0].appendKey(k0);
  patterns[1].appendKey(k1);
  patterns[2].appendKey(k2);
  CHECK(k0 == k1);
  CHECK(k0 != k2);
}
