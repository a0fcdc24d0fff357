//===- SavedInPlaceTest.cpp - Large read-write regions written in place, saved first -===//
//
// A host region of 1 MiB or more that a launch reads and writes, in memory that is the
// process's own (a std::vector's here), is written where it is: each 4 KiB chunk is saved
// before its first write, and the saved bytes the launches wrote are put back if the region
// is dropped without a step (ShadowState::SavedInPlace, docs/memory-model.md). Each case
// checks the caller's buffer against values worked out by hand, with the launch's writes
// visible in place, dropped on a fault, and moved to a shadow where a write must wait.
//
//===----------------------------------------------------------------------===//
#include "LargeRegions.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
using Buffer = std::vector<int32_t>;
ShadowState stateOf(const LaunchMemory &m) { return m.regions().at(0).region->state(); }
} // namespace

TEST_CASE("a large read-write region is written in place, saving only the chunks written") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  REQUIRE(m.regions().size() == 1);
  CHECK(stateOf(m) == ShadowState::SavedInPlace);
  CHECK(load(m, 0, 300000) == 300000);
  CHECK(load(m, 0, 1000) == 1000);
  CHECK(session.stats().bytesIn == 0); // reads copy nothing
  store(m, 0, 300001, -1);
  CHECK(buf[300001] == -1); // in place
  CHECK(load(m, 0, 300001) == -1);
  store(m, 0, 300002, -2); // the same chunk: saved once
  // A pointer of unknown provenance finds the region by its address, and saves too.
  uint8_t *untagged = m.translateForWrite(reinterpret_cast<uint64_t>(&buf[600000]), 4);
  REQUIRE(untagged);
  const int32_t minusSix = -6;
  std::memcpy(untagged, &minusSix, 4);
  REQUIRE(chunkOf(300001) != chunkOf(600000));
  CHECK(session.stats().bytesIn == 2 * kChunk);
  REQUIRE(session.step(error));
  expected[300001] = -1;
  expected[300002] = -2;
  expected[600000] = -6;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
  CHECK(session.stats().bytesOut == 12); // the written bytes, counted though not copied
}

TEST_CASE("a region written in place puts back what the launch wrote when it is dropped") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  for (int64_t i = 0; i < kInts; i += 5000)
    store(m, 0, i, load(m, 0, i) + 7);
  CHECK(buf[5000] == 5007);
  // The caller changes a byte no launch wrote, in a chunk that was saved: it stays.
  buf[5001] = 4242;
  expected[5001] = 4242;
  session.abandon();
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("aliasing views of a buffer written in place: a store through one is seen through "
          "the other, and a fault puts back both") {
  for (bool fault : {false, true}) {
    Buffer buf = counting<Buffer>(kInts), expected = buf;
    Session session;
    LaunchMemory m;
    std::string error;
    // b is a view of a from element 1000 on: one region.
    REQUIRE(
        session.prepare({arg("a", buf, 0, kInts), arg("b", buf, 1000, kInts - 1000)}, m, error));
    REQUIRE(m.regions().size() == 1);
    CHECK(stateOf(m) == ShadowState::SavedInPlace);
    store(m, 1, 5, -5); // buf[1005], through b
    CHECK(load(m, 0, 1005) == -5);
    CHECK(load(m, 1, 1000) == 2000); // read through b first, then written through a
    store(m, 0, 2000, -20);
    CHECK(load(m, 1, 1000) == -20);
    if (fault) {
      session.abandon();
    } else {
      REQUIRE(session.step(error));
      expected[1005] = -5;
      expected[2000] = -20;
    }
    INFO(differences(buf, expected));
    CHECK(buf == expected);
  }
}

TEST_CASE("a store across chunks saves each of them before any byte changes") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  const int64_t perChunk = int64_t(kChunk / 4);
  store(m, 0, 12 * perChunk + 1, -1); // chunk 12 saved and written first
  // Elements 10 * perChunk - 3 to 13 * perChunk + 2: chunks 9 to 13, one store.
  const int64_t first = 10 * perChunk - 3, count = 3 * perChunk + 6;
  uint8_t *span =
      m.translateForWrite(tagged::advance(m.argumentPointer(0), first * 4), uint32_t(count * 4));
  REQUIRE(span);
  for (int64_t i = 0; i < count; ++i) {
    const int32_t v = -int32_t(first + i) - 100;
    std::memcpy(span + i * 4, &v, 4);
  }
  CHECK(session.stats().bytesIn == 5 * kChunk); // chunks 9 to 13, 12 once
  session.abandon();                            // chunk 12's first write is put back too
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("workers writing the same chunks at once save each chunk once, before either writes") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  const int64_t perChunk = int64_t(kChunk / 4), chunks = 256;
  CHECK(storeParitiesFromBothEnds(m, chunks) == 0);
  CHECK(session.stats().bytesIn == uint64_t(chunks) * kChunk);
  for (int64_t e = 0; e < chunks * perChunk; ++e)
    CHECK_MESSAGE(buf[size_t(e)] == -int32_t(e), e);
  // Had a chunk been saved after the other worker's first store into it, that store would
  // survive the put-back.
  session.abandon();
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("a later launch of the session writes in place too; a partial sync moves the region "
          "into a shadow") {
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
  CHECK(stateOf(m) == ShadowState::SavedInPlace);
  CHECK(load(m, 0, 777) == -777);
  CHECK(load(m, 0, 900000) == 31);
  store(m, 0, 776, -776);
  // Synced bytes are final; the region's other writes wait in a shadow from now on.
  REQUIRE(session.sync(HostMemory::instance(),
                       {{uint64_t(reinterpret_cast<uintptr_t>(&buf[777])),
                         uint64_t(reinterpret_cast<uintptr_t>(&buf[778]))}},
                       error));
  CHECK(buf[777] == -777);
  CHECK(buf[776] == 776); // put back: it waits for the step
  // The next launch (a sync changes the regions: the last launch's memory is done).
  LaunchMemory next;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, next, error));
  CHECK(stateOf(next) == ShadowState::Full);
  CHECK(load(next, 0, 776) == -776);
  store(next, 0, 778, -778);
  CHECK(buf[778] == 778);
  SUBCASE("step") {
    REQUIRE(session.step(error));
    expected[776] = -776;
    expected[778] = -778;
  }
  SUBCASE("a fault after the sync") { session.abandon(); }
  expected[777] = -777; // synced: final either way
  expected[900000] = 31;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("a region written in place merged into a larger one keeps its writes in a shadow") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  std::string error;
  {
    LaunchMemory m;
    REQUIRE(session.prepare({arg("x", buf, 1000, 600000)}, m, error));
    CHECK(stateOf(m) == ShadowState::SavedInPlace);
    store(m, 0, 10, -1010); // buf[1010]
  }
  LaunchMemory m;
  REQUIRE(session.prepare({arg("all", buf, 0, kInts, Access::Read)}, m, error));
  REQUIRE(m.regions().size() == 1);
  CHECK(buf[1010] == 1010); // put back: the write waits in the larger region's shadow
  CHECK(load(m, 0, 1010) == -1010);
  CHECK(load(m, 0, 999) == 999);
  CHECK(load(m, 0, 700000) == 700000);
  REQUIRE(session.step(error));
  expected[1010] = -1010;
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("a donated buffer written in place is put back at the step") {
  Buffer buf = counting<Buffer>(kInts), expected = buf;
  Session session;
  std::string error;
  LaunchMemory m;
  REQUIRE(session.prepare({arg("x", buf, 0, kInts)}, m, error));
  store(m, 0, 4096, -1);
  session.donate({&HostMemory::instance(), m.regions()[0].region->range, "buf", "launch 0"});
  REQUIRE(session.step(error));
  INFO(differences(buf, expected));
  CHECK(buf == expected);
}

TEST_CASE("below the minimum, only read, or only written, a region is not saved in place") {
  Buffer buf = counting<Buffer>(kInts);
  Session session;
  LaunchMemory m;
  std::string error;
  const int64_t small = int64_t(kCopyInOnTouchMinimum / 4) - 1;
  REQUIRE(session.prepare({arg("small", buf, 0, small),
                           arg("in", buf, small + 16, kInts / 4, Access::Read),
                           arg("out", buf, small + 32 + kInts / 4, kInts / 4, Access::Write)},
                          m, error));
  REQUIRE(m.regions().size() == 3);
  CHECK(m.regions()[0].region->state() == ShadowState::Full);
  CHECK(m.regions()[1].region->state() == ShadowState::ReadThrough);
  CHECK(m.regions()[2].region->state() == ShadowState::WrittenOnly); // touched pages: not fresh
}

TEST_CASE("written in place or through a shadow, random launches leave the same caller bytes at "
          "every sync, step and fault") {
  // The same random accesses on two copies of a buffer: one in the process's own memory
  // (saved in place), one in a shared mapping (a shadow copied in as touched). Between
  // launches the first shows its writes and the second does not, by design; after a sync, a
  // step or an abandoned launch both must hold the same bytes, and every load must read the
  // same value in both.
  for (uint32_t seed = 1; seed <= 16; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    auto below = [&rng](int64_t n) { return int64_t(rng() % uint64_t(n)); };
    Buffer own = counting<Buffer>(kInts);
    SharedBuffer shared = counting<SharedBuffer>(kInts);
    Session ownSession, sharedSession;
    std::string error;
    for (int launch = 0; launch < 12; ++launch) {
      CAPTURE(launch);
      // One or two views of 1 to 4 MiB (overlapping ones form one region).
      std::vector<std::pair<int64_t, int64_t>> views;
      for (int64_t k = 0, count = 1 + below(2); k < count; ++k) {
        const int64_t length = kInts / 4 + below(kInts - kInts / 4);
        views.emplace_back(below(kInts - length + 1), length);
      }
      std::vector<PointerArgument> ownArgs, sharedArgs;
      for (auto [offset, length] : views) {
        ownArgs.push_back(arg("v", own, offset, length));
        sharedArgs.push_back(arg("v", shared, offset, length));
      }
      LaunchMemory ownMemory, sharedMemory;
      REQUIRE(ownSession.prepare(ownArgs, ownMemory, error));
      REQUIRE(sharedSession.prepare(sharedArgs, sharedMemory, error));
      for (int access = 0; access < 200; ++access) {
        const size_t v = size_t(below(int64_t(views.size())));
        // Up to three chunks' worth of elements, often across a chunk boundary.
        const int64_t count = 1 + below(access % 4 == 0 ? 3 * int64_t(kChunk) / 4 : 4);
        const int64_t first = below(views[v].second - count + 1);
        const uint64_t ownAt = tagged::advance(ownMemory.argumentPointer(v), first * 4);
        const uint64_t sharedAt = tagged::advance(sharedMemory.argumentPointer(v), first * 4);
        if (rng() % 2) {
          const uint8_t *a = ownMemory.translateForRead(ownAt, uint32_t(count * 4));
          const uint8_t *b = sharedMemory.translateForRead(sharedAt, uint32_t(count * 4));
          REQUIRE(a);
          REQUIRE(b);
          CHECK(std::memcmp(a, b, size_t(count) * 4) == 0);
        } else {
          std::vector<int32_t> values(static_cast<size_t>(count));
          for (int32_t &x : values)
            x = -int32_t(rng() % 1000000);
          uint8_t *a = ownMemory.translateForWrite(ownAt, uint32_t(count * 4));
          uint8_t *b = sharedMemory.translateForWrite(sharedAt, uint32_t(count * 4));
          REQUIRE(a);
          REQUIRE(b);
          std::memcpy(a, values.data(), size_t(count) * 4);
          std::memcpy(b, values.data(), size_t(count) * 4);
        }
      }
      switch (below(4)) {
      case 0: // a fault: the launch's writes, and those pending from earlier ones, are dropped
        ownSession.abandon();
        sharedSession.abandon();
        break;
      case 1: { // a partial sync of a random range: those bytes are final in both
        const int64_t lo = below(kInts), hi = lo + below(kInts - lo + 1);
        auto range = [lo, hi](auto &buffer) {
          return ByteRange{uint64_t(reinterpret_cast<uintptr_t>(buffer.data() + lo)),
                           uint64_t(reinterpret_cast<uintptr_t>(buffer.data() + hi))};
        };
        REQUIRE(ownSession.sync(HostMemory::instance(), {range(own)}, error));
        REQUIRE(sharedSession.sync(HostMemory::instance(), {range(shared)}, error));
        // (A region the range misses still shows its writes in place: pending, not final.)
        REQUIRE(std::equal(own.begin() + lo, own.begin() + hi, shared.begin() + lo));
        continue;
      }
      case 2:
        REQUIRE(ownSession.step(error));
        REQUIRE(sharedSession.step(error));
        break;
      default: // the next launch goes on in the same session
        continue;
      }
      REQUIRE(std::equal(own.begin(), own.end(), shared.begin()));
    }
    REQUIRE(ownSession.step(error));
    REQUIRE(sharedSession.step(error));
    CHECK(std::equal(own.begin(), own.end(), shared.begin()));
  }
}
