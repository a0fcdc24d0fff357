//===- ElementwiseChain.cpp - Running a chain interpreted, then compiled -===//
#include "ElementwiseChain.h"

#include "ChainCompiler.h"
#include "ops/OpSupport.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"

#include <array>

namespace ttinterp::interp {
namespace {

/// More leaves than this and the chain is never compiled (its steps still run as one
/// instruction): the compiled loop's pointers are an array on the stack.
constexpr size_t kMaxLeaves = 16;

struct ChainPayload {
  std::vector<Instr> steps;
  std::shared_ptr<ChainState> state;
  /// Per leaf, the slot it reads (also among the instruction's operands, for the arena's
  /// lifetimes); kNoSlot for a constant (in the code itself).
  std::vector<SlotId> leafSlots;
  /// When the root is a row sum: where the compiled loop leaves it (Lowerer::RowSumSlots).
  SlotId rowSum = kNoSlot, rowSumValid = kNoSlot;
};

void chainKernel(Frame &f, const Instr &in) {
  const ChainPayload &c = *static_cast<const ChainPayload *>(in.data);
  ChainFn fn = c.state->compiled.load(std::memory_order_acquire);
  if (!fn)
    fn = beforeInterpretedRun(c.state, in.n);
  if (fn) {
    // Only the chain's own leaves are read; a constant's entry never.
    std::array<const uint8_t *, kMaxLeaves> leaves;
    const SlotId *slots = c.leafSlots.data();
    for (size_t k = 0, n = c.leafSlots.size(); k < n; ++k)
      leaves[k] = slots[k] == kNoSlot ? nullptr : f.storage[slots[k]];
    // The result's storage: its own block, or the destination a fused store points it at.
    uint8_t *out = f.storage[in.results[0]];
    const bool stream = f.streamResult && reinterpret_cast<uintptr_t>(out) % alignof(float) == 0;
    if (c.rowSumValid != kNoSlot) {
      uint8_t &valid = *f.at<uint8_t>(c.rowSumValid);
      ChainRowSumFn summing = c.state->rowSum.load(std::memory_order_relaxed);
      valid = summing && !stream;
      if (valid) {
        *f.at<float>(c.rowSum) = summing(leaves.data(), out, in.n);
        return;
      }
    }
    if (stream)
      fn = c.state->streaming.load(std::memory_order_relaxed);
    fn(leaves.data(), out, in.n);
    return;
  }
  if (c.rowSumValid != kNoSlot)
    *f.at<uint8_t>(c.rowSumValid) = 0; // the reduce adds the row up itself
  // Interpreted, only the last step writes the destination: the others' blocks stay cached.
  const bool stream = f.streamResult;
  for (const Instr &step : c.steps) {
    f.streamResult = stream && &step == &c.steps.back();
    step.fn(f, step);
  }
  f.streamResult = false;
}

} // namespace

std::optional<ChainCode::Node::Op> chainNodeOp(llvm::StringRef name) {
  using Node = ChainCode::Node;
  static const std::pair<llvm::StringRef, Node::Op> ops[] = {
      {"arith.addf", Node::Add},         {"arith.subf", Node::Sub},
      {"arith.mulf", Node::Mul},         {"arith.divf", Node::Div},
      {"arith.negf", Node::Neg},         {"arith.select", Node::Select},
      {"arith.cmpf", Node::Compare},     {"arith.maxnumf", Node::MaxNum},
      {"arith.minnumf", Node::MinNum},   {"arith.maximumf", Node::Maximum},
      {"arith.minimumf", Node::Minimum}, {"math.sqrt", Node::Sqrt},
      {"tt.precise_sqrt", Node::Sqrt},   {"math.rsqrt", Node::RSqrt},
      {"math.absf", Node::Abs},          {"arith.extf", Node::Widen},
      {"arith.truncf", Node::RoundBF16}, {"math.floor", Node::Floor},
      {"math.ceil", Node::Ceil},         {"math.trunc", Node::Trunc},
      {"math.round", Node::Round},       {"math.roundeven", Node::RoundEven},
      {"math.copysign", Node::CopySign}, {"math.fma", Node::Fma}};
  for (const auto &[opName, op] : ops)
    if (opName == name)
      return op;
  if (vectorMathFn(name))
    return Node::Math;
  return std::nullopt;
}

bool emitChain(const ElementwiseChain &chain, const std::vector<Instr> &steps, Lowerer &L) {
  if (steps.size() != chain.ops.size())
    return false;
  auto state = std::make_shared<ChainState>();
  ChainCode &code = state->code;
  ChainPayload payload;
  std::vector<SlotId> operands;
  llvm::DenseMap<mlir::Value, int32_t> refs; // chain results and leaves read so far
  for (size_t i = 0; i < chain.ops.size(); ++i)
    refs[chain.ops[i]->getResult(0)] = int32_t(i);
  // Leaf `leaf` for value v, read from `slot` (none: a constant in the code itself).
  auto addLeaf = [&](mlir::Value v, ChainCode::Leaf leaf, std::optional<SlotId> slot) {
    payload.leafSlots.push_back(slot.value_or(kNoSlot));
    if (slot)
      operands.push_back(*slot);
    int32_t ref = ~int32_t(code.leaves.size());
    code.leaves.push_back(leaf);
    return refs[v] = ref;
  };
  auto leafOf = [&](mlir::Value v) -> int32_t {
    if (auto it = refs.find(v); it != refs.end())
      return it->second;
    ChainCode::Leaf leaf;
    // A leaf is an f32 block, or a bf16/f16 one an extf widens: its value is a float exactly.
    // In a chain of scalars, a scalar is a block of one lane.
    mlir::Type element = mlir::getElementTypeOrSelf(v.getType());
    if (std::optional<double> c = splatConstant(v)) {
      leaf.kind = ChainCode::Leaf::Constant;
      leaf.constant = float(*c);
      return addLeaf(v, leaf, std::nullopt);
    }
    std::optional<SlotId> scalar = L.splatOf(v);
    leaf.kind = element.isInteger(1) ? ChainCode::Leaf::Mask
                : scalar             ? ChainCode::Leaf::Scalar
                                     : ChainCode::Leaf::Tensor;
    return addLeaf(v, leaf, scalar.value_or(L.use(v)));
  };
  // A range compare's scalars, as Int leaves (FusionPlan puts one in a chain only when no
  // reader needs its mask block: its offsets and splats are not emitted).
  auto intLeafOf = [&](mlir::Value scalar) -> int32_t {
    if (auto it = refs.find(scalar); it != refs.end())
      return it->second;
    return addLeaf(scalar, ChainCode::Leaf{ChainCode::Leaf::Int, 0}, L.use(scalar));
  };
  for (mlir::Operation *op : chain.ops) {
    ChainCode::Node node;
    if (const RangeCompare *c = L.rangeCompare(op)) {
      node.op = ChainCode::Node::RangeMask;
      node.variant = c->unsignedBound ? ChainCode::Node::kRangeUnsigned : 0;
      if (c->start) {
        node.variant |= ChainCode::Node::kRangeHasStart;
        node.operands[0] = intLeafOf(c->start);
      }
      node.operands[1] = intLeafOf(c->bound);
      node.operands[2] = int32_t(c->rangeStart); // an i32 attribute of make_range
      code.nodes.push_back(node);
      continue;
    }
    llvm::StringRef name = elementwiseOpName(op);
    node.op = *chainNodeOp(name); // FusionPlan chains only these
    if (node.op == ChainCode::Node::Compare)
      node.variant = uint8_t(op->getAttrOfType<mlir::IntegerAttr>("predicate").getInt());
    if (node.op == ChainCode::Node::Math)
      node.variant = uint8_t(*vectorMathFn(name));
    for (unsigned k = 0; k < op->getNumOperands() && k < 3; ++k)
      node.operands[k] = leafOf(op->getOperand(k));
    code.nodes.push_back(node);
  }
  if (code.leaves.size() > kMaxLeaves) {
    state->requested = true; // as if asked for already: it is never compiled
  } else if (std::optional<Lowerer::RowSumSlots> sum = L.makeRowSumSlots(chain.ops.back())) {
    code.rowSum = true;
    payload.rowSum = sum->sum;
    payload.rowSumValid = sum->valid;
  }
  payload.steps = steps;
  const Instr &root = steps.back();
  payload.state = std::move(state);
  L.emit(chain.ops.back(), &chainKernel, operands, {root.results[0]}, L.keep(std::move(payload)));
  return true;
}

} // namespace ttinterp::interp
