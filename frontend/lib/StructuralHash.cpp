//===- StructuralHash.cpp - location- and name-free SHA-256 of a function --===//
//
// Serialisation (one line per item, then SHA-256):
//   op <index> <name> {attr=value,...} (<operand refs>) -> (<result types>) [^succ ...]
//   region <n blocks> / block <index> (<arg types>) / end
// Values are referred to as %<op index>.<result> or ^<block index>.<arg>; ops and blocks
// are numbered in one pre-order pass before anything is written, so forward references
// (graph regions, blocks out of dominance order) are handled too. Attributes come from the
// op's attribute dictionary (inherent and discardable, sorted by name) in printed form;
// location-valued attributes are skipped. Types are printed in full form. Locations are
// never printed, so nothing about them (or about SSA names) reaches the hash.
//
//===----------------------------------------------------------------------===//

#include "ttinterp/frontend/Dialect.h"
#include "ttinterp/frontend/Frontend.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;

namespace ttinterp::frontend {

namespace {

/// Bumped whenever the serialisation changes, so that old and new hashes never collide.
constexpr const char *kHashFormat = "ttinterp-structural-hash-v1";

class Hasher {
public:
  Hasher(AsmState &state, llvm::StringMap<std::string> &memo, llvm::DenseSet<Operation *> &active)
      : state(state), memo(memo), active(active) {}

  std::string hash(FunctionOpInterface fn) {
    Operation *op = fn.getOperation();
    number(op);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << kHashFormat << "\n";
    write(os, op);
    std::array<uint8_t, 32> digest = llvm::SHA256::hash(
        llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
    return llvm::toHex(digest, /*LowerCase=*/true);
  }

private:
  void number(Operation *op) {
    opIndex.try_emplace(op, opIndex.size());
    for (Region &region : op->getRegions()) {
      for (Block &block : region)
        blockIndex.try_emplace(&block, blockIndex.size());
      for (Block &block : region)
        for (Operation &inner : block)
          number(&inner);
    }
  }

  void writeValue(llvm::raw_ostream &os, Value value) {
    if (auto result = llvm::dyn_cast<OpResult>(value)) {
      auto it = opIndex.find(result.getOwner());
      if (it != opIndex.end()) {
        os << "%" << it->second << "." << result.getResultNumber();
        return;
      }
    } else {
      auto arg = llvm::cast<BlockArgument>(value);
      auto it = blockIndex.find(arg.getOwner());
      if (it != blockIndex.end()) {
        os << "^" << it->second << "." << arg.getArgNumber();
        return;
      }
    }
    // Defined outside the hashed function (not possible for an isolated tt.func).
    os << "<outside:";
    value.getType().print(os, state);
    os << ">";
  }

  void writeAttributes(llvm::raw_ostream &os, Operation *op) {
    os << "{";
    bool first = true;
    for (NamedAttribute attr : op->getAttrDictionary()) {
      if (llvm::isa<LocationAttr>(attr.getValue()))
        continue;
      os << (first ? "" : ",") << attr.getName().getValue() << "=";
      attr.getValue().print(os, state);
      first = false;
    }
    os << "}";
  }

  void writeCallee(llvm::raw_ostream &os, Operation *op) {
    auto call = llvm::dyn_cast<CallOpInterface>(op);
    if (!call)
      return;
    auto symbol = llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
    if (!symbol)
      return;
    Operation *callee = SymbolTable::lookupNearestSymbolFrom(op, symbol);
    auto fn = llvm::dyn_cast_if_present<FunctionOpInterface>(callee);
    if (!fn) {
      os << " callee=<unresolved>";
      return;
    }
    std::string name = fn.getName().str();
    if (active.contains(callee)) {
      os << " callee=<recursive " << name << ">";
      return;
    }
    auto it = memo.find(name);
    if (it == memo.end()) {
      active.insert(callee);
      Hasher inner(state, memo, active);
      std::string calleeHash = inner.hash(fn);
      active.erase(callee);
      it = memo.try_emplace(name, calleeHash).first;
    }
    os << " callee=" << it->second;
  }

  void write(llvm::raw_ostream &os, Operation *op) {
    os << "op " << opIndex.lookup(op) << " " << op->getName().getStringRef() << " ";
    writeAttributes(os, op);
    os << " (";
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      os << (i ? "," : "");
      writeValue(os, operand);
    }
    os << ") -> (";
    for (auto [i, type] : llvm::enumerate(op->getResultTypes())) {
      os << (i ? "," : "");
      type.print(os, state);
    }
    os << ")";
    for (Block *succ : op->getSuccessors())
      os << " ^" << blockIndex.lookup(succ);
    writeCallee(os, op);
    os << "\n";
    for (Region &region : op->getRegions()) {
      os << "region " << region.getBlocks().size() << "\n";
      for (Block &block : region) {
        os << "block " << blockIndex.lookup(&block) << " (";
        for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
          os << (i ? "," : "");
          arg.getType().print(os, state);
        }
        os << ")\n";
        for (Operation &inner : block)
          write(os, &inner);
      }
      os << "end\n";
    }
  }

  AsmState &state;
  llvm::StringMap<std::string> &memo;
  llvm::DenseSet<Operation *> &active;
  llvm::DenseMap<Operation *, unsigned> opIndex;
  llvm::DenseMap<Block *, unsigned> blockIndex;
};

} // namespace

std::string structuralHash(FunctionOpInterface fn) {
  llvm::StringMap<std::string> memo;
  llvm::DenseSet<Operation *> active;
  active.insert(fn.getOperation());
  // Fixed printing flags: whatever MLIR command-line options a program registers, elements
  // attributes are printed in full, in decimal, without aliases.
  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(std::numeric_limits<int64_t>::max());
  flags.printLargeElementsAttrWithHex(-1);
  AsmState state(fn->getContext(), flags);
  Hasher hasher(state, memo, active);
  return hasher.hash(fn);
}

} // namespace ttinterp::frontend
