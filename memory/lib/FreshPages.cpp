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
