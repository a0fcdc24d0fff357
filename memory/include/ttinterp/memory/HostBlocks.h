//===- HostBlocks.h - Recycled host allocations for shadows and bitmaps -*- C++ -*-===//
//
// Shadows are as large as the buffers they mirror, and a session drops them at
// every step. Fresh allocations of that size cost a page fault per 4 KiB on
// first touch, which dominates short launches; freed blocks are kept (up to a
// cap) and handed to the next region of a fitting size instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ttinterp {

/// Deleter that hands a block back to the pool.
struct HostBlockReturn {
  size_t capacity = 0;
  void operator()(uint8_t *p) const;
};
using HostBlock = std::unique_ptr<uint8_t[], HostBlockReturn>;

/// A block of at least `bytes` bytes (64-byte aligned; from 2 MiB on, on a 2 MiB boundary, a
/// mapping of its own, its first `bytes` already in memory when it is new, faulted in on up to
/// `threads` threads); contents unspecified.
HostBlock acquireHostBlock(size_t bytes, unsigned threads = 1);

/// Bytes the pool may keep for reuse (default 4 GiB); 0 frees everything now.
void setHostBlockCacheLimit(size_t bytes);

} // namespace ttinterp
