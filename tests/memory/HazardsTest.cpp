//===- HazardsTest.cpp - Cross-program conflicts, worked out by hand ------===//
#include "ttinterp/memory/Hazards.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

using namespace ttinterp;

TEST_CASE("hazards: a read of bytes another program wrote is read-after-write, with the overlap") {
  HazardTracker t;
  t.beginProgram(0);
  t.setSite(7);
  t.record(100, 16, AccessKind::Write); // [100, 116)
  t.beginProgram(1);
  t.setSite(9);
  t.record(112, 8, AccessKind::Read); // [112, 120): overlaps [112, 116)
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == HazardKind::ReadAfterWrite);
  CHECK(h[0].firstProgram == 0);
  CHECK(h[0].secondProgram == 1);
  CHECK(h[0].firstSite == 7);
  CHECK(h[0].secondSite == 9);
  CHECK(h[0].lo == 112);
  CHECK(h[0].hi == 116);
  CHECK(t.totalConflictBytes() == 4);
}

TEST_CASE("hazards: one program's own accesses never conflict") {
  HazardTracker t;
  t.beginProgram(3);
  t.record(0, 64, AccessKind::Write);
  t.record(0, 64, AccessKind::Read);
  t.record(32, 64, AccessKind::Write);
  CHECK(t.hazards().empty());
}

TEST_CASE("hazards: a write after two programs read finds the reader that is not itself") {
  HazardTracker t;
  t.beginProgram(0);
  t.record(0, 4, AccessKind::Read);
  t.beginProgram(1);
  t.record(0, 4, AccessKind::Read);
  t.beginProgram(0);
  t.record(0, 4, AccessKind::Write); // program 1 read these bytes: write-after-read
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == HazardKind::WriteAfterRead);
  CHECK(h[0].firstProgram == 1);
  CHECK(h[0].secondProgram == 0);
}

TEST_CASE("hazards: atomics are exempt among themselves, not against plain writes") {
  HazardTracker t;
  t.beginProgram(0);
  t.record(0, 4, AccessKind::Atomic);
  t.beginProgram(1);
  t.record(0, 4, AccessKind::Atomic);
  CHECK(t.hazards().empty());
  t.beginProgram(2);
  t.record(0, 4, AccessKind::Write);
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == HazardKind::WriteAfterWrite);
  CHECK(h[0].firstProgram == 1);
}

TEST_CASE("hazards: an atomic load conflicts with another program's plain write only") {
  HazardTracker t;
  t.beginProgram(0);
  t.record(0, 4, AccessKind::Atomic); // program 0 sets a flag atomically
  t.beginProgram(1);
  t.record(0, 4, AccessKind::AtomicRead); // program 1 reads it atomically: synchronisation
  CHECK(t.hazards().empty());
  t.beginProgram(2);
  t.record(8, 4, AccessKind::Write); // a plain write ...
  t.beginProgram(3);
  t.record(8, 4, AccessKind::AtomicRead); // ... read atomically by another program: a race
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == HazardKind::ReadAfterWrite);
  CHECK(h[0].firstProgram == 2);
  CHECK(h[0].secondProgram == 3);
  // An atomic read is not kept as a reader: a later write of another program is not
  // reported against it (documented in Hazards.h).
  t.beginProgram(4);
  t.record(0, 4, AccessKind::Atomic);
  CHECK(t.hazards().size() == 1);
}

TEST_CASE("hazards: disjoint and interleaved accesses of different programs are fine") {
  HazardTracker t;
  for (int p = 0; p < 4; ++p) {
    t.beginProgram(p);
    // Program p writes the 4-byte elements 2k + (p % 2) of its own 64-byte block, and reads
    // the other parity: interleaved, never the same bytes.
    for (int k = 0; k < 8; ++k) {
      t.record(uint64_t(p / 2) * 64 + uint64_t(2 * k + p % 2) * 4, 4, AccessKind::Write);
      t.record(1000 + uint64_t(p) * 64 + uint64_t(k) * 4, 4, AccessKind::Read);
    }
  }
  CHECK(t.hazards().empty());
  CHECK(t.totalConflictBytes() == 0);
}

TEST_CASE("hazards: writes filling gaps and joining neighbours keep each byte's writer") {
  HazardTracker t;
  t.beginProgram(0);
  t.setSite(1);
  t.record(0, 4, AccessKind::Write);
  t.record(8, 4, AccessKind::Write);
  t.beginProgram(1);
  t.record(4, 4, AccessKind::Write); // between program 0's two ranges, touching both
  t.beginProgram(3);
  t.setSite(2);
  t.record(20, 4, AccessKind::Write);
  t.record(16, 4, AccessKind::Write); // joins the range after it
  t.record(12, 4, AccessKind::Write); // and again
  t.beginProgram(4);
  t.setSite(3);
  t.record(0, 24, AccessKind::Read);
  auto h = t.hazards();
  REQUIRE(h.size() == 4);
  int64_t firsts[] = {0, 1, 0, 3};
  uint64_t bounds[] = {0, 4, 8, 12, 24};
  for (size_t k = 0; k < 4; ++k) {
    CAPTURE(k);
    CHECK(h[k].kind == HazardKind::ReadAfterWrite);
    CHECK(h[k].firstProgram == firsts[k]);
    CHECK(h[k].lo == bounds[k]);
    CHECK(h[k].hi == bounds[k + 1]);
  }
  CHECK(t.totalConflictBytes() == 24);

  // A write joining the ranges on both sides of it: all twelve bytes keep their writer.
  t.beginProgram(5);
  t.record(30, 4, AccessKind::Write);
  t.record(38, 4, AccessKind::Write);
  t.record(34, 4, AccessKind::Write);
  t.beginProgram(6);
  t.record(30, 12, AccessKind::Read);
  h = t.hazards();
  REQUIRE(h.size() == 5);
  CHECK(h[4].firstProgram == 5);
  CHECK(h[4].lo == 30);
  CHECK(h[4].hi == 42);
  CHECK(t.totalConflictBytes() == 36);
}

TEST_CASE("hazards: thousands of ranges split and joined keep every byte's writer and readers") {
  // A per-byte model worked out independently: each byte's last writer (and whether that was
  // an atomic) and the set of programs that read it. Without synchronisation only a program's
  // own accesses are ordered, so an access conflicts on every byte whose last writer is another
  // program (atomics exempt among themselves), and a write also on every byte another program
  // read. Enough random accesses that the tracker's maps hold thousands of ranges, split,
  // filled and joined in every order; the conflicting bytes must match after every access.
  constexpr uint64_t kBytes = 8192;
  std::vector<int32_t> writer(kBytes, -1);
  std::vector<bool> writerAtomic(kBytes, false);
  std::vector<std::vector<int32_t>> readers(kBytes);
  uint64_t expected = 0;
  HazardTracker t;
  uint64_t seed = 12345;
  auto next = [&](uint64_t bound) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % bound;
  };
  int32_t program = 0;
  t.beginProgram(program);
  for (int step = 0; step < 40000; ++step) {
    if (next(8) == 0) {
      t.endProgram();
      t.beginProgram(++program);
    }
    const uint64_t lo = next(kBytes - 64), size = 1 + next(64);
    const uint64_t pick = next(10);
    const AccessKind kind = pick < 5   ? AccessKind::Read
                            : pick < 9 ? AccessKind::Write
                                       : AccessKind::Atomic;
    for (uint64_t b = lo; b < lo + size; ++b) {
      bool exempt = kind == AccessKind::Atomic && writerAtomic[b];
      if (writer[b] >= 0 && writer[b] != program && !exempt)
        ++expected;
      if (kind != AccessKind::Read) {
        for (int32_t r : readers[b])
          if (r != program) {
            ++expected;
            break;
          }
        writer[b] = program;
        writerAtomic[b] = kind == AccessKind::Atomic;
      } else if (std::find(readers[b].begin(), readers[b].end(), program) == readers[b].end()) {
        readers[b].push_back(program);
      }
    }
    t.record(lo, uint32_t(size), kind);
    REQUIRE(t.totalConflictBytes() == expected);
  }
  CHECK(program > 4000);
}

// Happens-before through release and acquire. Addresses 0-63 hold data, 100 and up the
// synchronising locations; each expectation follows from the PTX memory model's
// synchronizes-with (a release read by an acquire orders what came before the one ahead
// of what comes after the other), worked out by hand.

namespace {
/// A tracker that keeps releases, as for a kernel with an acquiring atomic.
struct SynchronisingTracker : HazardTracker {
  SynchronisingTracker() { setSynchronising(true); }
};
} // namespace

TEST_CASE("hazards: data handed over by a release and an acquire is not a hazard") {
  SynchronisingTracker t;
  t.beginProgram(0);
  t.record(0, 16, AccessKind::Write);
  t.record(100, 4, AccessKind::Atomic);
  t.release(100, Release::ReadModifyWrite); // e.g. atomic_xchg(flag, 1)
  t.endProgram();
  t.beginProgram(1);
  t.record(100, 4, AccessKind::AtomicRead);
  t.acquire(100); // e.g. atomic_load(flag, sem="acquire") that read 1
  t.record(0, 16, AccessKind::Read);
  t.record(0, 16, AccessKind::Write);
  t.endProgram();
  CHECK(t.hazards().empty());
}

TEST_CASE("hazards: without the acquire, or without tracking releases, the same reads race") {
  for (bool keepReleases : {true, false}) {
    CAPTURE(keepReleases);
    HazardTracker t;
    t.setSynchronising(keepReleases);
    t.beginProgram(0);
    t.record(0, 16, AccessKind::Write);
    t.release(100, Release::ReadModifyWrite);
    t.endProgram();
    t.beginProgram(1);
    if (!keepReleases)
      t.acquire(100); // acquires nothing: no release was kept
    t.record(0, 16, AccessKind::Read);
    t.endProgram();
    auto h = t.hazards();
    REQUIRE(h.size() == 1);
    CHECK(h[0].kind == HazardKind::ReadAfterWrite);
    CHECK(h[0].firstProgram == 0);
    CHECK(h[0].secondProgram == 1);
  }
}

TEST_CASE("hazards: a release covers what came before it, not after") {
  SynchronisingTracker t;
  t.beginProgram(0);
  t.record(0, 8, AccessKind::Write);
  t.release(100, Release::Store);
  t.record(8, 8, AccessKind::Write); // after the release: not published
  t.endProgram();
  t.beginProgram(1);
  t.acquire(100);
  t.record(0, 16, AccessKind::Read);
  t.endProgram();
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == HazardKind::ReadAfterWrite);
  CHECK(h[0].lo == 8);
  CHECK(h[0].hi == 16);
}

TEST_CASE("hazards: happens-before is transitive through other locations") {
  SynchronisingTracker t;
  t.beginProgram(0);
  t.record(0, 4, AccessKind::Write);
  t.release(100, Release::Store);
  t.endProgram();
  t.beginProgram(1); // touches no data: only passes the order on
  t.acquire(100);
  t.release(104, Release::ReadModifyWrite);
  t.endProgram();
  t.beginProgram(2);
  t.acquire(104);
  t.record(0, 4, AccessKind::Write);
  t.endProgram();
  CHECK(t.hazards().empty());
}

TEST_CASE("hazards: joining two clocks that know one program keeps its later epoch") {
  // Program 0 publishes its first write at 100 and both at 104 (a later epoch); program 1
  // acquires 104, then 100: what it knows of program 0 must stay the later epoch.
  SynchronisingTracker t;
  t.beginProgram(0);
  t.record(0, 4, AccessKind::Write);
  t.release(100, Release::Store);
  t.record(4, 4, AccessKind::Write);
  t.release(104, Release::Store);
  t.endProgram();
  t.beginProgram(2); // another program's entry in the clock at 100, after program 0's
  t.release(100, Release::ReadModifyWrite);
  t.endProgram();
  t.beginProgram(1);
  t.acquire(104);
  t.acquire(100);
  t.record(0, 8, AccessKind::Read);
  t.endProgram();
  CHECK(t.hazards().empty());
}

TEST_CASE("hazards: read-modify-writes continue a release sequence, a store starts a new one") {
  // Programs 0 and 1 each write their own bytes and release through one counter by
  // read-modify-writes, neither acquiring: an acquire of the counter sees both.
  SynchronisingTracker t;
  for (int p = 0; p < 2; ++p) {
    t.beginProgram(p);
    t.record(uint64_t(p) * 8, 8, AccessKind::Write);
    t.release(100, Release::ReadModifyWrite);
    t.endProgram();
  }
  t.beginProgram(2);
  t.acquire(100);
  t.record(0, 16, AccessKind::Read);
  t.endProgram();
  CHECK(t.hazards().empty());

  // The same with release stores: the acquire reads program 1's store, which orders
  // program 1's bytes only.
  SynchronisingTracker s;
  for (int p = 0; p < 2; ++p) {
    s.beginProgram(p);
    s.record(uint64_t(p) * 8, 8, AccessKind::Write);
    s.release(100, Release::Store);
    s.endProgram();
  }
  s.beginProgram(2);
  s.acquire(100);
  s.record(0, 16, AccessKind::Read);
  s.endProgram();
  auto h = s.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].firstProgram == 0);
  CHECK(h[0].lo == 0);
  CHECK(h[0].hi == 8);
}

TEST_CASE("hazards: a relaxed store ends what the location published") {
  SynchronisingTracker t;
  t.beginProgram(0);
  t.record(0, 4, AccessKind::Write);
  t.release(100, Release::ReadModifyWrite);
  t.endProgram();
  t.beginProgram(1);
  t.release(100, Release::RelaxedStore);
  t.endProgram();
  t.beginProgram(2);
  t.acquire(100);
  t.record(0, 4, AccessKind::Read);
  t.endProgram();
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].firstProgram == 0);
  CHECK(h[0].secondProgram == 2);
}

TEST_CASE("hazards: a lock passed from program to program orders every holder's accesses") {
  // Four programs take one lock in turn (acquire, then release by read-modify-write, as
  // atomic_cas and atomic_xchg do) and add into one accumulator under it: no hazard. The
  // first holder's bytes are read by the last, three holders later.
  SynchronisingTracker t;
  for (int p = 0; p < 4; ++p) {
    t.beginProgram(p);
    t.acquire(100);
    t.release(100, Release::ReadModifyWrite); // the successful compare-and-swap
    if (p == 0)
      t.record(32, 4, AccessKind::Write); // a count only the first holder sets
    t.record(32, 4, AccessKind::Read);
    t.record(0, 16, AccessKind::Read);
    t.record(0, 16, AccessKind::Write);
    t.release(100, Release::ReadModifyWrite); // unlock
    t.endProgram();
  }
  CHECK(t.hazards().empty());
  // A fifth program that skips the lock races with the last holder.
  t.beginProgram(4);
  t.record(0, 16, AccessKind::Read);
  t.endProgram();
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == HazardKind::ReadAfterWrite);
  CHECK(h[0].firstProgram == 3);
}

TEST_CASE("hazards: with synchronisation every unordered reader is kept, not just two") {
  // Programs 0, 1 and 2 read the same bytes and each release through a location of its
  // own; program 3 acquires from 0's and 1's only, then writes: it is ordered after the
  // first two reads and races with the third.
  SynchronisingTracker t;
  for (int p = 0; p < 3; ++p) {
    t.beginProgram(p);
    t.record(0, 4, AccessKind::Read);
    t.release(100 + uint64_t(p) * 4, Release::Store);
    t.endProgram();
  }
  t.beginProgram(3);
  t.acquire(100);
  t.acquire(104);
  t.record(0, 4, AccessKind::Write);
  t.endProgram();
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == HazardKind::WriteAfterRead);
  CHECK(h[0].firstProgram == 2);
  CHECK(h[0].secondProgram == 3);
}

TEST_CASE("hazards: a read-modify-write after a wait keeps what others published meanwhile") {
  // Program 0 acquires the counter and waits; program 1 writes data, releases through the
  // counter and waits too; program 0 resumes and releases through it (a read-modify-write
  // continues the sequence); program 2 acquires it: ordered after both releasers, so after
  // the data.
  SynchronisingTracker t;
  t.beginProgram(0);
  t.acquire(100);
  t.beginProgram(1); // program 0 parks
  t.record(0, 4, AccessKind::Write);
  t.acquire(100);
  t.release(100, Release::ReadModifyWrite);
  t.beginProgram(0); // program 1 parks, program 0 resumes
  t.release(100, Release::ReadModifyWrite);
  t.endProgram();
  t.beginProgram(2);
  t.acquire(100);
  t.record(0, 4, AccessKind::Read);
  t.endProgram();
  CHECK(t.hazards().empty());
}

TEST_CASE("hazards: a program that waits keeps what it acquired when it resumes") {
  SynchronisingTracker t;
  t.beginProgram(5);
  t.record(0, 4, AccessKind::Write);
  t.release(100, Release::Store);
  t.endProgram();
  t.beginProgram(0);
  t.acquire(100);
  t.beginProgram(1); // program 0 parks; program 1 runs and ends
  t.record(8, 4, AccessKind::Write);
  t.endProgram();
  t.beginProgram(0); // program 0 resumes, still ordered after program 5's write
  t.record(0, 4, AccessKind::Read);
  CHECK(t.hazards().empty());
  t.record(8, 4, AccessKind::Read); // but not after program 1's
  auto h = t.hazards();
  REQUIRE(h.size() == 1);
  CHECK(h[0].firstProgram == 1);
  CHECK(h[0].secondProgram == 0);
}
