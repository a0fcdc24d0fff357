//===- PageExchangeTest.cpp - Final write-backs by moving whole pages -----===//
#include "ttinterp/memory/PageExchange.h"
#include "ttinterp/memory/Session.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

using namespace ttinterp;

namespace {

constexpr size_t kPage = 4096, kMiB = size_t(1) << 20;

/// Whether this kernel can exchange the test's ranges: mremap's MREMAP_DONTUNMAP (5.7) and, for
/// ranges under 16 MiB, PROCMAP_QUERY (6.11) to check them cheaply. Elsewhere write-backs copy
/// and the tests check only the values.
bool exchangesHere() {
  utsname u;
  int major = 0, minor = 0;
  return uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
         (major > 6 || (major == 6 && minor >= 11));
}

/// A buffer in a private anonymous mapping of its own, in memory and filled with 7s, starting
/// 100 bytes into its first page and ending 7 bytes into its last: so its whole pages are
/// [4 KiB, kLength + 100 rounded down to a page) of the mapping, and the bytes before and after
/// it in its end pages are someone else's (filled with 0x5A and 0xA5).
struct Buffer {
  static constexpr size_t kOffset = 100;
  size_t length, mapped;
  uint8_t *base = nullptr;
  explicit Buffer(size_t length, int flags = MAP_PRIVATE | MAP_ANONYMOUS, int fd = -1)
      : length(length), mapped((kOffset + length + kPage - 1) / kPage * kPage + kPage) {
    void *m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, flags, fd, 0);
    REQUIRE(m != MAP_FAILED);
    base = static_cast<uint8_t *>(m);
    std::memset(base, 0x5A, kOffset);
    std::memset(data(), 7, length);
    std::memset(data() + length, 0xA5, mapped - kOffset - length);
  }
  ~Buffer() { munmap(base, mapped); }
  uint8_t *data() const { return base + kOffset; }
  uint64_t address() const { return reinterpret_cast<uint64_t>(data()); }
  ByteRange range() const { return {address(), address() + length}; }
  bool surroundingsKept() const {
    return std::all_of(base, data(), [](uint8_t b) { return b == 0x5A; }) &&
           std::all_of(data() + length, base + mapped, [](uint8_t b) { return b == 0xA5; });
  }
};

uint8_t pattern(size_t i) { return uint8_t(i * 37 + 1); }
uint8_t otherPattern(size_t i) { return uint8_t(i * 11 + 3); }

/// Whether bytes [lo, hi) of `b` hold fn(i).
template <class Fn> bool holds(const Buffer &b, size_t lo, size_t hi, Fn fn) {
  for (size_t i = lo; i < hi; ++i)
    if (b.data()[i] != fn(i))
      return false;
  return true;
}

PointerArgument argument(const char *name, const Buffer &b, bool exchange,
                         Access access = Access::Write) {
  PointerArgument a;
  a.name = name;
  a.buffer = name;
  a.view = View{b.address(), DType::I8, {int64_t(b.length)}, {1}};
  a.access = access;
  a.exchangePages = exchange;
  return a;
}

/// Stores fn(i) into bytes [lo, hi) of argument `argument` through the launch's memory.
template <class Fn> void store(const LaunchMemory &m, size_t argument, size_t lo, size_t hi, Fn fn) {
  uint8_t *host = m.translateForWrite(tagged::advance(m.argumentPointer(argument), int64_t(lo)),
                                      uint32_t(hi - lo));
  REQUIRE(host != nullptr);
  for (size_t i = lo; i < hi; ++i)
    host[i - lo] = fn(i);
}

/// Runs one launch that writes fn over all of `b` through one argument, then steps.
template <class Fn> TransferStats writeAllAndStep(const Buffer &b, bool exchange, Fn fn) {
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({argument("out", b, exchange)}, m, error));
  store(m, 0, 0, b.length, fn);
  REQUIRE(session.step(error));
  return session.stats();
}

} // namespace

TEST_CASE("exchanging pages gives the caller's range the shadow's bytes") {
  const size_t size = 4 * kMiB;
  Buffer caller(size + kPage), shadow(size + kPage);
  uint8_t *callerPages = caller.base + kPage, *shadowPages = shadow.base + kPage;
  std::memset(shadowPages, 42, size);
  SUBCASE("whole pages") {
    bool moved = exchangePages(reinterpret_cast<uint64_t>(callerPages), shadowPages, size);
    CHECK(moved == exchangesHere());
    if (moved)
      CHECK(std::all_of(callerPages, callerPages + size, [](uint8_t b) { return b == 42; }));
    // The pages around the range are untouched either way.
    CHECK(std::all_of(caller.data(), callerPages, [](uint8_t b) { return b == 7; }));
    CHECK(std::all_of(callerPages + size, caller.data() + caller.length,
                      [](uint8_t b) { return b == 7; }));
  }
  SUBCASE("nothing changes for ranges it cannot take") {
    uint64_t at = reinterpret_cast<uint64_t>(callerPages);
    CHECK_FALSE(exchangePages(at + 64, shadowPages + 64, size));           // not page-aligned
    CHECK_FALSE(exchangePages(at, shadowPages + 64, size));                // not in step
    CHECK_FALSE(exchangePages(at, shadowPages, kPageExchangeMinimum - kPage)); // too small
    CHECK(std::all_of(callerPages, callerPages + size, [](uint8_t b) { return b == 7; }));
  }
}

TEST_CASE("a step writes whole written pages back by exchanging them, and the rest by copying") {
  SUBCASE("every byte written") {
    Buffer out(5 * kMiB + 7);
    TransferStats stats = writeAllAndStep(out, true, pattern);
    CHECK(holds(out, 0, out.length, pattern));
    CHECK(out.surroundingsKept());
    CHECK(stats.bytesOut == out.length);
    // Whole pages of the buffer: from the mapping's second page to the one its last byte is in.
    CHECK(stats.bytesExchanged == (exchangesHere() ? 5 * kMiB - kPage : 0));
  }
  SUBCASE("a byte in the middle not written keeps its value, and its page is copied") {
    Buffer out(11 * kMiB + 7);
    const size_t hole = 5 * kMiB + 5; // the buffer's byte 5 MiB + 5 is the mapping's 5 MiB + 105
    Session session;
    LaunchMemory m;
    std::string error;
    REQUIRE(session.prepare({argument("out", out, true)}, m, error));
    store(m, 0, 0, hole, pattern);
    store(m, 0, hole + 1, out.length, pattern);
    REQUIRE(session.step(error));
    CHECK(holds(out, 0, hole, pattern));
    CHECK(out.data()[hole] == 7);
    CHECK(holds(out, hole + 1, out.length, pattern));
    CHECK(out.surroundingsKept());
    CHECK(session.stats().bytesOut == out.length - 1);
    // Pages [4 KiB, 5 MiB) before the hole's page, [5 MiB + 4 KiB, 11 MiB) after it.
    CHECK(session.stats().bytesExchanged == (exchangesHere() ? 11 * kMiB - 2 * kPage : 0));
  }
}

TEST_CASE("a partial sync copies: the shadow it keeps must go on holding the launch's bytes") {
  Buffer out(5 * kMiB);
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({argument("out", out, true)}, m, error));
  store(m, 0, 0, out.length, pattern);
  REQUIRE(session.sync(HostMemory::instance(), {out.range()}, error));
  CHECK(holds(out, 0, out.length, pattern));
  CHECK(session.stats().bytesExchanged == 0);
  // The next launch reads the live shadow: had the sync exchanged pages, it would now hold the
  // 7s the caller's pages held before.
  REQUIRE(session.prepare({argument("out", out, true, Access::ReadWrite)}, m, error));
  const uint8_t *read = m.translateForRead(m.argumentPointer(0), uint32_t(out.length));
  REQUIRE(read != nullptr);
  CHECK(std::equal(read, read + out.length, out.data()));
  store(m, 0, 0, out.length, otherPattern);
  REQUIRE(session.step(error));
  CHECK(holds(out, 0, out.length, otherPattern));
  CHECK(out.surroundingsKept());
}

TEST_CASE("memory shared with others, or mapped from a file, is written back by copying") {
  int fd = memfd_create("ttinterp-page-exchange-test", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  const size_t length = 5 * kMiB;
  REQUIRE(ftruncate(fd, off_t(Buffer::kOffset + length + 2 * kPage)) == 0);
  SUBCASE("a shared mapping: another mapping of the same memory sees the writes") {
    Buffer out(length, MAP_SHARED, fd);
    void *second = mmap(nullptr, out.mapped, PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(second != MAP_FAILED);
    TransferStats stats = writeAllAndStep(out, true, pattern);
    const uint8_t *seen = static_cast<const uint8_t *>(second) + Buffer::kOffset;
    bool all = true;
    for (size_t i = 0; i < length; ++i)
      all = all && seen[i] == pattern(i);
    CHECK(all);
    CHECK(stats.bytesExchanged == 0);
    munmap(second, out.mapped);
  }
  SUBCASE("a private mapping of a file") {
    Buffer out(length, MAP_PRIVATE, fd);
    TransferStats stats = writeAllAndStep(out, true, pattern);
    CHECK(holds(out, 0, length, pattern));
    CHECK(stats.bytesExchanged == 0);
  }
  close(fd);
}

TEST_CASE("memory whose caller does not let its pages move is written back by copying") {
  Buffer out(5 * kMiB);
  SUBCASE("one argument") {
    TransferStats stats = writeAllAndStep(out, false, pattern);
    CHECK(holds(out, 0, out.length, pattern));
    CHECK(stats.bytesExchanged == 0);
  }
  SUBCASE("two aliases of one buffer, only one of which lets it") {
    Session session;
    LaunchMemory m;
    std::string error;
    REQUIRE(session.prepare({argument("a", out, true), argument("b", out, false)}, m, error));
    store(m, 0, 0, out.length / 2, pattern);
    store(m, 1, out.length / 2, out.length, pattern);
    REQUIRE(session.step(error));
    CHECK(holds(out, 0, out.length, pattern));
    CHECK(session.stats().bytesExchanged == 0);
  }
}

TEST_CASE("exchanges stop when their budget of new mappings is spent; a loop into one buffer "
          "spends none") {
  Buffer out(5 * kMiB + 7);
  uint64_t saved = setPageExchangeBudget(0);
  TransferStats stats = writeAllAndStep(out, true, pattern);
  CHECK(holds(out, 0, out.length, pattern));
  CHECK(stats.bytesExchanged == 0); // its pages lie inside a larger mapping: it would split it

  setPageExchangeBudget(100);
  for (int round = 0; round < 6; ++round) {
    auto fn = [round](size_t i) { return uint8_t(i * 13 + size_t(round)); };
    stats = writeAllAndStep(out, true, fn);
    CHECK(holds(out, 0, out.length, fn));
    CHECK(stats.bytesExchanged == (exchangesHere() ? 5 * kMiB - kPage : 0));
  }
  // The first exchange splits the buffer's mapping and the shadow block's at both ends of the
  // range (four boundaries), and so may the first use of each other pooled block; the rest move
  // pages between ranges that are mappings already, and when the caller's own pages come home
  // their splits merge away. Six launches charged four each would leave 76.
  CHECK(setPageExchangeBudget(saved) >= 88);
  CHECK(out.surroundingsKept());
}
