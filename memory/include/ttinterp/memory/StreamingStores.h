//===- StreamingStores.h - Copies that bypass the caches, and their fence -*- C++ -*-===//
//
// Streaming (non-temporal) stores write whole cache lines to memory without first reading
// them into the caches: a third less memory traffic for bytes nobody reads soon (a large
// write-back, a large output a launch only writes). They are weakly ordered, so a thread
// that made some fences them before another thread may read what they wrote.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace ttinterp {

/// memcpy, but the whole 64-byte lines of dst are written by streaming stores (the partial
/// lines at either end by plain ones: a streamed line that another store also writes would
/// go to memory twice). Not fenced: call fenceStreamingStores() before others read dst.
void streamingCopy(void *dst, const void *src, size_t size);

/// Makes this thread's streaming stores visible to every thread (sfence on x86).
void fenceStreamingStores();

} // namespace ttinterp
