//===- HostPages.h - Pages of host memory: size, faulting in, mapping kinds -*- C++ -*-===//
//
// What memory/'s host code asks of the system about pages: CallerMemory.cpp (write-backs into
// pages not yet in memory), HostBlocks.cpp (shadow blocks faulted in at once), FreshPages.cpp
// (claimed output pages) and PageExchange.cpp (write-backs by moving pages). Internal to memory/.
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

/// How many of the pages under [p, p + size) are in memory (one question for all of them);
/// nothing where the system cannot tell.
std::optional<size_t> pagesInMemory(const void *p, size_t size);

/// Faults in [lo, hi) (page-aligned) for writing in one call, in transparent huge pages where the
/// system gives them: where they come only on request, the range asks for them for the call and
/// then says no again, which on request is what no advice means. A fresh 64 MiB faults in 512
/// times faster per page that way (3 ms here, 19 ms in 4 KiB pages), and the mapping is left as
/// an ordinary one, whose pages may become any caller's (PageExchange.h) without bringing it
/// advice of their own. With threads > 1 a large range is faulted in by pieces of whole huge pages
/// on up to that many threads (runOnThreads): the kernel's zeroing of a 64 MiB shadow was the
/// serial part of a two-thread launch's preparation.
void populateWithHugePages(uint64_t lo, uint64_t hi, unsigned threads = 1);

/// One mapping's address range.
struct MappingSpan {
  uint64_t lo = 0, hi = 0;
};

/// One mapping as the process's map describes it.
struct Mapping {
  uint64_t lo = 0, hi = 0;
  /// Readable, writable, private, and neither a file nor a special mapping.
  bool privateAnonymous = false;
};

/// Questions about this process's mappings, asked through one open /proc/self/maps: one
/// mapping at a time where the kernel answers so (PROCMAP_QUERY, Linux 6.11: microseconds),
/// else from one reading of the whole map (a fifth of a millisecond in a process with torch's
/// thousands of mappings), kept until refresh(). An object per batch of questions: after a
/// fork, /proc/self would still name the parent.
class MappingQueries {
public:
  MappingQueries();
  ~MappingQueries();
  MappingQueries(const MappingQueries &) = delete;
  MappingQueries &operator=(const MappingQueries &) = delete;

  /// The mappings covering [lo, hi), in address order, when the range lies wholly in writable
  /// private anonymous mappings (the heap, malloc's and mmap's anonymous memory): where an
  /// untouched page reads as zeros, MADV_DONTNEED makes it read as zeros again, and the pages
  /// are this process's alone. nullopt for shared memory, file mappings, special mappings (the
  /// stack, device memory), unmapped bytes, or where the system cannot tell.
  std::optional<std::vector<MappingSpan>> privateAnonymous(uint64_t lo, uint64_t hi);
  /// How many of `points` are mapping boundaries: addresses no mapping holds, or where the
  /// mapping holding them starts. Where mappings split or merge the count changes.
  size_t boundaries(const std::vector<uint64_t> &points);
  /// Forgets the map read, if any, once the mappings have changed.
  void refresh();
  /// Whether the kernel answers one mapping at a time, so that asking is cheap.
  static bool cheap();

private:
  enum class Answer { Yes, No, Unsupported };
  /// The mapping holding `address`, through PROCMAP_QUERY.
  Answer query(uint64_t address, Mapping &out);
  /// The whole map, read once (where the kernel does not answer one mapping at a time).
  const std::vector<Mapping> &maps();
  int fd_ = -1;
  std::optional<std::vector<Mapping>> maps_;
};

/// Whether transparent huge pages are given only where asked for (the usual setting).
bool hugePagesOnRequest();

} // namespace ttinterp
