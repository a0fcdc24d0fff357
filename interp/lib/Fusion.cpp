//===- Fusion.cpp - Matching splat/make_range/addptr/cmpi chains -----------===//
#include "Fusion.h"
#include "ElementwiseChain.h"
#include "ops/ArithFunctors.h"
#include "ops/OpSupport.h"
#include "ops/ReduceTree.h"

#include "ttinterp/frontend/Dialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace ttinterp::interp {
namespace {

bool is(mlir::Operation *op, llvm::StringRef name) {
  return op && op->getName().getStringRef() == name;
}

/// The scalar a `tt.splat` of a scalar broadcasts, or null.
mlir::Value splatSource(mlir::Value v) {
  mlir::Operation *def = v.getDefiningOp();
  if (!is(def, "tt.splat") || mlir::isa<mlir::ShapedType>(def->getOperand(0).getType()))
    return nullptr;
  return def->getOperand(0);
}

/// `make_range` or `splat(start) + make_range` (either order), all i32, 1-D; or `wide`, all
/// i64 with the range sign-extended (`extsi(make_range)`).
struct Offsets {
  mlir::Value start;
  int64_t rangeStart = 0;
  bool wide = false;
  bool operator==(const Offsets &o) const {
    return start == o.start && rangeStart == o.rangeStart && wide == o.wide;
  }
};

std::optional<int64_t> rangeStartOf(mlir::Value v, bool wide) {
  mlir::Operation *def = v.getDefiningOp();
  if (wide) {
    // make_range's values are below 2^31 and not negative: extended, the same numbers.
    if (!is(def, "arith.extsi") && !is(def, "arith.extui"))
      return std::nullopt;
    def = def->getOperand(0).getDefiningOp();
  }
  if (!is(def, "tt.make_range"))
    return std::nullopt;
  auto start = def->getAttrOfType<mlir::IntegerAttr>("start");
  if (!start)
    return std::nullopt;
  return start.getInt();
}

std::optional<Offsets> matchOffsets(mlir::Value v) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
  if (!type || type.getRank() != 1 ||
      !(type.getElementType().isInteger(32) || type.getElementType().isInteger(64)))
    return std::nullopt;
  const bool wide = type.getElementType().isInteger(64);
  if (auto r = rangeStartOf(v, wide))
    return Offsets{nullptr, *r, wide};
  mlir::Operation *def = v.getDefiningOp();
  if (!is(def, "arith.addi"))
    return std::nullopt;
  for (int k = 0; k < 2; ++k)
    if (auto r = rangeStartOf(def->getOperand(k), wide))
      if (mlir::Value s = splatSource(def->getOperand(1 - k)))
        return Offsets{s, *r, wide};
  return std::nullopt;
}

/// cmpi slt/ult (integer predicates 2 and 6) of offsets against a splat.
std::optional<RangeCompare> matchRangeCompare(mlir::Operation *cmp) {
  if (!is(cmp, "arith.cmpi"))
    return std::nullopt;
  auto predicate = cmp->getAttrOfType<mlir::IntegerAttr>("predicate");
  if (!predicate || (predicate.getInt() != 2 && predicate.getInt() != 6))
    return std::nullopt;
  std::optional<Offsets> lhs = matchOffsets(cmp->getOperand(0));
  mlir::Value bound = splatSource(cmp->getOperand(1));
  if (!lhs || !bound)
    return std::nullopt;
  return RangeCompare{lhs->start, lhs->rangeStart, bound, predicate.getInt() == 6, lhs->wide};
}

/// The value of every lane of an i32 block that is a splat of a scalar or a splat constant.
std::optional<SplatInt> matchSplatInt(mlir::Value v) {
  if (mlir::Value scalar = splatSource(v))
    return scalar.getType().isInteger(32) ? std::optional<SplatInt>(SplatInt{scalar, 0})
                                          : std::nullopt;
  mlir::Operation *def = v.getDefiningOp();
  if (!is(def, "arith.constant"))
    return std::nullopt;
  auto splat = mlir::dyn_cast<mlir::SplatElementsAttr>(def->getAttr("value"));
  if (!splat || !splat.getElementType().isInteger(32))
    return std::nullopt;
  return SplatInt{nullptr, splat.getSplatValue<llvm::APInt>().getSExtValue()};
}

/// `[splat(addend) +] (splat(start) + make_range) / splat(divisor)` (the addend on either
/// side), i32 and 1-D; `ops` gets the addi and divsi.
std::optional<StepOffsets> matchStepOffsets(mlir::Value v,
                                            llvm::SmallVectorImpl<mlir::Operation *> &ops) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isInteger(32))
    return std::nullopt;
  StepOffsets steps;
  mlir::Operation *def = v.getDefiningOp();
  if (is(def, "arith.addi")) {
    mlir::Operation *sum = def;
    for (unsigned k = 0; k < 2 && !steps.addend; ++k) {
      mlir::Operation *quotient = sum->getOperand(1 - k).getDefiningOp();
      if (std::optional<SplatInt> addend = matchSplatInt(sum->getOperand(k));
          addend && is(quotient, "arith.divsi")) {
        steps.addend = addend;
        def = quotient;
      }
    }
    if (!steps.addend)
      return std::nullopt;
    ops.push_back(sum);
  }
  if (!is(def, "arith.divsi"))
    return std::nullopt;
  std::optional<Offsets> numerator = matchOffsets(def->getOperand(0));
  std::optional<SplatInt> divisor = matchSplatInt(def->getOperand(1));
  if (!numerator || numerator->wide || !divisor)
    return std::nullopt;
  ops.push_back(def);
  steps.start = numerator->start;
  steps.rangeStart = numerator->rangeStart;
  steps.divisor = *divisor;
  return steps;
}

/// Whether `mask` bounds exactly `offsets`; if so, records the bound in `a`.
bool matchBound(mlir::Value mask, const Offsets &offsets, ContiguousAccess &a) {
  std::optional<RangeCompare> c = matchRangeCompare(mask.getDefiningOp());
  if (!c || !(Offsets{c->start, c->rangeStart, c->wide} == offsets))
    return false;
  a.range = *c;
  return true;
}

/// Defining ops of `op`'s operands, `depth` levels up (candidates for elision;
/// scalar-valued ones are never elided).
void pushOperandDefs(mlir::Operation *op, int depth, llvm::SmallVectorImpl<mlir::Operation *> &out) {
  for (mlir::Value v : op->getOperands())
    if (mlir::Operation *def = v.getDefiningOp()) {
      out.push_back(def);
      if (depth > 1)
        pushOperandDefs(def, depth - 1, out);
    }
}

/// Where the mask sits: tt.load(ptr, mask, other), tt.store(ptr, value, mask).
unsigned maskOperandOf(mlir::Operation *access) { return is(access, "tt.load") ? 1 : 2; }

/// Whether `op` is one of the element-wise binary arith ops of ArithFunctors.h, which
/// ArithOps.cpp lowers to binaryKernel (integer division is not among them).
bool binaryElementwise(mlir::Operation *op) {
#define TTINTERP_OP_NAME(NAME, FN) NAME,
  // clang-format off
  static const llvm::StringRef names[] = {
      TTINTERP_COMMUTATIVE_INT_OPS(TTINTERP_OP_NAME)
      TTINTERP_OTHER_INT_OPS(TTINTERP_OP_NAME)
      TTINTERP_COMMUTATIVE_FLOAT_OPS(TTINTERP_OP_NAME)
      TTINTERP_OTHER_FLOAT_OPS(TTINTERP_OP_NAME)
  };
  // clang-format on
#undef TTINTERP_OP_NAME
  llvm::StringRef name = op->getName().getStringRef();
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

/// The op a fused store can run into its destination: the defining op of the stored
/// value, if the store is its only use in the same block and it is an element-wise binary
/// op or the root of an element-wise chain (`chains`), on a type whose blocks are laid out
/// as memory (8- to 64-bit integers, f32, f64). Those cannot fault, write their result
/// through the frame's storage (which the store points at its destination), and read only
/// blocks of the frame or memory no launch writes, so their result never overlaps what they
/// read; run later, at the store, they read the same operands (SSA values of the same
/// block, unchanged in between).
mlir::Operation *storeProducer(mlir::Operation *store,
                               const llvm::DenseMap<mlir::Operation *, ElementwiseChain> &chains) {
  mlir::Value value = store->getOperand(1);
  mlir::Operation *def = value.getDefiningOp();
  if (!def || !value.hasOneUse() || def->getBlock() != store->getBlock() ||
      def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !(binaryElementwise(def) || chains.count(def)))
    return nullptr;
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!type)
    return nullptr;
  mlir::Type e = type.getElementType();
  bool laidOutAsMemory = e.isF32() || e.isF64() || e.isInteger(8) || e.isInteger(16) ||
                         e.isInteger(32) || e.isInteger(64);
  return laidOutAsMemory ? def : nullptr;
}

/// Whether `op` can be a link of an element-wise chain: an f32 tensor op of the kinds
/// ChainCode holds, with its operands lane by lane (a select's mask a tensor, not a scalar),
/// an f32 compare making a mask for one, or a cast between f32 and bf16/f16 (f16 and bf16
/// blocks hold floats: widening is exact, and rounding to bf16 is a few integer ops). Or the
/// same op on f32 scalars only (a row's `1 / sqrt(var / n + eps)`): a chain of one lane, whose
/// ops' dispatches cost more than the arithmetic.
bool chainable(mlir::Operation *op) {
  if (!op || op->getNumResults() != 1 || op->getNumOperands() == 0)
    return false;
  auto knownPredicate = [&] {
    auto predicate = op->getAttrOfType<mlir::IntegerAttr>("predicate");
    return predicate && predicate.getInt() >= 0 && predicate.getInt() <= 15;
  };
  if (!mlir::isa<mlir::RankedTensorType>(op->getResult(0).getType())) {
    if (!op->getResult(0).getType().isF32() && !is(op, "arith.cmpf"))
      return false;
    // Every operand an f32 scalar (so no cast), but a select's condition (an i1).
    for (mlir::Value operand : op->getOperands())
      if (!operand.getType().isF32() && !(is(op, "arith.select") && operand == op->getOperand(0) &&
                                          operand.getType().isInteger(1)))
        return false;
    if (is(op, "arith.cmpf"))
      return knownPredicate();
    return chainNodeOp(elementwiseOpName(op)).has_value();
  }
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
  auto from = mlir::dyn_cast<mlir::RankedTensorType>(op->getOperands().back().getType());
  if (!type || !from)
    return false;
  mlir::Type result = type.getElementType(), operand = from.getElementType();
  if (is(op, "arith.extf"))
    return (operand.isBF16() || operand.isF16()) && result.isF32();
  if (is(op, "arith.truncf"))
    return operand.isF32() && result.isBF16();
  if (is(op, "arith.cmpf"))
    return operand.isF32() && knownPredicate();
  if (!result.isF32())
    return false;
  if (is(op, "arith.select"))
    return mlir::isa<mlir::RankedTensorType>(op->getOperand(0).getType());
  return chainNodeOp(elementwiseOpName(op)).has_value();
}

/// The chain op that `op`'s result feeds, when no other op reads it (`x * x` reads it
/// twice) and it is in the same block.
mlir::Operation *nextLink(mlir::Operation *op) {
  mlir::Value v = op->getResult(0);
  if (v.use_empty())
    return nullptr;
  mlir::Operation *user = *v.user_begin();
  for (mlir::Operation *other : v.getUsers())
    if (other != user)
      return nullptr;
  return chainable(user) && user->getBlock() == op->getBlock() ? user : nullptr;
}

/// A splat of a scalar, or a splat constant: one value in every lane.
bool isUniform(mlir::Value v) {
  mlir::Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  llvm::StringRef name = def->getName().getStringRef();
  if (name == "tt.splat")
    return !mlir::isa<mlir::ShapedType>(def->getOperand(0).getType());
  if (name != "arith.constant")
    return false;
  auto dense = def->getAttrOfType<mlir::DenseElementsAttr>("value");
  return dense && dense.isSplat();
}

/// The [M, 1] or [1, N] value that `v`, a tt.broadcast to [M, N] read by nothing else, reads,
/// with the axis it runs along (rows: [M, 1]); null when `v` is not one.
mlir::Value broadcastFactor(mlir::Value v, bool &alongRows) {
  mlir::Operation *def = v.getDefiningOp();
  if (!is(def, "tt.broadcast") || !v.hasOneUse())
    return nullptr;
  auto from = mlir::dyn_cast<mlir::RankedTensorType>(def->getOperand(0).getType());
  auto to = mlir::cast<mlir::RankedTensorType>(v.getType());
  if (!from || from.getRank() != 2 || to.getRank() != 2)
    return nullptr;
  const int64_t m = to.getShape()[0], n = to.getShape()[1];
  if (from.getShape()[0] == m && from.getShape()[1] == 1 && n > 1)
    alongRows = true;
  else if (from.getShape()[0] == 1 && from.getShape()[1] == n && m > 1)
    alongRows = false;
  else
    return nullptr;
  return def->getOperand(0);
}

/// The factors of `combine(broadcast(rows), broadcast(columns))` (either order; an andi of
/// masks, an addi of offsets), each broadcast read by `combine` alone.
struct OuterFactors {
  mlir::Value rows, columns;
};
std::optional<OuterFactors> outerFactors(mlir::Operation *combine) {
  if (combine->getNumOperands() != 2 || combine->getOperand(0) == combine->getOperand(1))
    return std::nullopt;
  bool firstAlongRows = false, secondAlongRows = false;
  mlir::Value first = broadcastFactor(combine->getOperand(0), firstAlongRows);
  mlir::Value second = broadcastFactor(combine->getOperand(1), secondAlongRows);
  if (!first || !second || firstAlongRows == secondAlongRows)
    return std::nullopt;
  return firstAlongRows ? OuterFactors{first, second} : OuterFactors{second, first};
}

/// Whether `op` is a tt.reduce that adds up all of `row`, a 1-D f32 block of a multiple of
/// the tree's lanes (one addf combining the region's two arguments, in either order, as
/// fastFold takes it).
bool sumsRow(mlir::Operation *op, mlir::Value row) {
  if (!is(op, "tt.reduce") || op->getNumOperands() != 1 || op->getNumResults() != 1 ||
      op->getOperand(0) != row)
    return false;
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(row.getType());
  auto axis = op->getAttrOfType<mlir::IntegerAttr>("axis");
  if (!type || type.getRank() != 1 || !type.getElementType().isF32() || !axis || axis.getInt() != 0)
    return false;
  const int64_t n = type.getShape()[0];
  if (n < kTreeLanes || n % kTreeLanes != 0)
    return false;
  mlir::Region &region = op->getRegion(0);
  if (!region.hasOneBlock())
    return false;
  mlir::Block &block = region.front();
  if (block.getNumArguments() != 2 || block.getOperations().size() != 2)
    return false;
  mlir::Operation &add = block.front();
  mlir::Operation *ret = block.getTerminator();
  mlir::Value a = block.getArgument(0), b = block.getArgument(1);
  return is(&add, "arith.addf") && add.getNumOperands() == 2 && ret->getNumOperands() == 1 &&
         ret->getOperand(0) == add.getResult(0) &&
         ((add.getOperand(0) == a && add.getOperand(1) == b) ||
          (add.getOperand(0) == b && add.getOperand(1) == a));
}

/// The row sum that `root`'s result is (RowSum), if any.
std::optional<RowSum> rowSumOf(mlir::Operation *root) {
  mlir::Value v = root->getResult(0);
  for (mlir::Operation *user : v.getUsers())
    if (user->getBlock() == root->getBlock() && sumsRow(user, v))
      return RowSum{user, nullptr};
  mlir::Block *body = root->getBlock();
  mlir::Operation *loop = body->getParentOp();
  if (!loop || !is(loop, "scf.for") || !body->getParent()->hasOneBlock())
    return std::nullopt;
  mlir::Operation *yield = body->getTerminator();
  for (unsigned k = 0; k < yield->getNumOperands() && k < loop->getNumResults(); ++k) {
    if (yield->getOperand(k) != v)
      continue;
    mlir::Value result = loop->getResult(k);
    for (mlir::Operation *user : result.getUsers())
      if (user->getBlock() == loop->getBlock() && sumsRow(user, result))
        return RowSum{user, loop};
  }
  return std::nullopt;
}

} // namespace

std::vector<std::pair<unsigned, mlir::Operation *>> advancedPointers(mlir::Operation *forOp) {
  std::vector<std::pair<unsigned, mlir::Operation *>> found;
  mlir::Region &region = forOp->getRegion(0);
  if (!region.hasOneBlock())
    return found;
  mlir::Block &body = region.front();
  mlir::Operation *yield = body.getTerminator();
  for (unsigned i = 0; i < forOp->getNumResults() && i < yield->getNumOperands(); ++i) {
    mlir::BlockArgument arg = body.getArgument(i + 1);
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(arg.getType());
    if (!type || !mlir::isa<mlir::triton::PointerType>(type.getElementType()) ||
        !forOp->getResult(i).use_empty())
      continue;
    mlir::Operation *add = yield->getOperand(i).getDefiningOp();
    if (!add || add->getName().getStringRef() != "tt.addptr" || add->getBlock() != &body ||
        add->getOperand(0) != arg || !add->getResult(0).hasOneUse() ||
        !isUniform(add->getOperand(1)))
      continue;
    bool onlyLoads = true;
    for (mlir::OpOperand &use : arg.getUses()) {
      mlir::Operation *user = use.getOwner();
      if (user == add && use.getOperandNumber() == 0)
        continue;
      onlyLoads &= user->getName().getStringRef() == "tt.load" && use.getOperandNumber() == 0 &&
                   user->getBlock() == &body && user->isBeforeInBlock(add);
    }
    if (onlyLoads)
      found.emplace_back(i, add);
  }
  return found;
}

void FusionPlan::findChains(mlir::Operation *function) {
  function->walk([&](mlir::Operation *root) {
    // A chain's result is an f32 block: a compare's mask is only ever inside one.
    if (!chainable(root) || nextLink(root) || is(root, "arith.cmpf"))
      return;
    ElementwiseChain chain;
    llvm::SmallVector<mlir::Operation *, 8> pending{root};
    while (!pending.empty()) {
      mlir::Operation *op = pending.pop_back_val();
      chain.ops.push_back(op);
      for (mlir::Value operand : op->getOperands())
        if (mlir::Operation *def = operand.getDefiningOp();
            def && chainable(def) && nextLink(def) == op && !llvm::is_contained(pending, def) &&
            !llvm::is_contained(chain.ops, def))
          pending.push_back(def);
    }
    // Not through a vector function's call: the sum's accumulators would live across it in
    // memory (every vector register is the callee's), which cost softmax's exp 3% more than it
    // saved (docs/performance.md, thirty-second round).
    std::optional<RowSum> sum =
        llvm::any_of(chain.ops,
                     [](mlir::Operation *op) {
                       return chainNodeOp(elementwiseOpName(op)) == ChainCode::Node::Math;
                     })
            ? std::nullopt
            : rowSumOf(root);
    if (chain.ops.size() < 2 && !sum)
      return;
    if (sum)
      rowSums_[root] = *sum;
    llvm::sort(chain.ops,
               [](mlir::Operation *a, mlir::Operation *b) { return a->isBeforeInBlock(b); });
    for (mlir::Operation *op : chain.ops)
      if (op != root)
        chained_[op] = root;
    chains_[root] = std::move(chain);
  });
}

void FusionPlan::matchOuterMask(mlir::Operation *access) {
  unsigned at = maskOperandOf(access);
  if (access->getNumOperands() <= at)
    return;
  mlir::Value mask = access->getOperand(at);
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(mask.getType());
  if (!type || type.getRank() != 2 || !type.getElementType().isInteger(1) || !mask.hasOneUse())
    return;
  OuterMask outer;
  llvm::SmallVector<mlir::Operation *, 3> built; // what the access no longer needs emitted
  bool isRows = false;
  if (mlir::Value f = broadcastFactor(mask, isRows)) {
    (isRows ? outer.rows : outer.cols) = f;
    built.push_back(mask.getDefiningOp());
  } else {
    mlir::Operation *andi = mask.getDefiningOp();
    if (!is(andi, "arith.andi"))
      return;
    std::optional<OuterFactors> factors = outerFactors(andi);
    if (!factors)
      return;
    outer.rows = factors->rows;
    outer.cols = factors->columns;
    built = {andi, andi->getOperand(0).getDefiningOp(), andi->getOperand(1).getDefiningOp()};
  }
  outerMasks_[access] = outer;
  for (mlir::Operation *op : built)
    elided_.insert(op);
}

void FusionPlan::matchOuterPointers(mlir::Operation *addptr) {
  mlir::Value result = addptr->getResult(0);
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(result.getType());
  if (!type || type.getRank() != 2)
    return;
  auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(type.getElementType());
  const int64_t m = type.getShape()[0], n = type.getShape()[1];
  // (A table of pointers is not a tile of scalars: its loads go lane by lane anyway.)
  if (!pointer || !pointer.getPointeeType().isIntOrFloat() || m < 2 || n < 2)
    return;
  // What builds the pointers, each read by the next alone (so that all are elided, and the
  // lives of the values they read run to the accesses: ArenaLayout.cpp follows elided ops).
  llvm::SmallVector<mlir::Operation *, 5> built{addptr};
  OuterPointers outer;
  bool alongRows = false;
  if (mlir::Value pointers = broadcastFactor(addptr->getOperand(0), alongRows)) {
    outer.pointers = pointers;
    outer.along = alongRows ? OuterPointers::Rows : OuterPointers::Columns;
    bool offsetsAlongRows = false;
    mlir::Value offsets = broadcastFactor(addptr->getOperand(1), offsetsAlongRows);
    if (!offsets || offsetsAlongRows == alongRows)
      return;
    (offsetsAlongRows ? outer.rowOffsets : outer.columnOffsets) = offsets;
    built.push_back(addptr->getOperand(0).getDefiningOp());
    built.push_back(addptr->getOperand(1).getDefiningOp());
  } else if (mlir::Value base = splatSource(addptr->getOperand(0))) {
    // The scalar is read by the accesses; the splat goes if nothing else reads it.
    outer.pointers = base;
    if (addptr->getOperand(0).hasOneUse())
      built.push_back(addptr->getOperand(0).getDefiningOp());
    mlir::Operation *sum = addptr->getOperand(1).getDefiningOp();
    if (!is(sum, "arith.addi") || !addptr->getOperand(1).hasOneUse())
      return;
    std::optional<OuterFactors> factors = outerFactors(sum);
    if (!factors)
      return;
    outer.rowOffsets = factors->rows;
    outer.columnOffsets = factors->columns;
    built.append({sum, sum->getOperand(0).getDefiningOp(), sum->getOperand(1).getDefiningOp()});
  } else {
    return;
  }
  mlir::Value someOffsets = outer.rowOffsets ? outer.rowOffsets : outer.columnOffsets;
  auto offsetType = mlir::cast<mlir::RankedTensorType>(someOffsets.getType()).getElementType();
  if (!offsetType.isInteger(32) && !offsetType.isInteger(64))
    return;
  // Every reader takes the outer form: an access's pointers, or a loop's advanced pointer.
  llvm::SmallVector<mlir::Value, 2> advanced;
  for (mlir::OpOperand &use : result.getUses()) {
    mlir::Operation *user = use.getOwner();
    if ((is(user, "tt.load") || is(user, "tt.store")) && use.getOperandNumber() == 0)
      continue;
    if (!is(user, "scf.for") || use.getOperandNumber() < 3)
      return;
    const unsigned arg = use.getOperandNumber() - 3;
    auto loopAdvances = advancedPointers(user);
    if (llvm::none_of(loopAdvances, [&](const auto &a) { return a.first == arg; }))
      return;
    advanced.push_back(user->getRegion(0).front().getArgument(arg + 1));
  }
  outerPointers_[result] = outer;
  for (mlir::Value blockArgument : advanced)
    outerPointers_[blockArgument] = outer;
  for (mlir::Operation *op : built)
    elided_.insert(op);
}

void FusionPlan::matchOffsetGather(mlir::Operation *addptr) {
  mlir::Value result = addptr->getResult(0);
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(result.getType());
  if (!type || type.getRank() != 1 || elided_.contains(addptr))
    return;
  auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(type.getElementType());
  mlir::Value base = splatSource(addptr->getOperand(0));
  if (!pointer || !pointer.getPointeeType().isIntOrFloat() || !base ||
      !mlir::cast<mlir::RankedTensorType>(addptr->getOperand(1).getType())
           .getElementType()
           .isInteger(32))
    return;
  // Splatted offsets (a tt.splat, a splat constant) are held as their scalar, never as a
  // block (Lowerer::recordSplat): the addptr reads those itself.
  mlir::Operation *offsets = addptr->getOperand(1).getDefiningOp();
  if (is(offsets, "tt.splat") || (is(offsets, "arith.constant") &&
                                  mlir::isa<mlir::SplatElementsAttr>(offsets->getAttr("value"))))
    return;
  for (mlir::OpOperand &use : result.getUses())
    if (!is(use.getOwner(), "tt.load") || use.getOperandNumber() != 0 ||
        accesses_.count(use.getOwner()))
      return;
  offsetGathers_[result] = OffsetGather{base, addptr->getOperand(1)};
  elided_.insert(addptr);
  if (addptr->getOperand(0).hasOneUse())
    elided_.insert(addptr->getOperand(0).getDefiningOp());
}

void FusionPlan::matchStepGather(mlir::Operation *load, mlir::Value base, mlir::Operation *addptr,
                                 llvm::SmallVectorImpl<mlir::Operation *> &candidates) {
  auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(
      mlir::cast<mlir::RankedTensorType>(addptr->getResult(0).getType()).getElementType());
  llvm::SmallVector<mlir::Operation *, 2> ops;
  std::optional<StepOffsets> steps = matchStepOffsets(addptr->getOperand(1), ops);
  if (!pointer || !pointer.getPointeeType().isIntOrFloat() || !steps)
    return;
  StepGather g{base, *steps, nullptr, false, nullptr};
  if (load->getNumOperands() > 1) {
    mlir::Value mask = load->getOperand(1);
    std::optional<RangeCompare> c = matchRangeCompare(mask.getDefiningOp());
    if (c && !c->wide && c->start == steps->start && c->rangeStart == steps->rangeStart) {
      g.bound = c->bound;
      g.unsignedBound = c->unsignedBound;
      candidates.push_back(mask.getDefiningOp());
    } else {
      g.mask = mask;
    }
  }
  stepGathers_[load] = g;
  candidates.push_back(addptr);
  candidates.push_back(addptr->getOperand(0).getDefiningOp()); // the base's splat
  for (mlir::Operation *op : ops) {
    candidates.push_back(op);
    pushOperandDefs(op, 2, candidates); // splats, the numerator and its range
  }
}

void FusionPlan::analyze(mlir::Operation *function) {
  findChains(function);
  llvm::SmallVector<mlir::Operation *> chainOps;
  function->walk([&](mlir::Operation *op) {
    if (std::optional<RangeCompare> c = matchRangeCompare(op)) {
      // A wide compare is left to the accesses it bounds (elided when only they read it).
      if (!c->wide)
        compares_[op] = *c;
      pushOperandDefs(op, c->wide ? 3 : 2, chainOps);
      return;
    }
    bool load = is(op, "tt.load"), store = is(op, "tt.store");
    if (!load && !store)
      return;
    mlir::Value pointers = op->getOperand(0);
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(pointers.getType());
    if (type && type.getRank() == 2 && mlir::isa<mlir::triton::PointerType>(type.getElementType()))
      matchOuterMask(op);
    mlir::Operation *addptr = pointers.getDefiningOp();
    if (!type || type.getRank() != 1 || !is(addptr, "tt.addptr"))
      return;
    ContiguousAccess a;
    a.base = splatSource(addptr->getOperand(0));
    std::optional<Offsets> offsets = matchOffsets(addptr->getOperand(1));
    if (load && a.base && !offsets) {
      matchStepGather(op, a.base, addptr, chainOps);
      return;
    }
    if (!a.base || !offsets || !mlir::isa<mlir::triton::PointerType>(a.base.getType()))
      return;
    a.range.start = offsets->start;
    a.range.rangeStart = offsets->rangeStart;
    a.range.wide = offsets->wide;
    unsigned maskOperand = maskOperandOf(op);
    if (op->getNumOperands() > maskOperand && !matchBound(op->getOperand(maskOperand), *offsets, a))
      a.mask = op->getOperand(maskOperand);
    if (store && (a.producer = storeProducer(op, chains_)))
      forwarded_.insert(a.producer);
    accesses_[op] = a;
    chainOps.push_back(addptr);
    pushOperandDefs(addptr, offsets->wide ? 3 : 2, chainOps);
    if (a.range.bound)
      chainOps.push_back(op->getOperand(maskOperand).getDefiningOp()); // a range compare
  });

  // Operand positions that a fused op's fused form no longer reads.
  auto unneededOperand = [&](mlir::Operation *user, unsigned operand) {
    if (compares_.count(user))
      return true; // computed from the scalars
    if (auto stepped = stepGathers_.find(user); stepped != stepGathers_.end())
      return operand == 0 || (operand == 1 && stepped->second.bound);
    auto fused = accesses_.find(user);
    if (fused == accesses_.end())
      return false;
    if (operand == 0)
      return true; // the pointers
    return operand == maskOperandOf(user) && fused->second.range.bound;
  };
  // Only tensor-valued ops: fused forms read the scalars (base, start, bound).
  auto pure = [](mlir::Operation *op) {
    return (is(op, "tt.splat") || is(op, "tt.make_range") || is(op, "arith.addi") ||
            is(op, "tt.addptr") || is(op, "arith.cmpi") || is(op, "arith.extsi") ||
            is(op, "arith.extui") || is(op, "arith.divsi")) &&
           mlir::isa<mlir::RankedTensorType>(op->getResult(0).getType());
  };
  // An op of a chain is dropped once nothing left needs its result; dropping
  // one can free the ops it reads, so repeat until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (mlir::Operation *op : chainOps) {
      if (!pure(op) || elided_.contains(op))
        continue;
      bool unused = true;
      for (mlir::OpOperand &use : op->getUses())
        unused &= elided_.contains(use.getOwner()) ||
                  unneededOperand(use.getOwner(), use.getOperandNumber());
      if (unused) {
        elided_.insert(op);
        changed = true;
      }
    }
  }
  // A range compare that only a chain reads as a block (and fused accesses as their bound)
  // joins that chain: a compiled chain makes the lanes' mask from the scalars itself, so the
  // mask is neither built nor read (the chain's steps, interpreted, still build it).
  for (auto &[root, chain] : chains_) {
    mlir::Operation *chainRoot = root;
    auto inChain = [&](mlir::Operation *op) {
      return op == chainRoot || chained_.lookup(op) == chainRoot;
    };
    llvm::SmallVector<mlir::Operation *, 2> joining;
    for (mlir::Operation *op : chain.ops)
      for (mlir::Value operand : op->getOperands()) {
        mlir::Operation *cmp = operand.getDefiningOp();
        auto compare = cmp ? compares_.find(cmp) : compares_.end();
        if (compare == compares_.end() || cmp->getBlock() != root->getBlock() ||
            chained_.count(cmp) || llvm::is_contained(joining, cmp) ||
            compare->second.rangeStart < INT32_MIN || compare->second.rangeStart > INT32_MAX)
          continue;
        bool onlyChain = true;
        for (mlir::OpOperand &use : cmp->getResult(0).getUses())
          onlyChain &= inChain(use.getOwner()) || elided_.contains(use.getOwner()) ||
                       unneededOperand(use.getOwner(), use.getOperandNumber());
        if (onlyChain)
          joining.push_back(cmp);
      }
    if (joining.empty())
      continue;
    for (mlir::Operation *cmp : joining) {
      chain.ops.push_back(cmp);
      chained_[cmp] = root;
    }
    llvm::sort(chain.ops,
               [](mlir::Operation *a, mlir::Operation *b) { return a->isBeforeInBlock(b); });
  }
  function->walk([&](mlir::Operation *op) {
    if (is(op, "tt.addptr")) {
      matchOuterPointers(op);
      matchOffsetGather(op);
    }
  });
}

} // namespace ttinterp::interp
