//===- FreshPages.cpp - Finding, claiming and rolling back fresh host pages -===//
#include "ttinterp/memory/FreshPages.h"

#include "HostPages.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace ttinterp {

#if defined(__linux__)
namespace {

/// Closes a file descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      close(fd);
  }
};

/// Whether every page in [lo, hi) (page-aligned) is neither in memory nor in swap. A page the
/// process has read is mapped (to the shared zero page) and so does not count: only pages
/// nothing has touched are known to read as zeros without looking.
bool untouched(uint64_t lo, uint64_t hi) {
  Fd f{open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0)
    return false;
  constexpr uint64_t kPresent = uint64_t(1) << 63, kSwapped = uint64_t(1) << 62;
  uint64_t entries[512];
  for (uint64_t page = lo / hostPageSize(), end = hi / hostPageSize(); page < end;) {
    size_t n = size_t(std::min<uint64_t>(end - page, 512));
    ssize_t got = pread(f.fd, entries, n * sizeof(uint64_t), off_t(page * sizeof(uint64_t)));
    if (got != ssize_t(n * sizeof(uint64_t)))
      return false;
    for (size_t i = 0; i < n; ++i)
      if (entries[i] & (kPresent | kSwapped))
        return false;
    page += n;
  }
  return true;
}

/// Whether [lo, hi) lies in private anonymous mappings (/proc/self/maps), writable: where an
/// untouched page reads as zeros and MADV_DONTNEED makes it read as zeros again. Shared memory
/// would keep what was written; a file mapping holds the file's bytes.
bool privateAnonymous(uint64_t lo, uint64_t hi) {
  Fd f{open("/proc/self/maps", O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0)
    return false;
  std::string maps;
  char chunk[16384];
  for (ssize_t got; (got = read(f.fd, chunk, sizeof chunk)) > 0;)
    maps.append(chunk, size_t(got));
  uint64_t covered = lo;
  for (size_t at = 0; at < maps.size() && covered < hi;) {
    size_t end = maps.find('\n', at);
    if (end == std::string::npos)
      end = maps.size();
    std::string line = maps.substr(at, end - at);
    at = end + 1;
    unsigned long long start = 0, stop = 0, offset = 0, inode = 0;
    unsigned major = 0, minor = 0;
    char perms[5] = {};
    int pathAt = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %llx %x:%x %llu %n", &start, &stop, perms, &offset,
                    &major, &minor, &inode, &pathAt) < 7)
      return false;
    if (stop <= covered)
      continue;
    if (start > covered)
      return false; // a hole: unmapped bytes
    std::string path = line.substr(size_t(pathAt));
    bool anonymous = inode == 0 && major == 0 && minor == 0 &&
                     (path.empty() || path == "[heap]" || path.rfind("[anon:", 0) == 0);
    if (!anonymous || perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p')
      return false;
    covered = stop;
  }
  return covered >= hi;
}

/// Whether transparent huge pages are given only where asked for (the usual setting): then a
/// claimed range asks for them while it is faulted in. Under "always" it gets them anyway, under
/// "never" asking does nothing.
bool hugePagesOnRequest() {
  static const bool onRequest = [] {
    Fd f{open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC)};
    char text[128] = {};
    return f.fd >= 0 && read(f.fd, text, sizeof text - 1) > 0 &&
           std::strstr(text, "[madvise]") != nullptr;
  }();
  return onRequest;
}

/// Faults in [lo, hi) (page-aligned) for writing in one call (populateForWrite), rather than one
/// trap per page under the kernel's stores. Where huge pages come only on request, the 2 MiB pages
/// inside the range ask for them for the call and then say no to them again: a fresh 64 MiB output
/// faults in 512 times faster per page (3 ms here, 19 ms in 4 KiB pages), and afterwards the
/// range gets no huge pages when it faults again, as before (the flag left is "no", which on
/// request is what no flag means).
void populateClaimed(uint64_t lo, uint64_t hi) {
#ifdef MADV_HUGEPAGE
  constexpr uint64_t kHuge = uint64_t(2) << 20;
  uint64_t hugeLo = (lo + kHuge - 1) & ~(kHuge - 1), hugeHi = hi & ~(kHuge - 1);
  bool huge = hugeLo < hugeHi && hugePagesOnRequest() &&
              madvise(reinterpret_cast<void *>(hugeLo), hugeHi - hugeLo, MADV_HUGEPAGE) == 0;
  // Advice only: pages it does not populate fault in when written.
  populateForWrite(reinterpret_cast<void *>(lo), hi - lo);
  if (huge)
    madvise(reinterpret_cast<void *>(hugeLo), hugeHi - hugeLo, MADV_NOHUGEPAGE);
#else
  populateForWrite(reinterpret_cast<void *>(lo), hi - lo);
#endif
}

} // namespace

std::optional<FreshUndo> claimFreshPages(ByteRange range) {
  if (range.hi < range.lo || range.hi - range.lo < kFreshPagesMinimum)
    return std::nullopt;
  const uint64_t page = hostPageSize();
  FreshUndo undo;
  undo.pagesLo = (range.lo + page - 1) & ~(page - 1);
  undo.pagesHi = range.hi & ~(page - 1);
  if (undo.pagesLo >= undo.pagesHi || !untouched(undo.pagesLo, undo.pagesHi) ||
      !privateAnonymous(undo.pagesLo, undo.pagesHi))
    return std::nullopt;
  auto *bytes = reinterpret_cast<const uint8_t *>(static_cast<uintptr_t>(range.lo));
  undo.headAt = range.lo;
  undo.head.assign(bytes, bytes + (undo.pagesLo - range.lo));
  undo.tailAt = undo.pagesHi;
  undo.tail.assign(bytes + (undo.pagesHi - range.lo), bytes + (range.hi - range.lo));
  populateClaimed(undo.pagesLo, undo.pagesHi);
  return undo;
}

void rollBackFreshPages(const FreshUndo &undo) {
  void *pages = reinterpret_cast<void *>(static_cast<uintptr_t>(undo.pagesLo));
  size_t bytes = undo.pagesHi - undo.pagesLo;
  // Discarded private anonymous pages read as zeros again, as they did when claimed.
  if (madvise(pages, bytes, MADV_DONTNEED) != 0)
    std::memset(pages, 0, bytes);
  if (!undo.head.empty())
    std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(undo.headAt)), undo.head.data(),
                undo.head.size());
  if (!undo.tail.empty())
    std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(undo.tailAt)), undo.tail.data(),
                undo.tail.size());
}

#else

std::optional<FreshUndo> claimFreshPages(ByteRange) { return std::nullopt; }
void rollBackFreshPages(const FreshUndo &) {}

#endif

} // namespace ttinterp
