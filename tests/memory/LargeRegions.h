//===- LargeRegions.h - Buffers of 4 MiB and accesses to them, for region tests -*- C++ -*-===//
#pragma once

#include "ttinterp/memory/Session.h"

#include <doctest/doctest.h>

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace ttinterp::test {

/// Elements in a MAP_SHARED anonymous mapping of their own: memory that is not the process's
/// alone, where a large read-write region keeps a shadow copied in as touched.
template <class T> struct SharedMapping {
  using value_type = T;
  SharedMapping() = default;
  template <class U> explicit SharedMapping(const SharedMapping<U> &) {}
  T *allocate(size_t n) {
    void *p =
        mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t n) { munmap(p, n * sizeof(T)); }
  bool operator==(const SharedMapping &) const { return true; }
  bool operator!=(const SharedMapping &) const { return false; }
};
using SharedBuffer = std::vector<int32_t, SharedMapping<int32_t>>;

constexpr size_t kChunk = Region::kFillChunk;
constexpr int64_t kInts = int64_t(kCopyInOnTouchMinimum); // 4 MiB of int32: well past the minimum

/// The buffer as a caller has it: element i holds i.
template <class Buffer> Buffer counting(int64_t n) {
  Buffer buf(static_cast<size_t>(n));
  std::iota(buf.begin(), buf.end(), 0);
  return buf;
}
template <class Buffer>
PointerArgument arg(const char *name, Buffer &buffer, int64_t offset, int64_t count,
                    Access access = Access::ReadWrite) {
  PointerArgument a;
  a.name = name;
  a.buffer = "buf";
  a.view = View{reinterpret_cast<uint64_t>(buffer.data() + offset), DType::I32, {count}, {1}};
  a.access = access;
  return a;
}
inline int32_t load(const LaunchMemory &m, size_t argument, int64_t element) {
  int32_t v;
  const uint8_t *h =
      m.translateForRead(tagged::advance(m.argumentPointer(argument), element * 4), 4);
  REQUIRE(h);
  std::memcpy(&v, h, 4);
  return v;
}
inline void store(const LaunchMemory &m, size_t argument, int64_t element, int32_t v) {
  uint8_t *h = m.translateForWrite(tagged::advance(m.argumentPointer(argument), element * 4), 4);
  REQUIRE(h);
  std::memcpy(h, &v, 4);
}
/// Chunks of the region (which starts at buf.data()) that element i lies in.
inline size_t chunkOf(int64_t element) { return size_t(element) * 4 / kChunk; }
/// Two threads walk the first `chunks` chunks of argument 0 from opposite ends at once, each
/// reading every element and storing -e to the elements e of its own parity; returns how many
/// elements of the other's parity held neither e nor -e when read (0 when coherent).
inline int storeParitiesFromBothEnds(LaunchMemory &m, int64_t chunks) {
  const int64_t perChunk = int64_t(kChunk / 4);
  std::vector<int> wrong(2, 0);
  auto worker = [&](int t) {
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t c = t == 0 ? k : chunks - 1 - k;
      for (int64_t e = c * perChunk; e < (c + 1) * perChunk; ++e) {
        if (e % 2 == t) {
          store(m, 0, e, -int32_t(e));
          continue;
        }
        int32_t v = load(m, 0, e);
        if (v != int32_t(e) && v != -int32_t(e))
          ++wrong[size_t(t)];
      }
    }
  };
  m.setConcurrent(true);
  std::thread other(worker, 1);
  worker(0);
  other.join();
  m.setConcurrent(false);
  return wrong[0] + wrong[1];
}
/// Elements that differ from `expected`, at most a few named.
template <class Buffer> std::string differences(const Buffer &buf, const Buffer &expected) {
  std::string out;
  int shown = 0;
  for (size_t i = 0; i < buf.size() && shown < 5; ++i)
    if (buf[i] != expected[i]) {
      out += "[" + std::to_string(i) + "] " + std::to_string(buf[i]) +
             " != " + std::to_string(expected[i]) + "; ";
      ++shown;
    }
  return out;
}

} // namespace ttinterp::test
