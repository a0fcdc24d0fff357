//===- HazardsTest.cpp - Cross-program conflicts, worked out by hand ------===//
#include "ttinterp/memory/Hazards.h"

#include <doctest/doctest.h>

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
