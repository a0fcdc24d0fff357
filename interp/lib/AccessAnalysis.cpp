//===- AccessAnalysis.cpp - Provenance of pointers, to parameter accesses --===//
//
// Every SSA value gets the set of kernel parameters it may derive from (plus
// an "unknown" bit), propagated to a fixpoint through every op, region and
// call: an op's results and its regions' arguments may derive from any of its
// operands or of the values its regions yield. Coarse, but it only has to
// separate the parameters, and kernels keep them apart. Then each op with a
// global-memory effect (from the ops' declared MemoryEffects) gives its
// pointer operands' parameters a read and/or a write. What an op does through
// a pointer of unknown provenance is also collected on its own: it is all a
// launch's reachable buffers (pointer tables' targets) can see.
//
//===----------------------------------------------------------------------===//
#include "AccessAnalysis.h"

#include "ttinterp/frontend/Dialect.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace ttinterp::interp {
namespace {

bool isPointerLike(mlir::Type t) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t))
    t = tensor.getElementType();
  return mlir::isa<mlir::triton::PointerType, mlir::triton::TensorDescType>(t);
}

/// An op that itself reads or writes memory (ops with regions only carry
/// their body's effects, which the walk visits on their own).
bool accessesMemory(mlir::Operation *op) {
  auto effects = mlir::dyn_cast<mlir::MemoryEffectOpInterface>(op);
  return effects && op->getNumRegions() == 0 && !effects.hasNoEffect();
}

class Provenance {
public:
  Provenance(mlir::FunctionOpInterface kernel) : unknown_(kernel.getNumArguments()) {
    functions_.insert(kernel.getOperation());
    for (mlir::BlockArgument arg : kernel.getFunctionBody().front().getArguments()) {
      llvm::BitVector &bits = at(arg);
      bits.set(arg.getArgNumber());
    }
  }

  void solve() {
    // Functions are discovered through calls while iterating.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t f = 0; f < functions_.size(); ++f)
        functions_[f]->walk([&](mlir::Operation *op) { changed |= transfer(op); });
    }
  }

  AccessSummary accesses() {
    AccessSummary summary;
    std::vector<Access> &result = summary.parameters;
    result.assign(unknown_, Access::None);
    for (mlir::Operation *function : functions_)
      function->walk([&](mlir::Operation *op) {
        if (!accessesMemory(op))
          return;
        llvm::SmallVector<mlir::MemoryEffects::EffectInstance> list;
        mlir::cast<mlir::MemoryEffectOpInterface>(op).getEffects(list);
        Access access = Access::None;
        for (auto &e : list) {
          if (mlir::isa<mlir::MemoryEffects::Read>(e.getEffect()))
            access = access | Access::Read;
          if (mlir::isa<mlir::MemoryEffects::Write>(e.getEffect()))
            access = access | Access::Write;
        }
        if (access == Access::None)
          return;
        // Ops with effects but no pointer operand (tt.print, tt.assert) touch no argument.
        for (mlir::Value operand : op->getOperands()) {
          if (!isPointerLike(operand.getType()))
            continue;
          const llvm::BitVector &bits = at(operand);
          if (bits.test(unknown_) || bits.none())
            summary.untraced = summary.untraced | access;
          for (unsigned p : bits.set_bits())
            if (p < unknown_)
              result[p] = result[p] | access;
        }
      });
    // An untraced pointer may land in any argument too; kept coarse (read-write),
    // as before reachable buffers existed.
    if (summary.untraced != Access::None)
      for (size_t p = 0; p < result.size(); ++p)
        result[p] = Access::ReadWrite;
    return summary;
  }

private:
  llvm::BitVector &at(mlir::Value v) {
    auto [it, inserted] = roots_.try_emplace(v);
    if (inserted)
      it->second.resize(unknown_ + 1);
    return it->second;
  }
  // `bits` by value: callers pass at(v) of another value, a reference into roots_ that at(into)
  // may invalidate by growing the map (a tt.call's operands merged into its callee's arguments
  // read freed memory that way).
  bool merge(mlir::Value into, llvm::BitVector bits) {
    llvm::BitVector &target = at(into);
    llvm::BitVector before = target;
    target |= bits;
    return target != before;
  }

  bool transfer(mlir::Operation *op) {
    // A function's own arguments come from its callers, not its returns.
    if (mlir::isa<mlir::FunctionOpInterface>(op))
      return false;
    bool changed = false;
    llvm::BitVector in(unknown_ + 1);
    if (mlir::isa<mlir::triton::IntToPtrOp>(op) ||
        (mlir::isa<mlir::triton::BitcastOp>(op) && isPointerLike(op->getResult(0).getType()) &&
         !isPointerLike(op->getOperand(0).getType()))) {
      // An integer made into a pointer (tt.int_to_ptr, or tt.bitcast from i64)
      // has no provenance: it may land in any region of the launch. A bitcast
      // between pointer types keeps its pointer's provenance (ArithOps).
      in.set(unknown_);
    } else if (auto call = mlir::dyn_cast<mlir::triton::CallOp>(op)) {
      auto callee = mlir::dyn_cast_or_null<mlir::FunctionOpInterface>(
          mlir::SymbolTable::lookupNearestSymbolFrom(op, call.getCalleeAttr()));
      if (!callee || callee.getFunctionBody().empty()) {
        in.set(unknown_);
      } else {
        functions_.insert(callee.getOperation());
        mlir::Block &entry = callee.getFunctionBody().front();
        for (unsigned i = 0; i < op->getNumOperands() && i < entry.getNumArguments(); ++i)
          changed |= merge(entry.getArgument(i), at(op->getOperand(i)));
        callee->walk([&](mlir::Operation *ret) {
          if (mlir::isa<mlir::triton::ReturnOp>(ret))
            for (mlir::Value v : ret->getOperands())
              in |= at(v);
        });
      }
    } else if (accessesMemory(op)) {
      // A loaded value owes nothing to the address it came from, but a loaded
      // pointer may point anywhere.
      for (mlir::Value r : op->getResults())
        if (isPointerLike(r.getType()))
          in.set(unknown_);
    } else {
      for (mlir::Value v : op->getOperands())
        in |= at(v);
      // What the op's regions yield may become its results.
      for (mlir::Region &region : op->getRegions())
        for (mlir::Block &block : region)
          if (!block.empty() && block.back().hasTrait<mlir::OpTrait::IsTerminator>())
            for (mlir::Value v : block.back().getOperands())
              in |= at(v);
    }
    for (mlir::Value r : op->getResults())
      changed |= merge(r, in);
    for (mlir::Region &region : op->getRegions())
      for (mlir::Block &block : region)
        for (mlir::BlockArgument arg : block.getArguments())
          changed |= merge(arg, in);
    // Branches hand their operands to their successors' arguments.
    for (mlir::Block *successor : op->getSuccessors())
      for (mlir::BlockArgument arg : successor->getArguments())
        changed |= merge(arg, in);
    return changed;
  }

  unsigned unknown_; ///< The "unknown provenance" bit: one past the parameters.
  llvm::DenseMap<mlir::Value, llvm::BitVector> roots_;
  llvm::SetVector<mlir::Operation *> functions_;
};

} // namespace

AccessSummary analyzeAccess(mlir::FunctionOpInterface kernel) {
  Provenance provenance(kernel);
  provenance.solve();
  return provenance.accesses();
}

} // namespace ttinterp::interp
