//===- ArenaLayout.cpp - Slots share arena bytes when their lives do not overlap -===//
//
// A slot may share only when its whole life is an interval of its function's ops in
// pre-order (an op's nested ops numbered right after it):
//   - it is an op's result, defined in a region of one block: that block runs top to
//     bottom, and when it runs again (a loop body) its values start over. (In a region
//     of several blocks a branch back would revisit ops numbered before a use.)
//   - its op has no regions: results of scf.if/for/while receive the buffers their
//     regions hand over (SlotTransfer), which must never be bytes another slot uses;
//   - no terminator yields, returns or branches with it (hand-overs again), it is not a
//     constant (written once per frame), and no other value was bound to its slot.
// It is alive from its op to the last op that reads it, where a read inside a nested
// region counts as the whole op holding that region in the defining block (a loop reads
// it in every iteration), and a read by an op that is not emitted where it stands counts
// where its own results are read: ops whose results fused accesses take over (Fusion.h)
// and the element-wise op a store runs (ContiguousAccess::producer) read their operands
// at the store. The ops of an element-wise chain are numbered where its root runs (see
// OpNumbers). Scalars never share: they are small, and fused accesses read them.
//
//===----------------------------------------------------------------------===//
#include "ArenaLayout.h"

#include "Lowering.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Region.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace ttinterp::interp {

namespace {
/// Pre-order numbers of a function's ops, in the order they run: each op's own and the
/// last of its subtree. The ops of an element-wise chain run at its root, or at the store
/// its root is forwarded to (Fusion.h): they are numbered there, in chain order, so their
/// results live from where they are really made to where they are really read.
struct OpNumbers {
  explicit OpNumbers(const FusionPlan &fusion) : fusion(fusion) {}

  const FusionPlan &fusion;
  llvm::DenseMap<mlir::Operation *, std::pair<uint64_t, uint64_t>> span;
  uint64_t next = 0;

  void numberChainAt(mlir::Operation *root) {
    for (mlir::Operation *op : fusion.chain(root)->ops)
      span[op] = {next, next}, ++next;
  }

  void number(mlir::Operation *op) {
    bool chainRoot = fusion.chain(op);
    if (fusion.chainRoot(op) || (chainRoot && fusion.forwarded(op)))
      return; // numbered where it runs
    if (const ContiguousAccess *a = fusion.access(op);
        a && a->producer && fusion.chain(a->producer))
      numberChainAt(a->producer);
    if (chainRoot) {
      numberChainAt(op);
      return;
    }
    uint64_t first = next++;
    for (mlir::Region &region : op->getRegions())
      for (mlir::Block &block : region)
        for (mlir::Operation &nested : block)
          number(&nested);
    span[op] = {first, next - 1};
  }
};
} // namespace

void Lowerer::collectReaders(mlir::Value v, llvm::SmallVectorImpl<mlir::Operation *> &readers,
                             llvm::DenseSet<mlir::Operation *> &seen, bool throughChains) const {
  for (mlir::Operation *user : v.getUsers()) {
    if (!seen.insert(user).second)
      continue;
    readers.push_back(user);
    // Not emitted where it stands (or its results not materialised): whatever reads its
    // results reads, in effect, its operands too. (A chain's root is numbered where it
    // runs, at the store it may be forwarded to: OpNumbers.)
    bool passesOn = (fusion_.forwarded(user) && !fusion_.chain(user)) || fusion_.elided(user) ||
                    (throughChains && fusion_.chainRoot(user));
    for (mlir::Value r : user->getResults())
      if (passesOn || !values_.count(r))
        collectReaders(r, readers, seen, throughChains);
  }
}

std::vector<SlotLife> Lowerer::sharableSlotLives() const {
  std::vector<SlotLife> lives;
  std::vector<std::vector<SlotId>> slotsOf(functionOps_.size());
  for (SlotId s = 0; s < SlotId(program_.slots.size()); ++s)
    if (definedBy_.count(s) && !program_.slots[s].shape.empty() &&
        program_.slots[s].function < slotsOf.size())
      slotsOf[program_.slots[s].function].push_back(s);
  for (size_t f = 0; f < functionOps_.size(); ++f) {
    mlir::Operation *fn = functionOps_[f];
    OpNumbers numbers(fusion_);
    numbers.number(fn);
    llvm::DenseSet<SlotId> handedOver;
    fn->walk([&](mlir::Operation *op) {
      if (op->hasTrait<mlir::OpTrait::IsTerminator>())
        for (mlir::Value v : op->getOperands())
          if (auto it = values_.find(v); it != values_.end())
            handedOver.insert(it->second);
    });
    for (SlotId s : slotsOf[f]) {
      mlir::Value v = definedBy_.lookup(s);
      mlir::Operation *def = v.getDefiningOp();
      auto span = numbers.span.find(def);
      if (span == numbers.span.end() || def->getNumRegions() != 0 ||
          !def->getParentRegion()->hasOneBlock() || constantSlots_.contains(s) ||
          boundSlots_.contains(s) || handedOver.contains(s))
        continue;
      SlotLife life{s, span->second.first, span->second.first, {}};
      if (auto it = overwritable_.find(s); it != overwritable_.end())
        for (SlotId operand : it->second)
          // Only a value of this block: one from an enclosing block is read again when the
          // loop holding this op runs its next iteration. (Its life, counted to the end of
          // the op holding this block, ends past this op anyway; the rule says so outright.)
          if (mlir::Value value = definedBy_.lookup(operand);
              value && value.getParentBlock() == def->getBlock())
            life.mayOverwrite.push_back(operand);
      llvm::SmallVector<mlir::Operation *> readers;
      llvm::DenseSet<mlir::Operation *> seen;
      // The value of a chain's op is read by the next op of the chain, where that runs. A
      // compiled chain reads none of them and writes only its result, so what the chain
      // reads from outside lives to its root: the root's result never takes the bytes of a
      // value the compiled loop has still to read (ElementwiseChain.h).
      collectReaders(v, readers, seen, /*throughChains=*/!fusion_.chainRoot(def));
      bool traced = true;
      for (mlir::Operation *reader : readers) {
        mlir::Operation *holder = def->getBlock()->findAncestorOpInBlock(*reader);
        auto held = holder ? numbers.span.find(holder) : numbers.span.end();
        if (held == numbers.span.end()) {
          traced = false;
          break;
        }
        life.last = std::max(life.last, held->second.second);
      }
      if (traced)
        lives.push_back(life);
    }
  }
  return lives;
}

void layOutArena(Program &p, std::vector<SlotLife> lives) {
  const size_t functions = p.functions.size();
  std::vector<uint8_t> shares(p.slots.size(), 0);
  for (const SlotLife &l : lives)
    shares[l.slot] = 1;
  // Each function's own slots and its sharing ones (by start), gathered once.
  std::vector<std::vector<SlotId>> own(functions);
  for (SlotId s = 0; s < SlotId(p.slots.size()); ++s)
    if (!shares[s])
      own[p.slots[s].function].push_back(s);
  std::stable_sort(lives.begin(), lives.end(),
                   [](const SlotLife &a, const SlotLife &b) { return a.first < b.first; });
  std::vector<std::vector<SlotLife>> sharing(functions);
  for (const SlotLife &l : lives)
    sharing[p.slots[l.slot].function].push_back(l);

  auto aligned = [](size_t bytes) { return (bytes + 63) & ~size_t(63); };
  size_t offset = 0;
  for (size_t f = 0; f < functions; ++f) {
    p.functions[f]->arenaBegin = offset;
    for (SlotId s : own[f]) {
      p.slots[s].offset = offset;
      offset += aligned(p.slots[s].bytes());
    }
    // Packed by start: every slot still alive when one starts overlaps its life, so it
    // takes the lowest gap between their bytes.
    struct Placed {
      uint64_t last;
      size_t begin, end;
      SlotId slot;
    };
    std::vector<Placed> alive;
    size_t top = 0;
    for (const SlotLife &l : sharing[f]) {
      Slot &slot = p.slots[l.slot];
      size_t size = aligned(slot.bytes());
      // An operand the op reads for the last time, the same size: the result takes its bytes.
      auto last = std::find_if(alive.begin(), alive.end(), [&](const Placed &q) {
        return q.last == l.first && q.end - q.begin == size &&
               llvm::is_contained(l.mayOverwrite, q.slot);
      });
      if (last != alive.end()) {
        *last = {l.last, last->begin, last->end, l.slot};
        slot.offset = offset + last->begin;
        continue;
      }
      alive.erase(std::remove_if(alive.begin(), alive.end(),
                                 [&](const Placed &q) { return q.last < l.first; }),
                  alive.end());
      std::sort(alive.begin(), alive.end(),
                [](const Placed &a, const Placed &b) { return a.begin < b.begin; });
      size_t at = 0;
      for (const Placed &q : alive) {
        if (at + size <= q.begin)
          break;
        at = std::max(at, q.end);
      }
      alive.push_back({l.last, at, at + size, l.slot});
      slot.offset = offset + at;
      top = std::max(top, at + size);
    }
    offset += top;
    p.functions[f]->arenaEnd = offset;
  }
  p.arenaSize = offset;
}

} // namespace ttinterp::interp
