//===- HostBlocks.cpp - A size-classed cache of large host allocations ----===//
#include "ttinterp/memory/HostBlocks.h"

#include "HostPages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

namespace ttinterp {
namespace {

// Blocks below this size come from the allocator, which recycles them well.
constexpr size_t kPooledMinimum = size_t(1) << 20;
// Blocks from this size on are backed by transparent huge pages where the kernel allows.
constexpr size_t kHugePage = size_t(2) << 20;

/// Bytes of the mapping behind a block of this capacity (whole huge pages).
size_t mappedBytes(size_t capacity) { return (capacity + kHugePage - 1) & ~(kHugePage - 1); }

/// A private anonymous mapping of whole, aligned huge pages, whose first `used` bytes (the
/// request, not the size class's slack) are faulted in at once in transparent huge pages where
/// the kernel gives them: a 64 MB shadow then takes 32 page faults, not 16,384 (fresh-memory
/// faults were the largest single cost of a big launch from the CLI), all in one call. Our own
/// mapping, not the allocator's: advice given to memory malloc returned could land on the heap,
/// whose flag the heap keeps as it grows, and change how the whole host process (torch, say)
/// gets its pages. None is left on it either (populateWithHugePages), since its pages may become
/// a caller's by exchange (PageExchange.h), mapping and all.
uint8_t *mapHugePages(size_t bytes, size_t used, unsigned threads) {
  size_t span = bytes + kHugePage;
  void *m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return nullptr;
  uintptr_t base = reinterpret_cast<uintptr_t>(m);
  uintptr_t aligned = (base + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  if (aligned > base)
    munmap(m, aligned - base);
  if (uintptr_t end = aligned + bytes; end < base + span)
    munmap(reinterpret_cast<void *>(end), base + span - end);
  populateWithHugePages(aligned, aligned + std::min(bytes, mappedBytes(used)), threads);
  return reinterpret_cast<uint8_t *>(aligned);
}

/// Whether more than an eighth of the pages behind a block's first `bytes` are not in memory.
/// A page exchange (PageExchange.h) leaves the caller's old pages in the shadow's block, and
/// when the caller's buffer was a fresh allocation those were never faulted in: writing them
/// would take a fault per 4 KiB page (about 4 µs each in a KVM guest: a 16 MiB layer-norm
/// output then took 27 ms instead of 10), where a new mapping is faulted in by huge pages, in
/// one call, for about what zeroing the bytes costs.
bool mostlyUnfaulted(const uint8_t *p, size_t bytes) {
  const size_t pages = (bytes + hostPageSize() - 1) / hostPageSize();
  std::optional<size_t> in = pagesInMemory(p, bytes); // p is page-aligned
  return in && pages - *in > pages / 8;               // cannot tell: reuse it
}

void releaseBlock(uint8_t *p, size_t capacity) {
  if (capacity >= kHugePage)
    munmap(p, mappedBytes(capacity));
  else
    std::free(p);
}

struct Pool {
  std::mutex mutex;
  std::multimap<size_t, uint8_t *> free; // capacity -> block
  size_t cached = 0;
  size_t limit = size_t(4) << 30;

  void trim() {
    // Largest first: one big block pins more memory than several small ones.
    while (cached > limit && !free.empty()) {
      auto it = std::prev(free.end());
      cached -= it->first;
      releaseBlock(it->second, it->first);
      free.erase(it);
    }
  }
};

Pool &pool() {
  static Pool *p = new Pool; // never destroyed: blocks may return during static destruction
  return *p;
}

size_t roundCapacity(size_t bytes) {
  if (bytes < kPooledMinimum)
    return (bytes + 63) & ~size_t(63);
  // Size classes of 1/8 of a power of two: at most 12.5% slack.
  size_t top = size_t(1) << (63 - __builtin_clzll(bytes));
  size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

} // namespace

void HostBlockReturn::operator()(uint8_t *p) const {
  if (!p)
    return;
  if (capacity < kPooledMinimum) {
    releaseBlock(p, capacity);
    return;
  }
  Pool &pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.free.emplace(capacity, p);
  pl.cached += capacity;
  pl.trim();
}

HostBlock acquireHostBlock(size_t bytes, unsigned threads) {
  size_t capacity = roundCapacity(bytes == 0 ? 64 : bytes);
  if (capacity >= kPooledMinimum) {
    uint8_t *p = nullptr;
    {
      Pool &pl = pool();
      std::lock_guard<std::mutex> lock(pl.mutex);
      auto it = pl.free.find(capacity);
      if (it != pl.free.end()) {
        p = it->second;
        pl.cached -= capacity;
        pl.free.erase(it);
      }
    }
    if (p && capacity >= kHugePage && mostlyUnfaulted(p, std::min(bytes, mappedBytes(capacity)))) {
      releaseBlock(p, capacity); // a new mapping below, faulted in at once
      p = nullptr;
    }
    if (p)
      return HostBlock(p, HostBlockReturn{capacity});
  }
  void *p = capacity >= kHugePage ? mapHugePages(mappedBytes(capacity), bytes, threads)
                                  : std::aligned_alloc(64, capacity);
  if (!p)
    throw std::bad_alloc();
  return HostBlock(static_cast<uint8_t *>(p), HostBlockReturn{capacity});
}

void setHostBlockCacheLimit(size_t bytes) {
  Pool &pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.limit = bytes;
  pl.trim();
}

} // namespace ttinterp
