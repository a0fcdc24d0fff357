//===- Aliasing.h - The alias pattern of one launch's pointer arguments -*- C++ -*-===//
//
// How a launch's pointer arguments share memory, described without the
// addresses themselves: which arguments fall into one storage region, where
// each sits inside its region, and how each pair overlaps. Two launches with
// equal patterns can share every decision that depends on aliasing (region
// grouping, shadow layout, serial execution...); the canonical text is what
// goes into a launch plan's cache key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/Overlap.h"
#include "ttinterp/memory/View.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ttinterp {

struct AliasPattern {
  /// Per argument: its region, numbered in the order arguments first reach
  /// regions (argument 0 is in region 0). Arguments without elements get a
  /// region of their own.
  std::vector<uint32_t> region;
  /// Per argument: byte offset of its element 0 from its region's lowest byte.
  std::vector<int64_t> offset;
  /// Per region: its size in bytes (the union of its arguments' extents).
  std::vector<uint64_t> regionBytes;
  /// classes[i][j] for i < j: how arguments i and j overlap.
  std::vector<std::vector<OverlapClass>> classes;

  OverlapClass pair(size_t i, size_t j) const {
    return i < j ? classes[i][j - i - 1] : classes[j][i - j - 1];
  }
  /// True when some pair overlaps without being identical: programs may race.
  bool hasPartialOverlap() const;
  /// A stable text: equal for launches that alias the same way, whatever the addresses.
  std::string canonical() const;
  /// Appends the fields of canonical() in a fixed-width binary form: equal appended bytes
  /// exactly when the texts are equal, at a fraction of the cost (a cache looks up by it).
  void appendKey(std::string &out) const;
};

/// The pattern of `views` (all in one address space).
AliasPattern analyzeAliasing(const std::vector<View> &views);

} // namespace ttinterp
