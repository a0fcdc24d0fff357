//===- Session.cpp - Region grouping, shadows, translation, write-back ----===//
#include "ttinterp/memory/Session.h"
#include "ttinterp/memory/PageExchange.h"
#include "ttinterp/memory/StreamingStores.h"
#include "ttinterp/memory/Workers.h"

#include "HostPages.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

namespace ttinterp {

//===----------------------------------------------------------------------===//
// ByteBitmap
//===----------------------------------------------------------------------===//

// A block of at least `bytes` bytes (one word at least), held by `block`, cleared if `zeroed`.
static uint8_t *mapBlock(HostBlock &block, size_t bytes, bool zeroed) {
  bytes = std::max<size_t>(bytes, sizeof(uint64_t));
  block = acquireHostBlock(bytes);
  if (zeroed)
    std::memset(block.get(), 0, bytes);
  return block.get();
}

void ByteBitmap::resize(size_t bytes) {
  // Atomics of uint64_t and uint8_t are plain words and bytes on every platform we build for.
  static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t));
  static_assert(sizeof(std::atomic<uint8_t>) == 1);
  const size_t groups = (bytes + kGroupBytes - 1) / kGroupBytes;
  // Whole groups of words: a group's words are cleared together. Left as the block held
  // them: a group's are cleared when a set first needs them (readyWords).
  words_ = reinterpret_cast<std::atomic<uint64_t> *>(
      mapBlock(block_, groups * (kGroupBytes / 64) * sizeof(uint64_t), false));
  full_ = reinterpret_cast<std::atomic<uint64_t> *>(
      mapBlock(fullBlock_, (groups + 63) / 64 * sizeof(uint64_t), true));
  ready_ = reinterpret_cast<std::atomic<uint8_t> *>(mapBlock(readyBlock_, groups, true));
  bytes_ = bytes;
}

// Calls fn(wordIndex, mask) for the words covering [offset, offset + count).
template <class Fn> static void forEachWordMask(size_t offset, size_t count, Fn fn) {
  size_t end = offset + count;
  while (offset < end) {
    size_t bit = offset & 63;
    size_t n = std::min<size_t>(64 - bit, end - offset);
    uint64_t mask = (n == 64 ? ~uint64_t(0) : ((uint64_t(1) << n) - 1)) << bit;
    fn(offset >> 6, mask);
    offset += n;
  }
}

// Calls partial(wordIndex, mask) for the partial words at the ends of [offset, offset +
// count), and whole(firstWord, endWord) once for the whole words between them: stores of a
// launch's output mark thousands of whole words at a time.
template <class Partial, class Whole>
static void forEachPartialWord(size_t offset, size_t count, Partial partial, Whole whole) {
  size_t end = offset + count;
  size_t firstWhole = (offset + 63) / 64, endWhole = end / 64;
  if (firstWhole >= endWhole) {
    forEachWordMask(offset, count, partial);
    return;
  }
  forEachWordMask(offset, firstWhole * 64 - offset, partial);
  whole(firstWhole, endWhole);
  forEachWordMask(endWhole * 64, end - endWhole * 64, partial);
}

// Single-threaded callers only: whole words in one memset.
template <class Partial>
static void forEachPartialWord(std::atomic<uint64_t> *words, size_t offset, size_t count,
                               unsigned char fill, Partial partial) {
  forEachPartialWord(offset, count, partial, [&](size_t first, size_t end) {
    std::memset(static_cast<void *>(words + first), fill, (end - first) * sizeof(uint64_t));
  });
}

// Sets bits [first, first + count) of `map`: partial words by an atomic OR where another
// thread may set bits of the same word (`concurrent`), whole words by plain stores (whatever
// another thread sets in one is a subset of all ones). Atomic stores, not a memset, when
// concurrent: another thread may OR into the word meanwhile (another program storing to the
// same bytes: a race in the kernel, not ours to make undefined behaviour).
static void setBits(std::atomic<uint64_t> *map, size_t first, size_t count, bool concurrent) {
  if (!concurrent) {
    forEachPartialWord(map, first, count, 0xFF, [&](size_t w, uint64_t mask) {
      map[w].store(map[w].load(std::memory_order_relaxed) | mask, std::memory_order_relaxed);
    });
    return;
  }
  forEachPartialWord(
      first, count,
      [&](size_t w, uint64_t mask) {
        // Only if a bit is missing: most concurrent sets find their word's bits set already.
        if ((map[w].load(std::memory_order_relaxed) & mask) != mask)
          map[w].fetch_or(mask, std::memory_order_relaxed);
      },
      [&](size_t firstWord, size_t endWord) {
        for (size_t w = firstWord; w < endWord; ++w)
          map[w].store(~uint64_t(0), std::memory_order_relaxed);
      });
}

// Clears bits [first, first + count) of `map` (single-threaded callers only).
static void clearBits(std::atomic<uint64_t> *map, size_t first, size_t count) {
  forEachPartialWord(map, first, count, 0, [&](size_t w, uint64_t mask) {
    map[w].store(map[w].load(std::memory_order_relaxed) & ~mask, std::memory_order_relaxed);
  });
}

void ByteBitmap::readyWords(size_t g, bool concurrent) {
  std::atomic<uint8_t> &state = ready_[g];
  if (state.load(std::memory_order_acquire) == kReady)
    return;
  std::atomic<uint64_t> *words = words_ + g * (kGroupBytes / 64);
  uint8_t stale = kStale;
  if (!concurrent || state.compare_exchange_strong(stale, kClearing, std::memory_order_acquire)) {
    for (size_t k = 0; k < kGroupBytes / 64; ++k)
      words[k].store(0, std::memory_order_relaxed);
    state.store(kReady, std::memory_order_release);
    return;
  }
  // Another worker clears them: 8 stores, then its bits can be ORed in too.
  while (state.load(std::memory_order_acquire) != kReady)
    std::atomic_signal_fence(std::memory_order_seq_cst);
}

void ByteBitmap::setInGroup(size_t g, size_t offset, size_t count, bool concurrent) {
  if (groupFull(g))
    return; // every bit of it reads as set already
  readyWords(g, concurrent);
  setBits(words_, offset, count, concurrent);
}

void ByteBitmap::setRange(size_t offset, size_t count, bool concurrent) {
  if (count == 0)
    return;
  const size_t end = offset + count;
  if (offset / kGroupBytes == (end - 1) / kGroupBytes) {
    setInGroup(offset / kGroupBytes, offset, count, concurrent);
    return;
  }
  // Across groups: the ones the range covers whole are marked in full_ only; the one at
  // either end it covers in part gets its bits.
  const size_t firstWhole = (offset + kGroupBytes - 1) / kGroupBytes, endWhole = end / kGroupBytes;
  if (offset < firstWhole * kGroupBytes)
    setInGroup(firstWhole - 1, offset, firstWhole * kGroupBytes - offset, concurrent);
  if (firstWhole < endWhole)
    setBits(full_, firstWhole, endWhole - firstWhole, concurrent);
  if (endWhole * kGroupBytes < end)
    setInGroup(endWhole, endWhole * kGroupBytes, end - endWhole * kGroupBytes, concurrent);
}

bool ByteBitmap::groupAll(size_t g, bool set) const {
  if (groupFull(g))
    return set;
  if (!wordsReady(g))
    return !set;
  const uint64_t want = set ? ~uint64_t(0) : 0;
  uint64_t differ = 0;
  for (size_t k = 0; k < kGroupBytes / 64; ++k)
    differ |= words_[g * (kGroupBytes / 64) + k].load(std::memory_order_relaxed) ^ want;
  return differ == 0;
}

void DirtyRuns::mark(Run &run) {
  if (run.region)
    run.region->dirty.setConcurrent(run.lo, run.hi - run.lo);
  run.region = nullptr;
}

void DirtyRuns::add(Region &r, uint64_t offset, uint64_t size) {
  // A run is marked once it spans this much: its bits are then stored while the lines they
  // describe are still being written, not all at the end of a worker's share (a large output's
  // map is megabytes, and its lines come from memory: vector add's two-thread launch was 4%
  // slower with one run per worker's stretch of programs).
  constexpr uint64_t kMarkedRunBytes = uint64_t(4) << 10;
  const uint64_t end = offset + size;
  Run *free = nullptr;
  for (Run &run : runs_) {
    if (run.region == &r) {
      if (offset <= run.hi && end >= run.lo) { // touches or overlaps: one run still
        run.lo = std::min(run.lo, offset);
        run.hi = std::max(run.hi, end);
        if (run.hi - run.lo >= kMarkedRunBytes)
          mark(run);
        return;
      }
      mark(run); // the stores moved on: this region's run starts again here
      run = {&r, offset, end};
      return;
    }
    if (!run.region && !free)
      free = &run;
  }
  if (!free) {
    free = &runs_[victim_];
    victim_ = (victim_ + 1) % kRuns;
    mark(*free);
  }
  *free = {&r, offset, end};
}

void DirtyRuns::flush() {
  for (Run &run : runs_)
    mark(run);
}

void ByteBitmap::clear(size_t offset, size_t count) {
  if (count == 0)
    return;
  const size_t end = offset + count;
  for (size_t g = offset / kGroupBytes; g * kGroupBytes < end; ++g) {
    const size_t lo = g * kGroupBytes, hi = lo + kGroupBytes;
    const bool full = groupFull(g);
    if (full) // no longer known full (its bits kept below)
      full_[g >> 6].store(full_[g >> 6].load(std::memory_order_relaxed) &
                              ~(uint64_t(1) << (g & 63)),
                          std::memory_order_relaxed);
    if (offset <= lo && hi <= end) {
      ready_[g].store(kStale, std::memory_order_relaxed); // all clear, whatever the words hold
      continue;
    }
    // Cleared in part: the group's words say what is left, all of it if it was full.
    std::atomic<uint64_t> *words = words_ + g * (kGroupBytes / 64);
    if (full || !wordsReady(g))
      for (size_t k = 0; k < kGroupBytes / 64; ++k)
        words[k].store(full ? ~uint64_t(0) : 0, std::memory_order_relaxed);
    ready_[g].store(kReady, std::memory_order_relaxed);
    const size_t from = std::max(offset, lo);
    clearBits(words_, from, std::min(end, hi) - from);
  }
}

size_t ByteBitmap::count(size_t offset, size_t count) const {
  size_t total = 0;
  forEachWordMask(offset, count,
                  [&](size_t w, uint64_t mask) { total += __builtin_popcountll(word(w) & mask); });
  return total;
}

void ByteBitmap::orFrom(const ByteBitmap &other, size_t offset) {
  other.forEachRun(0, other.size(), [&](size_t b, size_t e) { set(offset + b, e - b); });
}

//===----------------------------------------------------------------------===//
// Region
//===----------------------------------------------------------------------===//

const char *accessName(Access a) {
  switch (a) {
  case Access::None:
    return "none";
  case Access::Read:
    return "read";
  case Access::Write:
    return "write";
  case Access::ReadWrite:
    return "read-write";
  }
  return "?";
}

const char *shadowStateName(ShadowState s) {
  switch (s) {
  case ShadowState::Full:
    return "shadow";
  case ShadowState::WrittenOnly:
    return "shadow (written only, not copied in)";
  case ShadowState::ReadThrough:
    return "read in place (no shadow)";
  case ShadowState::InPlace:
    return "in place";
  case ShadowState::FreshPages:
    return "in place (fresh pages, rolled back on a fault)";
  case ShadowState::OnTouch:
    return "shadow (copied in as touched)";
  case ShadowState::SavedInPlace:
    return "in place (saved as first written, put back on a fault)";
  }
  return "?";
}

void Region::placeShadow(size_t size, unsigned threads) {
  // Up to modulus - 1 bytes to reach a boundary plus up to modulus - 1 to match the caller's
  // offset from one; blocks of 2 MiB and more start on a 2 MiB boundary already.
  const bool large = size >= kPageExchangeMinimum;
  const uintptr_t modulus = large ? uintptr_t(2) << 20 : 64;
  storage_ = acquireHostBlock(size + (large ? modulus : 2 * modulus), threads);
  uintptr_t base = reinterpret_cast<uintptr_t>(storage_.get());
  uintptr_t aligned = (base + modulus - 1) & ~(modulus - 1);
  shadow_ = reinterpret_cast<uint8_t *>(aligned + (range.lo & (modulus - 1)));
}

void Region::allocate(ByteRange r, unsigned threads) {
  range = r;
  state_ = ShadowState::WrittenOnly;
  placeShadow(r.hi - r.lo, threads);
  dirty.resize(r.hi - r.lo);
}

void Region::copyInOnTouch() {
  const size_t chunks = (range.hi - range.lo + kFillChunk - 1) / kFillChunk;
  fill_ = std::make_unique<std::atomic<uint8_t>[]>(chunks); // value-initialised: kUnfilled
  state_ = ShadowState::OnTouch;
}

void Region::fillChunks(size_t first, size_t last) {
  const size_t size = range.hi - range.lo;
  for (size_t c = first; c <= last; ++c) {
    std::atomic<uint8_t> &state = fill_[c];
    uint8_t seen = state.load(std::memory_order_acquire);
    if (seen == kFilled)
      continue;
    if (seen == kUnfilled &&
        state.compare_exchange_strong(seen, kFilling, std::memory_order_acquire)) {
      // Host memory only (Session::prepare): the caller's bytes are read where they are. No
      // chunk holds a dirty byte before it is filled: every access fills what it touches first.
      const size_t at = c * kFillChunk, n = std::min(kFillChunk, size - at);
      const void *from = reinterpret_cast<const void *>(uintptr_t(range.lo + at));
      if (state_ == ShadowState::SavedInPlace && size >= kStreamStoresMinimum) {
        // Read back only if the writes are dropped: streamed past the caches when the region
        // is too large to stay in them anyway (measured: an in-place add over 64 MiB 7%
        // faster, with this fence; smaller regions copy plainly: an 8 MB cross entropy was
        // 2% slower streamed, a 1 MiB add 10%). Fenced before the chunk is marked saved, so
        // whichever thread puts it back reads the copy.
        streamingCopy(storage_.get() + at, from, n);
        fenceStreamingStores();
      } else {
        std::memcpy((state_ == ShadowState::SavedInPlace ? storage_.get() : shadow_) + at, from, n);
      }
      bytesFilled_.fetch_add(n, std::memory_order_relaxed);
      state.store(kFilled, std::memory_order_release);
      continue;
    }
    // Another worker is copying it (a few hundred nanoseconds, unless it lost its core).
    while (state.load(std::memory_order_acquire) != kFilled)
      std::this_thread::yield();
  }
}

void Region::adoptFresh(ByteRange r, FreshUndo undo) {
  adopt(r, ShadowState::InPlace); // the caller's bytes, with a dirty map
  state_ = ShadowState::FreshPages;
  fresh_ = std::move(undo);
}

void Region::adoptSaving(ByteRange r, unsigned threads) {
  adopt(r, ShadowState::InPlace); // the caller's bytes, with a dirty map
  state_ = ShadowState::SavedInPlace;
  const size_t size = r.hi - r.lo;
  storage_ = acquireHostBlock(size, threads); // the saved bytes, at the region's offsets
  fill_ = std::make_unique<std::atomic<uint8_t>[]>((size + kFillChunk - 1) / kFillChunk);
}

void Region::putBack(const uint8_t *saved) {
  // Only the bytes the launches wrote: what else the caller changes meanwhile stays, as it
  // does when a shadow is dropped.
  const size_t size = range.hi - range.lo;
  for (size_t c = 0, chunks = (size + kFillChunk - 1) / kFillChunk; c < chunks; ++c)
    if (fill_[c].load(std::memory_order_relaxed) == kFilled)
      dirty.forEachRun(
          c * kFillChunk, std::min(kFillChunk, size - c * kFillChunk), [&](size_t b, size_t e) {
            std::memcpy(reinterpret_cast<void *>(uintptr_t(range.lo + b)), saved + b, e - b);
          });
}

void Region::moveIntoShadow() {
  const bool saving = state_ == ShadowState::SavedInPlace && fill_;
  if (state_ != ShadowState::FreshPages && !saving)
    return;
  size_t size = range.hi - range.lo;
  HostBlock saved = std::move(storage_); // a SavedInPlace region's saved bytes
  placeShadow(size);
  // Written bytes hold the launches' values, the rest what the caller had: a full mirror.
  std::memcpy(shadow_, reinterpret_cast<const void *>(static_cast<uintptr_t>(range.lo)), size);
  if (saving) {
    putBack(saved.get());
    fill_.reset();
  } else {
    rollBackFreshPages(*fresh_);
    fresh_.reset();
  }
  state_ = ShadowState::Full;
}

Region::~Region() {
  if (fresh_)
    rollBackFreshPages(*fresh_);
  if (state_ == ShadowState::SavedInPlace && fill_)
    putBack(storage_.get());
}

void Region::adopt(ByteRange r, ShadowState state) {
  range = r;
  state_ = state;
  storage_.reset();
  shadow_ = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(r.lo));
  // Nothing is ever written through a read-through region: no dirty map.
  dirty.resize(state == ShadowState::InPlace ? r.hi - r.lo : 0);
}

//===----------------------------------------------------------------------===//
// LaunchMemory
//===----------------------------------------------------------------------===//

namespace {
/// An argument as messages name it; a reachable buffer has no parameter name.
std::string who(const PointerArgument &arg) {
  return arg.reachable ? fmt::format("reachable buffer '{}'", arg.buffer)
                       : fmt::format("argument '{}' (buffer '{}')", arg.name, arg.buffer);
}
} // namespace

uint8_t *LaunchMemory::translateUntagged(uint64_t a, uint32_t size, uint32_t *regionIndex) const {
  // Regions are few; a binary search over their starts finds the candidate.
  auto it =
      std::upper_bound(regions_.begin(), regions_.end(), a,
                       [](uint64_t x, const RegionInfo &r) { return x < r.region->range.lo; });
  if (it == regions_.begin())
    return nullptr;
  --it;
  Region &r = *it->region;
  if (a + size > r.range.hi || a + size < a)
    return nullptr;
  if (regionIndex)
    *regionIndex = uint32_t(it - regions_.begin());
  if (r.state() == ShadowState::OnTouch)
    r.fillTouched(a - r.range.lo, size);
  return r.shadow() + (a - r.range.lo);
}

std::string LaunchMemory::describeFault(uint64_t p, uint32_t size) const {
  uint32_t t = tagged::tag(p);
  uint64_t a = tagged::address(p);
  if (translate(p, size))
    // In bounds, so the store was refused: the access analysis missed it.
    return fmt::format("address 0x{:x} ({} bytes) lies in a region that the kernel's access "
                       "analysis found read-only, so it has no shadow to store into (an internal "
                       "error in ttinterp: please report it with the kernel)",
                       a, size);
  if (t == 0 || t > windows_.size())
    return fmt::format("address 0x{:x} ({} bytes) is not inside any argument's or reachable "
                       "buffer's memory (pointer of unknown provenance)",
                       a, size);
  const PointerArgument &arg = arguments_[t - 1];
  const Window &w = windows_[t - 1];
  size_t elem = byteSize(arg.view.dtype);
  std::string where;
  if (a < w.lo)
    where = fmt::format("{} bytes before its start", w.lo - a);
  else
    where = fmt::format("{} bytes past its end", a + size - w.hi);
  // Element index relative to element 0 of the argument, in its own dtype.
  int64_t delta = int64_t(a - arg.view.address);
  std::string index = delta % int64_t(elem) == 0 ? fmt::format("element {}", delta / int64_t(elem))
                                                 : fmt::format("byte offset {}", delta);
  return fmt::format("{} of {}, address 0x{:x}, is {} (allowed bytes [0x{:x}, 0x{:x}))", index,
                     who(arg), a, where, w.lo, w.hi);
}

void LaunchMemory::buildOwners() {
  // A sweep over the extents' ends: each elementary interval between two ends
  // belongs to the widest extent covering it (a max-heap of the open extents,
  // closed ones dropped lazily when they reach the top).
  struct Extent {
    uint64_t lo, hi;
    uint32_t tag;
  };
  std::vector<Extent> extents;
  std::vector<uint64_t> points;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    ByteRange e = arguments_[i].view.extent();
    if (e.empty())
      continue;
    extents.push_back({e.lo, e.hi, uint32_t(i + 1)});
    points.push_back(e.lo);
    points.push_back(e.hi);
  }
  std::sort(extents.begin(), extents.end(),
            [](const Extent &x, const Extent &y) { return x.lo < y.lo; });
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto lessPreferred = [](const Extent &x, const Extent &y) {
    uint64_t wx = x.hi - x.lo, wy = y.hi - y.lo;
    return wx != wy ? wx < wy : x.tag > y.tag;
  };
  std::vector<Extent> open;
  owners_.clear();
  size_t next = 0;
  for (size_t k = 0; k + 1 < points.size(); ++k) {
    uint64_t lo = points[k], hi = points[k + 1];
    for (; next < extents.size() && extents[next].lo <= lo; ++next) {
      open.push_back(extents[next]);
      std::push_heap(open.begin(), open.end(), lessPreferred);
    }
    while (!open.empty() && open.front().hi <= lo) {
      std::pop_heap(open.begin(), open.end(), lessPreferred);
      open.pop_back();
    }
    if (open.empty())
      continue;
    uint32_t tag = open.front().tag;
    if (!owners_.empty() && owners_.back().hi == lo && owners_.back().tag == tag)
      owners_.back().hi = hi;
    else
      owners_.push_back({lo, hi, tag});
  }
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

namespace {
// One interval in the grouping sweep: a live region or a new argument extent.
struct Interval {
  CallerMemory *memory;
  ByteRange range;
  Region *live = nullptr; // set for live regions
  int argument = -1;      // set for argument extents
};

/// Whether a new shadow (nothing dirty in it yet) that a launch reads is copied in as touched
/// rather than whole: for host memory, from kCopyInOnTouchMinimum bytes.
bool copiesInOnTouch(const Region &region) {
  return region.memory == &HostMemory::instance() &&
         region.range.hi - region.range.lo >= kCopyInOnTouchMinimum;
}
} // namespace

bool Session::prepare(const std::vector<PointerArgument> &arguments, LaunchMemory &out,
                      std::string &error) {
  out = LaunchMemory();
  out.arguments_ = arguments;
  if (arguments.size() > tagged::kMaxTag - 1) {
    error = fmt::format("too many pointer arguments and reachable buffers ({})", arguments.size());
    return false;
  }
  std::vector<Interval> intervals;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const PointerArgument &arg = arguments[i];
    if (auto why = arg.view.validate()) {
      error = fmt::format("{}: {}", who(arg), *why);
      return false;
    }
    ByteRange e = arg.view.extent();
    if (e.hi > tagged::kAddressMask) {
      error = fmt::format("{} lies above the 48-bit address space ttinterp supports", who(arg));
      return false;
    }
    if (arg.kernelAddress && (*arg.kernelAddress < e.lo || *arg.kernelAddress > e.hi)) {
      error = fmt::format("{}: its pointer {:#x} lies outside its view [{:#x}, {:#x})", who(arg),
                          *arg.kernelAddress, e.lo, e.hi);
      return false;
    }
    if (options_.inPlace && arg.memory != &HostMemory::instance()) {
      error = fmt::format("{} is in {} memory: in-place mode needs host buffers", who(arg),
                          arg.memory->name());
      return false;
    }
    if (!e.empty())
      intervals.push_back({arg.memory, e, nullptr, int(i)});
  }
  for (auto &r : regions_)
    intervals.push_back({r->memory, r->range, r.get(), -1});
  std::sort(intervals.begin(), intervals.end(), [](const Interval &x, const Interval &y) {
    if (x.memory != y.memory)
      return std::less<CallerMemory *>()(x.memory, y.memory);
    return x.range.lo < y.range.lo;
  });

  // Sweep: overlapping intervals of one memory form one group, i.e. one region.
  std::vector<std::unique_ptr<Region>> next;
  std::vector<std::vector<int>> groupArguments;
  std::vector<Access> groupAccess;
  for (size_t i = 0; i < intervals.size();) {
    size_t j = i;
    ByteRange span = intervals[i].range;
    std::vector<Region *> lives;
    std::vector<int> args;
    while (j < intervals.size() && intervals[j].memory == intervals[i].memory &&
           (j == i || intervals[j].range.lo < span.hi)) {
      span.hi = std::max(span.hi, intervals[j].range.hi);
      if (intervals[j].live)
        lives.push_back(intervals[j].live);
      else
        args.push_back(intervals[j].argument);
      ++j;
    }
    Access access = Access::None;
    for (int a : args)
      access = access | arguments[a].access;
    CallerMemory *memory = intervals[i].memory;
    // Takes a live region out of regions_ (its slot is compacted away below).
    auto take = [&](Region *live) {
      for (auto &r : regions_)
        if (r.get() == live)
          return std::move(r);
      return std::unique_ptr<Region>();
    };
    auto inherit = [&](Region &region, Region &live) {
      stats_.bytesIn += live.bytesFilled();
      region.buffers.insert(region.buffers.end(), live.buffers.begin(), live.buffers.end());
      if (live.dirty.size())
        region.dirty.orFrom(live.dirty, live.range.lo - region.range.lo);
    };
    bool allReadThrough = std::all_of(lives.begin(), lives.end(), [](Region *r) {
      return r->state() == ShadowState::ReadThrough;
    });
    bool exchange =
        std::all_of(args.begin(), args.end(), [&](int a) { return arguments[a].exchangePages; }) &&
        std::all_of(lives.begin(), lives.end(), [](Region *r) { return r->exchangePages; });
    std::unique_ptr<Region> region;
    if (lives.size() == 1 && lives[0]->range.lo == span.lo && lives[0]->range.hi == span.hi) {
      // The live region already covers the group: keep it, with what this
      // launch needs added (a shadow, the bytes not copied in yet).
      region = take(lives[0]);
      if (!upgrade(*region, access, error))
        return false;
    } else if (!writes(access) && allReadThrough && memory->hostAddressable()) {
      // In place or not: memory no launch writes is read where it is, with no dirty map
      // to keep and nothing to walk at write-back.
      region = std::make_unique<Region>();
      region->memory = memory;
      region->adopt(span, ShadowState::ReadThrough);
      for (Region *live : lives)
        inherit(*region, *take(live));
    } else if (options_.inPlace) {
      // No copies: the caller's memory is the shadow; keep the dirty bytes.
      region = std::make_unique<Region>();
      region->memory = memory;
      region->adopt(span, ShadowState::InPlace);
      for (Region *live : lives)
        inherit(*region, *take(live));
    } else if (std::optional<FreshUndo> fresh;
               lives.empty() && writes(access) && memory == &HostMemory::instance() &&
               (fresh = claimFreshPages(span, options_.copyThreads))) {
      // Pages nothing has touched (a wrapper's fresh output): written where they are, and
      // put back if the writes are dropped, so no shadow and no write-back copy.
      region = std::make_unique<Region>();
      region->memory = memory;
      region->adoptFresh(span, std::move(*fresh));
    } else if (lives.empty() && reads(access) && writes(access) &&
               memory == &HostMemory::instance() && span.hi - span.lo >= kCopyInOnTouchMinimum &&
               MappingQueries().privateAnonymous(span.lo, span.hi)) {
      // A large buffer read and written (an in-place update, a gradient written over its
      // input): written where it is, each chunk saved before its first write and put back
      // if the writes are dropped, so nothing is copied in to be read and nothing back.
      region = std::make_unique<Region>();
      region->memory = memory;
      region->adoptSaving(span, options_.copyThreads);
    } else {
      region = std::make_unique<Region>();
      region->memory = memory;
      region->allocate(span, options_.copyThreads);
      // Live shadows may hold writes that have not gone back yet, so they win
      // over caller memory; what no shadow holds is filled in only if read.
      std::vector<ByteRange> unfilled;
      uint64_t cursor = span.lo;
      for (Region *live : lives) {
        if (cursor < live->range.lo)
          unfilled.push_back({cursor, live->range.lo});
        // (A FreshPages region's pages are put back when it is dropped, after this copy.)
        if (live->state() != ShadowState::ReadThrough)
          std::memcpy(region->shadow() + (live->range.lo - span.lo), live->shadow(),
                      live->range.hi - live->range.lo);
        if (live->state() != ShadowState::Full)
          unfilled.push_back(live->range);
        cursor = live->range.hi;
        inherit(*region, *take(live)); // frees `live`
      }
      if (cursor < span.hi)
        unfilled.push_back({cursor, span.hi});
      if (reads(access) && lives.empty() && copiesInOnTouch(*region)) {
        region->copyInOnTouch();
      } else if (reads(access)) {
        for (const ByteRange &u : unfilled)
          if (!copyInClean(*region, u.lo, u.hi, error))
            return false;
        region->markFull();
      } else if (unfilled.empty()) {
        region->markFull();
      }
    }
    region->exchangePages = exchange;
    for (int a : args)
      if (std::find(region->buffers.begin(), region->buffers.end(), arguments[a].buffer) ==
          region->buffers.end())
        region->buffers.push_back(arguments[a].buffer);
    next.push_back(std::move(region));
    groupArguments.push_back(std::move(args));
    groupAccess.push_back(access);
    i = j;
  }
  regions_ = std::move(next);

  // Only regions this launch touches are visible to it.
  out.windows_.assign(arguments.size(), LaunchMemory::Window());
  out.pointers_.assign(arguments.size(), 0);
  for (size_t g = 0; g < regions_.size(); ++g) {
    if (groupArguments[g].empty())
      continue;
    Region *region = regions_[g].get();
    uint32_t index = uint32_t(out.regions_.size());
    LaunchMemory::RegionInfo info;
    info.region = region;
    // Not into a shadow copied back at the step (the copy would read every line from memory
    // again). A caller's fresh pages are the last stop too: they were faulted in and zeroed
    // when claimed, so a plain store would read each zeroed line back before overwriting it.
    const bool lastWrite = region->state() == ShadowState::InPlace ||
                           region->state() == ShadowState::FreshPages ||
                           (region->exchangePages && !region->inPlace());
    const bool streamStores = region->writable() && lastWrite && !reads(groupAccess[g]) &&
                              region->range.hi - region->range.lo >= kStreamStoresMinimum;
    for (int a : groupArguments[g]) {
      info.arguments.push_back(uint32_t(a));
      LaunchMemory::Window &w = out.windows_[a];
      ByteRange bounds =
          options_.bounds == BoundsMode::Argument ? arguments[a].view.extent() : region->range;
      w.lo = bounds.lo;
      w.hi = bounds.hi;
      w.toShadow = intptr_t(region->shadow()) - intptr_t(region->range.lo);
      w.region = index;
      w.writable = region->writable();
      w.streamStores = streamStores;
      w.onTouch = region->state() == ShadowState::OnTouch ? region : nullptr;
      w.saveOnWrite = region->state() == ShadowState::SavedInPlace ? region : nullptr;
    }
    std::sort(info.arguments.begin(), info.arguments.end());
    out.regions_.push_back(std::move(info));
  }
  for (size_t a = 0; a < arguments.size(); ++a)
    out.pointers_[a] =
        tagged::make(arguments[a].kernelAddress.value_or(arguments[a].view.address), uint32_t(a + 1));
  out.buildOwners();
  return true;
}

template <class Fn>
bool Session::forEachChunk(const Region &region, size_t begin, size_t count, uint64_t &moved,
                           std::string &error, Fn fn) {
  constexpr size_t kParallelMinimum = size_t(8) << 20;
  unsigned threads = options_.copyThreads;
  if (threads <= 1 || count < kParallelMinimum || !region.memory->hostAddressable())
    return fn(begin, begin + count, moved, error);
  // Chunks of at least 1 MiB, about eight per thread, claimed as threads get
  // to them (runOnThreads), rather than a fixed share each. Boundaries fall on
  // multiples of 64 bytes, so no two chunks share a word of the dirty bitmap.
  size_t end = begin + count;
  size_t step =
      std::max<size_t>(size_t(1) << 20, (count / (size_t(threads) * 8) + 63) & ~size_t(63));
  std::vector<size_t> bounds{begin};
  for (size_t b = (begin + step) & ~size_t(63); b < end; b += step)
    bounds.push_back(b);
  bounds.push_back(end);
  size_t chunks = bounds.size() - 1;
  std::vector<uint64_t> bytes(chunks, 0);
  std::vector<std::string> errors(chunks);
  std::vector<char> ok(chunks, 1);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t c; (c = next.fetch_add(1)) < chunks;)
      ok[c] = fn(bounds[c], bounds[c + 1], bytes[c], errors[c]);
  };
  runOnThreads(unsigned(std::min<size_t>(threads, chunks)), work);
  for (size_t c = 0; c < chunks; ++c) {
    moved += bytes[c];
    if (!ok[c]) {
      error = errors[c];
      return false;
    }
  }
  return true;
}

bool Session::copyInClean(Region &region, uint64_t lo, uint64_t hi, std::string &error) {
  return forEachChunk(region, lo - region.range.lo, hi - lo, stats_.bytesIn, error,
                      [&region](size_t begin, size_t end, uint64_t &moved, std::string &err) {
                        size_t cursor = begin;
                        bool ok = true;
                        auto copy = [&](size_t b, size_t e) {
                          ok = region.memory->read(region.range.lo + b, region.shadow() + b, e - b,
                                                   err);
                          moved += e - b;
                        };
                        region.dirty.forEachRun(begin, end - begin, [&](size_t b, size_t e) {
                          if (ok && cursor < b)
                            copy(cursor, b);
                          cursor = e;
                        });
                        if (ok && cursor < end)
                          copy(cursor, end);
                        return ok;
                      });
}

bool Session::upgrade(Region &region, Access access, std::string &error) {
  switch (region.state()) {
  case ShadowState::Full:
  case ShadowState::InPlace:
  case ShadowState::FreshPages: // the caller's bytes, with the writes made so far
  case ShadowState::OnTouch:    // copied in as accesses touch it, in this launch too
  case ShadowState::SavedInPlace: // saved as writes touch it, in this launch too
    return true;
  case ShadowState::ReadThrough:
    if (!writes(access))
      return true;
    if (options_.inPlace) {
      // The caller's bytes are the shadow from now on; nothing is copied.
      region.adopt(region.range, ShadowState::InPlace);
      return true;
    }
    // Never written, so no dirty bytes to keep: a fresh shadow.
    region.allocate(region.range, options_.copyThreads);
    if (reads(access) && copiesInOnTouch(region)) {
      region.copyInOnTouch();
      return true;
    }
    break;
  case ShadowState::WrittenOnly:
    break;
  }
  if (reads(access)) {
    if (!copyInClean(region, region.range.lo, region.range.hi, error))
      return false;
    region.markFull();
  }
  return true;
}

bool Session::writeBack(Region &region, ByteRange range, bool forget, std::string &error) {
  if (!region.writable())
    return true;
  ByteRange r{std::max(range.lo, region.range.lo), std::min(range.hi, region.range.hi)};
  if (r.hi <= r.lo)
    return true;
  return forEachChunk(region, r.lo - region.range.lo, r.hi - r.lo, stats_.bytesOut, error,
                      [&region, forget](size_t begin, size_t end, uint64_t &moved, std::string &err) {
                        bool ok = true;
                        region.dirty.forEachRun(begin, end - begin, [&](size_t b, size_t e) {
                          if (!ok)
                            return;
                          // In place, the bytes are already there; they still count as written
                          // back.
                          if (!region.inPlace())
                            ok = region.memory->write(region.range.lo + b, region.shadow() + b,
                                                      e - b, err);
                          moved += e - b;
                        });
                        if (ok && forget)
                          region.dirty.clear(begin, end - begin);
                        return ok;
                      });
}

bool Session::writeBackFinal(Region &region, std::string &error) {
  if (!region.exchangePages || region.memory != &HostMemory::instance() || !region.writable() ||
      region.inPlace() || region.range.hi - region.range.lo < kPageExchangeMinimum)
    return writeBack(region, region.range, /*forget=*/false, error);
  // One pass over the dirty map: the whole pages of each run exchanged, its partial end pages
  // and shorter runs copied as they come (the map of a 16 MiB output is 2 MiB: reading it twice
  // costs about what copying a tenth of the output does). If an exchange is refused, the rest
  // goes the usual way, on every copy thread.
  const uint64_t page = hostPageSize(), base = region.range.lo;
  bool ok = true, exchanging = true;
  size_t done = 0; // region bytes [0, done) are written back
  auto copy = [&](size_t b, size_t e) {
    if (ok && b < e) {
      ok = region.memory->write(base + b, region.shadow() + b, e - b, error);
      stats_.bytesOut += e - b;
    }
  };
  region.dirty.forEachRun(0, region.dirty.size(), [&](size_t b, size_t e) {
    if (!ok || !exchanging)
      return;
    const uint64_t loAt = (base + b + page - 1) & ~(page - 1), hiAt = (base + e) & ~(page - 1);
    if (hiAt > loAt && hiAt - loAt >= kPageExchangeMinimum) {
      const size_t lo = size_t(loAt - base), hi = size_t(hiAt - base);
      if (!exchangePages(base + lo, region.shadow() + lo, hi - lo)) {
        exchanging = false;
        return;
      }
      stats_.bytesOut += hi - lo;
      stats_.bytesExchanged += hi - lo;
      copy(b, lo);
      copy(hi, e);
    } else {
      copy(b, e);
    }
    done = e;
  });
  if (!ok)
    return false;
  return exchanging || writeBack(region, {base + done, region.range.hi}, /*forget=*/false, error);
}

bool Session::sync(CallerMemory &memory, const std::vector<ByteRange> &ranges, std::string &error) {
  for (auto &region : regions_)
    if (region->memory == &memory)
      for (const ByteRange &r : ranges) {
        // Synced bytes are final, but a fault before the step would roll back the fresh
        // pages (or put back the saved bytes) under them: the region's other writes go on
        // waiting in a shadow.
        if (r.overlaps(region->range))
          region->moveIntoShadow();
        if (!writeBack(*region, r, /*forget=*/true, error))
          return false;
      }
  return true;
}

bool Session::step(std::string &error) {
  // Donated bytes are given up, not written back.
  for (const Donation &d : pendingDonations_)
    for (auto &region : regions_) {
      if (region->memory != d.memory)
        continue;
      uint64_t lo = std::max(d.range.lo, region->range.lo);
      uint64_t hi = std::min(d.range.hi, region->range.hi);
      if (lo < hi && region->writable()) {
        region->moveIntoShadow(); // donated bytes written in place must be put back
        region->dirty.clear(lo - region->range.lo, hi - lo);
      }
    }
  for (auto &region : regions_) {
    if (!writeBackFinal(*region, error))
      return false;
    region->commit();
  }
  for (auto &region : regions_)
    retire(region);
  regions_.clear();
  releasedDonations_.insert(releasedDonations_.end(), pendingDonations_.begin(),
                            pendingDonations_.end());
  pendingDonations_.clear();
  return true;
}

const Session::Donation *Session::released(const CallerMemory &memory, ByteRange range) const {
  for (const Donation &d : releasedDonations_)
    if (d.memory == &memory && d.range.overlaps(range))
      return &d;
  return nullptr;
}

// Dropping the regions drops their pending writes: shadows freed, fresh pages rolled back.
void Session::abandon() {
  for (auto &region : regions_)
    retire(region);
  regions_.clear();
}

void Session::retire(std::unique_ptr<Region> &region) {
  stats_.bytesIn += region->bytesFilled();
  region.reset();
}

TransferStats Session::stats() const {
  TransferStats s = stats_;
  for (const auto &region : regions_)
    s.bytesIn += region->bytesFilled();
  return s;
}

uint64_t Session::pendingBytes(const CallerMemory &memory, ByteRange range) const {
  uint64_t total = 0;
  for (auto &region : regions_) {
    if (region->memory != &memory || !region->writable())
      continue;
    uint64_t lo = std::max(range.lo, region->range.lo), hi = std::min(range.hi, region->range.hi);
    if (lo < hi)
      total += region->dirty.count(lo - region->range.lo, hi - lo);
  }
  return total;
}

} // namespace ttinterp
