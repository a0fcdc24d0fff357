//===- HostPages.h - Pages of host memory: size, faulting in, mapping kinds -*- C++ -*-===//
//
// What memory/'s host code asks of the system about pages: CallerMemory.cpp (write-backs into
// pages not yet in memory), FreshPages.cpp (claimed output pages) and PageExchange.cpp
// (write-backs by moving pages). Internal to memory/.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ttinterp {

/// The system's page size (4 KiB on x86-64 Linux).
uint64_t hostPageSize();

/// Faults in the pages under [p, p + size) for writing in one call, as a first write to each
/// would, one trap per page. The pages at either end may be only partly the range's, but whole
/// pages lie in one mapping, writable as the range's part is, and faulting them in changes no
/// byte. False where the kernel cannot (before Linux 5.14, not Linux).
bool populateForWrite(void *p, size_t size);

/// A file descriptor closed on every way out.
struct Fd {
  int fd;
  ~Fd();
};

/// One mapping's address range.
struct MappingSpan {
  uint64_t lo = 0, hi = 0;
};

/// The mappings covering [lo, hi), in address order, when the range lies wholly in writable
/// private anonymous mappings (the heap, malloc's and mmap's anonymous memory): where an
/// untouched page reads as zeros, MADV_DONTNEED makes it read as zeros again, and the pages are
/// this process's alone. nullopt for shared memory, file mappings, special mappings (the stack,
/// device memory), unmapped bytes, or where the system cannot tell. Asks the kernel one mapping
/// at a time (PROCMAP_QUERY, Linux 6.11: microseconds) or else reads /proc/self/maps (a fifth of
/// a millisecond in a process with torch's thousands of mappings).
std::optional<std::vector<MappingSpan>> privateAnonymousMappings(uint64_t lo, uint64_t hi);
inline bool privateAnonymous(uint64_t lo, uint64_t hi) {
  return privateAnonymousMappings(lo, hi).has_value();
}

/// How many of `points` are mapping boundaries: addresses no mapping holds, or where the
/// mapping holding them starts. Where mappings split or merge the count changes.
size_t mappingBoundaries(const std::vector<uint64_t> &points);

/// Whether the kernel answers one mapping at a time (PROCMAP_QUERY), so asking is cheap.
bool mappingQueriesCheap();

/// Whether transparent huge pages are given only where asked for (the usual setting).
bool hugePagesOnRequest();

} // namespace ttinterp
