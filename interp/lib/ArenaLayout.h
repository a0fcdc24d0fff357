//===- ArenaLayout.h - Where each slot's bytes lie in the frame arena -*- C++ -*-===//
//
// Every SSA value has a slot, but most tensors live for a few ops: a layer norm row
// makes some twenty 4 KiB blocks, of which five are alive at once. Slots whose lives
// do not overlap share bytes, so the blocks a program works on stay in L1.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Program.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace ttinterp::interp {

/// A slot that may share arena bytes with others: it is alive from the op numbered
/// `first` to the op numbered `last` (its function's ops in pre-order, an op's nested
/// ops after it), both included.
struct SlotLife {
  SlotId slot = kNoSlot;
  uint64_t first = 0, last = 0;
  /// Slots whose bytes this one may take when their lives end at `first`: operands of
  /// an element-wise kernel that writes each lane after reading it (Lowerer::mayOverwrite).
  llvm::SmallVector<SlotId, 3> mayOverwrite;
};

/// Gives every slot its offset: each function's slots contiguously (a recursive call
/// saves and restores exactly its callee's section), those in `lives` packed so that
/// two share bytes only when their lives are disjoint.
void layOutArena(Program &program, std::vector<SlotLife> lives);

} // namespace ttinterp::interp
