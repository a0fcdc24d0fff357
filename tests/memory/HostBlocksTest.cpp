//===- HostBlocksTest.cpp - Large host blocks: alignment, reuse, no advice on the heap ===//
//
// Blocks of 2 MiB and more are asked to be backed by huge pages. That advice is a flag
// on a memory mapping; given to memory malloc returned it could land on the heap, which
// keeps the flag as it grows, and change how the whole host process gets its pages. So
// large blocks must be mappings of their own: the heap never carries the flag.
//
//===----------------------------------------------------------------------===//
#include "ttinterp/memory/HostBlocks.h"

#include <doctest/doctest.h>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ttinterp;

namespace {
/// The VmFlags of the mapping that holds `address` (from /proc/self/smaps), and its name.
struct Mapping {
  bool found = false;
  std::string name, flags;
};
Mapping mappingOf(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  Mapping current;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = address >= lo && address < hi;
      if (inside) {
        current = Mapping{true, "", ""};
        std::string perms, offset, device, inode;
        head >> perms >> offset >> device >> inode;
        std::getline(head >> std::ws, current.name);
      }
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) {
      current.flags = line.substr(8);
      return current;
    }
  }
  return current;
}
/// How many of the pages behind [p, p + bytes) are in memory.
size_t residentPages(const uint8_t *p, size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE)), pages = (bytes + page - 1) / page;
  std::vector<unsigned char> resident(pages);
  REQUIRE(mincore(const_cast<uint8_t *>(p), pages * page, resident.data()) == 0);
  size_t count = 0;
  for (unsigned char r : resident)
    count += r & 1;
  return count;
}
} // namespace

TEST_CASE("large host blocks are aligned huge-page mappings of their own, never the heap") {
  // Make malloc serve even large requests from the heap, as glibc does once its
  // mmap threshold has risen: the blocks must not come from there all the same.
  mallopt(M_MMAP_THRESHOLD, 256 << 20); // a no-op under a sanitizer's allocator
  std::vector<HostBlock> blocks;
  for (size_t bytes : {size_t(2) << 20, (size_t(5) << 20) + 123, size_t(17) << 20}) {
    CAPTURE(bytes);
    HostBlock b = acquireHostBlock(bytes);
    REQUIRE(b);
    CHECK(reinterpret_cast<uintptr_t>(b.get()) % (size_t(2) << 20) == 0);
    std::memset(b.get(), 0x5A, bytes); // every byte is ours to write
    Mapping m = mappingOf(reinterpret_cast<uintptr_t>(b.get()));
    REQUIRE(m.found);
    CHECK(m.name != "[heap]");
    blocks.push_back(std::move(b));
  }
  // A heap allocation made now lives in a mapping without the huge-page flag.
  std::vector<uint8_t> onHeap(size_t(8) << 20, 1);
  Mapping heap = mappingOf(reinterpret_cast<uintptr_t>(onHeap.data()));
  REQUIRE(heap.found);
  CHECK(heap.flags.find(" hg") == std::string::npos);
  // Returned blocks are reused whole: the same capacity comes back, still writable.
  uint8_t *first = blocks[0].get();
  blocks.clear();
  HostBlock again = acquireHostBlock(size_t(2) << 20);
  CHECK(again.get() == first);
  std::memset(again.get(), 0, size_t(2) << 20);
  mallopt(M_MMAP_THRESHOLD, 128 << 10); // glibc's default
}

TEST_CASE("a returned block that lost its pages is replaced by one already in memory") {
  // As a page exchange leaves a shadow's block when the caller's buffer was a fresh allocation:
  // the caller's never-touched pages are the block's now. Writing them would fault 4 KiB at a
  // time; the next region of that size gets a mapping faulted in at once instead.
  setHostBlockCacheLimit(0); // an empty pool: the block returned below is the only one
  setHostBlockCacheLimit(size_t(4) << 30);
  const size_t bytes = size_t(16) << 20, pages = bytes / size_t(sysconf(_SC_PAGESIZE));
  HostBlock block = acquireHostBlock(bytes);
  std::memset(block.get(), 1, bytes);
  REQUIRE(residentPages(block.get(), bytes) == pages);
  uint8_t *kept = block.get();
  block.reset();
  // Still in memory: reused as it is.
  block = acquireHostBlock(bytes);
  CHECK(block.get() == kept);
  // An eighth of its pages gone is still reused; more is not.
  REQUIRE(madvise(block.get(), bytes / 8, MADV_DONTNEED) == 0);
  block.reset();
  block = acquireHostBlock(bytes);
  CHECK(block.get() == kept);
  REQUIRE(madvise(block.get(), bytes / 2, MADV_DONTNEED) == 0);
  REQUIRE(residentPages(block.get(), bytes) == pages / 2);
  block.reset();
  block = acquireHostBlock(bytes);
  CHECK(residentPages(block.get(), bytes) == pages);
  std::memset(block.get(), 2, bytes); // every byte is ours to write
}

TEST_CASE("a new block faulted in on several threads is in memory whole, at any length") {
  // Lengths that are whole huge pages, not, and below the size worth a second thread; the
  // pieces the threads claim start on huge-page boundaries but the first.
  setHostBlockCacheLimit(0); // an empty pool: every block below is a new mapping
  setHostBlockCacheLimit(size_t(4) << 30);
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  for (size_t bytes : {size_t(6) << 20, (size_t(37) << 20) + 4096 * 3, size_t(64) << 20}) {
    for (unsigned threads : {1u, 2u, 3u}) {
      CAPTURE(bytes);
      CAPTURE(threads);
      HostBlock block = acquireHostBlock(bytes, threads);
      REQUIRE(block);
      CHECK(residentPages(block.get(), bytes) == (bytes + page - 1) / page);
      std::memset(block.get(), 3, bytes); // every byte is ours to write
      block.reset();
      setHostBlockCacheLimit(0);
      setHostBlockCacheLimit(size_t(4) << 30);
    }
  }
}
