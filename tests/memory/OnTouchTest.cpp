//===- OnTouchTest.cpp - Large read-write shadows copied in as touched ----===//
//
// The buffers here are shared mappings: memory that is not the process's alone keeps a shadow
// (private anonymous memory, where most buffers live, is written in place with its bytes saved
// first: SavedInPlaceTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "LargeRegions.h"

#include <doctest/doctest.h>

#include <vector>

using namespace ttinterp;
using namespace ttinterp::test;

using Buffer = SharedBuffer;

TEST_CASE("a large read-write region is copied in only where accesses touch it") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  REQUIRE(m.regions().size() == 1);
  CHECK(m.regions()[0].region->state() == ShadowState::OnTouch);
  CHECK(session.stats().bytesIn == 0);
  CHECK(load(m, 0, 300000) == 300000);
  store(m, 0, 300001, -1); // the same chunk as element 300000
  CHECK(load(m, 0, 300001) == -1);
  CHECK(load(m, 0, 1000) == 1000);
  // A pointer of unknown provenance finds the region by its address, and is copied in too.
  const uint8_t *untagged = m.translateForRead(reinterpret_cast<uint64_t>(&buf[600000]), 4);
  REQUIRE(untagged);
  int32_t v;
  std::memcpy(&v, untagged, 4);
  CHECK(v == 600000);
  REQUIRE(chunkOf(300000) == chunkOf(300001));
  REQUIRE(chunkOf(1000) != chunkOf(300000));
  CHECK(session.stats().bytesIn == 3 * kChunk);
  CHECK(buf[300001] == 300001); // the caller's memory waits for the step
  REQUIRE(session.step(error));
  expected[300001] = -1;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
  CHECK(session.stats().bytesIn == 3 * kChunk); // counted once the region is gone, too
  CHECK(session.stats().bytesOut == 4);
}

TEST_CASE("a region copied in as touched drops its writes on a fault: the caller's bytes stay") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  for (int64_t i = 0; i < kInts; i += 5000)
    store(m, 0, i, load(m, 0, i) + 7);
  CHECK(load(m, 0, 5000) == 5007);
  session.abandon();
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("aliasing views of a large buffer share its chunks: a store through one is seen "
          "through the other, and only written bytes go back") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  // b is a view of a from element 1000 on: one region, one shadow.
  REQUIRE(session.prepare({arg("a", buf, 0, kInts), arg("b", buf, 1000, kInts - 1000)}, m, error));
  REQUIRE(m.regions().size() == 1);
  CHECK(m.regions()[0].region->state() == ShadowState::OnTouch);
  store(m, 1, 5, -5); // buf[1005], through b, in a chunk nothing touched before
  CHECK(load(m, 0, 1005) == -5);
  CHECK(load(m, 0, 1004) == 1004);
  CHECK(load(m, 1, 1000) == 2000); // read through b first, then written through a
  store(m, 0, 2000, -20);
  CHECK(load(m, 1, 1000) == -20);
  // The caller changes a byte nobody wrote meanwhile: it must not be overwritten by a stale copy.
  buf[1006] = 4242;
  REQUIRE(session.step(error));
  expected[1005] = -5;
  expected[2000] = -20;
  expected[1006] = 4242;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
  CHECK(session.stats().bytesOut == 8);
}

TEST_CASE("a span across chunks, some copied in before and written, reads every byte right") {
  Buffer buf = counting<Buffer>(kInts);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  const int64_t perChunk = int64_t(kChunk / 4);
  const int64_t first = 10 * perChunk - 3; // three elements before chunk 10, into chunk 13
  store(m, 0, 12 * perChunk + 1, -1);      // chunk 12 copied in and written first
  const uint8_t *span = m.translateForRead(tagged::advance(m.argumentPointer(0), first * 4),
                                           uint32_t(4 * perChunk * 4 + 8));
  REQUIRE(span);
  for (int64_t i = 0; i < 4 * perChunk + 2; ++i) {
    int32_t v;
    std::memcpy(&v, span + i * 4, 4);
    const int64_t element = first + i;
    CHECK(v == (element == 12 * perChunk + 1 ? -1 : int32_t(element)));
  }
  CHECK(session.stats().bytesIn == 5 * kChunk); // chunks 9 to 13
}

TEST_CASE("workers touching the same chunks at once copy each chunk once") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  const int64_t perChunk = int64_t(kChunk / 4), chunks = 256;
  CHECK(storeParitiesFromBothEnds(m, chunks) == 0);
  CHECK(session.stats().bytesIn == uint64_t(chunks) * kChunk);
  REQUIRE(session.step(error));
  for (int64_t e = 0; e < chunks * perChunk; ++e)
    expected[size_t(e)] = -int32_t(e);
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("a later launch of the session sees the earlier one's writes and the caller's bytes") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  std::string error;
  {
    LaunchMemory m;
    REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
    store(m, 0, 777, -777);
  }
  buf[900000] = 31; // between launches, in a chunk no launch touched
  LaunchMemory m;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  CHECK(m.regions()[0].region->state() == ShadowState::OnTouch);
  CHECK(load(m, 0, 777) == -777);
  CHECK(load(m, 0, 778) == 778);
  CHECK(load(m, 0, 900000) == 31);
  // A partial sync writes the launch's bytes back and keeps the shadow.
  REQUIRE(session.sync(HostMemory::instance(), {m.regions()[0].region->range}, error));
  CHECK(buf[777] == -777);
  store(m, 0, 778, -778);
  CHECK(load(m, 0, 777) == -777);
  REQUIRE(session.step(error));
  expected[777] = -777;
  expected[778] = -778;
  expected[900000] = 31;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("a region read in place by one launch and written by the next is copied in as touched") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  std::string error;
  {
    LaunchMemory m;
    REQUIRE(session.prepare({arg("x", buf, 0, kInts, Access::Read)}, m, error));
    CHECK(m.regions()[0].region->state() == ShadowState::ReadThrough);
    CHECK(load(m, 0, 123) == 123);
  }
  LaunchMemory m;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  CHECK(m.regions()[0].region->state() == ShadowState::OnTouch);
  store(m, 0, 123, load(m, 0, 123) + 1);
  CHECK(session.stats().bytesIn == kChunk);
  REQUIRE(session.step(error));
  expected[123] = 124;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("a region copied in as touched merged into a larger one keeps its writes") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  std::string error;
  {
    LaunchMemory m;
    REQUIRE(session.prepare({arg("x", buf, 1000, 600000)}, m, error));
    CHECK(m.regions()[0].region->state() == ShadowState::OnTouch);
    store(m, 0, 10, -1010); // buf[1010]
  }
  LaunchMemory m;
  REQUIRE(session.prepare({arg("all", buf, 0, kInts, Access::Read)}, m, error));
  REQUIRE(m.regions().size() == 1);
  CHECK(load(m, 0, 1010) == -1010);
  CHECK(load(m, 0, 999) == 999);
  CHECK(load(m, 0, 5000) == 5000);     // inside the old region, in a chunk it never copied
  CHECK(load(m, 0, 700000) == 700000); // past it
  REQUIRE(session.step(error));
  expected[1010] = -1010;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("a region below the minimum, or only written, is not copied in as touched") {
  Buffer buf = counting<Buffer>(kInts);
  Session session;
  LaunchMemory m;
  std::string error;
  const int64_t small = int64_t(kCopyInOnTouchMinimum / 4) - 1;
  REQUIRE(session.prepare(
      {arg("small", buf, 0, small), arg("out", buf, small + 16, kInts - small - 16, Access::Write)},
      m, error));
  REQUIRE(m.regions().size() == 2);
  CHECK(m.regions()[0].region->state() == ShadowState::Full);
  CHECK(m.regions()[1].region->state() == ShadowState::WrittenOnly);
  CHECK(session.stats().bytesIn == uint64_t(small) * 4);
}
