//===- Lowering.h - What an op implementation sees while lowering -*- C++ -*-===//
//
// Each op is implemented in one place: a LowerFn that checks the op, decodes
// its attributes, picks a typed kernel and emits it. LowerFns are registered by
// op name in an OpTable; the string lookup happens once per op at lowering,
// never while running.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ArenaLayout.h"
#include "Fusion.h"
#include "Program.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <string>

namespace ttinterp::interp {

class Lowerer;
/// Lowers one op; returns false after recording an error with Lowerer::error.
using LowerFn = bool (*)(mlir::Operation *op, Lowerer &L);

/// Operand positions (bit k: operand k) where an op's lowering reads the
/// scalar of a `tt.splat` instead of the splat tensor (see Lowerer::splatOf).
using ScalarOperands = uint8_t;
inline constexpr ScalarOperands kBothOperands = 0b11;

class OpTable {
public:
  void add(llvm::StringRef opName, LowerFn fn, ScalarOperands scalarOperands = 0) {
    fns_[opName] = {fn, scalarOperands};
  }
  LowerFn find(llvm::StringRef opName) const {
    auto it = fns_.find(opName);
    return it == fns_.end() ? nullptr : it->second.fn;
  }
  /// Whether `use` is an operand whose lowering reads a splat's scalar.
  bool readsSplatScalar(mlir::OpOperand &use) const {
    auto it = fns_.find(use.getOwner()->getName().getStringRef());
    unsigned k = use.getOperandNumber();
    return it != fns_.end() && k < 8 && (it->second.scalarOperands >> k & 1);
  }
  /// Every op the interpreter can run (built once, on first use).
  static const OpTable &get();

private:
  struct Entry {
    LowerFn fn = nullptr;
    ScalarOperands scalarOperands = 0;
  };
  llvm::StringMap<Entry> fns_;
};

// One registration function per op family (interp/lib/ops/*.cpp).
void registerArithOps(OpTable &table);
void registerMathOps(OpTable &table);
void registerTensorOps(OpTable &table);
void registerMemoryOps(OpTable &table);
void registerReduceOps(OpTable &table);
void registerMapElementwiseOps(OpTable &table);
void registerDotOps(OpTable &table);
void registerControlFlowOps(OpTable &table);
void registerDebugOps(OpTable &table);
void registerAtomicOps(OpTable &table);
void registerConversionOps(OpTable &table);
void registerIndexOps(OpTable &table);
void registerLibdeviceOps(OpTable &table);
void registerBlockPointerOps(OpTable &table);

/// Block pointers and tensor descriptors are held as records of i64 words (the
/// layout is BlockPointerOps.cpp's): the word count for such a type, else nullopt.
std::optional<int64_t> blockRecordWords(mlir::Type t);

class Lowerer {
public:
  explicit Lowerer(Program &program) : program_(program) {}

  /// The slot holding an already-lowered value.
  SlotId use(mlir::Value v);
  /// Creates the slot for a value defined here. Fails (kNoSlot, error
  /// recorded against `op`) on a type the interpreter cannot hold.
  SlotId def(mlir::Value v, mlir::Operation *op);
  /// Lets `v` live in an existing slot (e.g. a loop's results share the
  /// slots of its iteration arguments).
  void bind(mlir::Value v, SlotId s) {
    values_[v] = s;
    boundSlots_.insert(s);
  }
  /// A scratch slot, not tied to any value.
  SlotId scratch(DType dtype, std::vector<int64_t> shape);
  const Slot &slot(SlotId s) const { return program_.slots[s]; }
  const Program &program() const { return program_; }
  /// Marks the kernel as one whose programs may wait for each other (Program::mayWait).
  void mayWait() { program_.mayWait = true; }
  /// Marks the kernel as one that synchronises programs (Program::synchronises).
  void synchronises() { program_.synchronises = true; }
  /// A new entry of Frame::lastAccess, for one fused contiguous access.
  uint32_t accessHistory() { return program_.accessHistories++; }
  /// A tensor that is only a splat of a scalar, not materialised: every user
  /// reads `scalar` instead (tt.splat records this only when OpTable says each
  /// use is an operand whose lowering asks splatOf first).
  void recordSplat(mlir::Value tensor, SlotId scalar) { splats_[tensor] = scalar; }
  std::optional<SlotId> splatOf(mlir::Value tensor) const {
    auto it = splats_.find(tensor);
    return it == splats_.end() ? std::nullopt : std::optional<SlotId>(it->second);
  }

  /// A loop-carried pointer tensor that its scf.for only loads through and advances by one
  /// offset for every lane each iteration (ControlFlowOps.cpp says when): its slot keeps the
  /// pointers the loop began with, `counter` (two i64) the bytes added since and the entry
  /// into the loop they belong to, and the loads through it keep the runs of the starting
  /// pointers in Frame::startRuns[startRuns] instead of rediscovering them every iteration.
  struct AdvancedPointer {
    SlotId counter = kNoSlot;
    uint32_t startRuns = 0;
  };
  /// Records `iterArg` as advanced by `addptr` (whose result its loop yields for it).
  void advancePointer(mlir::Value iterArg, mlir::Operation *addptr, SlotId counter);
  /// The advanced pointer `v` is, or null.
  const AdvancedPointer *advancedPointer(mlir::Value v) const {
    auto it = advanced_.find(v);
    return it == advanced_.end() ? nullptr : &it->second;
  }
  /// The advanced pointer whose increment `addptr` is, or null.
  mlir::Value advancedBy(mlir::Operation *addptr) const { return advancing_.lookup(addptr); }

  /// The fused form of a tt.load/tt.store (see Fusion.h), or null.
  const ContiguousAccess *contiguousAccess(mlir::Operation *op) const {
    return fusion_.access(op);
  }
  /// The instruction of an op that the fused store of its result runs (FusionPlan::forwarded),
  /// lowered aside instead of emitted; null when it was emitted where it stands.
  const Instr *forwardedInstr(mlir::Operation *producer) const {
    auto it = forwardedInstrs_.find(producer);
    return it == forwardedInstrs_.end() ? nullptr : &it->second;
  }
  /// The fused form of an arith.cmpi (see Fusion.h), or null.
  const RangeCompare *rangeCompare(mlir::Operation *op) const { return fusion_.rangeCompare(op); }
  /// The outer-product mask of a 2-D load or store (FusionPlan::outerMask), or null.
  const OuterMask *outerMask(mlir::Operation *op) const { return fusion_.outerMask(op); }
  /// The outer form of a 2-D pointer tensor (FusionPlan::outerPointers), or null.
  const OuterPointers *outerPointers(mlir::Value v) const { return fusion_.outerPointers(v); }
  /// The gather form of a 1-D pointer tensor (FusionPlan::offsetGather), or null.
  const OffsetGather *offsetGather(mlir::Value v) const { return fusion_.offsetGather(v); }
  /// The stepping form of a tt.load (FusionPlan::stepGather), or null.
  const StepGather *stepGather(mlir::Operation *load) const { return fusion_.stepGather(load); }
  /// A new entry of Frame::startRuns, for one access that learns its runs.
  uint32_t startRunsCache() { return program_.startRunsCaches++; }

  /// Where the compiled loop of a chain root that is a row sum (FusionPlan::rowSum) leaves
  /// the sum (an f32 scalar), and a byte that is 1 while it is the sum of the block the
  /// reduce reads: set by each run of the chain (0 when it ran interpreted, or streamed),
  /// cleared by the loop that carries the block on entry (it may run no iteration, and the
  /// byte may hold anything: an earlier program's, or the arena's first bytes).
  struct RowSumSlots {
    SlotId sum = kNoSlot, valid = kNoSlot;
  };
  /// Makes them for chain root `root` as its chain is lowered, if the root is a row sum.
  std::optional<RowSumSlots> makeRowSumSlots(mlir::Operation *root);
  /// Those of the row sum `reduce`, or null.
  const RowSumSlots *rowSumSlotsOf(mlir::Operation *reduce) const {
    auto it = rowSumSlots_.find(reduce);
    return it == rowSumSlots_.end() ? nullptr : &it->second;
  }
  /// The validity bytes that scf.for `loop` clears on entry.
  llvm::ArrayRef<SlotId> rowSumsClearedBy(mlir::Operation *loop) const {
    auto it = rowSumsOfLoops_.find(loop);
    return it == rowSumsOfLoops_.end() ? llvm::ArrayRef<SlotId>() : it->second;
  }

  /// The dtype an MLIR type holds (element type for tensors); nullopt if unsupported.
  static std::optional<DType> dtypeOf(mlir::Type t);
  static std::vector<int64_t> shapeOf(mlir::Type t);

  /// Op-specific data that lives as long as the Program.
  template <class T> const T *keep(T value) {
    auto p = std::make_shared<const T>(std::move(value));
    program_.payloads.push_back(p);
    return p.get();
  }
  /// Appends an instruction to the block being lowered.
  void emit(mlir::Operation *op, ExecFn fn, llvm::ArrayRef<SlotId> operands,
            llvm::ArrayRef<SlotId> results, const void *data = nullptr);
  /// Declares that the kernel just emitted for `result` reads lane i of each of `operands`
  /// only before writing lane i of `result`, and no other lane after it (one pass, lane by
  /// lane, same element size): so `result` may take the bytes of an operand that the op
  /// reads last (ArenaLayout.cpp), and a chain of element-wise ops works in one block.
  void mayOverwrite(SlotId result, llvm::ArrayRef<SlotId> operands) {
    overwritable_[result].assign(operands.begin(), operands.end());
  }
  /// Whether s holds constant bytes (written once per frame, never after).
  bool isConstant(SlotId s) const { return constantSlots_.contains(s); }
  /// False, with an error naming the op that passes it, when the tensor constants of `fn`
  /// (dense constants, ranges, poison) come to more than a frame may hold: counted before any
  /// is lowered, since lowering makes their bytes, and a kernel of many large constants would
  /// exhaust memory before the frame's size is known.
  bool constantsFit(mlir::Operation *fn);
  /// Fills a slot with constant bytes once per frame.
  void constant(SlotId s, std::vector<uint8_t> bytes) {
    program_.constants.push_back({s, std::move(bytes)});
    constantSlots_.insert(s);
  }
  /// Lowers a region that an op owns (scf bodies, combine regions).
  std::unique_ptr<Body> lowerRegion(mlir::Region &region, mlir::Operation *owner);
  /// Lowers the functions `callee` names (once) and returns its index.
  std::optional<uint32_t> function(mlir::Operation *callOp, llvm::StringRef callee);

  /// False, with an error naming op, when `t` is a tensor type with more elements than
  /// ttinterp holds in one tensor.
  bool checkTensorSize(mlir::Type t, mlir::Operation *op);
  /// Records `LOCATION: error: message` for op; always returns false.
  bool error(mlir::Operation *op, const std::string &message);
  const std::string &errorMessage() const { return error_; }
  uint32_t site(mlir::Operation *op);

  /// Lowers a whole function into program.functions (entry point).
  bool lowerFunction(mlir::Operation *fn);
  /// After lowering: the slots that may share arena bytes, with their lives (ArenaLayout.cpp).
  std::vector<SlotLife> sharableSlotLives() const;

private:
  bool lowerBlock(mlir::Block &block, Block &out, const llvm::DenseMap<mlir::Block *, uint32_t> &ids);
  bool lowerTerminator(mlir::Operation *op, Block &out,
                       const llvm::DenseMap<mlir::Block *, uint32_t> &ids);
  bool lowerRegionInto(mlir::Region &region, Body &body);
  /// The ops that read v, directly or through ops not emitted where they stand (with
  /// `throughChains`, also through the ops of element-wise chains, to their roots).
  void collectReaders(mlir::Value v, llvm::SmallVectorImpl<mlir::Operation *> &readers,
                      llvm::DenseSet<mlir::Operation *> &seen, bool throughChains) const;

  Program &program_;
  FusionPlan fusion_;
  llvm::DenseMap<mlir::Value, SlotId> values_;
  llvm::DenseSet<SlotId> constantSlots_; ///< Written once per frame: never handed over.
  llvm::DenseMap<SlotId, mlir::Value> definedBy_; ///< Slots made for an op's result (def).
  llvm::DenseSet<SlotId> boundSlots_;             ///< Slots other values were bound to.
  llvm::DenseMap<SlotId, llvm::SmallVector<SlotId, 3>> overwritable_; ///< mayOverwrite's.
  std::vector<mlir::Operation *> functionOps_;    ///< Per lowered function.
  llvm::DenseMap<mlir::Value, SlotId> splats_;
  llvm::DenseMap<mlir::Value, AdvancedPointer> advanced_;
  llvm::DenseMap<mlir::Operation *, mlir::Value> advancing_;
  llvm::DenseMap<mlir::Operation *, uint32_t> sites_;
  llvm::DenseMap<mlir::Operation *, Instr> forwardedInstrs_;
  /// Per chain root: its other ops' instructions, lowered aside (FusionPlan::chainRoot).
  llvm::DenseMap<mlir::Operation *, std::vector<Instr>> chainSteps_;
  llvm::DenseMap<mlir::Operation *, RowSumSlots> rowSumSlots_; ///< By reduce.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<SlotId, 2>> rowSumsOfLoops_;
  llvm::StringMap<uint32_t> functionIds_;
  std::vector<Instr> *current_ = nullptr;
  uint32_t currentFunction_ = 0;
  std::string error_;
};

} // namespace ttinterp::interp
