//===- SessionTest.cpp - Regions, shadows, translation and write-back -----===//
#include "ttinterp/memory/Session.h"

#include <doctest/doctest.h>

#include <cstring>
#include <numeric>

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

TEST_CASE("only written bytes go back: bytes the kernel never wrote keep the caller's later values") {
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
