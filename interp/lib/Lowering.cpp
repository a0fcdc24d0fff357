//===- Lowering.cpp - From a tt.func to a Program -------------------------===//
#include "Lowering.h"

#include "AccessAnalysis.h"
#include "ElementwiseChain.h"

#include "ttinterp/frontend/Dialect.h"
#include "ttinterp/frontend/Frontend.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <fmt/format.h>

namespace ttinterp::interp {

const OpTable &OpTable::get() {
  static const OpTable table = [] {
    OpTable t;
    registerArithOps(t);
    registerMathOps(t);
    registerTensorOps(t);
    registerMemoryOps(t);
    registerReduceOps(t);
    registerMapElementwiseOps(t);
    registerDotOps(t);
    registerControlFlowOps(t);
    registerDebugOps(t);
    registerAtomicOps(t);
    registerConversionOps(t);
    registerIndexOps(t);
    registerLibdeviceOps(t);
    registerBlockPointerOps(t);
    return t;
  }();
  return table;
}

//===----------------------------------------------------------------------===//
// Lowerer
//===----------------------------------------------------------------------===//

std::optional<DType> Lowerer::dtypeOf(mlir::Type t) {
  // Block pointers and descriptors: I64 records (checked before tensors, so a
  // tensor of them is not mistaken for one).
  if (blockRecordWords(t))
    return DType::I64;
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t))
    t = tensor.getElementType();
  if (auto i = mlir::dyn_cast<mlir::IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return DType::I1;
    case 8:
      return DType::I8;
    case 16:
      return DType::I16;
    case 32:
      return DType::I32;
    case 64:
      return DType::I64;
    default:
      return std::nullopt;
    }
  }
  if (t.isIndex())
    return DType::I64;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isFloat8E4M3FN())
    return DType::F8E4M3FN;
  if (t.isFloat8E4M3FNUZ())
    return DType::F8E4M3FNUZ;
  if (t.isFloat8E5M2())
    return DType::F8E5M2;
  if (t.isFloat8E5M2FNUZ())
    return DType::F8E5M2FNUZ;
  // Scalar pointers to scalars (!tt.ptr<f32>). Block pointers point to tensors
  // and are not plain addresses.
  if (auto p = mlir::dyn_cast<mlir::triton::PointerType>(t))
    if (!mlir::isa<mlir::RankedTensorType>(p.getPointeeType()))
      return DType::Ptr;
  return std::nullopt;
}

std::vector<int64_t> Lowerer::shapeOf(mlir::Type t) {
  if (std::optional<int64_t> words = blockRecordWords(t))
    return {*words};
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t))
    return std::vector<int64_t>(tensor.getShape().begin(), tensor.getShape().end());
  return {};
}

SlotId Lowerer::use(mlir::Value v) {
  auto it = values_.find(v);
  return it == values_.end() ? kNoSlot : it->second;
}

void Lowerer::advancePointer(mlir::Value iterArg, mlir::Operation *addptr, SlotId counter) {
  advanced_[iterArg] = AdvancedPointer{counter, startRunsCache()};
  advancing_[addptr] = iterArg;
}

namespace {
/// The most elements one tensor may have. Triton's frontend stops at 2^20
/// (TRITON_MAX_TENSOR_NUMEL); hand-written TTIR gets sixteen times that. A type far beyond
/// it (a fuzzer's `tensor<214748364764xi32>`) would ask every thread for a frame of
/// hundreds of gigabytes.
constexpr int64_t kMaxTensorElements = int64_t(1) << 24;
/// The most bytes of frame (the tensors alive at once) one program may need: each thread
/// running programs allocates one.
constexpr size_t kMaxFrameBytes = size_t(1) << 30;

/// The elements of a static shape, or nullopt past `limit` (never overflowing).
std::optional<int64_t> boundedElements(llvm::ArrayRef<int64_t> shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > limit)
      return std::nullopt;
  return n;
}
} // namespace

bool Lowerer::checkTensorSize(mlir::Type t, mlir::Operation *op) {
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t);
  if (!tensor || boundedElements(tensor.getShape(), kMaxTensorElements))
    return true;
  return error(op,
               fmt::format("{} has more than {} elements, the most ttinterp holds in one tensor "
                           "(Triton's own limit is 1048576)",
                           frontend::printed(t), kMaxTensorElements));
}

bool Lowerer::constantsFit(mlir::Operation *fn) {
  size_t total = 0;
  mlir::Operation *past = nullptr;
  fn->walk([&](mlir::Operation *op) {
    llvm::StringRef name = op->getName().getStringRef();
    if (past || op->getNumResults() != 1 ||
        (name != "arith.constant" && name != "tt.make_range" && name != "ub.poison"))
      return;
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
    std::optional<DType> d = tensor ? dtypeOf(tensor) : std::nullopt;
    std::optional<int64_t> n = tensor && tensor.hasStaticShape()
                                   ? boundedElements(tensor.getShape(), kMaxTensorElements)
                                   : std::nullopt;
    if (!d || !n)
      return; // not a constant that lowering makes bytes for (or refused when it comes)
    total += size_t(*n) * computeSize(*d);
    if (total > kMaxFrameBytes)
      past = op;
  });
  if (!past)
    return true;
  return error(past, fmt::format("the kernel's tensor constants come to more than {} bytes, the "
                                 "most a program's frame may hold",
                                 kMaxFrameBytes));
}

SlotId Lowerer::scratch(DType dtype, std::vector<int64_t> shape) {
  Slot s;
  s.dtype = dtype;
  // Shapes reach here from types checkTensorSize passed, or scratch shapes made from them.
  // Should one still overflow, it counts as a size whose bytes are far past kMaxFrameBytes
  // (so the kernel is refused) and whose byte count cannot overflow in turn.
  constexpr int64_t kTooMany = int64_t(1) << 40;
  s.numel = boundedElements(shape, kTooMany).value_or(kTooMany);
  s.shape = std::move(shape);
  s.function = currentFunction_;
  program_.slots.push_back(std::move(s));
  return SlotId(program_.slots.size() - 1);
}

SlotId Lowerer::def(mlir::Value v, mlir::Operation *op) {
  mlir::Type t = v.getType();
  std::optional<DType> d = dtypeOf(t);
  if (!d) {
    error(op, fmt::format("values of type {} are not supported by the interpreter",
                          frontend::printed(t)));
    return kNoSlot;
  }
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t); tensor && !tensor.hasStaticShape()) {
    error(op, "tensors of dynamic shape are not supported");
    return kNoSlot;
  }
  if (!checkTensorSize(t, op))
    return kNoSlot;
  SlotId s = scratch(*d, shapeOf(t));
  values_[v] = s;
  if (mlir::isa<mlir::OpResult>(v))
    definedBy_[s] = v;
  return s;
}

uint32_t Lowerer::site(mlir::Operation *op) {
  auto it = sites_.find(op);
  if (it != sites_.end())
    return it->second;
  program_.sites.push_back({op->getName().getStringRef().str(), frontend::describeLocation(op->getLoc())});
  uint32_t id = uint32_t(program_.sites.size() - 1);
  sites_[op] = id;
  return id;
}

std::optional<Lowerer::RowSumSlots> Lowerer::makeRowSumSlots(mlir::Operation *root) {
  const RowSum *sum = fusion_.rowSum(root);
  if (!sum)
    return std::nullopt;
  RowSumSlots slots{scratch(DType::F32, {}), scratch(DType::I8, {})};
  rowSumSlots_[sum->reduce] = slots;
  if (sum->loop)
    rowSumsOfLoops_[sum->loop].push_back(slots.valid);
  return slots;
}

bool Lowerer::error(mlir::Operation *op, const std::string &message) {
  if (error_.empty())
    error_ = fmt::format("{}: error: '{}': {}", frontend::describeLocation(op->getLoc()),
                         op->getName().getStringRef().str(), message);
  return false;
}

void Lowerer::emit(mlir::Operation *op, ExecFn fn, llvm::ArrayRef<SlotId> operands,
                   llvm::ArrayRef<SlotId> results, const void *data) {
  Instr in;
  in.fn = fn;
  program_.idLists.emplace_back(operands.begin(), operands.end());
  in.operands = program_.idLists.back().data();
  in.numOperands = uint32_t(operands.size());
  program_.idLists.emplace_back(results.begin(), results.end());
  in.results = program_.idLists.back().data();
  in.numResults = uint32_t(results.size());
  in.n = results.empty() ? 0 : program_.slots[results[0]].numel;
  in.data = data;
  in.site = site(op);
  current_->push_back(in);
}

bool Lowerer::lowerTerminator(mlir::Operation *op, Block &out,
                              const llvm::DenseMap<mlir::Block *, uint32_t> &ids) {
  Terminator &t = out.term;
  t.site = site(op);
  llvm::StringRef name = op->getName().getStringRef();
  auto slotsOf = [&](mlir::OperandRange range, std::vector<SlotId> &into) {
    for (mlir::Value v : range)
      into.push_back(use(v));
  };
  if (name == "tt.return") {
    t.kind = Terminator::Return;
    slotsOf(op->getOperands(), t.operands);
    return true;
  }
  if (name == "scf.yield" || name == "tt.reduce.return" || name == "tt.scan.return" ||
      name == "tt.map_elementwise.return") {
    t.kind = Terminator::Yield;
    slotsOf(op->getOperands(), t.operands);
    return true;
  }
  if (name == "scf.condition") {
    // The condition, then the values passed on: the while op reads them.
    t.kind = Terminator::Yield;
    slotsOf(op->getOperands(), t.operands);
    return true;
  }
  if (name == "cf.br") {
    t.kind = Terminator::Branch;
    t.dest = ids.lookup(op->getSuccessor(0));
    slotsOf(op->getOperands(), t.operands);
    return true;
  }
  if (name == "cf.cond_br") {
    t.kind = Terminator::CondBranch;
    t.condition = use(op->getOperand(0));
    t.dest = ids.lookup(op->getSuccessor(0));
    t.falseDest = ids.lookup(op->getSuccessor(1));
    // cond_br operands: condition, then the true operands, then the false ones.
    auto segments = op->getAttrOfType<mlir::DenseI32ArrayAttr>("operandSegmentSizes");
    if (!segments || segments.size() != 3)
      return error(op, "malformed cf.cond_br (no operandSegmentSizes)");
    int32_t nTrue = segments[1];
    for (unsigned i = 0; i < op->getNumOperands() - 1; ++i)
      (int32_t(i) < nTrue ? t.operands : t.falseOperands).push_back(use(op->getOperand(i + 1)));
    return true;
  }
  return error(op, "unsupported block terminator");
}

bool Lowerer::lowerBlock(mlir::Block &block, Block &out,
                         const llvm::DenseMap<mlir::Block *, uint32_t> &ids) {
  std::vector<Instr> *saved = current_;
  current_ = &out.instrs;
  const OpTable &table = OpTable::get();
  bool ok = true;
  for (mlir::Operation &op : block) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
      ok = lowerTerminator(&op, out, ids);
      break;
    }
    if (fusion_.elided(&op))
      continue; // only fused accesses used it
    LowerFn fn = table.find(op.getName().getStringRef());
    if (!fn) {
      ok = error(&op, "this op is not supported by the interpreter");
      break;
    }
    // An op the fused store of its result runs is lowered aside (Fusion.h); should it
    // lower to other than one instruction, it stays where it stands. So are the ops of an
    // element-wise chain, which its root runs (ElementwiseChain.h).
    std::vector<Instr> aside;
    bool forwarded = fusion_.forwarded(&op);
    mlir::Operation *chainRoot = fusion_.chainRoot(&op);
    const ElementwiseChain *chain = fusion_.chain(&op);
    if (forwarded || chainRoot || chain)
      current_ = &aside;
    bool lowered = fn(&op, *this);
    current_ = &out.instrs;
    // Each op of a chain is one block kernel (ArithOps.cpp); the arena is laid out for the
    // chain as one instruction where its root runs, so anything else is refused, not run.
    if ((chainRoot || chain) && lowered && aside.size() != 1) {
      ok = error(&op, "internal error: an op of an element-wise chain lowered to " +
                          std::to_string(aside.size()) + " instructions");
      break;
    }
    if (chainRoot && lowered) {
      chainSteps_[chainRoot].push_back(aside.front());
      continue;
    }
    if (chain && lowered) {
      std::vector<Instr> steps = std::move(chainSteps_[&op]);
      steps.push_back(aside.front());
      aside.clear();
      current_ = &aside;
      bool emitted = emitChain(*chain, steps, *this);
      current_ = &out.instrs;
      if (!emitted) {
        ok = error(&op, "internal error: the ops of an element-wise chain did not all lower");
        break;
      }
    }
    if (forwarded && lowered && aside.size() == 1)
      forwardedInstrs_[&op] = aside.front();
    else
      out.instrs.insert(out.instrs.end(), aside.begin(), aside.end());
    if (!lowered) {
      ok = false;
      if (error_.empty())
        error(&op, "could not be lowered");
      break;
    }
  }
  current_ = saved;
  return ok;
}

bool Lowerer::lowerRegionInto(mlir::Region &region, Body &body) {
  llvm::DenseMap<mlir::Block *, uint32_t> ids;
  for (mlir::Block &b : region)
    ids[&b] = uint32_t(ids.size());
  body.blocks.resize(ids.size());
  // Block arguments first: a branch may target a block that appears later.
  for (mlir::Block &b : region) {
    Block &out = body.blocks[ids[&b]];
    for (mlir::BlockArgument arg : b.getArguments()) {
      SlotId s = def(arg, region.getParentOp());
      if (s == kNoSlot)
        return false;
      out.arguments.push_back(s);
    }
  }
  SlotId firstInside = SlotId(program_.slots.size());
  for (mlir::Block &b : region)
    if (!lowerBlock(b, body.blocks[ids[&b]], ids))
      return false;
  // Slots made after the region's own arguments belong to ops inside it.
  for (Block &b : body.blocks) {
    Terminator &t = b.term;
    if (t.kind == Terminator::Branch || t.kind == Terminator::CondBranch)
      t.toDest = planCopies(program_, t.operands, body.blocks[t.dest].arguments);
    if (t.kind == Terminator::CondBranch)
      t.toFalseDest = planCopies(program_, t.falseOperands, body.blocks[t.falseDest].arguments);
    if (t.kind != Terminator::Yield)
      continue;
    t.movable.assign(t.operands.size(), 0);
    for (size_t i = 0; i < t.operands.size(); ++i) {
      SlotId s = t.operands[i];
      t.movable[i] = s != kNoSlot && s >= firstInside && !constantSlots_.contains(s) &&
                     std::count(t.operands.begin(), t.operands.end(), s) == 1;
    }
  }
  return true;
}

std::unique_ptr<Body> Lowerer::lowerRegion(mlir::Region &region, mlir::Operation *owner) {
  auto body = std::make_unique<Body>();
  body->site = site(owner);
  if (!lowerRegionInto(region, *body))
    return nullptr;
  return body;
}

std::optional<uint32_t> Lowerer::function(mlir::Operation *callOp, llvm::StringRef callee) {
  auto it = functionIds_.find(callee);
  if (it != functionIds_.end())
    return it->second;
  mlir::Operation *fn = mlir::SymbolTable::lookupNearestSymbolFrom(
      callOp, mlir::StringAttr::get(callOp->getContext(), callee));
  if (!fn) {
    error(callOp, fmt::format("callee @{} not found", callee.str()));
    return std::nullopt;
  }
  std::vector<Instr> *savedCurrent = current_;
  uint32_t savedFunction = currentFunction_;
  bool ok = lowerFunction(fn);
  current_ = savedCurrent;
  currentFunction_ = savedFunction;
  if (!ok)
    return std::nullopt;
  return functionIds_[callee];
}

bool Lowerer::lowerFunction(mlir::Operation *op) {
  auto fn = mlir::dyn_cast<mlir::FunctionOpInterface>(op);
  if (!fn)
    return error(op, "not a function");
  if (fn.isExternal())
    return error(op, "function has no body");
  auto function = std::make_unique<Function>();
  function->name = fn.getName().str();
  uint32_t index = uint32_t(program_.functions.size());
  functionIds_[fn.getName()] = index;
  program_.functions.push_back(nullptr);
  functionOps_.push_back(op);
  currentFunction_ = index;
  function->body.site = site(op);
  if (!constantsFit(op))
    return false;
  fusion_.analyze(op);
  for (mlir::Type t : fn.getResultTypes()) {
    auto d = dtypeOf(t);
    if (!d)
      return error(op, "unsupported result type");
    if (!checkTensorSize(t, op))
      return false;
    function->results.push_back(scratch(*d, shapeOf(t)));
  }
  if (!lowerRegionInto(fn.getFunctionBody(), function->body))
    return false;
  program_.functions[index] = std::move(function);
  return true;
}

//===----------------------------------------------------------------------===//
// Kernel::lower
//===----------------------------------------------------------------------===//

std::unique_ptr<Kernel> Kernel::lower(mlir::FunctionOpInterface fn, std::string &error) {
  auto program = std::make_unique<Program>();
  program->name = fn.getName().str();
  Lowerer lowerer(*program);
  if (!lowerer.lowerFunction(fn.getOperation())) {
    error = lowerer.errorMessage();
    return nullptr;
  }
  mlir::Block &entry = fn.getFunctionBody().front();
  frontend::Signature signature = frontend::signatureOf(fn);
  AccessSummary summary = analyzeAccess(fn);
  const std::vector<Access> &accesses = summary.parameters;
  program->reachableAccess = summary.untraced;
  auto parameterError = [&](const std::string &name, const std::string &what) {
    error = fmt::format("{}: error: parameter '{}' {}", frontend::describeLocation(fn.getLoc()),
                        name, what);
    return nullptr;
  };
  mlir::TypeRange types = entry.getArgumentTypes();
  for (mlir::BlockArgument arg : entry.getArguments()) {
    Parameter p;
    unsigned index = arg.getArgNumber();
    p.name = signature.args[index].name;
    SlotId s = lowerer.use(arg);
    if (auto desc = mlir::dyn_cast<mlir::triton::TensorDescType>(arg.getType())) {
      // Triton's launcher passes a TensorDescriptor as the descriptor, then its
      // shape as i32s, then its strides as i64s; the launch reads them from there.
      mlir::RankedTensorType block = desc.getBlockType();
      unsigned rank = unsigned(block.getRank());
      std::optional<DType> d = Lowerer::dtypeOf(block.getElementType());
      if (!d || rank == 0)
        return parameterError(p.name, "is a tensor descriptor of an unsupported type");
      for (unsigned k = 1; k <= 2 * rank; ++k) {
        unsigned width = k <= rank ? 32 : 64;
        if (index + k >= types.size() || !types[index + k].isInteger(width))
          return parameterError(
              p.name, fmt::format("is a tensor descriptor of rank {}, but it is not followed by "
                                  "its shape ({} x i32) and strides ({} x i64) as Triton passes "
                                  "them",
                                  rank, rank, rank));
      }
      p.isPointer = true;
      p.dtype = *d;
      p.descriptorRank = rank;
      p.blockShape.assign(block.getShape().begin(), block.getShape().end());
      p.access = accesses[index];
    } else if (program->slots[s].dtype == DType::Ptr) {
      auto pointer = mlir::cast<mlir::triton::PointerType>(arg.getType());
      std::optional<DType> d = Lowerer::dtypeOf(pointer.getPointeeType());
      if (!d || !program->slots[s].shape.empty())
        return parameterError(p.name, "has an unsupported type");
      p.isPointer = true;
      p.dtype = *d;
      p.access = accesses[index];
    } else {
      // A block pointer is a record the launch has no values to fill from:
      // Triton itself never passes one.
      if (!program->slots[s].shape.empty())
        return parameterError(p.name, "is a block pointer; these cannot be kernel arguments");
      p.dtype = program->slots[s].dtype;
    }
    program->parameters.push_back(p);
    program->parameterSlots.push_back(s);
  }
  layOutArena(*program, lowerer.sharableSlotLives());
  if (program->arenaSize > kMaxFrameBytes) {
    error = fmt::format("{}: error: kernel '{}' needs {} bytes of tensors alive at once in each "
                        "program, more than ttinterp's limit of {}",
                        frontend::describeLocation(fn.getLoc()), program->name, program->arenaSize,
                        kMaxFrameBytes);
    return nullptr;
  }
  return std::unique_ptr<Kernel>(new Kernel(std::move(program)));
}

} // namespace ttinterp::interp
