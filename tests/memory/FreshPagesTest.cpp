//===- FreshPagesTest.cpp - Writing fresh host pages in place, and rolling them back -===//
#include "ttinterp/memory/FreshPages.h"
#include "ttinterp/memory/Session.h"
#include "ttinterp/memory/StreamingStores.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace ttinterp;

namespace {

constexpr size_t kPage = 4096;

/// A mapping of its own, as a fresh torch.empty of this size gets from glibc. The buffer
/// starts 100 bytes into its first page and ends 7 bytes into a page, so both of its end pages
/// are shared with bytes that are not its own; those are filled (and so in memory) and must
/// keep their values. The mapping starts on a 2 MiB boundary, so the buffer holds one whole
/// huge page ([2 MiB, 4 MiB)) wherever the system maps it.
struct FreshBuffer {
  static constexpr size_t kMapped = size_t(8) << 20, kOffset = 100, kLength = (size_t(5) << 20) + 7;
  static constexpr size_t kHuge = size_t(2) << 20;
  uint8_t *mapping = nullptr, *base = nullptr;
  explicit FreshBuffer(int sharing = MAP_PRIVATE) {
    void *m =
        mmap(nullptr, kMapped + kHuge, PROT_READ | PROT_WRITE, sharing | MAP_ANONYMOUS, -1, 0);
    REQUIRE(m != MAP_FAILED);
    mapping = static_cast<uint8_t *>(m);
    base = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(m) + kHuge - 1) & ~(kHuge - 1));
    std::fill(base, data(), uint8_t(0x5A));
    std::fill(data() + kLength, base + lastPageEnd(), uint8_t(0xA5));
  }
  ~FreshBuffer() { munmap(mapping, kMapped + kHuge); }
  uint8_t *data() const { return base + kOffset; }
  size_t lastPageEnd() const { return (kOffset + kLength + kPage - 1) & ~(kPage - 1); }
  uint64_t address() const { return reinterpret_cast<uint64_t>(data()); }
  /// Whether the bytes around the buffer kept the values the constructor gave them.
  bool surroundingsKept() const {
    return std::all_of(base, data(), [](uint8_t b) { return b == 0x5A; }) &&
           std::all_of(data() + kLength, base + lastPageEnd(), [](uint8_t b) { return b == 0xA5; });
  }
  /// Whether the buffer's bytes in [lo, hi) all equal `pattern(i)`.
  template <class Fn> bool holds(size_t lo, size_t hi, Fn pattern) const {
    for (size_t i = lo; i < hi; ++i)
      if (data()[i] != pattern(i))
        return false;
    return true;
  }
};

uint8_t pattern(size_t i) { return uint8_t(i * 37 + 1); }
uint8_t zero(size_t) { return 0; }

PointerArgument bytesArgument(const char *name, uint64_t address, size_t length,
                              Access access = Access::Write) {
  PointerArgument a;
  a.name = name;
  a.buffer = name;
  a.view = View{address, DType::I8, {int64_t(length)}, {1}};
  a.access = access;
  return a;
}

/// Stores pattern(i) into bytes [lo, hi) of argument `argument` through the launch's memory.
void storePattern(const LaunchMemory &m, size_t argument, size_t lo, size_t hi) {
  uint8_t *host = m.translateForWrite(tagged::advance(m.argumentPointer(argument), int64_t(lo)),
                                      uint32_t(hi - lo));
  REQUIRE(host != nullptr);
  for (size_t i = lo; i < hi; ++i)
    host[i - lo] = pattern(i);
}

/// The VmFlags line of /proc/self/smaps for the mapping holding `p` ("" if none).
std::string mappingFlags(const void *p) {
  FILE *smaps = std::fopen("/proc/self/smaps", "r");
  if (!smaps)
    return "";
  char line[512];
  bool inside = false;
  std::string flags;
  const auto at = reinterpret_cast<uintptr_t>(p);
  while (std::fgets(line, sizeof line, smaps)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line, "%llx-%llx ", &lo, &hi) == 2 &&
        std::strchr(line, '-') < std::strchr(line, ' '))
      inside = at >= lo && at < hi;
    else if (inside && std::strncmp(line, "VmFlags:", 8) == 0)
      flags = line;
  }
  std::fclose(smaps);
  return flags;
}

/// The state of a written region on fresh pages: FreshPages wherever the process may read its
/// page map (Linux); where it may not (some sandboxes), no page is known to be fresh and the region
/// keeps a shadow. The values the tests check hold either way.
ShadowState freshState() {
  static const bool pagemap = access("/proc/self/pagemap", R_OK) == 0;
  return pagemap ? ShadowState::FreshPages : ShadowState::WrittenOnly;
}
bool inPlace() { return freshState() == ShadowState::FreshPages; }

bool resident(const void *p) {
  unsigned char in = 0;
  uintptr_t page = reinterpret_cast<uintptr_t>(p) & ~uintptr_t(kPage - 1);
  return mincore(reinterpret_cast<void *>(page), kPage, &in) == 0 && (in & 1);
}

} // namespace

TEST_CASE("a written argument on fresh pages is written where it is, and a step keeps it") {
  FreshBuffer out;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({bytesArgument("out", out.address(), out.kLength)}, m, error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == freshState());
  // No shadow: the launch's pointer translates to the caller's own byte.
  CHECK((m.translate(m.argumentPointer(0), 1) == out.data()) == inPlace());
  // Huge pages were asked for only while the pages were faulted in: the caller's mapping is
  // left not asking for them ("hg"), so it faults later as it did before.
  std::string flags = mappingFlags(out.base + (size_t(3) << 20));
  CHECK(flags.find("VmFlags:") == 0);
  CHECK(flags.find(" hg") == std::string::npos);
  storePattern(m, 0, 0, out.kLength);
  REQUIRE(session.step(error));
  CHECK(out.holds(0, out.kLength, pattern));
  CHECK(out.surroundingsKept());
  CHECK(session.stats().bytesOut == out.kLength); // counted as written back, copied never
}

TEST_CASE("a large output on fresh pages takes streaming stores, and a fault still drops them") {
  // 9 MiB, over kStreamStoresMinimum: written in place, its stores are where the caller will
  // find them, so long ones stream (as MemoryOps.cpp's do: a streamed copy, fenced before the
  // launch ends). Read as well, the same pages are written in place but not streamed into.
  // Each launch gets pages of its own: reading them (the checks) makes them not fresh.
  const size_t length = (size_t(9) << 20) + 100, spacing = size_t(12) << 20;
  void *m = mmap(nullptr, 4 * spacing, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  auto bufferAt = [&](int k) { return static_cast<uint8_t *>(m) + k * spacing + 64; };
  std::vector<uint8_t> source(length);
  for (size_t i = 0; i < length; ++i)
    source[i] = pattern(i);
  /// A launch writing `out` (streamed, when in place) and reading and writing `io`.
  auto launchAndStore = [&](Session &session, LaunchMemory &launch, uint8_t *out, uint8_t *io) {
    std::string error;
    REQUIRE(session.prepare({bytesArgument("out", reinterpret_cast<uint64_t>(out), length),
                             bytesArgument("io", reinterpret_cast<uint64_t>(io), length,
                                           Access::ReadWrite)},
                            launch, error));
    REQUIRE(session.regions().size() == 2);
    CHECK(session.regions()[0]->state() == freshState());
    CHECK(session.regions()[1]->state() == (inPlace() ? ShadowState::FreshPages : ShadowState::Full));
    CHECK(launch.streamsStores(launch.argumentPointer(0)) == inPlace());
    CHECK_FALSE(launch.streamsStores(launch.argumentPointer(1)));
    uint8_t *host = launch.translateForWrite(launch.argumentPointer(0), uint32_t(length));
    REQUIRE(host != nullptr);
    streamingCopy(host, source.data(), length);
    fenceStreamingStores();
  };
  std::string error;
  {
    Session session;
    LaunchMemory launch;
    launchAndStore(session, launch, bufferAt(0), bufferAt(1));
    session.abandon();
    CHECK(std::all_of(bufferAt(0), bufferAt(0) + length, [](uint8_t b) { return b == 0; }));
  }
  {
    Session session;
    LaunchMemory launch;
    launchAndStore(session, launch, bufferAt(2), bufferAt(3));
    REQUIRE(session.step(error));
    CHECK(std::equal(bufferAt(2), bufferAt(2) + length, source.begin()));
  }
  munmap(m, 4 * spacing);
}

TEST_CASE("a fault after fresh pages were written in place puts every byte back") {
  FreshBuffer out, other;
  std::string error;
  {
    Session session;
    LaunchMemory m;
    REQUIRE(session.prepare({bytesArgument("out", out.address(), out.kLength)}, m, error));
    REQUIRE(session.regions()[0]->state() == freshState());
    storePattern(m, 0, 0, out.kLength);
    CHECK(resident(out.data() + out.kLength / 2) == inPlace());
    session.abandon();
    // The pages are handed back, not zeroed by hand: the memory is returned too.
    CHECK_FALSE(resident(out.data() + out.kLength / 2));
    CHECK(out.holds(0, out.kLength, zero));
    CHECK(out.surroundingsKept());

    // A session destroyed before its step drops its writes the same way.
    REQUIRE(session.prepare({bytesArgument("other", other.address(), other.kLength)}, m, error));
    REQUIRE(session.regions()[0]->state() == freshState());
    storePattern(m, 0, 0, other.kLength);
  }
  CHECK(other.holds(0, other.kLength, zero));
  CHECK(other.surroundingsKept());
}

TEST_CASE("pages that are in memory, or were read, or are shared, get a shadow as before") {
  std::string error;
  SUBCASE("written pages") {
    FreshBuffer out;
    std::fill(out.data(), out.data() + out.kLength, uint8_t(7));
    Session session;
    LaunchMemory m;
    REQUIRE(session.prepare({bytesArgument("out", out.address(), out.kLength)}, m, error));
    CHECK(session.regions()[0]->state() == ShadowState::WrittenOnly);
    storePattern(m, 0, 0, out.kLength);
    CHECK(out.holds(0, out.kLength, [](size_t) { return uint8_t(7); })); // until the step
    REQUIRE(session.step(error));
    CHECK(out.holds(0, out.kLength, pattern));
  }
  SUBCASE("a page that was only read") {
    FreshBuffer out;
    volatile uint8_t read = out.data()[out.kLength / 2]; // maps the shared zero page
    (void)read;
    CHECK_FALSE(claimFreshPages({out.address(), out.address() + out.kLength}));
  }
  SUBCASE("shared memory, where discarding would not undo a write") {
    FreshBuffer out(MAP_SHARED);
    Session session;
    LaunchMemory m;
    REQUIRE(session.prepare({bytesArgument("out", out.address(), out.kLength)}, m, error));
    CHECK(session.regions()[0]->state() == ShadowState::WrittenOnly);
    storePattern(m, 0, 0, out.kLength);
    session.abandon();
    CHECK(out.holds(0, out.kLength, zero));
  }
  SUBCASE("a region under the size where the checks pay") {
    FreshBuffer out;
    size_t small = size_t(kFreshPagesMinimum) - 1;
    CHECK_FALSE(claimFreshPages({out.address(), out.address() + small}));
  }
}

TEST_CASE("a partial sync of a region written in place keeps the synced bytes through a fault") {
  // Synced bytes are final (the caller may have read them), so a later fault must not take them
  // back, while the region's other writes are still dropped by it.
  FreshBuffer out;
  const size_t half = out.kLength / 2;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({bytesArgument("out", out.address(), out.kLength)}, m, error));
  REQUIRE(session.regions()[0]->state() == freshState());
  storePattern(m, 0, 0, out.kLength);
  REQUIRE(session.sync(HostMemory::instance(), {{out.address(), out.address() + half}}, error));
  CHECK(out.holds(0, half, pattern));
  CHECK(out.holds(half, out.kLength, zero)); // still pending, as with a shadow
  CHECK(session.pendingBytes(HostMemory::instance(),
                             {out.address(), out.address() + out.kLength}) == out.kLength - half);
  session.abandon();
  CHECK(out.holds(0, half, pattern));
  CHECK(out.holds(half, out.kLength, zero));
  CHECK(out.surroundingsKept());
}

TEST_CASE("a donated buffer written in place gets its old bytes back at the step") {
  FreshBuffer out, scratch;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({bytesArgument("out", out.address(), out.kLength),
                           bytesArgument("scratch", scratch.address(), scratch.kLength)},
                          m, error));
  REQUIRE(session.regions().size() == 2);
  CHECK(session.regions()[0]->state() == freshState());
  CHECK(session.regions()[1]->state() == freshState());
  storePattern(m, 0, 0, out.kLength);
  storePattern(m, 1, 0, scratch.kLength);
  session.donate({&HostMemory::instance(),
                  {scratch.address(), scratch.address() + scratch.kLength},
                  "scratch",
                  "launch 0"});
  REQUIRE(session.step(error));
  CHECK(out.holds(0, out.kLength, pattern));
  CHECK(scratch.holds(0, scratch.kLength, zero));
  CHECK(scratch.surroundingsKept());
}

TEST_CASE("a later launch merging a region written in place into a larger one keeps its writes "
          "in the shadow, not in the caller's memory") {
  FreshBuffer buffer;
  const size_t a = size_t(2) << 20, bLo = size_t(1) << 20;
  Session session;
  LaunchMemory m;
  std::string error;
  REQUIRE(session.prepare({bytesArgument("a", buffer.address(), a)}, m, error));
  REQUIRE(session.regions()[0]->state() == freshState());
  storePattern(m, 0, 0, a);
  // b overlaps a's second half and goes on past it: one region, with a shadow.
  REQUIRE(session.prepare(
      {bytesArgument("b", buffer.address() + bLo, buffer.kLength - bLo, Access::ReadWrite)}, m,
      error));
  REQUIRE(session.regions().size() == 1);
  CHECK(session.regions()[0]->state() == ShadowState::Full);
  CHECK(buffer.holds(0, buffer.kLength, zero)); // a's writes moved out of the caller's memory
  const uint8_t *seen = m.translate(m.argumentPointer(0), uint32_t(a - bLo));
  REQUIRE(seen != nullptr);
  bool launch0Seen = true;
  for (size_t i = bLo; i < a; ++i)
    launch0Seen &= seen[i - bLo] == pattern(i);
  CHECK(launch0Seen);
  REQUIRE(session.step(error));
  CHECK(buffer.holds(0, a, pattern));
  CHECK(buffer.holds(a, buffer.kLength, zero));
  CHECK(buffer.surroundingsKept());
}
