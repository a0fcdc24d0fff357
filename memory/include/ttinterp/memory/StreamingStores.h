//===- StreamingStores.h - Copies that bypass the caches, and their fence -*- C++ -*-===//
//
// Streaming (non-temporal) stores write whole cache lines to memory without first reading
// them into the caches: a third less memory traffic for bytes nobody reads soon (a large
// write-back, a large output a launch only writes). They are weakly ordered, so a thread
// that made some fences them before another thread may read what they wrote.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ttinterp {

/// Streaming stores write whole lines of this many bytes.
constexpr size_t kStreamedLine = 64;

/// Of `size` bytes to be written at dst, those before dst's first line boundary: written by
/// plain stores, as are those after the last whole line.
inline size_t bytesBeforeLine(const void *dst, size_t size) {
  const size_t misaligned = reinterpret_cast<uintptr_t>(dst) % kStreamedLine;
  return std::min(size, (kStreamedLine - misaligned) % kStreamedLine);
}

/// memcpy, but the whole 64-byte lines of dst are written by streaming stores (the partial
/// lines at either end by plain ones: a streamed line that another store also writes would
/// go to memory twice). Not fenced: call fenceStreamingStores() before others read dst.
void streamingCopy(void *dst, const void *src, size_t size);

/// Makes this thread's streaming stores visible to every thread (sfence on x86).
void fenceStreamingStores();

} // namespace ttinterp
