//===- Hazards.cpp - Cross-program conflicts over byte-range maps ---------===//
#include "ttinterp/memory/Hazards.h"

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
constexpr int32_t kNobody = -1;

/// Splits the range containing `at` (if any) so that a range starts at `at`.
template <class V> void splitAt(std::map<uint64_t, V> &map, uint64_t at) {
  auto it = map.upper_bound(at);
  if (it == map.begin())
    return;
  --it;
  if (it->first < at && at < it->second.hi) {
    V tail = it->second;
    it->second.hi = at;
    map.emplace(at, tail);
  }
}

/// Merges [lo, hi)'s neighbours with equal contents into one range.
template <class V, class Same> void coalesce(std::map<uint64_t, V> &map, uint64_t lo, uint64_t hi,
                                            Same same) {
  auto it = map.lower_bound(lo);
  if (it != map.begin())
    --it;
  while (it != map.end() && it->first <= hi) {
    auto next = std::next(it);
    if (next != map.end() && it->second.hi == next->first && same(it->second, next->second)) {
      it->second.hi = next->second.hi;
      map.erase(next);
      continue;
    }
    it = next;
  }
}
} // namespace

HazardTracker::HazardTracker() = default;
HazardTracker::~HazardTracker() = default;

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

void HazardTracker::record(uint64_t address, uint32_t size, AccessKind kind) {
  uint64_t lo = address, hi = address + size;
  if (size == 0)
    return;
  // Conflicts with what other programs did to these bytes before.
  auto firstOverlap = [&](auto &map) {
    auto it = map.upper_bound(lo);
    if (it != map.begin() && std::prev(it)->second.hi > lo)
      --it;
    return it;
  };
  for (auto it = firstOverlap(writers_); it != writers_.end() && it->first < hi; ++it) {
    const Writer &w = it->second;
    bool reads = kind == AccessKind::Read || kind == AccessKind::AtomicRead;
    bool exempt = (kind == AccessKind::Atomic || kind == AccessKind::AtomicRead) && w.atomic;
    if (w.program != program_ && !exempt)
      conflict(reads ? HazardKind::ReadAfterWrite : HazardKind::WriteAfterWrite,
               w.program, w.site, std::max(lo, it->first), std::min(hi, w.hi));
  }
  if (kind == AccessKind::AtomicRead)
    return;
  if (kind != AccessKind::Read) {
    for (auto it = firstOverlap(readers_); it != readers_.end() && it->first < hi; ++it) {
      const Readers &r = it->second;
      int32_t reader = r.program != program_ ? r.program : r.other;
      uint32_t site = r.program != program_ ? r.site : r.otherSite;
      if (reader != kNobody && reader != program_)
        conflict(HazardKind::WriteAfterRead, reader, site, std::max(lo, it->first),
                 std::min(hi, r.hi));
    }
  }

  // Record this access: reads add a reader, writes (atomics too) replace the writer.
  if (kind == AccessKind::Read) {
    // Most reads repeat what is known: one range already holds these bytes with this
    // program as a reader, or with two readers (all the map keeps). Nothing would change.
    auto known = readers_.upper_bound(lo);
    if (known != readers_.begin()) {
      const Readers &r = std::prev(known)->second;
      if (r.hi >= hi && (r.program == program_ || r.other != kNobody))
        return;
    }
    splitAt(readers_, lo);
    splitAt(readers_, hi);
    uint64_t cursor = lo;
    auto it = readers_.lower_bound(lo);
    while (cursor < hi) {
      if (it == readers_.end() || it->first > cursor) {
        uint64_t end = it == readers_.end() ? hi : std::min(hi, it->first);
        readers_.emplace(cursor, Readers{end, program_, kNobody, site_, 0});
        cursor = end;
        continue;
      }
      Readers &r = it->second;
      if (r.program != program_ && r.other == kNobody) {
        r.other = program_;
        r.otherSite = site_;
      }
      cursor = r.hi;
      ++it;
    }
    coalesce(readers_, lo, hi, [](const Readers &a, const Readers &b) {
      return a.program == b.program && a.other == b.other && a.site == b.site &&
             a.otherSite == b.otherSite;
    });
    return;
  }
  splitAt(writers_, lo);
  splitAt(writers_, hi);
  writers_.erase(writers_.lower_bound(lo), writers_.lower_bound(hi));
  writers_.emplace(lo, Writer{hi, program_, site_, kind == AccessKind::Atomic});
  coalesce(writers_, lo, hi, [](const Writer &a, const Writer &b) {
    return a.program == b.program && a.site == b.site && a.atomic == b.atomic;
  });
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
