//===- FuzzSupport.h - Shared pieces of the libFuzzer targets in fuzz/ ----===//
//
// What every target needs besides its own entry point: a sink for tt.print
// output, a stable hash of the input (targets pick run options from it, so a
// saved crash input reproduces with the same options), host buffers with a
// fixed fill, and one way to report a broken invariant. A broken invariant
// aborts: libFuzzer then saves the input as a crash, like a sanitizer report.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <streambuf>
#include <string_view>
#include <vector>

namespace ttinterp::fuzz {

/// Discards everything written to it (tt.print output, CLI summaries).
class NullStream : public std::ostream {
public:
  NullStream() : std::ostream(&buffer_) {}

private:
  struct Discard : std::streambuf {
    int overflow(int c) override { return c; }
    std::streamsize xsputn(const char *, std::streamsize n) override { return n; }
  } buffer_;
};

/// 64-bit FNV-1a of the input: choices drawn from it stay fixed for a given input.
inline uint64_t hashBytes(const uint8_t *data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

/// Aborts with a message: libFuzzer records the input as a crash.
[[noreturn]] inline void invariantBroken(const char *what, const char *detail = "") {
  std::fprintf(stderr, "fuzz invariant broken: %s %s\n", what, detail);
  std::fflush(stderr);
  std::abort();
}

/// Host memory standing in for a caller's buffer: 64-byte aligned (as a real
/// allocator would give a large tensor), with a fill that is neither zero nor
/// uniform so that a lost or misplaced byte shows.
class HostBuffer {
public:
  explicit HostBuffer(size_t bytes, uint8_t seed = 0) : storage_(bytes + 64) {
    uintptr_t raw = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((64 - raw % 64) % 64);
    size_ = bytes;
    // Small values (floats stay finite), repeating every 64 bytes: the first 64 written, then
    // copied, so that a buffer of a megabyte is not a million instrumented iterations.
    for (size_t i = 0; i < size_ && i < 64; ++i)
      data_[i] = uint8_t(i * 37 + seed * 11 + 5) & 0x3f;
    for (size_t done = std::min<size_t>(size_, 64); done < size_;) {
      const size_t n = std::min(done, size_ - done);
      std::memcpy(data_ + done, data_, n);
      done += n;
    }
  }
  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  uint64_t address() const { return reinterpret_cast<uint64_t>(data_); }
  std::vector<uint8_t> snapshot() const { return {data_, data_ + size_}; }
  bool equals(const std::vector<uint8_t> &bytes) const {
    return bytes.size() == size_ && std::memcmp(bytes.data(), data_, size_) == 0;
  }

private:
  std::vector<uint8_t> storage_;
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

/// Reads fuzzer bytes as a stream of small choices; past the end every read is 0,
/// so any input, even an empty one, decodes to some valid case.
class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  /// A value in [0, n) (n > 0).
  uint32_t below(uint32_t n) {
    uint32_t v = byte();
    if (n > 256)
      v = v << 8 | byte();
    return v % n;
  }
  /// A value in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) { return lo + int64_t(below(uint32_t(hi - lo + 1))); }
  bool flag() { return byte() & 1; }
  bool done() const { return at_ >= size_; }

private:
  const uint8_t *data_;
  size_t size_;
  size_t at_ = 0;
};

} // namespace ttinterp::fuzz
