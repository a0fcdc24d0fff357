//===- Session.h - Storage regions, host shadows and write-back -*- C++ -*-===//
//
// The alias-aware memory model. Pointer arguments are views of caller memory;
// arguments whose byte extents overlap are grouped into one storage region, and
// each region gets exactly one host shadow, so a store through one alias is seen
// through every other. Kernels keep the caller's own addresses; LaunchMemory
// translates them into the shadows. Only bytes the kernels wrote go back, and
// only at a sync or a step, so a stale alias can never overwrite a newer value.
//
// A session keeps shadows alive across launches. A launch that faults abandons
// the session: nothing that was still pending is written back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/CallerMemory.h"
#include "ttinterp/memory/FreshPages.h"
#include "ttinterp/memory/Hazards.h"
#include "ttinterp/memory/HostBlocks.h"
#include "ttinterp/memory/View.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ttinterp {

/// Pointers as kernels hold them: the caller's address in the low 48 bits and
/// the pointer's provenance in the top 16 (1 + the index of the pointer argument
/// it was derived from, a reachable buffer counting as an argument; 0 when
/// unknown, e.g. loaded from memory). tt.int_to_ptr tags its pointer with the
/// argument whose bytes hold the address (LaunchMemory::provenance). Pointer
/// arithmetic keeps the tag, so every block op that merely moves pointers around
/// keeps provenance for free.
namespace tagged {
constexpr unsigned kTagShift = 48;
constexpr uint64_t kAddressMask = (uint64_t(1) << kTagShift) - 1;
constexpr uint32_t kMaxTag = 0xFFFF;
constexpr uint64_t make(uint64_t address, uint32_t tag) {
  return (uint64_t(tag) << kTagShift) | (address & kAddressMask);
}
constexpr uint32_t tag(uint64_t p) { return uint32_t(p >> kTagShift); }
constexpr uint64_t address(uint64_t p) { return p & kAddressMask; }
/// p advanced by `bytes` (which may be negative), keeping its provenance.
constexpr uint64_t advance(uint64_t p, int64_t bytes) {
  return (p & ~kAddressMask) | ((p + uint64_t(bytes)) & kAddressMask);
}
} // namespace tagged

/// What a launch may do through a pointer argument (bit flags). The kernel's
/// access analysis proves it (interp::Parameter::access); callers that do not
/// know say ReadWrite, which is always safe.
enum class Access : uint8_t { None = 0, Read = 1, Write = 2, ReadWrite = 3 };
constexpr Access operator|(Access a, Access b) { return Access(uint8_t(a) | uint8_t(b)); }
constexpr bool reads(Access a) { return uint8_t(a) & uint8_t(Access::Read); }
constexpr bool writes(Access a) { return uint8_t(a) & uint8_t(Access::Write); }
const char *accessName(Access a);

/// One pointer argument of a launch, as the caller describes it.
struct PointerArgument {
  std::string name;   ///< The kernel's argument name (messages).
  std::string buffer; ///< The caller's name for the buffer (messages, sync, donation).
  View view;
  /// The address the kernel receives, when it is not the view's element 0. A Python
  /// tensor is bound as a view of its whole storage (the bounds a GPU allocation has)
  /// while the kernel gets the tensor's own data pointer inside it.
  std::optional<uint64_t> kernelAddress = std::nullopt;
  CallerMemory *memory = &HostMemory::instance();
  /// Reads and writes the launch may make through it: decides whether its
  /// region must be copied in (read) and whether it needs a shadow (written).
  Access access = Access::ReadWrite;
  /// Bound to no kernel parameter: memory the kernel reaches through addresses
  /// it loads (a pointer table), given by interp::LaunchRequest::reachable. It is
  /// a region, shadow, bounds and hazard participant like any argument; only
  /// messages and reports tell it apart (`name` is empty).
  bool reachable = false;
  /// Whether the caller's pages under it may be exchanged with the shadow's at a step instead
  /// of copied (PageExchange.h): say so for ordinary process memory (a torch or NumPy CPU
  /// tensor, a buffer of your own), not for memory a device or another process reads by its
  /// physical pages (cudaHostRegister'd or otherwise pinned for DMA). Checked besides: only
  /// private anonymous pages are ever exchanged.
  bool exchangePages = false;
};

/// How far an access through a pointer may stray from the argument it came from.
enum class BoundsMode {
  Argument, ///< Inside the extent of the argument the pointer derives from.
  Region,   ///< Anywhere inside that argument's storage region.
};

/// One bit per byte, kept per group of 512 bytes. A group a set covered whole is one bit of a
/// small map (full_) and nothing else: its 8 words are neither written then nor read after, so
/// storing a 16 MiB output costs 4 KiB of bits, not 2 MiB, and forEachRun steps over it reading
/// 1/512 of the map. A group a set covered in part has its 8 words, cleared by the first such
/// set (claimed through its byte of ready_), so a new map costs no clearing of its words: a
/// 16 MiB output's 2 MiB memset was most of a one-thread layer norm's preparation. Concurrent
/// setters use atomic ORs; everything else is single-threaded between launches.
class ByteBitmap {
public:
  /// Sized for `bytes` bytes, every bit clear.
  void resize(size_t bytes);
  size_t size() const { return bytes_; }
  void set(size_t offset, size_t count) {
    // A few bytes inside one word of a group already in use (a row's mean, the next element
    // of a counter): one OR here, not the out-of-line walk over groups and words.
    const size_t bit = offset & 63;
    if (count != 0 && bit + count <= 64 && wordsReady(offset / kGroupBytes)) {
      const uint64_t mask = (count == 64 ? ~uint64_t(0) : (uint64_t(1) << count) - 1) << bit;
      std::atomic<uint64_t> &w = words_[offset >> 6];
      w.store(w.load(std::memory_order_relaxed) | mask, std::memory_order_relaxed);
      return;
    }
    setRange(offset, count, false);
  }
  void setConcurrent(size_t offset, size_t count) { setRange(offset, count, true); }
  bool test(size_t offset) const { return (word(offset >> 6) >> (offset & 63)) & 1; }
  /// Number of set bits in [offset, offset + count).
  size_t count(size_t offset, size_t count) const;
  void clear(size_t offset, size_t count);
  /// Calls fn(begin, end) for each maximal run of set bits inside [offset, offset+count).
  template <class Fn> void forEachRun(size_t offset, size_t count, Fn fn) const;
  /// ORs `other`'s bits into this one at `offset`.
  void orFrom(const ByteBitmap &other, size_t offset);

private:
  static constexpr size_t kGroupBytes = 512; ///< Bytes per group: 8 words, one bit of full_.
  /// A group's words: not yet cleared (they hold whatever the block held: read as clear),
  /// being cleared by one setter, or meaningful.
  enum GroupWords : uint8_t { kStale = 0, kClearing = 1, kReady = 2 };
  void setRange(size_t offset, size_t count, bool concurrent);
  /// Sets bits of [offset, offset + count), which lie in group g, in its words.
  void setInGroup(size_t g, size_t offset, size_t count, bool concurrent);
  /// Makes group g's words meaningful (cleared if they were stale).
  void readyWords(size_t g, bool concurrent);
  /// Whether group g is known to be set throughout (false may still be all set).
  bool groupFull(size_t g) const {
    return (full_[g >> 6].load(std::memory_order_relaxed) >> (g & 63)) & 1;
  }
  bool wordsReady(size_t g) const { return ready_[g].load(std::memory_order_acquire) == kReady; }
  /// The bits of word w as they stand, whatever its group's state.
  uint64_t word(size_t w) const {
    const size_t g = w >> 3;
    if (groupFull(g))
      return ~uint64_t(0);
    return wordsReady(g) ? words_[w].load(std::memory_order_relaxed) : 0;
  }
  /// Whether every bit of group g is `set` (its words read only when meaningful).
  bool groupAll(size_t g, bool set) const;
  /// Whether no set has touched groups [64 w, 64 w + 64): none full, none with words ready.
  bool groupsUntouched(size_t w) const {
    if (full_[w].load(std::memory_order_relaxed) != 0)
      return false;
    uint64_t states = 0;
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(ready_ + w * 64);
    for (int k = 0; k < 8; ++k) {
      uint64_t eight;
      std::memcpy(&eight, bytes + 8 * k, 8);
      states |= eight;
    }
    static_assert(kStale == 0, "untouched groups read as zero bytes");
    return states == 0;
  }
  HostBlock block_, fullBlock_, readyBlock_;
  std::atomic<uint64_t> *words_ = nullptr;
  std::atomic<uint64_t> *full_ = nullptr;
  std::atomic<uint8_t> *ready_ = nullptr;
  size_t bytes_ = 0;
};

/// What a region's host bytes hold. Copy-in is deferred until a launch reads
/// the region, and a region nothing writes needs no shadow at all: a launch
/// that only writes an output never copies it in.
enum class ShadowState : uint8_t {
  Full,         ///< Every byte mirrors caller memory or holds a newer write.
  WrittenOnly,  ///< Only dirty bytes are meaningful: no launch has read it yet.
  ReadThrough,  ///< No shadow and no dirty map: no launch has written it, so
                ///< kernels read the caller's host bytes in place.
  InPlace,      ///< In-place mode: the caller's memory is read and written.
  FreshPages,   ///< The caller's fresh pages (FreshPages.h) are read and written, and are
                ///< rolled back if the region is dropped before a step commits it.
  OnTouch,      ///< A shadow copied in chunk by chunk as accesses first touch them
                ///< (Region::fillTouched): a chunk's bytes are the caller's until then.
  SavedInPlace, ///< The caller's memory is read and written; each chunk's bytes are saved
                ///< before its first write (Region::saveWritten) and put back if the
                ///< region is dropped before a step commits it.
};
const char *shadowStateName(ShadowState s);

/// A maximal set of overlapping argument extents, with its one host shadow.
struct Region {
  CallerMemory *memory = nullptr;
  ByteRange range;
  /// Shadow bytes; shadow()[i] mirrors caller address range.lo + i. Allocated
  /// with the caller's alignment modulo 64, so aligned caller data stays aligned, and a
  /// shadow of kPageExchangeMinimum bytes or more with its alignment modulo 2 MiB, so that
  /// its pages line up with the caller's (PageExchange.h).
  uint8_t *shadow() const { return shadow_; }
  ByteBitmap dirty; ///< Written since their last write-back (empty when ReadThrough).
  std::vector<std::string> buffers;
  /// Whether every argument that mapped onto it allows its pages to be exchanged
  /// (PointerArgument::exchangePages).
  bool exchangePages = false;

  /// A shadow whose bytes are not copied in yet (state WrittenOnly); `threads` may fault in
  /// its pages (Session::Options::copyThreads).
  void allocate(ByteRange r, unsigned threads = 1);
  /// The caller's own host bytes stand in for the shadow (ReadThrough or InPlace).
  void adopt(ByteRange r, ShadowState state);
  /// The caller's fresh pages stand in for the shadow (state FreshPages); `undo` puts them
  /// back unless commit() is called first.
  void adoptFresh(ByteRange r, FreshUndo undo);
  /// Moves the bytes of a FreshPages or SavedInPlace region into a shadow of its own (state
  /// Full) and puts the caller's bytes back: for when its writes must wait for a write-back
  /// after all (a partial sync, a donation, a merge with a larger region); a no-op otherwise.
  void moveIntoShadow();
  /// Makes the writes made in place final (a step); a no-op for other states.
  void commit() {
    fresh_.reset();
    if (state_ == ShadowState::SavedInPlace) {
      fill_.reset(); // nothing left to put back
      storage_.reset();
    }
  }
  /// Turns a WrittenOnly region with nothing dirty (a new shadow) into one copied in as
  /// launches touch it (state OnTouch), for host memory only: a launch that reads and writes
  /// a few rows of a large buffer then copies those rows, not the buffer.
  void copyInOnTouch();
  /// Copies in every chunk of kFillChunk bytes that [offset, offset + size) of an OnTouch
  /// region touches and no access touched before. Safe from concurrent workers: a chunk is
  /// copied once, and a worker that finds it being copied waits for the copy.
  void fillTouched(uint64_t offset, uint64_t size) {
    if (size == 0)
      return;
    for (size_t c = offset / kFillChunk, last = (offset + size - 1) / kFillChunk; c <= last; ++c)
      if (fill_[c].load(std::memory_order_acquire) != kFilled) {
        fillChunks(c, last);
        return;
      }
  }
  /// The caller's bytes stand in for the shadow (state SavedInPlace): host memory that is
  /// this process's own and writable (HostPages.h, MappingQueries::privateAnonymous).
  void adoptSaving(ByteRange r, unsigned threads = 1);
  /// Saves every chunk of kFillChunk bytes that [offset, offset + size) of a SavedInPlace
  /// region touches and no write touched before, before the caller's bytes there change. Safe
  /// from concurrent workers, as fillTouched is.
  void saveWritten(uint64_t offset, uint64_t size) {
    if (size == 0 || !fill_)
      return;
    for (size_t c = offset / kFillChunk, last = (offset + size - 1) / kFillChunk; c <= last; ++c)
      if (fill_[c].load(std::memory_order_acquire) != kFilled) {
        fillChunks(c, last);
        return;
      }
  }
  /// Bytes copied in by fillTouched (or saved by saveWritten) so far.
  uint64_t bytesFilled() const { return bytesFilled_.load(std::memory_order_relaxed); }
  static constexpr size_t kFillChunk = 4096;
  Region() = default;
  Region(const Region &) = delete;
  Region &operator=(const Region &) = delete;
  /// A FreshPages region not committed puts the caller's pages back, as dropping a shadow
  /// drops the writes it holds.
  ~Region();
  ShadowState state() const { return state_; }
  /// Whether the shadow is the caller's memory itself (nothing to copy at write-back).
  bool inPlace() const {
    return state_ == ShadowState::InPlace || state_ == ShadowState::FreshPages ||
           state_ == ShadowState::SavedInPlace;
  }
  /// Whether launches may store into it (ReadThrough regions are never written).
  bool writable() const { return state_ != ShadowState::ReadThrough; }
  void markFull() { state_ = ShadowState::Full; }

private:
  /// Where the shadow of a region of `size` bytes goes in storage_ (allocated here).
  void placeShadow(size_t size, unsigned threads = 1);
  void fillChunks(size_t first, size_t last);
  /// Puts the saved chunks of a SavedInPlace region (`saved`, at the region's offsets: its
  /// storage_) back into the caller's memory.
  void putBack(const uint8_t *saved);

  /// Per chunk of an OnTouch region: not copied in, being copied by one worker, copied; of a
  /// SavedInPlace region, the same for its saving (storage_ then holds the saved bytes).
  enum FillState : uint8_t { kUnfilled = 0, kFilling = 1, kFilled = 2 };
  std::unique_ptr<std::atomic<uint8_t>[]> fill_;
  std::atomic<uint64_t> bytesFilled_{0};

  ShadowState state_ = ShadowState::WrittenOnly;
  HostBlock storage_;
  uint8_t *shadow_ = nullptr;
  std::optional<FreshUndo> fresh_; ///< Set while a FreshPages region is not committed.
};

/// Stores one worker has made and not yet marked in their regions' dirty maps, when several
/// workers run a launch's programs. Marking each store at once took an atomic OR on words and
/// group bits that the other worker's neighbouring programs set too, so a cache line went
/// back and forth between the cores for every row a layer norm wrote (docs/performance.md,
/// twenty-fourth round). A worker instead extends a run per region while its stores stay
/// contiguous, and marks a run when the next store leaves it, once it spans 4 KiB, and when
/// the worker finishes (flush). Nothing reads a dirty map while a launch's programs run.
class DirtyRuns {
public:
  DirtyRuns() = default;
  DirtyRuns(const DirtyRuns &) = delete;
  DirtyRuns &operator=(const DirtyRuns &) = delete;
  ~DirtyRuns() { flush(); }
  /// Bytes [offset, offset + size) of r's shadow were stored to.
  void add(Region &r, uint64_t offset, uint64_t size);
  /// Marks every pending run (before the launch's programs are over).
  void flush();

private:
  struct Run {
    Region *region = nullptr;
    uint64_t lo = 0, hi = 0;
  };
  static void mark(Run &run);
  /// A few regions at once: a layer-norm row stores to y, mean and rstd in turn.
  static constexpr unsigned kRuns = 4;
  Run runs_[kRuns];
  unsigned victim_ = 0; ///< The run given up next when all are in use (round robin).
};

/// Bytes moved between caller memory and shadows.
struct TransferStats {
  uint64_t bytesIn = 0;
  uint64_t bytesOut = 0;      ///< Written back, by copy or by exchange.
  uint64_t bytesExchanged = 0; ///< Of bytesOut, those written back by exchanging pages.
};

/// Regions from this size on are streamed into when a launch only writes them
/// (LaunchMemory::streamsStores): well past a core's L2 and its share of a shared L3, so
/// that the lines stores would keep cached are gone before anyone reads them anyway.
/// Smaller outputs stay in the caches for the caller, who usually reads them next.
constexpr uint64_t kStreamStoresMinimum = uint64_t(8) << 20;

/// Shadows from this size on that a launch reads are copied in as accesses touch them, a
/// chunk of Region::kFillChunk bytes at a time (ShadowState::OnTouch), not whole before it
/// runs: a launch that updates a few rows of a large buffer copies those rows. Below it, a
/// whole copy costs less than the checks.
constexpr uint64_t kCopyInOnTouchMinimum = uint64_t(1) << 20;

/// A launch's view of memory: what the interpreter's loads and stores use.
/// Built by Session::prepare; valid until the session next changes its regions.
class LaunchMemory {
public:
  /// The window of one pointer argument: the bytes its pointers may touch.
  struct Window {
    uint64_t lo = 0, hi = 0; ///< Allowed caller addresses [lo, hi).
    intptr_t toShadow = 0;   ///< shadow address - caller address for its region.
    uint32_t region = 0;
    bool writable = true; ///< False for read-through regions (see ShadowState).
    /// Long stores into the region may bypass the caches (streamsStores).
    bool streamStores = false;
    /// The region, when it is copied in as accesses touch it (ShadowState::OnTouch).
    Region *onTouch = nullptr;
    /// The region, when its bytes are saved as writes first touch them (SavedInPlace).
    Region *saveOnWrite = nullptr;
  };
  struct RegionInfo {
    Region *region = nullptr;
    std::vector<uint32_t> arguments; ///< Indices of the pointer arguments in it.
  };

  /// Host address of the `size` bytes at tagged pointer p, or nullptr when the
  /// access is out of bounds (describe it with describeFault).
  uint8_t *translate(uint64_t p, uint32_t size) const {
    if (const Window *w = windowOf(p))
      return inWindow(*w, p, size);
    return translateUntagged(tagged::address(p), size, nullptr);
  }
  /// Whether a long store through p should go to memory by streaming stores rather than
  /// through the caches: its region is at least kStreamStoresMinimum bytes, the launch
  /// never reads it, and what is stored is where the caller will find it (in-place mode, a
  /// caller's fresh pages, or a shadow whose pages the step exchanges), so caching its lines
  /// would only evict what the launch does read and read each line from memory before
  /// overwriting it. A hint for speed: either way the same bytes are written and marked dirty.
  bool streamsStores(uint64_t p) const {
    const Window *w = windowOf(p);
    return w && w->streamStores;
  }
  /// Whether reads through p are recorded for cross-program hazards (then each must be
  /// translated as itself, not as part of a larger span).
  bool tracksReads(uint64_t p) const { return hazards_ && !immutable(p); }
  /// As translate, for a load: the hazard tracker (if any) sees a read.
  uint8_t *translateForRead(uint64_t p, uint32_t size) const {
    uint8_t *host = translate(p, size);
    // Bytes that no program of the launch can write (a read-through region) take part in
    // no hazard: recording their reads would only cost time.
    if (host && hazards_ && !immutable(p))
      hazards_->record(tagged::address(p), size, AccessKind::Read);
    return host;
  }
  /// As translateForRead, but only for bytes that nothing can change while the
  /// launch runs (a read-through region: no argument in it is written, by any
  /// program), so a load may use them in place instead of copying them. Null
  /// otherwise, recording nothing.
  const uint8_t *translateImmutable(uint64_t p, uint32_t size) const {
    // One look at the window (every in-place load asks); no read of such bytes is recorded.
    const Window *w = windowOf(p);
    return w && !w->writable ? inWindow(*w, p, size) : nullptr;
  }
  /// Whether p points into such a region (a cheap test before a costlier one).
  bool immutable(uint64_t p) const {
    const Window *w = windowOf(p);
    return w && !w->writable;
  }
  /// As translateForRead, for an atomic load: it conflicts with plain writes of other
  /// programs, not with their atomics.
  uint8_t *translateForAtomicRead(uint64_t p, uint32_t size) const {
    uint8_t *host = translate(p, size);
    if (host && hazards_)
      hazards_->record(tagged::address(p), size, AccessKind::AtomicRead);
    return host;
  }
  /// As translate, and records the bytes as written (dirty, and a write for the
  /// hazard tracker).
  uint8_t *translateForWrite(uint64_t p, uint32_t size) const {
    return translateForUpdate(p, size, AccessKind::Write);
  }
  /// As translateForWrite, for a worker of a launch: with concurrent workers the bytes are
  /// marked dirty through `pending`, which the worker flushes before it finishes.
  uint8_t *translateForWrite(uint64_t p, uint32_t size, DirtyRuns &pending) const {
    return translateForUpdate(p, size, AccessKind::Write, &pending);
  }
  /// As translateForWrite, for an atomic read-modify-write: atomics do not
  /// conflict with each other, only with plain accesses.
  uint8_t *translateForAtomic(uint64_t p, uint32_t size) const {
    return translateForUpdate(p, size, AccessKind::Atomic);
  }
  uint8_t *translateForUpdate(uint64_t p, uint32_t size, AccessKind kind,
                              DirtyRuns *pending = nullptr) const {
    uint32_t regionIndex;
    uint8_t *host = translateWritable(p, size, &regionIndex);
    if (!host)
      return nullptr;
    uint64_t a = tagged::address(p);
    Region &r = *regions_[regionIndex].region;
    if (hazards_)
      hazards_->record(a, size, kind);
    if (kind == AccessKind::Write)
      noteChange(); // atomics call it themselves, only when they change the bytes
    if (concurrent_ && pending)
      pending->add(r, a - r.range.lo, size);
    else if (concurrent_)
      r.dirty.setConcurrent(a - r.range.lo, size);
    else
      r.dirty.set(a - r.range.lo, size);
    return host;
  }
  /// As translate, but also null when the bytes may not be stored to (a
  /// read-through region); records nothing. Checks stores before they happen.
  uint8_t *translateWritable(uint64_t p, uint32_t size, uint32_t *regionIndex = nullptr) const {
    // Every host pointer handed out for a write is to bytes saved first, where they are.
    if (const Window *w = windowOf(p)) {
      uint8_t *host = w->writable ? inWindow(*w, p, size) : nullptr;
      if (host && w->saveOnWrite) [[unlikely]]
        w->saveOnWrite->saveWritten(tagged::address(p) - w->saveOnWrite->range.lo, size);
      if (host && regionIndex)
        *regionIndex = w->region;
      return host;
    }
    uint32_t index;
    uint8_t *host = translateUntagged(tagged::address(p), size, &index);
    if (!host)
      return nullptr;
    Region &r = *regions_[index].region;
    if (!r.writable())
      return nullptr;
    if (r.state() == ShadowState::SavedInPlace)
      r.saveWritten(tagged::address(p) - r.range.lo, size);
    if (regionIndex)
      *regionIndex = index;
    return host;
  }

  /// A human-readable account of why translate(p, size) failed: which argument,
  /// how far outside its extent, or that no region holds the address.
  std::string describeFault(uint64_t p, uint32_t size) const;

  /// Counts stores that may have changed memory, while programs run one at a time: a
  /// program in a loop whose state repeats with this count unchanged waits for memory
  /// only another program can change (see Executor.cpp). Not counted concurrently.
  void noteChange() const {
    if (!concurrent_)
      ++changes_;
  }
  uint64_t changes() const { return changes_; }
  bool concurrent() const { return concurrent_; }
  /// The pointer tt.int_to_ptr makes of caller address `a`: tagged with the
  /// argument (or reachable buffer) whose extent holds it, so that accesses
  /// through it stay inside that buffer; where extents overlap, the widest wins
  /// (the first in argument order on a tie), as the one least likely to be a
  /// narrower view of the allocation the address was taken from. An address in
  /// no extent stays untagged: it must land in some region, or it faults.
  uint64_t provenance(uint64_t a) const {
    auto it = std::upper_bound(owners_.begin(), owners_.end(), a,
                               [](uint64_t x, const Owner &o) { return x < o.lo; });
    if (it == owners_.begin() || a >= (--it)->hi)
      return tagged::make(a, 0);
    return tagged::make(a, it->tag);
  }

  /// Marks that several threads will store concurrently (dirty bits use atomics).
  void setConcurrent(bool c) { concurrent_ = c; }
  /// Routes every access to `tracker` (programs must then run one at a time).
  void setHazardTracker(HazardTracker *tracker) { hazards_ = tracker; }
  HazardTracker *hazardTracker() const { return hazards_; }
  /// The pointer value a kernel receives for argument i (tagged with i + 1).
  uint64_t argumentPointer(size_t i) const { return pointers_[i]; }
  const std::vector<RegionInfo> &regions() const { return regions_; }
  const std::vector<PointerArgument> &arguments() const { return arguments_; }

private:
  friend class Session;
  uint8_t *translateUntagged(uint64_t a, uint32_t size, uint32_t *regionIndex) const;
  /// The window of tagged pointer p's argument; null for an untagged (or unknown) tag.
  const Window *windowOf(uint64_t p) const {
    uint32_t t = tagged::tag(p);
    return t != 0 && t <= windows_.size() ? &windows_[t - 1] : nullptr;
  }
  /// Host address of the `size` bytes at p inside window w, or null when they leave it.
  static uint8_t *inWindow(const Window &w, uint64_t p, uint32_t size) {
    uint64_t a = tagged::address(p);
    if (a >= w.lo && a + size <= w.hi && a + size >= a) {
      // Every host pointer handed out is to bytes copied in, whatever the access does next.
      if (w.onTouch) [[unlikely]]
        w.onTouch->fillTouched(a - w.onTouch->range.lo, size);
      return reinterpret_cast<uint8_t *>(intptr_t(a) + w.toShadow);
    }
    return nullptr;
  }
  /// Fills owners_ from the arguments' extents.
  void buildOwners();

  /// A maximal address range whose provenance is one argument's tag.
  struct Owner {
    uint64_t lo = 0, hi = 0;
    uint32_t tag = 0;
  };

  std::vector<PointerArgument> arguments_;
  std::vector<Owner> owners_; ///< Disjoint, sorted by lo.
  std::vector<Window> windows_;
  std::vector<uint64_t> pointers_;
  std::vector<RegionInfo> regions_; ///< Sorted by (memory, range.lo).
  bool concurrent_ = false;
  mutable uint64_t changes_ = 0;
  HazardTracker *hazards_ = nullptr;
};

/// Owns the shadows of the regions touched so far, across launches.
class Session {
public:
  struct Options {
    BoundsMode bounds = BoundsMode::Argument;
    /// Host buffers only: kernels read and write the caller's memory directly,
    /// with no shadows and no copies. Not transactional: a fault leaves the
    /// stores made before it in place.
    bool inPlace = false;
    /// Threads that copy large host regions in and back (give it the launches'
    /// thread count: a memory-bound launch is otherwise left waiting on one
    /// core's write-back).
    unsigned copyThreads = 1;
  };

  /// A buffer given up by a launch (`donate`): at the next step its bytes are
  /// not written back, and afterwards any launch touching them is refused.
  struct Donation {
    const CallerMemory *memory = nullptr;
    ByteRange range;
    std::string buffer; ///< The donated buffer's name.
    std::string donor;  ///< Which launch donated it (for messages).
  };
  Session() = default;
  explicit Session(Options options) : options_(options) {}
  /// Pending writes are dropped, as abandon() drops them.
  ~Session() { abandon(); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Maps a launch's pointer arguments onto regions: extents that overlap each
  /// other or a live region are merged into one region. A region the launch
  /// reads gets every byte no live shadow holds copied in; one it only writes
  /// gets a shadow without copy-in; a host region it only reads is read in
  /// place (see ShadowState). Fails on invalid views or a failed copy.
  bool prepare(const std::vector<PointerArgument> &arguments, LaunchMemory &out,
               std::string &error);
  /// Writes back the dirty bytes that lie inside `ranges` (a partial sync) and
  /// nothing else: other dirty bytes stay pending, shadows stay alive.
  bool sync(CallerMemory &memory, const std::vector<ByteRange> &ranges, std::string &error);
  /// Writes back every dirty byte except those of buffers donated in this
  /// epoch, releases the donated buffers, drops every shadow and starts a new
  /// epoch (a full sync). Only a step donates: sync never does.
  bool step(std::string &error);
  /// Records a donation; it takes effect at the next step. A donated buffer
  /// may still be read and written by later launches of the same epoch.
  void donate(Donation donation) { pendingDonations_.push_back(std::move(donation)); }
  /// The released donation sharing a byte with `range`, if any: a launch
  /// touching it uses a buffer its caller promised not to read again.
  const Donation *released(const CallerMemory &memory, ByteRange range) const;
  /// Donations made in this epoch (released at the next step).
  const std::vector<Donation> &pendingDonations() const { return pendingDonations_; }
  /// Drops every shadow without writing anything back (after a fault).
  void abandon();
  /// Dirty (not yet written back) bytes inside `range` of `memory`.
  uint64_t pendingBytes(const CallerMemory &memory, ByteRange range) const;

  /// Bytes moved so far, copies in as launches touched their regions included.
  TransferStats stats() const;
  const std::vector<std::unique_ptr<Region>> &regions() const { return regions_; }
  const Options &options() const { return options_; }

private:
  /// Writes the dirty bytes of `range` in `region` back; `forget` clears their dirty bits
  /// (a sync: they are clean now). A step passes false, as it drops the region's map next
  /// (clearing a 16 MiB output's map is a 2 MiB memset); if it fails, the bits stay set and
  /// a retry writes those bytes again, with the same values.
  bool writeBack(Region &region, ByteRange range, bool forget, std::string &error);
  /// A step's write-back of `region`: whole dirty pages by exchange where the region allows it
  /// (PageExchange.h), the rest by writeBack.
  bool writeBackFinal(Region &region, std::string &error);
  /// Copies caller bytes into the clean (not dirty) bytes of [lo, hi).
  bool copyInClean(Region &region, uint64_t lo, uint64_t hi, std::string &error);
  /// Runs fn(begin, end, bytesMoved, error) over [begin, begin + count) of a
  /// region's bytes, split over copyThreads when the region is large host
  /// memory; chunks start on bitmap-word boundaries so threads share no word.
  template <class Fn>
  bool forEachChunk(const Region &region, size_t begin, size_t count, uint64_t &moved,
                    std::string &error, Fn fn);
  /// Turns a reused region into what `access` needs (a shadow, a full copy).
  bool upgrade(Region &region, Access access, std::string &error);
  /// Drops `region` (its pending writes with it), keeping count of the bytes it copied in.
  void retire(std::unique_ptr<Region> &region);

  Options options_;
  std::vector<std::unique_ptr<Region>> regions_;
  TransferStats stats_;
  std::vector<Donation> pendingDonations_, releasedDonations_;
};

template <class Fn> void ByteBitmap::forEachRun(size_t offset, size_t count, Fn fn) const {
  size_t end = offset + count;
  size_t i = offset;
  while (i < end) {
    // Dirty maps are mostly clear or mostly set: whole groups are stepped over at a time, 64
    // (32 KiB) at once where no set has touched them (a few rows written in a large region).
    for (;;) {
      if ((i & 32767) == 0 && i + 32768 <= end && groupsUntouched(i >> 15))
        i += 32768;
      else if ((i & 511) == 0 && i + 512 <= end && groupAll(i >> 9, false))
        i += 512;
      else
        break;
    }
    if (i >= end)
      break;
    uint64_t bits = word(i >> 6) >> (i & 63);
    if (bits == 0) {
      i = (i | 63) + 1;
      continue;
    }
    i += __builtin_ctzll(bits);
    if (i >= end)
      break;
    size_t runStart = i;
    while (i < end) {
      // 64 groups known full (32 KiB) in one word of the groups' map, then one group.
      if ((i & 32767) == 0 && i + 32768 <= end &&
          full_[i >> 15].load(std::memory_order_relaxed) == ~uint64_t(0)) {
        i += 32768;
        continue;
      }
      if ((i & 511) == 0 && i + 512 <= end && groupAll(i >> 9, true)) {
        i += 512;
        continue;
      }
      // First clear bit at or after i; zeros shifted in at the top just mean
      // "not in this word".
      uint64_t w = ~word(i >> 6) >> (i & 63);
      if (w == 0) {
        i = (i | 63) + 1;
        continue;
      }
      i += __builtin_ctzll(w);
      break;
    }
    fn(runStart, std::min(i, end));
  }
}

} // namespace ttinterp
