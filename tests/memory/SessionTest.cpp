//===- SessionTest.cpp - Regions, shadows, translation and write-back -----===//
#include "ttinterp/memory/Session.h"
#include "ttinterp/memory/StreamingStores.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

#include <sys/mman.h>

using namespace ttinterp;

namespace {
PointerArgument arg(const char *name, std::vector<int32_t> &buffer, int64_t offset, int64_t count,
                    int64_t stride = 1) {
  PointerArgument a;
  a.name = name;
  a.buffer = name;
  a.view = View{reinterpret_cast<uint64_t>(buffer.data() + offset), DType::I32, {count}, {stride}};
  return a;
}
int32_t load(const LaunchMemory &m, size_t argument, int64_t element) {
  int32_t v;
  std::memcpy(&v, m.translate(tagged::advance(m.argumentPointer(argument), element * 4), 4), 4);
  return v;
}
void store(const LaunchMemory &m, size_t argument, int64_t element, int32_t v) {
  std::memcpy(m.translateForWrite(tagged::advance(m.argumentPointer(argument), element * 4), 4), &v,
              4);
}
} // namespace

TEST_CASE("overlapping arguments share one shadow: a store through one is seen through the other") {
  std::vector<int32_t> buf(16);
  std::iota(buf.begin(), buf.end(), 0);
  Session session;
  LaunchMemory m;
  std::string error;
  // a = buf[0..8), b = buf[4..12): one region of 12 ints.
  REQUIRE(session.prepare({arg("a", buf, 0, 8), arg("b", buf, 4, 8)}, m, error));
  REQUIRE(m.regions().size() == 1);
  CHECK(m.regions()[0].region->range.size() == 48);
  store(m, 0, 5, 100); // a[5] is b[1]
  CHECK(load(m, 1, 1) == 100);
  CHECK(buf[5] == 5); // the caller's memory is untouched until write-back
  REQUIRE(session.step(error));
  CHECK(buf[5] == 100);
  CHECK(session.stats().bytesIn == 48);
  CHECK(session.stats().bytesOut == 4);
}

TEST_CASE(
    "only written bytes go back: bytes the kernel never wrote keep the caller's later values") {
  std::vector<int32_t> buf(8, 1);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("a", buf, 0, 8)}, m, error));
  store(m, 0, 2, 7);
  // Someone else changes element 3 behind the shadow; a whole-buffer copy back
  // would undo that with the stale shadow value.
  buf[3] = 42;
  REQUIRE(session.step(error));
  CHECK(buf[2] == 7);
  CHECK(buf[3] == 42);
}

TEST_CASE("a partial sync writes back only the named range and leaves the rest pending") {
  std::vector<int32_t> x(4, 0), y(4, 0);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("x", x, 0, 4), arg("y", y, 0, 4)}, m, error));
  store(m, 0, 0, 1);
  store(m, 1, 0, 2);
  ByteRange yRange = m.arguments()[1].view.extent();
  REQUIRE(session.sync(HostMemory::instance(), {yRange}, error));
  CHECK(y[0] == 2);
  CHECK(x[0] == 0);
  CHECK(session.pendingBytes(HostMemory::instance(), m.arguments()[0].view.extent()) == 4);
  REQUIRE(session.step(error));
  CHECK(x[0] == 1);
}

TEST_CASE("a later launch overlapping a live shadow merges with it and keeps its pending writes") {
  std::vector<int32_t> buf(16, 0);
  Session session;
  std::string error;
  LaunchMemory first;
  REQUIRE(session.prepare({arg("a", buf, 0, 8)}, first, error));
  store(first, 0, 7, 9); // pending in the shadow of buf[0..8)
  LaunchMemory second;
  REQUIRE(session.prepare({arg("b", buf, 4, 12)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->range.size() == 64);
  CHECK(load(second, 0, 3) == 9); // b[3] is buf[7]: sees the pending write
  // Copied in: 32 bytes first, then only the 32 new bytes.
  CHECK(session.stats().bytesIn == 64);
  REQUIRE(session.step(error));
  CHECK(buf[7] == 9);
}

TEST_CASE("abandoning a session writes nothing back") {
  std::vector<int32_t> buf(4, 3);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("a", buf, 0, 4)}, m, error));
  store(m, 0, 1, 8);
  session.abandon();
  CHECK(buf[1] == 3);
  CHECK(session.stats().bytesOut == 0);
}

TEST_CASE("translation checks bounds against the argument a pointer came from") {
  std::vector<int32_t> buf(16, 0);
  Session session;
  LaunchMemory m;
  std::string error;
  // Adjacent arguments: a = buf[0..8), b = buf[8..16), two regions.
  REQUIRE(session.prepare({arg("a", buf, 0, 8), arg("b", buf, 8, 8)}, m, error));
  uint64_t pastA = tagged::advance(m.argumentPointer(0), 8 * 4);
  CHECK(m.translate(pastA, 4) == nullptr);
  CHECK(m.describeFault(pastA, 4).find("element 8 of argument 'a'") != std::string::npos);
  // The same address without provenance lands in b's region and is allowed.
  CHECK(m.translate(tagged::address(pastA), 4) != nullptr);
  Session relaxed(Session::Options{BoundsMode::Region});
  LaunchMemory r;
  REQUIRE(relaxed.prepare({arg("a", buf, 0, 8), arg("b", buf, 8, 8)}, r, error));
  CHECK(r.translate(tagged::advance(r.argumentPointer(0), 8 * 4), 4) == nullptr); // other region
}

//===----------------------------------------------------------------------===//
// Shadow states: what each access needs copied in and shadowed
//===----------------------------------------------------------------------===//

namespace {
PointerArgument with(PointerArgument a, Access access) {
  a.access = access;
  return a;
}
const uint8_t *hostAddress(std::vector<int32_t> &buffer, int64_t element) {
  return reinterpret_cast<const uint8_t *>(buffer.data() + element);
}
uint64_t pointerTo(const LaunchMemory &m, size_t argument, int64_t element) {
  return tagged::advance(m.argumentPointer(argument), element * 4);
}
std::vector<int32_t> iota(size_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}
} // namespace

TEST_CASE("a host argument that is only read is read in place: no copy, no shadow, no stores") {
  std::vector<int32_t> buf = iota(8);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, m, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::ReadThrough);
  CHECK_FALSE(session.regions()[0]->writable());
  CHECK(session.stats().bytesIn == 0);
  // The kernel's pointer translates to the caller's own bytes.
  uint64_t p = pointerTo(m, 0, 3);
  CHECK(m.translate(p, 4) == hostAddress(buf, 3));
  CHECK(m.translate(tagged::address(p), 4) == hostAddress(buf, 3)); // without provenance too
  CHECK(load(m, 0, 3) == 3);
  buf[3] = 42; // read in place: the launch sees the caller's bytes as they are now
  CHECK(load(m, 0, 3) == 42);
  // Nothing may be stored into it, with or without provenance.
  CHECK(m.translateWritable(p, 4) == nullptr);
  CHECK(m.translateWritable(tagged::address(p), 4) == nullptr);
  CHECK(m.translateForWrite(p, 4) == nullptr);
  CHECK(m.translateForAtomic(p, 4) == nullptr);
  // In bounds but refused: the message blames the access analysis, not the kernel.
  std::string why = m.describeFault(p, 4);
  CHECK(why.find("read-only") != std::string::npos);
  CHECK(why.find("internal error") != std::string::npos);
  // Out of bounds is still reported as such.
  CHECK(m.describeFault(pointerTo(m, 0, 8), 4).find("element 8 of argument 'a'") !=
        std::string::npos);
  CHECK(session.pendingBytes(HostMemory::instance(), m.arguments()[0].view.extent()) == 0);
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesIn == 0);
  CHECK(session.stats().bytesOut == 0);
  CHECK(buf == std::vector<int32_t>{0, 1, 2, 42, 4, 5, 6, 7});
}

TEST_CASE("an argument that is only written gets a shadow that is not copied in") {
  std::vector<int32_t> buf = iota(8);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Write)}, m, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::WrittenOnly);
  CHECK(session.stats().bytesIn == 0);
  // A shadow, not the caller's bytes.
  CHECK(m.translate(pointerTo(m, 0, 2), 4) != hostAddress(buf, 2));
  REQUIRE(m.translateWritable(pointerTo(m, 0, 2), 4) != nullptr);
  store(m, 0, 2, 100);
  store(m, 0, 5, -1);
  CHECK(load(m, 0, 2) == 100);
  CHECK(buf[2] == 2); // not before write-back
  CHECK(session.pendingBytes(HostMemory::instance(), m.arguments()[0].view.extent()) == 8);
  REQUIRE(session.step(error));
  // Two ints go back; the six bytes-never-copied-in ints keep the caller's values.
  CHECK(session.stats().bytesIn == 0);
  CHECK(session.stats().bytesOut == 8);
  CHECK(buf == std::vector<int32_t>{0, 1, 100, 3, 4, -1, 6, 7});
}

TEST_CASE("long stores stream only into large written-only regions whose stores are final") {
  // kStreamStoresMinimum is 8 MiB. Streamed into: a region that large, only written, whose
  // shadow's pages the step exchanges (or, in place, the caller's memory). Not: one byte
  // smaller; read (alone or through an overlapping argument); a shadow copied back.
  const int64_t big = (int64_t(8) << 20) / 4;
  std::vector<int32_t> written(size_t(big), 0), readWritten(size_t(big), 0),
      shared(size_t(big), 0), small(size_t(big), 0), read(size_t(big), 0),
      copied(size_t(big), 0);
  auto exchanged = [](PointerArgument a, Access access) {
    a.exchangePages = true;
    return with(std::move(a), access);
  };
  PointerArgument smaller = arg("small", small, 0, big);
  smaller.view.dtype = DType::I8;
  smaller.view.shape = {big * 4 - 1};
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({exchanged(arg("written", written, 0, big), Access::Write),
                           exchanged(arg("rw", readWritten, 0, big), Access::ReadWrite),
                           exchanged(arg("r", shared, 0, big), Access::Read),
                           exchanged(arg("w", shared, 0, big), Access::Write),
                           exchanged(smaller, Access::Write),
                           exchanged(arg("read", read, 0, big), Access::Read),
                           with(arg("copied", copied, 0, big), Access::Write)},
                          m, error));
  CHECK(m.streamsStores(pointerTo(m, 0, 0)));
  CHECK(m.streamsStores(pointerTo(m, 0, big - 1)));
  for (size_t a = 1; a < 7; ++a) {
    CAPTURE(a);
    CHECK_FALSE(m.streamsStores(pointerTo(m, a, 0)));
  }
  // An address without a tag (an integer made a pointer) is never streamed into.
  CHECK_FALSE(m.streamsStores(tagged::address(pointerTo(m, 0, 0))));
  // Streamed or not, a store lands as any store does and goes back at the step.
  store(m, 0, 7, 70);
  store(m, 6, 9, 90);
  REQUIRE(session.step(error));
  CHECK(written[7] == 70);
  CHECK(copied[9] == 90);

  // In place, the caller's memory is the store's last stop whatever its pages.
  Session::Options options;
  options.inPlace = true;
  Session inPlace(options);
  LaunchMemory p;
  REQUIRE(inPlace.prepare({with(arg("copied", copied, 0, big), Access::Write),
                           with(arg("rw", readWritten, 0, big), Access::ReadWrite)},
                          p, error));
  CHECK(p.streamsStores(pointerTo(p, 0, 0)));
  CHECK_FALSE(p.streamsStores(pointerTo(p, 1, 0)));
}

TEST_CASE("a later launch that reads a written-only region copies in only its clean bytes") {
  std::vector<int32_t> buf = iota(8);
  Session session;
  std::string error;
  LaunchMemory first;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Write)}, first, error));
  store(first, 0, 2, 100);
  store(first, 0, 3, 101);
  CHECK(session.stats().bytesIn == 0);
  LaunchMemory second;
  REQUIRE(session.prepare({with(arg("b", buf, 0, 8), Access::Read)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  // 32 bytes, 8 of them dirty: 24 copied in.
  CHECK(session.stats().bytesIn == 24);
  // The earlier stores and the caller's other bytes, side by side.
  for (int i = 0; i < 8; ++i)
    CHECK(load(second, 0, i) == (i == 2 ? 100 : i == 3 ? 101 : i));
  CHECK(buf[2] == 2);
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesIn == 24);
  CHECK(session.stats().bytesOut == 8);
  CHECK(buf == std::vector<int32_t>{0, 1, 100, 101, 4, 5, 6, 7});
}

TEST_CASE("a launch reading past a written-only region merges with it and copies in the rest") {
  std::vector<int32_t> buf = iota(8);
  Session session;
  std::string error;
  LaunchMemory first;
  // buf[0..4): 16 bytes, written only.
  REQUIRE(session.prepare({with(arg("a", buf, 0, 4), Access::Write)}, first, error));
  store(first, 0, 3, 50);
  LaunchMemory second;
  // buf[2..8) reads across the live region's end: one region buf[0..8).
  REQUIRE(session.prepare({with(arg("b", buf, 2, 6), Access::Read)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->range.size() == 32);
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  // The live part: 16 - 4 dirty = 12 bytes; the new part buf[4..8): 16 bytes.
  CHECK(session.stats().bytesIn == 28);
  // b[i] is buf[2 + i]; b[1] is buf[3], the pending store.
  for (int i = 0; i < 6; ++i)
    CHECK(load(second, 0, i) == (i == 1 ? 50 : 2 + i));
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesOut == 4);
  CHECK(buf == std::vector<int32_t>{0, 1, 2, 50, 4, 5, 6, 7});
}

TEST_CASE("a read-in-place region that a later launch reads and writes is copied in fully") {
  std::vector<int32_t> buf = iota(8);
  Session session;
  std::string error;
  LaunchMemory first;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, first, error));
  CHECK(session.regions()[0]->state() == ShadowState::ReadThrough);
  LaunchMemory second;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::ReadWrite)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  CHECK(session.regions()[0]->writable());
  CHECK(session.stats().bytesIn == 32);
  CHECK(second.translate(pointerTo(second, 0, 0), 4) != hostAddress(buf, 0));
  store(second, 0, 0, 9);
  CHECK(load(second, 0, 0) == 9);
  CHECK(load(second, 0, 7) == 7);
  CHECK(buf[0] == 0);
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesOut == 4);
  CHECK(buf == std::vector<int32_t>{9, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("a read-in-place region that a later launch only writes gets a shadow without copy-in") {
  std::vector<int32_t> buf = iota(8);
  Session session;
  std::string error;
  LaunchMemory first;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, first, error));
  LaunchMemory second;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Write)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::WrittenOnly);
  CHECK(session.stats().bytesIn == 0);
  REQUIRE(second.translateWritable(pointerTo(second, 0, 6), 4) != nullptr);
  store(second, 0, 6, 60);
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesIn == 0);
  CHECK(session.stats().bytesOut == 4);
  CHECK(buf == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 60, 7});
}

TEST_CASE("overlapping read and written arguments share one full shadow") {
  std::vector<int32_t> buf = iota(16);
  Session session;
  LaunchMemory m;
  std::string error;
  // r = buf[0..8) read, w = buf[4..12) written: one region of 12 ints. Were r read in
  // place, it would miss the store through w; were it a copy of its own, the stale
  // copy must never go back.
  REQUIRE(session.prepare(
      {with(arg("r", buf, 0, 8), Access::Read), with(arg("w", buf, 4, 8), Access::Write)}, m,
      error));
  REQUIRE(session.regions().size() == 1);
  REQUIRE(m.regions().size() == 1);
  CHECK(m.regions()[0].arguments == std::vector<uint32_t>{0, 1});
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  CHECK(session.stats().bytesIn == 48);
  // r reads the shadow, not the caller's bytes.
  CHECK(m.translate(pointerTo(m, 0, 4), 4) != hostAddress(buf, 4));
  store(m, 1, 0, 100); // w[0] is r[4]
  CHECK(load(m, 0, 4) == 100);
  CHECK(buf[4] == 4);
  buf[6] = 66; // changed behind the shadow: r's copy of it is now stale
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesOut == 4);
  CHECK(buf[4] == 100);
  CHECK(buf[6] == 66);
  for (int i = 0; i < 16; ++i)
    if (i != 4 && i != 6)
      CHECK(buf[i] == i);
}

TEST_CASE("identical read and written views: a store through one is seen through the other") {
  std::vector<int32_t> buf = iota(4);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare(
      {with(arg("w", buf, 0, 4), Access::Write), with(arg("r", buf, 0, 4), Access::Read)}, m,
      error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  CHECK(session.stats().bytesIn == 16);
  store(m, 0, 2, -5);
  CHECK(load(m, 1, 2) == -5);
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesOut == 4);
  CHECK(buf == std::vector<int32_t>{0, 1, -5, 3});
}

TEST_CASE("a written argument overlapping a live read-in-place region merges into one shadow") {
  SUBCASE("written only: nothing is copied in, not even the old region") {
    std::vector<int32_t> buf = iota(16);
    Session session;
    std::string error;
    LaunchMemory first, second;
    REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, first, error));
    REQUIRE(session.prepare({with(arg("b", buf, 4, 8), Access::Write)}, second, error));
    REQUIRE(session.regions().size() == 1);
    CHECK(session.regions()[0]->range.size() == 48); // buf[0..12)
    CHECK(session.regions()[0]->state() == ShadowState::WrittenOnly);
    CHECK(session.stats().bytesIn == 0);
    store(second, 0, 0, 400); // b[0] is buf[4]
    REQUIRE(session.step(error));
    CHECK(session.stats().bytesOut == 4);
    for (int i = 0; i < 16; ++i)
      CHECK(buf[i] == (i == 4 ? 400 : i));
  }
  SUBCASE("read and written: the whole merged region is copied in") {
    std::vector<int32_t> buf = iota(16);
    Session session;
    std::string error;
    LaunchMemory first, second;
    REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, first, error));
    REQUIRE(session.prepare({with(arg("b", buf, 4, 8), Access::ReadWrite)}, second, error));
    REQUIRE(session.regions().size() == 1);
    CHECK(session.regions()[0]->state() == ShadowState::Full);
    // Nothing came from the read-in-place region: all 48 bytes from the caller.
    CHECK(session.stats().bytesIn == 48);
    for (int i = 0; i < 8; ++i)
      CHECK(load(second, 0, i) == 4 + i);
    store(second, 0, 7, -7); // buf[11]
    REQUIRE(session.step(error));
    CHECK(session.stats().bytesOut == 4);
    for (int i = 0; i < 16; ++i)
      CHECK(buf[i] == (i == 11 ? -7 : i));
  }
  SUBCASE("only read again: the merged region is still read in place") {
    std::vector<int32_t> buf = iota(16);
    Session session;
    std::string error;
    LaunchMemory first, second;
    REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, first, error));
    REQUIRE(session.prepare({with(arg("b", buf, 4, 8), Access::Read)}, second, error));
    REQUIRE(session.regions().size() == 1);
    CHECK(session.regions()[0]->range.size() == 48);
    CHECK(session.regions()[0]->state() == ShadowState::ReadThrough);
    CHECK(second.translate(pointerTo(second, 0, 1), 4) == hostAddress(buf, 5));
    CHECK(session.stats().bytesIn == 0);
  }
}

TEST_CASE("a read argument bridging a read-in-place region and a dirty shadow copies in the rest") {
  std::vector<int32_t> buf = iota(16);
  Session session;
  std::string error;
  LaunchMemory first, second;
  // Region A = buf[0..4) read in place; region B = buf[8..12) read and written (16 B in).
  REQUIRE(session.prepare({with(arg("a", buf, 0, 4), Access::Read), arg("b", buf, 8, 4)}, first,
                          error));
  REQUIRE(session.regions().size() == 2);
  CHECK(session.stats().bytesIn == 16);
  store(first, 1, 0, 80); // buf[8], pending
  // c = buf[2..10) joins both: region buf[0..12). B's shadow is kept; A (16 B) and the gap
  // buf[4..8) (16 B) are copied in.
  REQUIRE(session.prepare({with(arg("c", buf, 2, 8), Access::Read)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->range.size() == 48);
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  CHECK(session.stats().bytesIn == 48);
  for (int i = 0; i < 8; ++i)
    CHECK(load(second, 0, i) == (i == 6 ? 80 : 2 + i)); // c[6] is buf[8]
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesOut == 4);
  for (int i = 0; i < 16; ++i)
    CHECK(buf[i] == (i == 8 ? 80 : i));
}

namespace {
Session inPlaceSession() {
  Session::Options options;
  options.inPlace = true;
  return Session(options);
}
} // namespace

TEST_CASE("in place: a read argument is read where it is, a written one is written where it is") {
  std::vector<int32_t> in = iota(8), out(8, -1);
  Session session = inPlaceSession();
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare(
              {with(arg("x", in, 0, 8), Access::Read), with(arg("y", out, 0, 8), Access::Write)},
              m, error));
  REQUIRE(session.regions().size() == 2);
  auto regionOf = [&](uint32_t argument) -> const Region & {
    for (const LaunchMemory::RegionInfo &r : m.regions())
      if (std::count(r.arguments.begin(), r.arguments.end(), argument))
        return *r.region;
    FAIL("no region holds argument ", argument);
    return *m.regions()[0].region;
  };
  const Region &read = regionOf(0), &written = regionOf(1);
  // Read only: no dirty map to set, walk or clear, and loads may use the bytes directly.
  CHECK(read.state() == ShadowState::ReadThrough);
  CHECK_FALSE(read.writable());
  CHECK(read.dirty.size() == 0);
  CHECK(m.translateImmutable(pointerTo(m, 0, 2), 4) == hostAddress(in, 2));
  CHECK(m.translateWritable(pointerTo(m, 0, 2), 4) == nullptr);
  CHECK(written.state() == ShadowState::InPlace);
  CHECK(m.translateForWrite(pointerTo(m, 1, 3), 4) == hostAddress(out, 3));
  store(m, 1, 3, load(m, 0, 3) * 10);
  CHECK(out[3] == 30); // at once, not at write-back
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesIn == 0);
  CHECK(session.stats().bytesOut == 4);
  CHECK(in == iota(8));
  CHECK(out == std::vector<int32_t>{-1, -1, -1, 30, -1, -1, -1, -1});
}

TEST_CASE("in place: a read-in-place region that a later launch writes becomes the caller's bytes") {
  std::vector<int32_t> buf = iota(8);
  Session session = inPlaceSession();
  std::string error;
  LaunchMemory first, second;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, first, error));
  REQUIRE(session.regions()[0]->state() == ShadowState::ReadThrough);
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::ReadWrite)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::InPlace); // no shadow was made
  CHECK(session.stats().bytesIn == 0);
  store(second, 0, 6, load(second, 0, 6) + 54);
  CHECK(buf[6] == 60);
  CHECK(load(first, 0, 6) == 60); // the first launch's view sees it too: one copy of the bytes
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesOut == 4);
  CHECK(buf == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 60, 7});
}

TEST_CASE("in place: a written argument overlapping a live read-in-place region merges in place") {
  std::vector<int32_t> buf = iota(16);
  Session session = inPlaceSession();
  std::string error;
  LaunchMemory first, second;
  REQUIRE(session.prepare({with(arg("a", buf, 0, 8), Access::Read)}, first, error));
  REQUIRE(session.prepare({with(arg("b", buf, 4, 8), Access::Write)}, second, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->range.size() == 48); // buf[0..12)
  CHECK(session.regions()[0]->state() == ShadowState::InPlace);
  store(second, 0, 0, 400); // b[0] is buf[4]
  CHECK(buf[4] == 400);
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesIn == 0);
  CHECK(session.stats().bytesOut == 4);
  for (int i = 0; i < 16; ++i)
    CHECK(buf[i] == (i == 4 ? 400 : i));
}

TEST_CASE("default access is read-write: the region is copied in whole, as before") {
  CHECK(PointerArgument().access == Access::ReadWrite);
  std::vector<int32_t> buf = iota(8);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("a", buf, 0, 8)}, m, error));
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  CHECK(session.stats().bytesIn == 32);
  CHECK(m.translate(pointerTo(m, 0, 0), 4) != hostAddress(buf, 0));
  store(m, 0, 1, 11);
  REQUIRE(session.step(error));
  CHECK(session.stats().bytesOut == 4);
  CHECK(buf == std::vector<int32_t>{0, 11, 2, 3, 4, 5, 6, 7});
}

namespace {
/// Caller memory the process cannot address: bytes at fake addresses, counted.
class CountingMemory final : public CallerMemory {
public:
  CountingMemory(uint64_t base, size_t size) : base_(base), bytes_(size) {
    for (size_t i = 0; i < size; ++i)
      bytes_[i] = uint8_t(i);
  }
  std::string name() const override { return "fake"; }
  bool read(uint64_t address, void *dst, size_t size, std::string &error) override {
    if (address < base_ || address + size > base_ + bytes_.size()) {
      error = "fake read out of range";
      return false;
    }
    ++reads;
    bytesRead += size;
    std::memcpy(dst, bytes_.data() + (address - base_), size);
    return true;
  }
  bool write(uint64_t address, const void *src, size_t size, std::string &error) override {
    if (address < base_ || address + size > base_ + bytes_.size()) {
      error = "fake write out of range";
      return false;
    }
    ++writes;
    bytesWritten += size;
    std::memcpy(bytes_.data() + (address - base_), src, size);
    return true;
  }
  uint8_t at(size_t offset) const { return bytes_[offset]; }
  int reads = 0, writes = 0;
  size_t bytesRead = 0, bytesWritten = 0;

private:
  uint64_t base_;
  std::vector<uint8_t> bytes_;
};

PointerArgument fakeArg(CountingMemory &memory, uint64_t address, int64_t count, Access access) {
  PointerArgument a;
  a.name = "d";
  a.buffer = "d";
  a.view = View{address, DType::I32, {count}, {1}};
  a.memory = &memory;
  a.access = access;
  return a;
}
} // namespace

TEST_CASE("memory the host cannot address is never read in place: a read argument is copied in") {
  constexpr uint64_t base = 0x100000;
  CountingMemory fake(base, 64);
  CHECK_FALSE(fake.hostAddressable());
  Session session;
  LaunchMemory m;
  std::string error;
  // d = 8 ints at base + 8: bytes [8, 40) of the fake memory.
  REQUIRE(session.prepare({fakeArg(fake, base + 8, 8, Access::Read)}, m, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  CHECK(fake.reads == 1);
  CHECK(fake.bytesRead == 32);
  CHECK(session.stats().bytesIn == 32);
  const uint8_t *h = m.translate(pointerTo(m, 0, 1), 4);
  REQUIRE(h != nullptr);
  CHECK(reinterpret_cast<uint64_t>(h) != base + 12); // a host shadow, not the fake address
  // Element 1 is fake bytes 12..15, which hold 12, 13, 14, 15.
  CHECK(h[0] == 12);
  CHECK(h[3] == 15);
  REQUIRE(session.step(error));
  CHECK(fake.writes == 0);
  CHECK(session.stats().bytesOut == 0);
}

TEST_CASE("memory the host cannot address: a written-only argument is not read at all") {
  constexpr uint64_t base = 0x100000;
  CountingMemory fake(base, 64);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({fakeArg(fake, base, 4, Access::Write)}, m, error));
  CHECK(session.regions()[0]->state() == ShadowState::WrittenOnly);
  CHECK(fake.reads == 0);
  CHECK(session.stats().bytesIn == 0);
  store(m, 0, 2, 0x01020304); // fake bytes 8..11, little-endian
  REQUIRE(session.step(error));
  CHECK(fake.writes == 1);
  CHECK(fake.bytesWritten == 4);
  CHECK(session.stats().bytesOut == 4);
  CHECK(fake.at(7) == 7);
  CHECK(fake.at(8) == 0x04);
  CHECK(fake.at(11) == 0x01);
  CHECK(fake.at(12) == 12);
}

namespace {
/// What a 16 MiB region goes through, on `threads` copy threads: a written-only
/// launch stores a pattern whose runs cross chunk boundaries (the copy splits
/// 16 MiB into 1 MiB chunks: bytes 1 MiB and 8 MiB, elements 262144 and
/// 2097152), then a launch reads everything back, then a step.
struct LargeRun {
  std::vector<int32_t> buf, seen;
  TransferStats afterWrite, afterRead, afterStep;
};
constexpr int64_t kLargeCount = int64_t(4) << 20; // 4 Mi ints = 16 MiB
std::vector<int64_t> largeDirtyElements() {
  std::vector<int64_t> e{0, 262143, 262144, 2097150, 2097151, 2097152, 2097153, kLargeCount - 1};
  for (int64_t i = 1000; i < 1100; ++i)
    e.push_back(i);
  return e; // 108 elements, 432 bytes
}
LargeRun runLarge(unsigned threads) {
  LargeRun r;
  r.buf.resize(size_t(kLargeCount));
  for (int64_t i = 0; i < kLargeCount; ++i)
    r.buf[size_t(i)] = int32_t(i * 3 + 1);
  Session::Options options;
  options.copyThreads = threads;
  Session session(options);
  std::string error;
  LaunchMemory w;
  REQUIRE(session.prepare({with(arg("a", r.buf, 0, kLargeCount), Access::Write)}, w, error));
  for (int64_t e : largeDirtyElements())
    store(w, 0, e, -int32_t(e) - 5);
  r.afterWrite = session.stats();
  LaunchMemory rd;
  REQUIRE(session.prepare({with(arg("a", r.buf, 0, kLargeCount), Access::Read)}, rd, error));
  r.afterRead = session.stats();
  r.seen.resize(size_t(kLargeCount));
  std::memcpy(r.seen.data(), rd.translate(rd.argumentPointer(0), uint32_t(kLargeCount * 4)),
              size_t(kLargeCount) * 4);
  REQUIRE(session.step(error));
  r.afterStep = session.stats();
  return r;
}
} // namespace

TEST_CASE("copy-in and write-back of a 16 MiB region on two threads equal the one-thread results") {
  LargeRun one = runLarge(1), two = runLarge(2);
  std::vector<int64_t> dirty = largeDirtyElements();
  REQUIRE(dirty.size() == 108);
  for (const LargeRun *r : {&one, &two}) {
    CHECK(r->afterWrite.bytesIn == 0);
    // 16 MiB less the 432 dirty bytes.
    CHECK(r->afterRead.bytesIn == 16777216 - 432);
    CHECK(r->afterStep.bytesOut == 432);
    // What the reading launch saw and what the caller holds after the step: the
    // stores where they were made, the caller's values everywhere else.
    std::vector<int32_t> want(static_cast<size_t>(kLargeCount));
    for (int64_t i = 0; i < kLargeCount; ++i)
      want[size_t(i)] = int32_t(i * 3 + 1);
    for (int64_t e : dirty)
      want[size_t(e)] = -int32_t(e) - 5;
    CHECK(r->seen == want);
    CHECK(r->buf == want);
  }
  // Spelled out across the chunk boundary.
  CHECK(two.buf[2097149] == 2097149 * 3 + 1);
  CHECK(two.buf[2097151] == -2097156);
  CHECK(two.buf[2097152] == -2097157);
  CHECK(two.buf[2097154] == 2097154 * 3 + 1);
  CHECK(two.buf[262142] == 262142 * 3 + 1);
  CHECK(two.buf[262143] == -262148);
  CHECK(two.buf[262144] == -262149);
  CHECK(two.buf[262145] == 262145 * 3 + 1);
  CHECK(one.afterRead.bytesIn == two.afterRead.bytesIn);
  CHECK(one.afterStep.bytesOut == two.afterStep.bytesOut);
}

TEST_CASE("provenance: an address takes the tag of the widest argument extent holding it") {
  std::vector<int32_t> buf(32), other(8);
  Session session;
  LaunchMemory m;
  std::string error;
  // a = buf[0..8), whole = buf[0..32) (reachable), b = buf[24..32), c = other.
  PointerArgument whole = arg("whole", buf, 0, 32);
  whole.reachable = true;
  REQUIRE(session.prepare({arg("a", buf, 0, 8), whole, arg("b", buf, 24, 8), arg("c", other, 0, 8)},
                          m, error));
  uint64_t base = reinterpret_cast<uint64_t>(buf.data());
  // Inside a (8 ints) and whole (32): whole is wider.
  CHECK(tagged::tag(m.provenance(base + 4)) == 2);
  CHECK(tagged::tag(m.provenance(base + 100)) == 2);
  CHECK(tagged::address(m.provenance(base + 100)) == base + 100);
  CHECK(tagged::tag(m.provenance(reinterpret_cast<uint64_t>(other.data()) + 28)) == 4);
  // Memory no argument holds: no provenance.
  CHECK(tagged::tag(m.provenance(8)) == 0);
  // Equal extents: the first argument wins.
  LaunchMemory n;
  REQUIRE(session.prepare({arg("x", other, 0, 8), arg("y", other, 0, 8)}, n, error));
  CHECK(tagged::tag(n.provenance(reinterpret_cast<uint64_t>(other.data()))) == 1);
}

TEST_CASE("a reachable buffer's stray access is described as the reachable buffer's") {
  std::vector<int32_t> buf(8);
  Session session;
  LaunchMemory m;
  std::string error;
  PointerArgument t = arg("", buf, 0, 8);
  t.buffer = "table_target";
  t.reachable = true;
  REQUIRE(session.prepare({t}, m, error));
  uint64_t p = m.provenance(reinterpret_cast<uint64_t>(buf.data()) + 28);
  CHECK(m.translate(p, 4) != nullptr);
  uint64_t past = tagged::advance(p, 4);
  CHECK(m.translate(past, 4) == nullptr);
  std::string why = m.describeFault(past, 4);
  CHECK(why.find("element 8 of reachable buffer 'table_target'") != std::string::npos);
  CHECK(why.find("4 bytes past its end") != std::string::npos);
}

TEST_CASE("the dirty bitmap's set, clear, count and runs agree with a bool per byte") {
  // Ranges that start and end inside words, on word boundaries, span many whole
  // words, or sit inside one word; the model is one bool per byte.
  const size_t bytes = 64 * 40 + 13;
  ByteBitmap map;
  map.resize(bytes);
  std::vector<bool> model(bytes, false);
  struct Step {
    bool set;
    size_t offset, count;
  };
  const Step steps[] = {{true, 3, 700},   {true, 64, 128},  {false, 100, 5},   {true, 2000, 559},
                        {false, 5, 64},   {true, 630, 1},   {false, 640, 1280}, {true, 0, 0},
                        {true, 1920, 64}, {false, 2559, 14}, {true, 2572, 1}};
  for (const Step &s : steps) {
    CAPTURE(s.offset);
    CAPTURE(s.count);
    if (s.set)
      map.set(s.offset, s.count);
    else
      map.clear(s.offset, s.count);
    for (size_t i = s.offset; i < s.offset + s.count; ++i)
      model[i] = s.set;
    size_t expected = size_t(std::count(model.begin(), model.end(), true));
    CHECK(map.count(0, bytes) == expected);
    std::vector<bool> fromRuns(bytes, false);
    map.forEachRun(0, bytes, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i)
        fromRuns[i] = true;
    });
    CHECK(fromRuns == model);
    for (size_t i = 0; i < bytes; ++i)
      if (map.test(i) != model[i]) {
        FAIL_CHECK("byte " << i << " differs");
        break;
      }
  }
}

TEST_CASE("a dirty bitmap sized again reads clear, though its block held set bits") {
  // A new map's words are not cleared when it is made, only a group's when a set first covers
  // part of it; the block may be the one the last map left with bits set in every group.
  const size_t bytes = size_t(64) << 20;
  ByteBitmap map;
  map.resize(bytes);
  CHECK(map.count(0, bytes) == 0);
  for (size_t at = 0; at < bytes; at += 512)
    map.set(at + 3, 500); // every group in part: all its words written
  REQUIRE(map.count(0, bytes) == bytes / 512 * 500);
  map.resize(bytes); // a new block, or the same one taken back from the pool
  CHECK(map.count(0, bytes) == 0);
  map.set(bytes / 3, 1000);
  map.set(bytes - 700, 10);
  CHECK(map.count(0, bytes) == 1010);
  std::vector<std::pair<size_t, size_t>> runs;
  map.forEachRun(0, bytes, [&](size_t b, size_t e) { runs.push_back({b, e}); });
  CHECK(runs == std::vector<std::pair<size_t, size_t>>{{bytes / 3, bytes / 3 + 1000},
                                                       {bytes - 700, bytes - 690}});
  CHECK_FALSE(map.test(bytes / 3 - 1));
  CHECK(map.test(bytes / 3));
}

TEST_CASE("concurrent sets into groups whose words are not cleared yet lose no bit") {
  // Four threads set short ranges in the same 512-byte groups in the same order, so they race
  // for each group's first clearing: one clears it while the others wait, and none may wipe a
  // bit another has ORed in. The map's block first held set bits everywhere (words of 1 MiB
  // and more come back from the pool), so a missed clearing shows as well.
  const size_t bytes = size_t(8) << 20;
  const size_t groups = bytes / 512;
  {
    ByteBitmap before;
    before.resize(bytes);
    for (size_t at = 0; at < bytes; at += 512)
      before.set(at + 1, 510);
  }
  const unsigned threads = 4;
  std::vector<bool> model(bytes, false);
  for (unsigned t = 0; t < threads; ++t)
    for (size_t g = 0; g < groups; ++g)
      for (size_t i = 0; i < 10 + t; ++i)
        model[g * 512 + t * 100 + g % 7 + i] = true;
  const size_t expected = size_t(std::count(model.begin(), model.end(), true));
  // Several launches' worth: each map may take the last one's block, set bits and all.
  for (int launch = 0; launch < 8; ++launch) {
    CAPTURE(launch);
    ByteBitmap map;
    map.resize(bytes);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        for (size_t g = 0; g < groups; ++g)
          map.setConcurrent(g * 512 + t * 100 + g % 7, 10 + t);
      });
    for (std::thread &w : workers)
      w.join();
    REQUIRE(map.count(0, bytes) == expected);
    std::vector<bool> fromRuns(bytes, false);
    map.forEachRun(0, bytes, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i)
        fromRuns[i] = true;
    });
    REQUIRE(fromRuns == model);
  }
}

namespace {
/// forEachRun over [from, from + count) gives exactly the model's runs there: in order, not
/// empty, and maximal (two runs never touch).
void checkRuns(const ByteBitmap &map, const std::vector<bool> &model, size_t from, size_t count) {
  std::vector<bool> fromRuns(model.size(), false), expected(model.size(), false);
  std::optional<size_t> lastEnd;
  bool separate = true;
  map.forEachRun(from, count, [&](size_t b, size_t e) {
    if (b >= e || (lastEnd && b <= *lastEnd))
      separate = false;
    lastEnd = e;
    for (size_t i = b; i < e; ++i)
      fromRuns[i] = true;
  });
  for (size_t i = from; i < from + count; ++i)
    expected[i] = model[i];
  CAPTURE(from);
  CAPTURE(count);
  CHECK(separate);
  CHECK(fromRuns == expected);
}
} // namespace

TEST_CASE("dirty runs over long set and clear stretches, from any offset, match a bool per byte") {
  // forEachRun passes over 512-byte stretches that are wholly set or wholly clear at once;
  // stretches broken by one byte, runs ending on and just past a stretch's edge, and walks
  // that start and end inside words must still give exactly the model's runs.
  const size_t bytes = 512 * 24 + 77;
  ByteBitmap map;
  map.resize(bytes);
  std::vector<bool> model(bytes, false);
  std::mt19937_64 rng(16);
  auto mark = [&](bool set, size_t offset, size_t count) {
    if (set)
      map.set(offset, count);
    else
      map.clear(offset, count);
    for (size_t i = offset; i < offset + count; ++i)
      model[i] = set;
  };
  mark(true, 512, 512 * 6);      // whole stretches
  mark(false, 512 * 3 + 200, 1); // one clear byte inside them
  mark(true, 512 * 9 - 1, 514);  // one byte either side of a stretch
  mark(true, 512 * 20, bytes - 512 * 20);
  for (int round = 0; round < 300; ++round) {
    if (round > 0) {
      size_t offset = rng() % bytes;
      size_t count = std::min<size_t>(bytes - offset, rng() % 3 ? rng() % 40 : rng() % 3000);
      mark(rng() % 2, offset, count);
    }
    size_t from = rng() % bytes;
    size_t count = rng() % (bytes - from + 1);
    CAPTURE(round);
    checkRuns(map, model, from, count);
  }
}

TEST_CASE("dirty runs over a sparse map step over untouched spans and find every set byte") {
  // forEachRun steps over 64 groups (32 KiB) at once where no set touched any of them: a
  // single byte at either end of such a span, in its middle, a group set and cleared again
  // (its words ready and zero), and a map ending in a partial span must all come out right.
  const size_t bytes = 32768 * 8 + 300;
  ByteBitmap map;
  map.resize(bytes);
  std::vector<bool> model(bytes, false);
  for (size_t at : {size_t(32768 * 2), size_t(32768 * 3 - 1), size_t(32768 * 5 + 512 * 7 + 3),
                    size_t(32768 * 8 + 299)}) {
    map.set(at, 1);
    model[at] = true;
  }
  map.set(32768 * 6 + 1024, 40);
  map.clear(32768 * 6 + 1024, 40);
  checkRuns(map, model, 0, bytes);
  checkRuns(map, model, 32768 * 2 + 1, bytes - 32768 * 2 - 1); // starting inside a span
  checkRuns(map, model, 100, 32768 * 3);                       // ending inside one
}

TEST_CASE("dirty runs over a map of 512-byte groups known full match a bool per byte") {
  // The bitmap remembers 512-byte groups that a set covered whole, and forEachRun steps over
  // them (64 at a time, 32 KiB) without reading their bits: a clear of one byte in such a
  // group must break the run there, a group filled by small sets must still join its
  // neighbours, and concurrent sets and merged maps must keep what the groups' map claims true.
  const size_t bytes = 32768 * 4 + 512 * 3 + 41;
  ByteBitmap map;
  map.resize(bytes);
  std::vector<bool> model(bytes, false);
  auto mark = [&](int how, size_t offset, size_t count) {
    if (how == 0)
      map.clear(offset, count);
    else if (how == 1)
      map.set(offset, count);
    else
      map.setConcurrent(offset, count);
    for (size_t i = offset; i < offset + count; ++i)
      model[i] = how != 0;
  };
  auto runsMatch = [&](size_t from, size_t count) { checkRuns(map, model, from, count); };
  mark(1, 0, 32768 * 3);  // 192 groups, three words of the groups' map, all full
  runsMatch(0, bytes);
  mark(0, 40000, 1);      // one byte cleared in a full group
  runsMatch(0, bytes);
  mark(1, 40000, 1);      // set again by a one-byte set: its group is not marked full
  runsMatch(0, bytes);
  mark(0, 32768 * 2, 512); // a whole group cleared on a word boundary of the groups' map
  runsMatch(0, bytes);
  for (size_t k = 0; k < 512; k += 64)
    mark(1, 32768 * 2 + k, 64); // refilled by eight small sets
  runsMatch(0, bytes);
  mark(2, 32768 * 3 + 100, 32768); // concurrent set, unaligned: inner groups full
  runsMatch(0, bytes);
  ByteBitmap other;
  other.resize(bytes);
  other.set(512 * 2, 512 * 70 + 9);
  map.orFrom(other, 0); // merged: set() again, groups included
  for (size_t i = 512 * 2; i < 512 * 72 + 9; ++i)
    model[i] = true;
  runsMatch(0, bytes);
  std::mt19937_64 rng(21);
  for (int round = 0; round < 200; ++round) {
    size_t offset = rng() % bytes;
    size_t count = std::min<size_t>(bytes - offset, rng() % 2 ? rng() % 600 : rng() % 70000);
    mark(int(rng() % 3), offset, count);
    size_t from = rng() % bytes;
    CAPTURE(round);
    runsMatch(from, rng() % (bytes - from + 1));
  }
  CHECK(map.count(0, bytes) == size_t(std::count(model.begin(), model.end(), true)));
}

TEST_CASE("streamed stores write exactly the bytes of plain ones, at every alignment") {
  // Destinations start at every offset of a 64-byte line, with lengths below, at and past a
  // line and its multiples: the partial lines at both ends are stored plainly, the rest
  // streamed. Guard bytes around each destination must stay as they were.
  std::vector<uint8_t> source(1100);
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = uint8_t(i * 37 + 11);
  const size_t lengths[] = {0, 1, 63, 64, 65, 127, 128, 129, 200, 1000};
  alignas(64) std::array<uint8_t, 64 + 1100 + 64> buffer;
  for (size_t offset = 0; offset < 64; ++offset)
    for (size_t length : lengths) {
      CAPTURE(offset);
      CAPTURE(length);
      buffer.fill(0xA5);
      streamingCopy(buffer.data() + 64 + offset, source.data(), length);
      fenceStreamingStores();
      for (size_t i = 0; i < buffer.size(); ++i) {
        size_t at = i - 64 - offset; // wraps for guard bytes before the destination
        uint8_t want = i >= 64 + offset && at < length ? source[at] : uint8_t(0xA5);
        if (buffer[i] != want) {
          CAPTURE(i);
          CHECK(int(buffer[i]) == int(want));
          break;
        }
      }
    }
}

TEST_CASE("copies into host memory large enough to stream land every byte and nothing around") {
  // Copies of 1 MiB and more bypass the caches (CallerMemory.cpp), with a head and a tail
  // around the 64-byte lines; every alignment of source and destination must give memcpy's
  // bytes, and the bytes just outside the destination must stay as they were.
  const size_t size = (size_t(4) << 20) + 100;
  std::vector<uint8_t> src(size + 64), dst(size + 256);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = uint8_t(i * 131 + 7);
  std::string error;
  for (size_t dstOffset : {0, 1, 13, 63, 64})
    for (size_t srcOffset : {0, 7})
      for (size_t length : {size_t(1) << 20, size_t(4) << 20, size, size - 37}) {
        CAPTURE(dstOffset);
        CAPTURE(srcOffset);
        CAPTURE(length);
        std::fill(dst.begin(), dst.end(), uint8_t(0xEE));
        REQUIRE(HostMemory::instance().write(reinterpret_cast<uint64_t>(dst.data() + dstOffset),
                                             src.data() + srcOffset, length, error));
        CHECK(std::equal(src.begin() + long(srcOffset), src.begin() + long(srcOffset + length),
                         dst.begin() + long(dstOffset)));
        CHECK(std::all_of(dst.begin(), dst.begin() + long(dstOffset),
                          [](uint8_t b) { return b == 0xEE; }));
        CHECK(std::all_of(dst.begin() + long(dstOffset + length), dst.end(),
                          [](uint8_t b) { return b == 0xEE; }));
      }
}

TEST_CASE("a write-back in runs of megabytes writes the stored runs and keeps the hole between") {
  // 9 MiB of int32: the first and last 4.5 MiB stored through the shadow, 64 elements in the
  // middle not: two runs long enough to stream, and a hole the caller changed meanwhile.
  const int64_t n = int64_t(9) << 18, holeLo = n / 2 - 32, holeHi = n / 2 + 32;
  std::vector<int32_t> buf(size_t(n), -1);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({arg("a", buf, 0, n)}, m, error));
  for (int64_t i = 0; i < n; ++i)
    if (i < holeLo || i >= holeHi)
      store(m, 0, i, int32_t(i));
  for (int64_t i = holeLo; i < holeHi; ++i)
    buf[size_t(i)] = 42;
  REQUIRE(session.step(error));
  bool allRight = true;
  for (int64_t i = 0; i < n; ++i)
    allRight &= buf[size_t(i)] == (i >= holeLo && i < holeHi ? 42 : int32_t(i));
  CHECK(allRight);
}

TEST_CASE("a large copy into pages never touched (a fresh allocation) lands every byte and keeps "
          "the rest of its first and last pages") {
  // The pages under a large copy that are not in memory yet are faulted in first, whole pages
  // at once (CallerMemory.cpp): the copy's bytes must land, and the bytes that share its first
  // and last pages must keep their values.
  const size_t mapped = size_t(3) << 20, offset = 100, length = (size_t(2) << 20) + 7;
  void *fresh = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(fresh != MAP_FAILED);
  auto *bytes = static_cast<uint8_t *>(fresh);
  const size_t end = offset + length, lastPage = end & ~size_t(4095);
  std::fill(bytes, bytes + offset, uint8_t(0x5A));                // the first page is in memory now
  std::fill(bytes + end, bytes + lastPage + 4096, uint8_t(0xA5)); // and the last
  std::vector<uint8_t> src(length);
  for (size_t i = 0; i < length; ++i)
    src[i] = uint8_t(i * 37 + 1);
  std::string error;
  REQUIRE(HostMemory::instance().write(reinterpret_cast<uint64_t>(bytes + offset), src.data(),
                                       length, error));
  CHECK(std::equal(src.begin(), src.end(), bytes + offset));
  CHECK(std::all_of(bytes, bytes + offset, [](uint8_t b) { return b == 0x5A; }));
  CHECK(std::all_of(bytes + end, bytes + lastPage + 4096, [](uint8_t b) { return b == 0xA5; }));
  CHECK(std::all_of(bytes + lastPage + 4096, bytes + mapped, [](uint8_t b) { return b == 0; }));
  munmap(fresh, mapped);
}

TEST_CASE("a worker's stores marked dirty through pending runs all go back, "
          "and nothing else") {
  // Concurrent workers mark their stores through DirtyRuns: runs per region
  // that grow while the stores stay contiguous. Five regions (one more than the
  // runs kept at once), stores that continue, overlap, skip ahead and go back,
  // and stretches longer than a run is kept; the expected bytes are a
  // per-element model of which stores happened.
  constexpr int kRegions = 5;
  constexpr int64_t kElements = 32768; // 128 KiB each: most bytes written once or never
  std::vector<std::vector<int32_t>> buffers(kRegions, std::vector<int32_t>(kElements, 0));
  std::vector<PointerArgument> args;
  const char *names[kRegions] = {"a", "b", "c", "d", "e"};
  for (int r = 0; r < kRegions; ++r)
    args.push_back(arg(names[r], buffers[r], 0, kElements));
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare(args, m, error));
  REQUIRE(m.regions().size() == size_t(kRegions));
  std::vector<std::vector<int32_t>> expected(kRegions, std::vector<int32_t>(kElements, -7));
  constexpr int64_t kRandomEnd = kElements - 256; // the random stores stay below
  std::mt19937 random(5);
  std::vector<int64_t> next(kRegions, 0);
  m.setConcurrent(true);
  {
    DirtyRuns pending;
    for (int32_t step = 1; step <= 600; ++step) {
      const int r = int(random() % kRegions);
      const int64_t length = 1 + int64_t(random() % 200);
      int64_t first;
      const unsigned how = unsigned(random() % 20);
      if (how < 10)
        first = next[r]; // continues: runs grow past the length a run is kept to
      else if (how < 13)
        first = std::max<int64_t>(0, next[r] - length / 2); // overlaps
      else if (how < 17)
        first = int64_t(random() % kRandomEnd); // anywhere
      else
        first = std::max<int64_t>(0, next[r] - 2 * length - 1); // goes back, leaving a gap
      first = std::min(first, kRandomEnd - length);
      uint8_t *host = m.translateForWrite(tagged::advance(m.argumentPointer(size_t(r)), first * 4),
                                          uint32_t(length * 4), pending);
      REQUIRE(host);
      for (int64_t k = 0; k < length; ++k) {
        const int32_t v = 1000000 + step;
        std::memcpy(host + k * 4, &v, 4);
        expected[size_t(r)][size_t(first + k)] = v;
      }
      next[r] = first + length;
    }
    // Beyond the random stores: one-element gaps between runs that touch nothing else.
    auto storeRun = [&](int r, int64_t first, int64_t length) {
      uint8_t *host = m.translateForWrite(tagged::advance(m.argumentPointer(size_t(r)), first * 4),
                                          uint32_t(length * 4), pending);
      REQUIRE(host);
      for (int64_t k = 0; k < length; ++k) {
        const int32_t v = 2000000 + int32_t(first + k);
        std::memcpy(host + k * 4, &v, 4);
        expected[size_t(r)][size_t(first + k)] = v;
      }
    };
    storeRun(0, kRandomEnd, 10);      // [end, end + 10)
    storeRun(0, kRandomEnd + 11, 9);  // skips end + 10
    storeRun(1, kRandomEnd, 1);       // another region between
    storeRun(0, kRandomEnd + 30, 10); // skips end + 20 .. end + 29
    storeRun(0, kRandomEnd + 21, 8);  // goes back: end + 20 and end + 29 stay unwritten
    pending.flush();
  }
  m.setConcurrent(false);
  for (auto &b : buffers) // the caller's own later writes, which unwritten bytes keep
    std::fill(b.begin(), b.end(), -7);
  REQUIRE(session.step(error));
  for (int r = 0; r < kRegions; ++r) {
    CAPTURE(r);
    CHECK(buffers[size_t(r)] == expected[size_t(r)]);
  }
}
