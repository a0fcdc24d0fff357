//===- ControlFlowOps.cpp - scf.for, scf.if, scf.while, tt.call and no-ops -===//
//
// Structured control flow runs its lowered regions directly. A loop's results
// live in the slots of its iteration arguments, so nothing is copied out when
// it finishes. Block terminators (scf.yield, cf.br, tt.return, ...) are lowered
// with their block (Lowering.cpp), not here.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include "ttinterp/frontend/Dialect.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <fmt/format.h>

#include <cstring>

namespace ttinterp::interp {
namespace {

/// Slots for every result of `op`, in order; false (error recorded) if a type is unsupported.
bool defineResults(mlir::Operation *op, Lowerer &L, std::vector<SlotId> &slots) {
  for (mlir::Value r : op->getResults()) {
    SlotId s = L.def(r, op);
    if (s == kNoSlot)
      return false;
    slots.push_back(s);
  }
  return true;
}

struct ForData {
  std::unique_ptr<Body> body;
  SlotId lower, upper, step, iv;
  std::vector<SlotId> iterArgs;
  SlotTransfer enter; ///< Initial values copied into their arguments.
  SlotTransfer next;  ///< The body's yield into the arguments.
  /// Arguments whose initial value is a constant slot (`tl.zeros` accumulators), apart:
  /// they read the constant's bytes instead of a copy. Nothing writes through an
  /// argument's storage (copies and hand-overs go to its own buffer), and nothing writes a
  /// constant slot after the frame is made.
  std::vector<SlotId> constantInits, constantArgs;
  std::vector<SlotId> counters; ///< Of the loop's advanced pointers (Lowerer::AdvancedPointer).
  /// Row sums that its body's chains make (Lowerer::RowSumSlots): not yet its result's.
  std::vector<SlotId> rowSumsValid;
};

/// scf.for over bounds of type D (an integer type: the induction variable's).
template <DType D> void forKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const auto &d = *static_cast<const ForData *>(in.data);
  transfer(f, d.enter);
  for (size_t i = 0; i < d.constantArgs.size(); ++i)
    f.storage[d.constantArgs[i]] = f.storage[d.constantInits[i]];
  for (SlotId valid : d.rowSumsValid)
    *f.at<uint8_t>(valid) = 0;
  for (SlotId c : d.counters) {
    uint64_t *counter = f.at<uint64_t>(c);
    counter[0] = 0;               // bytes added to the starting pointers
    counter[1] = ++f.loopEntries; // which runs of them a load may reuse
  }
  int64_t lo = signedValue<D>(*f.at<T>(d.lower)), hi = signedValue<D>(*f.at<T>(d.upper)),
          step = signedValue<D>(*f.at<T>(d.step));
  if (step <= 0) {
    f.fail(in.site, "invalid_loop", fmt::format("scf.for step must be positive, got {}", step));
    return;
  }
  for (int64_t iv = lo; iv < hi; iv += step) {
    *f.at<T>(d.iv) = wrap<D>(T(iv));
    // The body is one block (scf.for's), so what leaves it is always its yield: d.next.
    if (!runBody(f, *d.body))
      return;
    transfer(f, d.next);
    if (iv > INT64_MAX - step)
      break;
  }
}

bool lowerFor(mlir::Operation *op, Lowerer &L) {
  ForData d;
  for (auto [i, add] : advancedPointers(op)) {
    d.counters.push_back(L.scratch(DType::I64, {2}));
    L.advancePointer(op->getRegion(0).front().getArgument(i + 1), add, d.counters.back());
  }
  d.lower = L.use(op->getOperand(0));
  d.upper = L.use(op->getOperand(1));
  d.step = L.use(op->getOperand(2));
  std::vector<SlotId> inits;
  for (unsigned i = 3; i < op->getNumOperands(); ++i)
    inits.push_back(L.use(op->getOperand(i)));
  d.body = L.lowerRegion(op->getRegion(0), op);
  if (!d.body)
    return false;
  const Block &entry = d.body->blocks[0];
  if (d.body->blocks.size() != 1 || entry.term.kind != Terminator::Yield)
    return L.error(op, "the body of scf.for must be one block ending in scf.yield");
  d.iv = entry.arguments[0];
  std::vector<SlotId> copiedInits, copiedArgs;
  for (size_t i = 0; i < inits.size(); ++i) {
    SlotId arg = entry.arguments[i + 1];
    d.iterArgs.push_back(arg);
    L.bind(op->getResult(unsigned(i)), arg);
    // Its loads read the outer form's pointers and offsets (Fusion.h), never the argument.
    if (L.outerPointers(op->getRegion(0).front().getArgument(unsigned(i) + 1)))
      continue;
    bool constant = L.isConstant(inits[i]);
    (constant ? d.constantInits : copiedInits).push_back(inits[i]);
    (constant ? d.constantArgs : copiedArgs).push_back(arg);
  }
  llvm::ArrayRef<SlotId> rowSumsValid = L.rowSumsClearedBy(op);
  d.rowSumsValid.assign(rowSumsValid.begin(), rowSumsValid.end());
  d.enter = planCopies(L.program(), copiedInits, copiedArgs);
  d.next = planMoves(L.program(), entry.term, d.iterArgs);
  ExecFn kernel = visitInt(L.slot(d.iv).dtype,
                           [](auto tag) -> ExecFn { return &forKernel<decltype(tag)::value>; });
  if (!kernel)
    return L.error(op, "scf.for over a non-integer induction variable");
  L.emit(op, kernel, {}, {}, L.keep(std::move(d)));
  return true;
}

struct IfData {
  std::unique_ptr<Body> thenBody, elseBody;
  SlotId condition;
  /// Each branch's yield into the results (each branch is one block).
  SlotTransfer thenYield, elseYield;
};

void ifKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const IfData *>(in.data);
  const bool taken = *f.at<uint8_t>(d.condition);
  const Body *body = taken ? d.thenBody.get() : d.elseBody.get();
  if (body && runBody(f, *body))
    transfer(f, taken ? d.thenYield : d.elseYield);
}

bool lowerIf(mlir::Operation *op, Lowerer &L) {
  IfData d;
  d.condition = L.use(op->getOperand(0));
  d.thenBody = L.lowerRegion(op->getRegion(0), op);
  if (!d.thenBody)
    return false;
  if (!op->getRegion(1).empty()) {
    d.elseBody = L.lowerRegion(op->getRegion(1), op);
    if (!d.elseBody)
      return false;
  }
  std::vector<SlotId> results;
  if (!defineResults(op, L, results))
    return false;
  for (auto [body, yield] :
       {std::pair{d.thenBody.get(), &d.thenYield}, std::pair{d.elseBody.get(), &d.elseYield}}) {
    if (!body)
      continue;
    if (body->blocks.size() != 1)
      return L.error(op, "each region of scf.if must be one block ending in scf.yield");
    *yield = planMoves(L.program(), body->blocks[0].term, results);
  }
  L.emit(op, &ifKernel, {}, {}, L.keep(std::move(d)));
  return true;
}

struct WhileData {
  std::unique_ptr<Body> before, after;
  SlotTransfer enter; ///< The initial values into the before region's arguments.
  std::vector<SlotId> results;
  SlotId condition = kNoSlot; ///< scf.condition's first operand; the others pass on
  /// scf.condition's values into the results or the after region's arguments; the after
  /// region's yield into the before region's arguments (the loop state).
  SlotTransfer finish, proceed, next;
};

/// The loop state of an scf.while: its before region's arguments, byte for byte.
void snapshot(Frame &f, const std::vector<SlotId> &state, std::vector<uint8_t> &out) {
  out.clear();
  for (SlotId s : state)
    out.insert(out.end(), f.bytes(s), f.bytes(s) + f.slot(s).bytes());
}

bool sameState(Frame &f, const std::vector<SlotId> &state, const std::vector<uint8_t> &before) {
  size_t at = 0;
  for (SlotId s : state) {
    size_t n = f.slot(s).bytes();
    if (std::memcmp(f.bytes(s), before.data() + at, n) != 0)
      return false;
    at += n;
  }
  return true;
}

/// A spinning program: an iteration that ends in the state it began with and changed no
/// memory will repeat forever unless another program changes memory (the loop is
/// deterministic, and it is all this program does). Then the program waits for the others
/// (Frame::waitForOthers) instead of spinning: decoupled look-back, locks and flags set
/// by programs that run after it complete in any order.
void whileKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const WhileData *>(in.data);
  const std::vector<SlotId> &state = d.before->blocks[0].arguments;
  transfer(f, d.enter);
  std::vector<uint8_t> previous;
  snapshot(f, state, previous);
  uint64_t changes = f.memory->changes();
  for (;;) {
    // Each region is one block, so what leaves it is always its terminator.
    if (!runBody(f, *d.before))
      return;
    if (!*f.at<uint8_t>(d.condition)) {
      transfer(f, d.finish);
      return;
    }
    transfer(f, d.proceed);
    if (!runBody(f, *d.after))
      return;
    transfer(f, d.next);
    if (f.memory->changes() == changes && sameState(f, state, previous)) {
      if (!f.waitForOthers(in.site))
        return;
    } else {
      snapshot(f, state, previous);
    }
    changes = f.memory->changes();
  }
}

bool lowerWhile(mlir::Operation *op, Lowerer &L) {
  WhileData d;
  std::vector<SlotId> inits;
  for (mlir::Value v : op->getOperands())
    inits.push_back(L.use(v));
  d.before = L.lowerRegion(op->getRegion(0), op);
  if (!d.before)
    return false;
  d.after = L.lowerRegion(op->getRegion(1), op);
  if (!d.after)
    return false;
  // The before region is one block ending in scf.condition(%cond) %values...
  const std::vector<SlotId> &condition = d.before->blocks[0].term.operands;
  if (d.before->blocks.size() != 1 || condition.empty())
    return L.error(op, "the before region must be one block ending in scf.condition");
  if (d.after->blocks.size() != 1)
    return L.error(op, "the after region must be one block ending in scf.yield");
  d.condition = condition[0];
  if (!defineResults(op, L, d.results))
    return false;
  d.enter = planCopies(L.program(), inits, d.before->blocks[0].arguments);
  const Terminator &passed = d.before->blocks[0].term;
  d.finish = planMoves(L.program(), passed, d.results, 1);
  d.proceed = planMoves(L.program(), passed, d.after->blocks[0].arguments, 1);
  d.next = planMoves(L.program(), d.after->blocks[0].term, d.before->blocks[0].arguments);
  L.mayWait();
  L.emit(op, &whileKernel, {}, {}, L.keep(std::move(d)));
  return true;
}

//===----------------------------------------------------------------------===//
// tt.call
//===----------------------------------------------------------------------===//

constexpr int kMaxCallDepth = 64;

struct CallData {
  uint32_t callee;
  std::vector<SlotId> operands, results; ///< As lists copySlots takes, built once.
};

void callKernel(Frame &f, const Instr &in) {
  const auto &call = *static_cast<const CallData *>(in.data);
  uint32_t callee = call.callee;
  const Function &fn = *f.program->functions[callee];
  if (f.callDepth >= kMaxCallDepth) {
    f.fail(in.site, "call_depth",
           fmt::format("call depth exceeds {} (runaway recursion?)", kMaxCallDepth));
    return;
  }
  // A recursive call reuses the callee's slots: save the live activation
  // (its arena bytes, and which slots read memory in place, and how).
  std::vector<uint8_t> saved;
  std::vector<uint8_t *> savedStorage, savedHome;
  std::vector<int64_t> savedRowStride;
  if (f.active[callee] > 0) {
    saved.assign(f.arena + fn.arenaBegin, f.arena + fn.arenaEnd);
    savedStorage = f.storage;
    savedHome = f.home;
    savedRowStride = f.rowStride;
  }
  copySlots(f, call.operands, fn.body.blocks[0].arguments);
  ++f.active[callee];
  ++f.callDepth;
  const Terminator *t = runBody(f, fn.body);
  --f.callDepth;
  --f.active[callee];
  if (!t)
    return;
  if (saved.empty()) {
    copySlots(f, t->operands, call.results);
    return;
  }
  // A recursive call: its result slots lie in the callee's own section, which
  // the restore below rewinds. Keep the returned values aside until after it.
  std::vector<uint8_t> returned;
  for (SlotId s : t->operands)
    returned.insert(returned.end(), f.bytes(s), f.bytes(s) + f.slot(s).bytes());
  std::memcpy(f.arena + fn.arenaBegin, saved.data(), saved.size());
  f.storage = std::move(savedStorage);
  f.home = std::move(savedHome);
  f.rowStride = std::move(savedRowStride);
  size_t at = 0;
  for (uint32_t r = 0; r < in.numResults; ++r) {
    const Slot &slot = f.slot(in.results[r]);
    std::memcpy(f.bytes(in.results[r]), returned.data() + at, slot.bytes());
    at += slot.bytes();
  }
}

bool lowerCall(mlir::Operation *op, Lowerer &L) {
  auto callee = op->getAttrOfType<mlir::FlatSymbolRefAttr>("callee");
  if (!callee)
    return L.error(op, "call without a callee");
  std::vector<SlotId> operands;
  for (mlir::Value v : op->getOperands())
    operands.push_back(L.use(v));
  std::optional<uint32_t> index = L.function(op, callee.getValue());
  if (!index)
    return false;
  std::vector<SlotId> results;
  for (mlir::Value r : op->getResults()) {
    SlotId s = L.def(r, op);
    if (s == kNoSlot)
      return false;
    results.push_back(s);
  }
  L.emit(op, &callKernel, operands, results, L.keep(CallData{*index, operands, results}));
  return true;
}

/// ub.poison: any value will do; zeros are deterministic.
bool lowerPoison(mlir::Operation *op, Lowerer &L) {
  for (mlir::Value result : op->getResults()) {
    SlotId r = L.def(result, op);
    if (r == kNoSlot)
      return false;
    L.constant(r, std::vector<uint8_t>(L.slot(r).bytes(), 0));
  }
  return true;
}

/// Ops with no effect on one program's block semantics: a barrier orders
/// threads of one program, which the interpreter runs as a whole block; an
/// assumption only informs the optimiser. Programmatic dependent launch (Triton 3.9's
/// gdc_wait / gdc_launch_dependents) lets the next grid start early and makes it wait
/// for this one's writes: launches here run one after another, each finished before the
/// next starts, which is what the wait waits for.
bool lowerNothing(mlir::Operation *, Lowerer &) { return true; }

/// Inline PTX cannot run on a CPU, with one exception: Triton 3.8 and earlier spell gdc_wait
/// and gdc_launch_dependents as PTX (`griddepcontrol.wait; // dummy $0`, no operands, one
/// unused i32 result), the very instructions 3.9's ops above stand for: no-ops here too, the
/// dummy result 0.
bool lowerInlineAsm(mlir::Operation *op, Lowerer &L) {
  auto text = op->getAttrOfType<mlir::StringAttr>("asm_string");
  llvm::StringRef instruction = text ? text.getValue().split("//").first.trim() : "";
  if (op->getNumOperands() != 0 ||
      (instruction != "griddepcontrol.wait;" && instruction != "griddepcontrol.launch_dependents;"))
    return L.error(op, "inline PTX assembly cannot be interpreted on the CPU");
  return lowerPoison(op, L); // the dummy result: zeros, as ub.poison's
}

} // namespace

void registerControlFlowOps(OpTable &t) {
  t.add("scf.for", &lowerFor);
  t.add("scf.if", &lowerIf);
  t.add("scf.while", &lowerWhile);
  t.add("tt.call", &lowerCall);
  t.add("ub.poison", &lowerPoison);
  t.add("gpu.barrier", &lowerNothing);
  t.add("ttg.barrier", &lowerNothing);
  t.add("llvm.intr.assume", &lowerNothing);
  t.add("tt.grid_dependency_wait", &lowerNothing);
  t.add("tt.grid_dependency_launch_dependents", &lowerNothing);
  t.add("tt.elementwise_inline_asm", &lowerInlineAsm);
}

} // namespace ttinterp::interp
