//===- Hazards.h - Read/write conflicts between program instances -*- C++ -*-===//
//
// With hazard tracking on, every byte a launch touches remembers which program
// last wrote it and which programs read it. A program that reads a byte another
// program wrote (or writes a byte another read or wrote) has a result that
// depends on the order programs run in: on the GPU that order is unspecified.
// Atomics are exempt among themselves, not against plain accesses.
//
// Tracking is exact per byte but stored as byte ranges: the last writer of each
// range and up to two distinct readers, in interval maps split and coalesced
// as accesses arrive. Loads and stores report whole runs of consecutive lanes,
// so a program adds a few ranges, not one entry per byte. Programs must run one
// at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <map>
#include <vector>

namespace ttinterp {

/// AtomicRead (tt.atomic_load, tt.atomic_poll) is checked against earlier plain writes
/// only and not kept as a reader, so a later plain write to those bytes goes unreported.
enum class AccessKind : uint8_t { Read, Write, Atomic, AtomicRead };

enum class HazardKind : uint8_t { ReadAfterWrite, WriteAfterRead, WriteAfterWrite };
std::string_view name(HazardKind k); ///< "read-after-write", ...

/// One conflict: `first` touched the bytes before `second`, in run order.
struct Hazard {
  HazardKind kind;
  int64_t firstProgram = 0, secondProgram = 0; ///< Linear program ids.
  uint32_t firstSite = 0, secondSite = 0;      ///< Interpreter op sites (caller maps them).
  uint64_t lo = 0, hi = 0;                     ///< Caller byte range [lo, hi).
};

class HazardTracker {
public:
  HazardTracker();
  ~HazardTracker();
  /// The program whose accesses follow (linear id, x fastest).
  void beginProgram(int64_t linear) { program_ = int32_t(linear); }
  /// The op whose accesses follow (an interpreter site index).
  void setSite(uint32_t site) { site_ = site; }
  /// Records `size` bytes at caller address `address`, touched by the current op.
  void record(uint64_t address, uint32_t size, AccessKind kind);
  /// Conflicts found, with adjacent bytes of one conflict merged into ranges;
  /// at most `limit` entries (totalConflicts() counts all bytes).
  std::vector<Hazard> hazards(size_t limit = 100) const;
  uint64_t totalConflictBytes() const { return conflictBytes_; }

private:
  /// Who last wrote a byte range, or which (up to two) programs read it.
  struct Writer {
    uint64_t hi;
    int32_t program;
    uint32_t site;
    bool atomic;
  };
  struct Readers {
    uint64_t hi;
    int32_t program, other; ///< other: a second distinct reader, or -1
    uint32_t site, otherSite;
  };
  void conflict(HazardKind kind, int32_t first, uint32_t firstSite, uint64_t lo, uint64_t hi);

  int32_t program_ = 0;
  uint32_t site_ = 0;
  std::map<uint64_t, Writer> writers_; ///< Keyed by range start; ranges never overlap.
  std::map<uint64_t, Readers> readers_;
  std::vector<Hazard> found_;
  uint64_t conflictBytes_ = 0;
};

} // namespace ttinterp
