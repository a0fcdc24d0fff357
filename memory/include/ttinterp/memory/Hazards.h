//===- Hazards.h - Read/write conflicts between program instances -*- C++ -*-===//
//
// With hazard tracking on, every byte a launch touches remembers which program
// last wrote it and which programs read it. A program that reads a byte another
// program wrote (or writes a byte another read or wrote) has a result that
// depends on the order programs run in: on the GPU that order is unspecified.
// Atomics are exempt among themselves, not against plain accesses.
//
// Accesses ordered by synchronisation are not hazards: a release by one program
// (an atomic with release semantics at GPU or system scope) that another's
// acquire reads from orders what the first did before it ahead of what the
// second does after, as the PTX memory model says; a lock or a flag that hands
// data from program to program therefore makes no hazard. Happens-before is
// kept in vector clocks: each access is stamped with its program and that
// program's epoch (which a release ends), each program knows the latest epoch
// of every other program that happens before it, and each synchronising
// location holds what its releases published.
//
// Tracking is exact per byte but stored as byte ranges: the last writer of each
// range and its readers, in interval maps split and coalesced as accesses
// arrive. Without synchronisation two distinct readers are all a write needs to
// find a conflict, so no more are kept; with it, every reader that no later
// reader happens after. Loads and stores report whole runs of consecutive
// lanes, so a program adds a few ranges, not one entry per byte. Programs must
// run one at a time (a waiting program may park and resume: beginProgram again).
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

/// What an atomic publishes to the location it writes, for happens-before.
enum class Release : uint8_t {
  ReadModifyWrite, ///< Joins what the location held (a release sequence goes on).
  Store,           ///< Replaces it.
  RelaxedStore,    ///< Ends the release sequence: the location publishes nothing.
};

class HazardTracker {
public:
  HazardTracker();
  ~HazardTracker();
  /// The program whose accesses follow (linear id, x fastest); a program that
  /// waited resumes where it was.
  void beginProgram(int64_t linear);
  /// The current program has finished: nothing it knows is needed again.
  void endProgram();
  /// Whether releases are kept: only a kernel with an acquire can use them, and
  /// without one a histogram's releases would only cost memory.
  void setSynchronising(bool on) { synchronising_ = on; }
  /// An acquire that read the element at `address`: what its releases published
  /// now happens before the current program.
  void acquire(uint64_t address);
  /// A release (or a relaxed store, which publishes nothing) at `address`; the
  /// current program's later accesses are not covered by it.
  void release(uint64_t address, Release kind);
  /// The op whose accesses follow (an interpreter site index).
  void setSite(uint32_t site) { site_ = site; }
  /// Records `size` bytes at caller address `address`, touched by the current op.
  void record(uint64_t address, uint32_t size, AccessKind kind);
  /// Conflicts found, with adjacent bytes of one conflict merged into ranges;
  /// at most `limit` entries (totalConflicts() counts all bytes).
  std::vector<Hazard> hazards(size_t limit = 100) const;
  uint64_t totalConflictBytes() const { return conflictBytes_; }

  /// A vector clock: (program, latest epoch known) pairs, sorted by program.
  using Clock = std::vector<std::pair<int32_t, uint32_t>>;

private:
  /// Who last wrote a byte range, or which programs read it.
  struct Writer {
    uint64_t hi;
    int32_t program;
    uint32_t epoch;
    uint32_t site;
    bool atomic;
  };
  struct Reader {
    int32_t program;
    uint32_t epoch;
    uint32_t site;
    bool operator==(const Reader &o) const {
      return program == o.program && epoch == o.epoch && site == o.site;
    }
  };
  /// Readers in the order they read; the first two inline (all a kernel without
  /// synchronisation keeps), any more on the heap.
  class ReaderList {
  public:
    size_t size() const { return size_; }
    const Reader &operator[](size_t i) const { return i < 2 ? inline_[i] : more_[i - 2]; }
    void push(const Reader &r);
    /// Drops the readers for which drop(reader) holds, keeping the others' order.
    template <class Drop> void eraseIf(Drop drop);
    bool operator==(const ReaderList &o) const;

  private:
    uint32_t size_ = 0;
    Reader inline_[2] = {};
    std::vector<Reader> more_;
  };
  struct Readers {
    uint64_t hi;
    ReaderList list;
  };
  /// What a program knows: its epoch, and the clock of what happens before it
  /// (shared with the location it acquired from until either changes).
  struct ProgramState {
    uint32_t epoch = 1;
    std::shared_ptr<Clock> known;
  };
  /// Whether the access (program, epoch) happens before the current program's next one.
  bool ordered(int32_t program, uint32_t epoch) const;
  void recordRead(uint64_t lo, uint64_t hi);
  void conflict(HazardKind kind, int32_t first, uint32_t firstSite, uint64_t lo, uint64_t hi);

  int32_t program_ = 0;
  uint32_t site_ = 0;
  ProgramState state_;
  bool ended_ = false, synchronising_ = false;
  /// The current program acquired from knownAddress_ and has not been switched out since
  /// (no other program can have released there in between).
  bool knowsAll_ = false;
  uint64_t knownAddress_ = 0;
  std::map<int32_t, ProgramState> parked_;               ///< Programs that wait, by id.
  std::map<uint64_t, std::shared_ptr<Clock>> published_; ///< By synchronising address.
  struct RangeMaps; ///< Writers and readers by range start (Hazards.cpp).
  std::unique_ptr<RangeMaps> ranges_;
  std::vector<Hazard> found_;
  uint64_t conflictBytes_ = 0;
};

} // namespace ttinterp
