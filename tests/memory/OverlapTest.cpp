//===- OverlapTest.cpp - sharesMemory and classify against hand cases and brute force ---===//
#include "ttinterp/memory/Overlap.h"
#include "ViewSupport.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <set>

using namespace ttinterp;
using ttinterp::test::makeView;

namespace {

/// Start address of every element, in C order of the multi-index, by walking the indices.
std::vector<uint64_t> elementAddresses(const View &v) {
  std::vector<uint64_t> out;
  for (int64_t n : v.shape)
    if (n == 0)
      return out;
  std::vector<int64_t> index(v.shape.size(), 0);
  const int64_t size = static_cast<int64_t>(byteSize(v.dtype));
  while (true) {
    int64_t offset = 0;
    for (size_t k = 0; k < index.size(); ++k)
      offset += index[k] * v.strides[k] * size;
    out.push_back(v.address + offset);
    size_t k = index.size();
    while (k > 0 && ++index[k - 1] == v.shape[k - 1])
      index[--k] = 0;
    if (k == 0)
      return out;
  }
}

std::set<uint64_t> byteSet(const View &v) {
  std::set<uint64_t> bytes;
  for (uint64_t a : elementAddresses(v))
    for (uint64_t b = 0; b < byteSize(v.dtype); ++b)
      bytes.insert(a + b);
  return bytes;
}

bool bruteShares(const View &a, const View &b) {
  std::set<uint64_t> x = byteSet(a), y = byteSet(b);
  return std::any_of(x.begin(), x.end(), [&](uint64_t byte) { return y.count(byte) != 0; });
}

/// Same elements at the same addresses, index by index, in the same dtype and shape.
bool bruteIdentical(const View &a, const View &b) {
  std::vector<uint64_t> x = elementAddresses(a);
  return !x.empty() && a.dtype == b.dtype && a.shape == b.shape && x == elementAddresses(b);
}

/// splitmix64: a fixed, portable sequence (std distributions differ between libraries).
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t between(int64_t lo, int64_t hi) { // inclusive
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
};

const DType kDTypes[] = {DType::I8,  DType::F16, DType::BF16, DType::I32,
                         DType::F32, DType::F64, DType::I1};

View randomView(Rng &rng) {
  View v;
  v.dtype = kDTypes[rng.between(0, std::size(kDTypes) - 1)];
  size_t rank = static_cast<size_t>(rng.between(1, 3));
  for (size_t k = 0; k < rank; ++k) {
    // Size 0 is rarer than the others so that most pairs have bytes to compare.
    v.shape.push_back(rng.between(0, 15) == 0 ? 0 : rng.between(1, 5));
    v.strides.push_back(rng.between(-6, 6));
  }
  // Far enough from 0 that negative strides stay in the address space; offsets in a small
  // window, unaligned, so that the pair's extents usually meet.
  v.address = 4096 + static_cast<uint64_t>(rng.between(0, 48));
  return v;
}

} // namespace

TEST_CASE("sharesMemory/classify: identical views") {
  View a = makeView(0x1000, DType::F32, {4, 8}, {8, 1});
  CHECK(sharesMemory(a, a) == SharesMemory::Yes);
  CHECK(classify(a, a) == OverlapClass::Identical);
  // Strides of size-1 dimensions are immaterial.
  View b = makeView(0x1000, DType::F32, {1, 8}, {123, 1});
  View c = makeView(0x1000, DType::F32, {1, 8}, {0, 1});
  CHECK(classify(b, c) == OverlapClass::Identical);
  // Same bytes, same layout, another dtype: an alias, but not element-for-element the same.
  View d = makeView(0x1000, DType::I32, {4, 8}, {8, 1});
  CHECK(classify(a, d) == OverlapClass::Overlapping);
  // Same bytes reshaped: not the same shape, so not Identical.
  View e = makeView(0x1000, DType::F32, {32}, {1});
  CHECK(classify(a, e) == OverlapClass::Overlapping);
}

TEST_CASE("sharesMemory/classify: shifted by one element") {
  View a = makeView(0x1000, DType::F32, {4}, {1});
  View b = makeView(0x1004, DType::F32, {4}, {1});
  CHECK(sharesMemory(a, b) == SharesMemory::Yes);
  CHECK(classify(a, b) == OverlapClass::Overlapping);
  // Shifted by the whole length: adjacent, not overlapping.
  View c = makeView(0x1010, DType::F32, {4}, {1});
  CHECK(sharesMemory(a, c) == SharesMemory::No);
  CHECK(classify(a, c) == OverlapClass::Disjoint);
  // Shifted by one byte: elements straddle each other.
  View d = makeView(0x1001, DType::F32, {4}, {1});
  CHECK(classify(a, d) == OverlapClass::Overlapping);
}

TEST_CASE("sharesMemory/classify: interleaved views of one buffer") {
  // buf = f32[8] at 0x1000; buf[0::2] and buf[1::2].
  View even = makeView(0x1000, DType::F32, {4}, {2});
  View odd = makeView(0x1004, DType::F32, {4}, {2});
  CHECK(even.extent().overlaps(odd.extent())); // the cheap extent test cannot decide
  CHECK(sharesMemory(even, odd) == SharesMemory::No);
  CHECK(sharesMemory(odd, even) == SharesMemory::No);
  CHECK(classify(even, odd) == OverlapClass::Disjoint);
  // Reversed odd elements: buf[7:0:-2] is still disjoint from buf[0::2].
  View oddReversed = makeView(0x101C, DType::F32, {4}, {-2});
  CHECK(classify(even, oddReversed) == OverlapClass::Disjoint);
  // Columns 0..3 and 4..7 of a large f32 matrix with rows of 8: disjoint halves.
  View left = makeView(0x10000, DType::F32, {1 << 20, 4}, {8, 1});
  View right = makeView(0x10010, DType::F32, {1 << 20, 4}, {8, 1});
  CHECK(sharesMemory(left, right) == SharesMemory::No);
  // ... and columns 0..4 against 4..7 share column 4.
  View wideLeft = makeView(0x10000, DType::F32, {1 << 20, 5}, {8, 1});
  CHECK(sharesMemory(wideLeft, right) == SharesMemory::Yes);
}

TEST_CASE("sharesMemory/classify: transposed and reversed views of one buffer") {
  View rows = makeView(0x2000, DType::F32, {3, 3}, {3, 1});
  View cols = makeView(0x2000, DType::F32, {3, 3}, {1, 3});
  CHECK(sharesMemory(rows, cols) == SharesMemory::Yes);
  CHECK(classify(rows, cols) == OverlapClass::Overlapping);
  View fwd = makeView(0x1000, DType::F32, {4}, {1});
  View rev = makeView(0x100C, DType::F32, {4}, {-1});
  CHECK(classify(fwd, rev) == OverlapClass::Overlapping);
}

TEST_CASE("sharesMemory/classify: an i32 view over f16 bytes") {
  // f16 buffer of 8 elements at 0x2000. The i32 view starts at f16 element 1 and steps 8
  // bytes: its elements cover bytes [0x2002, 0x2006) and [0x200A, 0x200E), i.e. f16
  // elements 1, 2, 5 and 6.
  View words = makeView(0x2002, DType::I32, {2}, {2});
  View half3 = makeView(0x2006, DType::F16, {1}, {1});
  View half5 = makeView(0x200A, DType::F16, {1}, {1});
  View halves0and3 = makeView(0x2000, DType::F16, {2}, {3}); // elements 0 and 3
  View halves3and6 = makeView(0x2006, DType::F16, {2}, {3}); // elements 3 and 6
  CHECK(sharesMemory(words, half3) == SharesMemory::No);
  CHECK(sharesMemory(words, half5) == SharesMemory::Yes);
  CHECK(sharesMemory(words, halves0and3) == SharesMemory::No);
  CHECK(sharesMemory(words, halves3and6) == SharesMemory::Yes);
  CHECK(classify(words, halves3and6) == OverlapClass::Overlapping);
}

TEST_CASE("sharesMemory/classify: broadcast and empty views") {
  View bcast = makeView(0x1000, DType::F32, {4, 3}, {0, 0}); // one element, twelve names
  CHECK(sharesMemory(bcast, makeView(0x1000, DType::F32, {1}, {1})) == SharesMemory::Yes);
  CHECK(sharesMemory(bcast, makeView(0x1004, DType::F32, {1}, {1})) == SharesMemory::No);
  CHECK(classify(bcast, bcast) == OverlapClass::Identical);

  View empty = makeView(0x1000, DType::F32, {0}, {1});
  View emptyToo = makeView(0x1000, DType::F32, {3, 0}, {1, 1});
  CHECK(sharesMemory(empty, empty) == SharesMemory::No);
  CHECK(sharesMemory(empty, bcast) == SharesMemory::No);
  CHECK(sharesMemory(bcast, emptyToo) == SharesMemory::No);
  CHECK(classify(empty, empty) == OverlapClass::Disjoint);
}

TEST_CASE("sharesMemory: the work limit gives TooHard, never a wrong answer") {
  // i8 bytes {0, 3, 6, 9} and {1, 3, 5}: only byte 3 is shared. No cheap test decides it
  // (extents meet, first elements differ, neither view is dense), so the solver must run.
  View a = makeView(100, DType::I8, {4}, {3});
  View b = makeView(101, DType::I8, {3}, {2});
  CHECK(sharesMemory(a, b, 0) == SharesMemory::TooHard);
  CHECK(sharesMemory(a, b, -5) == SharesMemory::TooHard);
  CHECK(sharesMemory(a, b, 1) == SharesMemory::TooHard); // the root alone cannot finish it
  CHECK(sharesMemory(a, b) == SharesMemory::Yes);
  // Cheap tests need no work at all.
  CHECK(sharesMemory(a, a, 0) == SharesMemory::Yes);
  CHECK(sharesMemory(a, makeView(200, DType::I8, {4}, {3}), 0) == SharesMemory::No);

  // Invalid views cannot be reasoned about; classify treats that as a possible alias.
  View invalid = makeView(100, DType::I8, {4}, {3, 1});
  CHECK(sharesMemory(a, invalid) == SharesMemory::TooHard);
  CHECK(classify(a, invalid) == OverlapClass::Overlapping);
}

TEST_CASE("name(OverlapClass), name(SharesMemory)") {
  CHECK(name(OverlapClass::Identical) == "identical");
  CHECK(name(OverlapClass::Overlapping) == "overlapping");
  CHECK(name(OverlapClass::Disjoint) == "disjoint");
  CHECK(name(SharesMemory::TooHard) == "too-hard");
}

TEST_CASE("brute force: random small views against explicit byte sets") {
  Rng rng{20240611};
  const int kPairs = 20000;
  int shared = 0, disjointButExtentsMeet = 0, identical = 0, neededSolver = 0;
  for (int i = 0; i < kPairs; ++i) {
    View a = randomView(rng);
    View b = randomView(rng);
    // Now and then, b is a with the strides of size-1 dimensions scrambled: the only way to
    // reach Identical at random.
    if (rng.between(0, 9) == 0) {
      b = a;
      for (size_t k = 0; k < b.shape.size(); ++k)
        if (b.shape[k] == 1)
          b.strides[k] = rng.between(-6, 6);
    }
    REQUIRE_FALSE(a.validate());
    REQUIRE_FALSE(b.validate());
    INFO("a = ", a.describe());
    INFO("b = ", b.describe());

    // The view queries against enumeration.
    std::vector<uint64_t> addrs = elementAddresses(a);
    CHECK(a.numElements() == static_cast<int64_t>(addrs.size()));
    if (addrs.empty()) {
      CHECK(a.extent().empty());
    } else {
      CHECK(a.extent().lo == *std::min_element(addrs.begin(), addrs.end()));
      CHECK(a.extent().hi == *std::max_element(addrs.begin(), addrs.end()) + byteSize(a.dtype));
    }
    bool contiguous = true;
    for (size_t j = 0; j < addrs.size(); ++j)
      contiguous = contiguous && addrs[j] == a.address + j * byteSize(a.dtype);
    CHECK(a.isContiguous() == contiguous);

    const bool expectShared = bruteShares(a, b);
    const SharesMemory expected = expectShared ? SharesMemory::Yes : SharesMemory::No;
    CHECK(sharesMemory(a, b, std::numeric_limits<int64_t>::max()) == expected);
    CHECK(sharesMemory(b, a, std::numeric_limits<int64_t>::max()) == expected);
    CHECK(sharesMemory(a, b) == expected);
    for (int64_t work : {0, 1, 2, 3, 5}) {
      SharesMemory got = sharesMemory(a, b, work);
      CHECK((got == expected || got == SharesMemory::TooHard));
    }

    const bool expectIdentical = bruteIdentical(a, b);
    const OverlapClass expectedClass = !expectShared     ? OverlapClass::Disjoint
                                       : expectIdentical ? OverlapClass::Identical
                                                         : OverlapClass::Overlapping;
    CHECK(classify(a, b) == expectedClass);

    shared += expectShared;
    identical += expectIdentical;
    disjointButExtentsMeet += !expectShared && a.extent().overlaps(b.extent());
    neededSolver += sharesMemory(a, b, 0) == SharesMemory::TooHard;
  }
  // The generator must reach every interesting case often, or the cross-check proves little.
  INFO("shared ", shared, ", identical ", identical, ", disjoint with meeting extents ",
       disjointButExtentsMeet, ", solver needed ", neededSolver);
  CHECK(shared > kPairs / 10);
  CHECK(kPairs - shared > kPairs / 10);
  CHECK(identical > kPairs / 50);
  CHECK(disjointButExtentsMeet > kPairs / 100);
  CHECK(neededSolver > kPairs / 20);
}
