//===- CallerMemory.cpp - Host implementation of caller memory ------------===//
#include "ttinterp/memory/CallerMemory.h"
#include "ttinterp/memory/StreamingStores.h"

#include "HostPages.h"

#include <cstdint>
#include <cstring>

namespace ttinterp {
namespace {

/// Copies of at least this many bytes into caller memory bypass the caches: a write-back
/// that size or larger (a parallel one comes in chunks of 1 MiB and more, Session.cpp) is
/// not read back soon enough for the caches to keep it.
constexpr size_t kStreamingCopy = size_t(1) << 20;

/// Whether the pages under [p, p + size) are already in memory, judged by the first, middle
/// and last. A fresh allocation (torch.empty, a wrapper's output) is not.
bool pagesPresent(const void *p, size_t size) {
  const auto first = reinterpret_cast<const uint8_t *>(p);
  for (const uint8_t *at : {first, first + size / 2, first + size - 1})
    if (pagesInMemory(at, 1).value_or(0) != 1)
      return false;
  return true;
}

} // namespace

bool HostMemory::read(uint64_t address, void *dst, size_t size, std::string &) {
  if (size)
    std::memcpy(dst, reinterpret_cast<const void *>(static_cast<uintptr_t>(address)), size);
  return true;
}

bool HostMemory::write(uint64_t address, const void *src, size_t size, std::string &) {
  void *dst = reinterpret_cast<void *>(static_cast<uintptr_t>(address));
  // Into pages not yet in memory a plain copy would fault each in (zeroed, then in the cache
  // for it): they are faulted in first, all at once, and streamed into like any others.
  if (size >= kStreamingCopy && (pagesPresent(dst, size) || populateForWrite(dst, size))) {
    streamingCopy(dst, src, size);
    // Before anyone (another thread of the launch, the caller) is told the copy is done.
    fenceStreamingStores();
  } else if (size)
    std::memcpy(dst, src, size);
  return true;
}

HostMemory &HostMemory::instance() {
  static HostMemory memory;
  return memory;
}

} // namespace ttinterp
