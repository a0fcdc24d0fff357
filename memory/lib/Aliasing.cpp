//===- Aliasing.cpp - Grouping a launch's arguments by shared memory ------===//
#include "ttinterp/memory/Aliasing.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace ttinterp {

AliasPattern analyzeAliasing(const std::vector<View> &views) {
  size_t n = views.size();
  // Sweep the extents in address order; overlapping ones form one group.
  std::vector<size_t> byStart(n);
  std::iota(byStart.begin(), byStart.end(), 0);
  std::vector<ByteRange> extent(n);
  for (size_t i = 0; i < n; ++i)
    extent[i] = views[i].extent();
  std::stable_sort(byStart.begin(), byStart.end(),
                   [&](size_t a, size_t b) { return extent[a].lo < extent[b].lo; });
  std::vector<size_t> group(n);
  std::vector<ByteRange> groupRange;
  for (size_t i : byStart) {
    if (extent[i].empty()) {
      // No bytes: shares memory with nothing, and must not split a chain.
      groupRange.push_back(extent[i]);
      group[i] = groupRange.size() - 1;
      continue;
    }
    size_t last = groupRange.size();
    while (last > 0 && groupRange[last - 1].empty())
      --last;
    if (last > 0 && extent[i].lo < groupRange[last - 1].hi) {
      groupRange[last - 1].hi = std::max(groupRange[last - 1].hi, extent[i].hi);
      group[i] = last - 1;
    } else {
      groupRange.push_back(extent[i]);
      group[i] = groupRange.size() - 1;
    }
  }

  AliasPattern p;
  p.region.resize(n);
  p.offset.resize(n);
  std::vector<int64_t> number(groupRange.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    if (number[group[i]] < 0) {
      number[group[i]] = int64_t(p.regionBytes.size());
      p.regionBytes.push_back(groupRange[group[i]].size());
    }
    p.region[i] = uint32_t(number[group[i]]);
    p.offset[i] = int64_t(views[i].address - groupRange[group[i]].lo);
  }
  p.classes.resize(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      p.classes[i].push_back(group[i] == group[j] ? classify(views[i], views[j])
                                                  : OverlapClass::Disjoint);
  return p;
}

bool AliasPattern::hasPartialOverlap() const {
  for (const auto &row : classes)
    for (OverlapClass c : row)
      if (c == OverlapClass::Overlapping)
        return true;
  return false;
}

namespace {
template <class T> void appendRaw(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof value);
}
} // namespace

void AliasPattern::appendKey(std::string &out) const {
  // The argument count fixes how many fields follow (n regions and offsets, n(n-1)/2 pair
  // classes), so the encoding is injective, as the text is.
  appendRaw(out, uint64_t(region.size()));
  for (size_t i = 0; i < region.size(); ++i) {
    appendRaw(out, region[i]);
    appendRaw(out, offset[i]);
  }
  for (const auto &row : classes)
    for (OverlapClass c : row)
      appendRaw(out, uint8_t(c));
}

std::string AliasPattern::canonical() const {
  std::string s;
  for (size_t i = 0; i < region.size(); ++i)
    s += fmt::format("arg {} region {} offset {}\n", i, region[i], offset[i]);
  for (size_t i = 0; i < classes.size(); ++i)
    for (size_t j = 0; j < classes[i].size(); ++j)
      s += fmt::format("pair {} {} {}\n", i, i + 1 + j, name(classes[i][j]));
  return s;
}

} // namespace ttinterp
