//===- Hazards.cpp - Per-byte tracking of cross-program conflicts ---------===//
#include "ttinterp/memory/Hazards.h"

#include <array>

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
constexpr unsigned kPageBits = 12;
constexpr uint64_t kPageSize = uint64_t(1) << kPageBits;
constexpr int32_t kNobody = -1;
} // namespace

/// Who touched one byte. Two readers are kept so a later write by one of
/// them still finds the other.
struct HazardTracker::ByteState {
  int32_t writer = kNobody;
  uint32_t writerSite = 0;
  int32_t reader = kNobody, otherReader = kNobody;
  uint32_t readerSite = 0, otherReaderSite = 0;
  bool writerAtomic = false;
};

struct HazardTracker::Page {
  std::array<ByteState, kPageSize> bytes;
};

HazardTracker::HazardTracker() = default;
HazardTracker::~HazardTracker() = default;

HazardTracker::ByteState &HazardTracker::state(uint64_t address) {
  uint64_t id = address >> kPageBits;
  if (id != lastPageId_) {
    auto &page = pages_[id];
    if (!page)
      page = std::make_unique<Page>();
    lastPage_ = page.get();
    lastPageId_ = id;
  }
  return lastPage_->bytes[address & (kPageSize - 1)];
}

void HazardTracker::conflict(HazardKind kind, int32_t first, uint32_t firstSite,
                             uint32_t secondSite, uint64_t address) {
  ++conflictBytes_;
  // Extend the previous entry when this byte continues it (the common case:
  // one op's lanes walking through memory).
  if (!found_.empty()) {
    Hazard &h = found_.back();
    if (h.kind == kind && h.firstProgram == first && h.secondProgram == program_ &&
        h.firstSite == firstSite && h.secondSite == secondSite && h.hi == address) {
      h.hi = address + 1;
      return;
    }
  }
  found_.push_back({kind, first, program_, firstSite, secondSite, address, address + 1});
}

void HazardTracker::record(uint64_t address, uint32_t size, AccessKind kind) {
  uint32_t site = site_;
  for (uint64_t a = address; a < address + size; ++a) {
    ByteState &s = state(a);
    if (kind == AccessKind::Read) {
      if (s.writer != kNobody && s.writer != program_)
        conflict(HazardKind::ReadAfterWrite, s.writer, s.writerSite, site, a);
      if (s.reader == kNobody || s.reader == program_) {
        s.reader = program_;
        s.readerSite = site;
      } else if (s.otherReader == kNobody || s.otherReader == program_) {
        s.otherReader = program_;
        s.otherReaderSite = site;
      }
      continue;
    }
    bool atomic = kind == AccessKind::Atomic;
    if (s.writer != kNobody && s.writer != program_ && !(atomic && s.writerAtomic))
      conflict(HazardKind::WriteAfterWrite, s.writer, s.writerSite, site, a);
    if (s.reader != kNobody && s.reader != program_)
      conflict(HazardKind::WriteAfterRead, s.reader, s.readerSite, site, a);
    else if (s.otherReader != kNobody && s.otherReader != program_)
      conflict(HazardKind::WriteAfterRead, s.otherReader, s.otherReaderSite, site, a);
    s.writer = program_;
    s.writerSite = site;
    s.writerAtomic = atomic;
  }
}

std::vector<Hazard> HazardTracker::hazards(size_t limit) const {
  // record() already extends the latest entry; merge what continues across entries.
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
