//===- HostBlocks.cpp - A size-classed cache of large host allocations ----===//
#include "ttinterp/memory/HostBlocks.h"

#include <sys/mman.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace ttinterp {
namespace {

// Blocks below this size come from the allocator, which recycles them well.
constexpr size_t kPooledMinimum = size_t(1) << 20;
// Blocks from this size on are backed by transparent huge pages where the kernel allows.
constexpr size_t kHugePage = size_t(2) << 20;

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
      std::free(it->second);
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
    std::free(p);
    return;
  }
  Pool &pl = pool();
  std::lock_guard<std::mutex> lock(pl.mutex);
  pl.free.emplace(capacity, p);
  pl.cached += capacity;
  pl.trim();
}

HostBlock acquireHostBlock(size_t bytes) {
  size_t capacity = roundCapacity(bytes == 0 ? 64 : bytes);
  if (capacity >= kPooledMinimum) {
    Pool &pl = pool();
    std::lock_guard<std::mutex> lock(pl.mutex);
    auto it = pl.free.find(capacity);
    if (it != pl.free.end()) {
      uint8_t *p = it->second;
      pl.cached -= capacity;
      pl.free.erase(it);
      return HostBlock(p, HostBlockReturn{capacity});
    }
  }
  void *p;
  if (capacity >= kHugePage) {
    // Whole huge pages, asked for: a 64 MB shadow then takes 32 page faults, not 16,384
    // (fresh-memory faults were the largest single cost of a big launch from the CLI).
    size_t whole = (capacity + kHugePage - 1) & ~(kHugePage - 1);
    p = std::aligned_alloc(kHugePage, whole);
#ifdef MADV_HUGEPAGE
    if (p)
      madvise(p, whole, MADV_HUGEPAGE); // advice only: without it, small pages
#endif
  } else {
    p = std::aligned_alloc(64, capacity);
  }
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
