//===- FreshPages.h - Writing in place into host pages that hold nothing yet -*- C++ -*-===//
//
// A Triton wrapper's output is usually a fresh allocation (`torch.empty`, `np.empty`): private
// anonymous pages the process has never touched. Their contents are zeros by the kernel's
// contract, and MADV_DONTNEED puts them back to exactly that. So a launch may write such a
// region in place and still be transactional: if it fails, discarding the pages it touched
// (and restoring the few bytes of its partial first and last pages, saved beforehand) leaves
// the caller's memory as it was. This saves the shadow, the write-back copy and the page
// faults of writing the output twice (Session.cpp decides where it applies).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/View.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace ttinterp {

/// How to put a fresh range back as claimFreshPages found it.
struct FreshUndo {
  uint64_t pagesLo = 0, pagesHi = 0; ///< Whole pages of the range, all untouched when claimed.
  uint64_t headAt = 0, tailAt = 0;   ///< Where the saved bytes of the partial pages go.
  std::vector<uint8_t> head, tail;   ///< The range's bytes in its partial first and last pages.
};

/// Ranges smaller than this keep a shadow: the checks cost more than a small copy.
constexpr uint64_t kFreshPagesMinimum = uint64_t(1) << 20;

/// The undo record of host range `range` when every whole page in it is fresh: in a private
/// anonymous mapping, neither in memory nor swapped out (/proc/self/pagemap), so it reads as
/// zeros and does again after MADV_DONTNEED. The whole pages are then faulted in for writing
/// in one call (on up to `threads` threads when large). nullopt when any page is not fresh,
/// the range is too small, or the system cannot tell (not Linux, no pagemap).
std::optional<FreshUndo> claimFreshPages(ByteRange range, unsigned threads = 1);

/// Puts the range back: its whole pages discarded, its partial pages' bytes restored.
void rollBackFreshPages(const FreshUndo &undo);

} // namespace ttinterp
