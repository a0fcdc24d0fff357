//===- PageExchange.cpp - Final write-backs of whole pages by mremap ------===//
#include "ttinterp/memory/PageExchange.h"

#include "HostPages.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ttinterp {
namespace {

/// Boundaries exchanges may still add. An exchange takes the most it could add before it moves
/// anything and gives back what it did not; no lock, so that a fork in the middle of one leaves
/// none held in the child.
constexpr int64_t kBudget = 4096;
std::atomic<int64_t> budget{kBudget};

} // namespace

uint64_t setPageExchangeBudget(uint64_t boundaries) {
  return uint64_t(std::max<int64_t>(0, budget.exchange(int64_t(boundaries))));
}

#if defined(__linux__) && defined(MREMAP_FIXED)

namespace {

constexpr int kDontUnmap = 4; // MREMAP_DONTUNMAP (Linux 5.7); older glibc headers lack it

/// Offsets in (0, size) where one of `spans` (mappings covering [base, base + size)) ends.
void innerBoundaries(const std::vector<MappingSpan> &spans, uint64_t base, uint64_t size,
                     std::vector<uint64_t> &out) {
  for (const MappingSpan &m : spans)
    if (m.hi > base && m.hi < base + size)
      out.push_back(m.hi - base);
}

/// Where an exchange parks the caller's old pages on their way to the shadow: a reserved range
/// at the caller's offset within 2 MiB, so that huge pages on either side move as one page-table
/// entry each instead of being split into 512. Each piece's part of it is unmapped by the piece's
/// last move (and may then be taken by another thread's mmap); what no piece used is released.
class SpareRange {
public:
  SpareRange(uint64_t caller, size_t size) : size_(size) {
    constexpr size_t kHuge = size_t(2) << 20;
    const size_t reserved = size + kHuge;
    void *m = mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
      return;
    auto *lowest = static_cast<uint8_t *>(m);
    base_ = lowest + ((caller - reinterpret_cast<uintptr_t>(lowest)) & (kHuge - 1));
    if (base_ > lowest)
      munmap(lowest, size_t(base_ - lowest));
    if (base_ + size < lowest + reserved)
      munmap(base_ + size, size_t(lowest + reserved - (base_ + size)));
  }
  bool reserved() const { return base_ != nullptr; }
  uint8_t *at(size_t offset) const { return base_ + offset; }
  /// Releases [offset, size) of the reservation, which no piece moved through.
  void releaseFrom(size_t offset) const {
    if (offset < size_)
      munmap(base_ + offset, size_ - offset);
  }

private:
  uint8_t *base_ = nullptr;
  size_t size_;
};

/// One piece of an exchange, inside one mapping on each side, parking the caller's old pages
/// at `spare` (its own part of a SpareRange). False when nothing moved.
bool exchangePiece(uint8_t *caller, uint8_t *shadow, uint8_t *spare, size_t size) {
  // 1. The caller's pages go to the spare range. The caller's range stays mapped, empty, so
  // nothing else can be mapped there meanwhile (an unmapped gap could be taken by another
  // thread's mmap, which the next move would then replace).
  if (mremap(caller, size, size, MREMAP_MAYMOVE | MREMAP_FIXED | kDontUnmap, spare) == MAP_FAILED)
    return false;
  // 2. The shadow's pages go to the caller's range, whose old bytes are dead: every one is
  // being written back. If they cannot, the write-back copies into the empty range instead.
  if (mremap(shadow, size, size, MREMAP_MAYMOVE | MREMAP_FIXED | kDontUnmap, caller) ==
      MAP_FAILED) {
    std::memcpy(caller, shadow, size);
    munmap(spare, size);
    return true;
  }
  // 3. The caller's old pages go to the shadow's range, so the shadow's block keeps memory
  // already faulted in for its next use. If they cannot, the range reads as zeros: its bytes
  // were dead too.
  if (mremap(spare, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, shadow) == MAP_FAILED)
    munmap(spare, size);
  return true;
}

} // namespace

bool exchangePages(uint64_t caller, uint8_t *shadow, size_t size) {
  const uint64_t page = hostPageSize();
  const uint64_t shadowAt = reinterpret_cast<uint64_t>(shadow);
  if (size < kPageExchangeMinimum || caller % page || shadowAt % page || size % page)
    return false;
  // Without PROCMAP_QUERY the checks read the whole map twice: worth it only for larger copies.
  if (size < (uint64_t(16) << 20) && !MappingQueries::cheap())
    return false;
  MappingQueries mappings;
  std::optional<std::vector<MappingSpan>> callerMaps = mappings.privateAnonymous(caller, caller + size);
  std::optional<std::vector<MappingSpan>> shadowMaps =
      mappings.privateAnonymous(shadowAt, shadowAt + size);
  if (!callerMaps || !shadowMaps)
    return false;
  // mremap moves within one mapping: cut where either side's mappings change. Afterwards there
  // may be a boundary at every cut and end on both sides; at most that many new ones must be
  // left in the budget, and what the moves really added (or merged away) is drawn from it.
  std::vector<uint64_t> cuts;
  innerBoundaries(*callerMaps, caller, size, cuts);
  innerBoundaries(*shadowMaps, shadowAt, size, cuts);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  cuts.push_back(size);
  std::vector<uint64_t> points{caller, shadowAt};
  for (uint64_t c : cuts) {
    points.push_back(caller + c);
    points.push_back(shadowAt + c);
  }
  const size_t before = mappings.boundaries(points);
  const int64_t reserved = int64_t(points.size() - before);
  if (budget.fetch_sub(reserved) < reserved) {
    budget.fetch_add(reserved);
    return false;
  }
  SpareRange spare(caller, size);
  if (!spare.reserved()) {
    budget.fetch_add(reserved);
    return false;
  }
  uint64_t from = 0;
  for (uint64_t to : cuts) {
    auto *callerPiece = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(caller + from));
    if (!exchangePiece(callerPiece, shadow + from, spare.at(from), to - from)) {
      spare.releaseFrom(from);
      if (from == 0) {
        budget.fetch_add(reserved);
        return false; // nothing changed
      }
      // Nothing of this piece moved; the pieces before it hold the shadow's bytes already.
      std::memcpy(callerPiece, shadow + from, size - from);
      break;
    }
    from = to;
  }
  // What was not added goes back, and so do boundaries merged away (up to where the budget
  // began: a merge of boundaries that were there before any exchange is not ours to spend).
  mappings.refresh();
  const int64_t added = int64_t(mappings.boundaries(points)) - int64_t(before);
  int64_t now = budget.fetch_add(reserved - added) + reserved - added;
  while (now > kBudget && !budget.compare_exchange_weak(now, kBudget)) {
  }
  return true;
}

#else

bool exchangePages(uint64_t, uint8_t *, size_t) { return false; }

#endif

} // namespace ttinterp
