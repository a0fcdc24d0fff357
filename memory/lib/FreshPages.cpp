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

/// Whether every page in [lo, hi) (page-aligned) is neither in memory nor in swap. A page the
/// process has read is mapped (to the shared zero page) and so does not count: only pages
/// nothing has touched are known to read as zeros without looking.
bool untouched(uint64_t lo, uint64_t hi) {
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool fresh = true;
  constexpr uint64_t kPresent = uint64_t(1) << 63, kSwapped = uint64_t(1) << 62;
  uint64_t entries[512];
  for (uint64_t page = lo / hostPageSize(), end = hi / hostPageSize(); fresh && page < end;) {
    size_t n = size_t(std::min<uint64_t>(end - page, 512));
    ssize_t got = pread(fd, entries, n * sizeof(uint64_t), off_t(page * sizeof(uint64_t)));
    fresh = got == ssize_t(n * sizeof(uint64_t));
    for (size_t i = 0; fresh && i < n; ++i)
      fresh = !(entries[i] & (kPresent | kSwapped));
    page += n;
  }
  close(fd);
  return fresh;
}

} // namespace

std::optional<FreshUndo> claimFreshPages(ByteRange range, unsigned threads) {
  if (range.hi < range.lo || range.hi - range.lo < kFreshPagesMinimum)
    return std::nullopt;
  const uint64_t page = hostPageSize();
  FreshUndo undo;
  undo.pagesLo = (range.lo + page - 1) & ~(page - 1);
  undo.pagesHi = range.hi & ~(page - 1);
  if (undo.pagesLo >= undo.pagesHi || !untouched(undo.pagesLo, undo.pagesHi) ||
      !MappingQueries().privateAnonymous(undo.pagesLo, undo.pagesHi))
    return std::nullopt;
  auto *bytes = reinterpret_cast<const uint8_t *>(static_cast<uintptr_t>(range.lo));
  undo.headAt = range.lo;
  undo.head.assign(bytes, bytes + (undo.pagesLo - range.lo));
  undo.tailAt = undo.pagesHi;
  undo.tail.assign(bytes + (undo.pagesHi - range.lo), bytes + (range.hi - range.lo));
  populateWithHugePages(undo.pagesLo, undo.pagesHi, threads);
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

std::optional<FreshUndo> claimFreshPages(ByteRange, unsigned) { return std::nullopt; }
void rollBackFreshPages(const FreshUndo &) {}

#endif

} // namespace ttinterp
