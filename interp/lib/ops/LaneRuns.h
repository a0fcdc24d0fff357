//===- LaneRuns.h - Runs of consecutive active lanes of a pointer tensor -*- C++ -*-===//
//
// Shared by the ops that access memory lane by lane (loads, stores, atomics): a run of
// lanes whose pointers step by one element is translated, bounds-checked and marked dirty
// once, not once per lane.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "OpSupport.h"
#include "simd/Simd.h"

namespace ttinterp::interp {

/// The runs of active, consecutive lanes of a pointer tensor (lanes whose pointers step by
/// exactly one element), in lane order. Most real loads and stores are one such run per row,
/// so they translate, bounds-check and mark dirty once per run instead of once per lane. The
/// whole tensor is classified by vector compares (simd::laneBreaks, simd::laneActive); the
/// runs are then read off the bits a word at a time.
class LaneRunCursor {
public:
  /// Runs of pointers p under mask (null: every lane active).
  LaneRunCursor(Frame &f, const uint64_t *p, const uint8_t *mask, int64_t n, uint64_t size)
      : n_(n) {
    reserve(f);
    simd::laneBreaks(p, n, size, f.laneCuts.data());
    combine(f, f.laneCuts.data(), mask);
  }
  /// Runs whose breaks findBreaks(words) writes into the cursor's own words (a gather's, from
  /// its offsets: OffsetGather).
  template <class FindBreaks>
  LaneRunCursor(Frame &f, const uint8_t *mask, int64_t n, FindBreaks findBreaks) : n_(n) {
    reserve(f);
    findBreaks(f.laneCuts.data());
    combine(f, f.laneCuts.data(), mask);
  }
  /// Runs of pointers whose breaks are known already (Frame::startRuns).
  LaneRunCursor(Frame &f, const uint64_t *breaks, const uint8_t *mask, int64_t n) : n_(n) {
    reserve(f);
    combine(f, breaks, mask);
  }
  /// The next run [first, first + length); false when none is left.
  bool next(int64_t &first, int64_t &length) {
    first = nextBit(active_, position_);
    if (first >= n_)
      return false;
    position_ = nextBit(cuts_, first + 1);
    length = position_ - first;
    return true;
  }
  /// Whether every lane is active (the active bits past n are clear). Compares words, not
  /// counts of bits: the baseline x86-64 build has no popcnt instruction, and a call into
  /// libgcc's table per 64 lanes was 2% of a matmul.
  bool allActive() const {
    const int64_t whole = n_ / 64;
    for (int64_t w = 0; w < whole; ++w)
      if (active_[w] != ~uint64_t(0))
        return false;
    return n_ % 64 == 0 || active_[whole] == (uint64_t(1) << (n_ % 64)) - 1;
  }
  /// Whether all n lanes (n > 0) are active and consecutive: one run.
  bool whole() const { return n_ > 0 && nextBit(cuts_, 1) == n_ && (active_[0] & 1); }
  /// The first masked-off lane at or after `from`, or n.
  int64_t inactiveFrom(int64_t from) const {
    if (from >= n_)
      return n_;
    int64_t w = from >> 6;
    const int64_t last = (n_ - 1) >> 6;
    uint64_t word = ~active_[w] & (~uint64_t(0) << (from & 63));
    while (!word) {
      if (++w > last)
        return n_;
      word = ~active_[w];
    }
    return std::min(n_, (w << 6) + int64_t(__builtin_ctzll(word)));
  }
  /// Goes on from lane i (the lanes before it taken care of by the caller).
  void skipTo(int64_t i) { position_ = i; }

private:
  void reserve(Frame &f) {
    size_t words = size_t((n_ + 63) / 64);
    if (f.laneCuts.size() < words) {
      f.laneCuts.resize(words);
      f.laneActive.resize(words);
    }
  }
  /// A run ends at a break or a masked-off lane.
  void combine(Frame &f, const uint64_t *breaks, const uint8_t *mask) {
    simd::laneActive(mask, n_, f.laneActive.data());
    for (int64_t w = 0, words = (n_ + 63) / 64; w < words; ++w)
      f.laneCuts[size_t(w)] = breaks[w] | ~f.laneActive[size_t(w)];
    cuts_ = f.laneCuts.data();
    active_ = f.laneActive.data();
  }
  /// The first lane at or after `from` whose bit is set, or n.
  int64_t nextBit(const uint64_t *words, int64_t from) const {
    if (from >= n_)
      return n_;
    int64_t w = from >> 6;
    const int64_t last = (n_ - 1) >> 6;
    uint64_t word = words[w] & (~uint64_t(0) << (from & 63));
    while (!word) {
      if (++w > last)
        return n_;
      word = words[w];
    }
    return std::min(n_, (w << 6) + int64_t(__builtin_ctzll(word)));
  }

  const int64_t n_;
  const uint64_t *cuts_ = nullptr, *active_ = nullptr;
  int64_t position_ = 0;
};

} // namespace ttinterp::interp
