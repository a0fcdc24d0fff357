//===- Hazards.cpp - Cross-program conflicts over byte-range maps ---------===//
#include "ttinterp/memory/Hazards.h"

#include <absl/container/btree_map.h>

#include <algorithm>

namespace ttinterp {

std::string_view name(HazardKind k) {
  switch (k) {
  case HazardKind::ReadAfterWrite:
    return "read-after-write";
  case HazardKind::WriteAfterRead:
    return "write-after-read";
  case HazardKind::WriteAfterWrite:
    return "write-after-write";
  }
  return "?";
}

namespace {

/// Splits the range containing `at` (if any) so that a range starts at `at`.
template <class Map> void splitAt(Map &map, uint64_t at) {
  auto it = map.upper_bound(at);
  if (it == map.begin())
    return;
  --it;
  if (it->first < at && at < it->second.hi) {
    typename Map::mapped_type tail = it->second;
    it->second.hi = at;
    map.emplace(at, tail);
  }
}

/// Merges [lo, hi)'s neighbours with equal contents into one range.
template <class Map, class Same> void coalesce(Map &map, uint64_t lo, uint64_t hi, Same same) {
  auto it = map.lower_bound(lo);
  if (it != map.begin())
    --it;
  while (it != map.end() && it->first <= hi) {
    auto next = std::next(it);
    if (next != map.end() && it->second.hi == next->first && same(it->second, next->second)) {
      it->second.hi = next->second.hi;
      it = std::prev(map.erase(next)); // a B-tree's erase moves the entries around it
      continue;
    }
    it = next;
  }
}

/// The epoch of `program` in c (0: nothing of it is known).
uint32_t epochIn(const HazardTracker::Clock &c, int32_t program) {
  auto it = std::lower_bound(c.begin(), c.end(), program,
                             [](const auto &entry, int32_t p) { return entry.first < p; });
  return it != c.end() && it->first == program ? it->second : 0;
}

/// Raises program's epoch in c to at least `epoch`.
void raise(HazardTracker::Clock &c, int32_t program, uint32_t epoch) {
  auto it = std::lower_bound(c.begin(), c.end(), program,
                             [](const auto &entry, int32_t p) { return entry.first < p; });
  if (it != c.end() && it->first == program)
    it->second = std::max(it->second, epoch);
  else
    c.insert(it, {program, epoch});
}

/// The pointwise maximum of two clocks.
HazardTracker::Clock join(const HazardTracker::Clock &a, const HazardTracker::Clock &b) {
  HazardTracker::Clock out;
  out.reserve(a.size() + b.size());
  auto i = a.begin(), j = b.begin();
  while (i != a.end() || j != b.end()) {
    if (j == b.end() || (i != a.end() && i->first < j->first))
      out.push_back(*i++);
    else if (i == a.end() || j->first < i->first)
      out.push_back(*j++);
    else {
      out.emplace_back(i->first, std::max(i->second, j->second));
      ++i;
      ++j;
    }
  }
  return out;
}
} // namespace

void HazardTracker::ReaderList::push(const Reader &r) {
  if (size_ < 2)
    inline_[size_] = r;
  else
    more_.push_back(r);
  ++size_;
}

template <class Drop> void HazardTracker::ReaderList::eraseIf(Drop drop) {
  ReaderList kept;
  for (size_t i = 0; i < size_; ++i)
    if (!drop((*this)[i]))
      kept.push((*this)[i]);
  *this = std::move(kept);
}

bool HazardTracker::ReaderList::operator==(const ReaderList &o) const {
  if (size_ != o.size_)
    return false;
  for (size_t i = 0; i < size_; ++i)
    if (!((*this)[i] == o[i]))
      return false;
  return true;
}

/// B-trees, not std::map: a launch adds a few ranges per program, so a tracked layernorm of
/// 4,096 rows keeps some 12,000, and a red-black tree's node per range made every search a
/// walk of scattered cache misses and every insert an allocation (docs/performance.md,
/// twenty-fourth round). Abseil's B-tree keeps several ranges per node.
struct HazardTracker::RangeMaps {
  absl::btree_map<uint64_t, Writer> writers;
  absl::btree_map<uint64_t, Readers> readers;
};

HazardTracker::HazardTracker() : ranges_(std::make_unique<RangeMaps>()) {}
HazardTracker::~HazardTracker() = default;

void HazardTracker::beginProgram(int64_t linear) {
  auto next = int32_t(linear);
  if (!ended_) {
    if (next == program_)
      return;
    // The current program waits for others: keep what it knows for when it resumes.
    if (state_.epoch != 1 || state_.known)
      parked_[program_] = std::move(state_);
  }
  program_ = next;
  ended_ = false;
  knowsAll_ = false;
  auto it = parked_.find(next);
  if (it == parked_.end()) {
    state_ = ProgramState{};
  } else {
    state_ = std::move(it->second);
    parked_.erase(it);
  }
}

void HazardTracker::endProgram() {
  ended_ = true;
  knowsAll_ = false;
  state_ = ProgramState{};
}

bool HazardTracker::ordered(int32_t program, uint32_t epoch) const {
  return program == program_ || (state_.known && epochIn(*state_.known, program) >= epoch);
}

void HazardTracker::acquire(uint64_t address) {
  // Until another program runs, this one knows all that the location publishes.
  knowsAll_ = true;
  knownAddress_ = address;
  auto it = published_.find(address);
  if (it == published_.end() || !it->second || it->second == state_.known)
    return;
  if (!state_.known)
    state_.known = it->second; // shared until either changes
  else
    state_.known = std::make_shared<Clock>(join(*state_.known, *it->second));
}

void HazardTracker::release(uint64_t address, Release kind) {
  if (!synchronising_)
    return;
  if (kind == Release::RelaxedStore) {
    published_.erase(address);
    return;
  }
  std::shared_ptr<Clock> &slot = published_[address];
  const uint32_t epoch = state_.epoch++;
  // An acq_rel read-modify-write acquired the location just before: what it publishes is
  // within what this program knows, so nothing needs joining.
  bool knowsSlot = slot == state_.known || (knowsAll_ && knownAddress_ == address);
  if (kind == Release::ReadModifyWrite && slot && !knowsSlot) {
    // The release sequence goes on: the location keeps what earlier releases published,
    // which this program does not know unless it acquired it.
    auto next = std::make_shared<Clock>(state_.known ? join(*slot, *state_.known) : *slot);
    raise(*next, program_, epoch);
    slot = std::move(next);
    return;
  }
  // The location will hold what this program knows, and this epoch: the program's
  // own clock, changed in place when nothing else holds it (a lock or a ticket counter
  // passed from program to program costs no copy of the clock).
  std::shared_ptr<Clock> next = std::move(state_.known);
  if (slot == next)
    slot.reset();
  if (!next)
    next = std::make_shared<Clock>();
  else if (next.use_count() > 1)
    next = std::make_shared<Clock>(*next);
  raise(*next, program_, epoch);
  slot = next;
  state_.known = std::move(next);
}

void HazardTracker::conflict(HazardKind kind, int32_t first, uint32_t firstSite, uint64_t lo,
                             uint64_t hi) {
  conflictBytes_ += hi - lo;
  // Continue the latest entry when this range extends it (one op's lanes walking on).
  if (!found_.empty()) {
    Hazard &h = found_.back();
    if (h.kind == kind && h.firstProgram == first && h.secondProgram == program_ &&
        h.firstSite == firstSite && h.secondSite == site_ && h.hi == lo) {
      h.hi = hi;
      return;
    }
  }
  found_.push_back({kind, first, program_, firstSite, site_, lo, hi});
}

void HazardTracker::recordRead(uint64_t lo, uint64_t hi) {
  const Reader me{program_, state_.epoch, site_};
  // Whether `list` already says what this read would: it names this program (or, without
  // synchronisation, two programs, all a later write needs) and, with it, at this epoch.
  auto knows = [&](const ReaderList &list) {
    if (!synchronising_) {
      if (list.size() >= 2)
        return true;
      for (size_t i = 0; i < list.size(); ++i)
        if (list[i].program == program_)
          return true;
      return false;
    }
    size_t n = list.size();
    return n > 0 && list[n - 1].program == program_ && list[n - 1].epoch == me.epoch;
  };
  // Most reads repeat what is known: one range already holds all these bytes.
  auto known = ranges_->readers.upper_bound(lo);
  if (known != ranges_->readers.begin()) {
    const Readers &r = std::prev(known)->second;
    if (r.hi >= hi && knows(r.list))
      return;
  }
  splitAt(ranges_->readers, lo);
  splitAt(ranges_->readers, hi);
  uint64_t cursor = lo;
  auto it = ranges_->readers.lower_bound(lo);
  while (cursor < hi) {
    if (it == ranges_->readers.end() || it->first > cursor) {
      uint64_t end = it == ranges_->readers.end() ? hi : std::min(hi, it->first);
      Readers fresh{end, {}};
      fresh.list.push(me);
      // A B-tree's insert moves the entries around it: `it` is found again past the new one.
      it = std::next(ranges_->readers.emplace(cursor, std::move(fresh)).first);
      cursor = end;
      continue;
    }
    ReaderList &list = it->second.list;
    if (!knows(list)) {
      // A reader that happens before this read is covered by it: a write that this read
      // happens before, the other does too (with synchronisation only; without it, that is
      // this program's own earlier read).
      if (synchronising_)
        list.eraseIf([&](const Reader &r) { return ordered(r.program, r.epoch); });
      list.push(me);
    }
    cursor = it->second.hi;
    ++it;
  }
  coalesce(ranges_->readers, lo, hi,
           [](const Readers &a, const Readers &b) { return a.list == b.list; });
}

void HazardTracker::record(uint64_t address, uint32_t size, AccessKind kind) {
  uint64_t lo = address, hi = address + size;
  if (size == 0)
    return;
  // Conflicts with what other programs did to these bytes before, unless ordered before.
  auto firstOverlap = [&](auto &map) {
    auto it = map.upper_bound(lo);
    if (it != map.begin() && std::prev(it)->second.hi > lo)
      --it;
    return it;
  };
  // One search of the writers serves the check and, for a write, its recording.
  auto next = ranges_->writers.lower_bound(lo);
  auto prev = next == ranges_->writers.begin() ? ranges_->writers.end() : std::prev(next);
  bool prevOverlaps = prev != ranges_->writers.end() && prev->second.hi > lo;
  for (auto it = prevOverlaps ? prev : next; it != ranges_->writers.end() && it->first < hi; ++it) {
    const Writer &w = it->second;
    bool reads = kind == AccessKind::Read || kind == AccessKind::AtomicRead;
    bool exempt = (kind == AccessKind::Atomic || kind == AccessKind::AtomicRead) && w.atomic;
    if (!exempt && !ordered(w.program, w.epoch))
      conflict(reads ? HazardKind::ReadAfterWrite : HazardKind::WriteAfterWrite,
               w.program, w.site, std::max(lo, it->first), std::min(hi, w.hi));
  }
  if (kind == AccessKind::AtomicRead)
    return;
  if (kind != AccessKind::Read) {
    for (auto it = firstOverlap(ranges_->readers); it != ranges_->readers.end() && it->first < hi;
         ++it) {
      const ReaderList &list = it->second.list;
      for (size_t i = 0; i < list.size(); ++i) {
        if (!ordered(list[i].program, list[i].epoch)) {
          conflict(HazardKind::WriteAfterRead, list[i].program, list[i].site,
                   std::max(lo, it->first), std::min(hi, it->second.hi));
          break; // one reader names the conflict
        }
      }
    }
  }

  // Record this access: reads add a reader, writes (atomics too) replace the writer.
  if (kind == AccessKind::Read) {
    recordRead(lo, hi);
    return;
  }
  const Writer mine{hi, program_, state_.epoch, site_, kind == AccessKind::Atomic};
  auto same = [](const Writer &a, const Writer &b) {
    return a.program == b.program && a.epoch == b.epoch && a.site == b.site && a.atomic == b.atomic;
  };
  // Most writes touch bytes nobody wrote yet (each program its own output): nothing to
  // split or erase, and the new range joins a neighbour or is inserted where it was searched.
  if (!prevOverlaps && (next == ranges_->writers.end() || next->first >= hi)) {
    if (prev != ranges_->writers.end() && prev->second.hi == lo && same(prev->second, mine)) {
      prev->second.hi = hi;
      if (next != ranges_->writers.end() && next->first == hi && same(next->second, mine)) {
        prev->second.hi = next->second.hi;
        ranges_->writers.erase(next);
      }
    } else if (next != ranges_->writers.end() && next->first == hi && same(next->second, mine)) {
      Writer joined = mine;
      joined.hi = next->second.hi;
      ranges_->writers.emplace_hint(ranges_->writers.erase(next), lo, joined);
    } else {
      ranges_->writers.emplace_hint(next, lo, mine);
    }
    return;
  }
  splitAt(ranges_->writers, lo);
  splitAt(ranges_->writers, hi);
  ranges_->writers.erase(ranges_->writers.lower_bound(lo), ranges_->writers.lower_bound(hi));
  ranges_->writers.emplace(lo, mine);
  coalesce(ranges_->writers, lo, hi, same);
}

std::vector<Hazard> HazardTracker::hazards(size_t limit) const {
  std::vector<Hazard> out;
  for (const Hazard &h : found_) {
    if (!out.empty()) {
      Hazard &last = out.back();
      if (last.kind == h.kind && last.firstProgram == h.firstProgram &&
          last.secondProgram == h.secondProgram && last.firstSite == h.firstSite &&
          last.secondSite == h.secondSite && last.hi == h.lo) {
        last.hi = h.hi;
        continue;
      }
    }
    if (out.size() == limit)
      break;
    out.push_back(h);
  }
  return out;
}

} // namespace ttinterp
