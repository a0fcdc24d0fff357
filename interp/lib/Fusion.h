//===- Fusion.h - Pointer chains lowered as one contiguous block access -*- C++ -*-===//
//
// Nearly every Triton load and store of a 1-D block is spelled
//   tt.load(tt.addptr(tt.splat(base), splat(start) + tt.make_range), offsets < splat(n))
// Interpreted op by op, that materialises a tensor of offsets, one of
// pointers and one of mask bits, then rediscovers lane by lane that the
// pointers are consecutive. FusionPlan finds these chains before lowering: the
// load or store becomes one contiguous access computed from the scalars base,
// start and n, and the splat/addi/addptr/cmpi ops whose only use was that
// access are never emitted. A mask that other ops also read (a select, say)
// is still computed from the scalars, as a range compare.
//
// A fused store of the only result of an element-wise binary op (`y = x * w + b;
// tt.store(..., y)`) also runs that op, at the store, with the destination as
// its result: a whole block is computed straight into the shadow (or the
// caller's memory, in place) instead of into a block that the store copies.
//
// A 2-D tile's pointers (`x + rows[:, None] * ld + cols[None, :]`, OuterPointers) are the
// same in two dimensions: the access, or the loop that advances them, reads the M row and
// N column values, and the broadcasts, sums and addptr that would build M x N pointers are
// never emitted.
//
// An element-wise chain (`(x - mean) * rstd * w + b`: f32 arithmetic and selects of one
// block, each op's result used only by the next op of the chain) is run by its last op,
// as one instruction that ChainCompiler.h can compile into one loop; a fused store runs a
// chain whose result it alone stores, as it runs a binary op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace ttinterp::interp {

/// Lane i of a fused range compare is `i32(start + rangeStart + i) < bound`
/// (signed or unsigned): `arith.cmpi slt/ult, splat(start) + make_range,
/// splat(bound)`, the mask of nearly every Triton block access, computed from
/// the scalars without the offsets tensor.
struct RangeCompare {
  mlir::Value start; ///< Scalar i32 added to the range; null when none.
  int64_t rangeStart = 0;
  mlir::Value bound; ///< Scalar i32; null in a ContiguousAccess without one.
  bool unsignedBound = false;
  /// The offsets are i64: the range sign-extended first (`arith.extsi`, as `.to(tl.int64)`
  /// spells it), start and bound i64 scalars. Only fused accesses take these; a compare
  /// that something else reads is computed as written.
  bool wide = false;
};

/// Lane i of a fused tt.load/tt.store addresses element
/// i32(range.start + range.rangeStart + i) of `base` (i64 when `range.wide`), and is active
/// when `range.bound` is set iff the range compare holds for it.
struct ContiguousAccess {
  mlir::Value base;   ///< Scalar !tt.ptr<T>.
  RangeCompare range; ///< The offsets, and the mask when it is their compare.
  mlir::Value mask;   ///< The op's mask when `range.bound` does not express it (null: none).
  /// The element-wise binary op whose result only this store uses (Fusion.cpp's
  /// storeProducer says which), lowered aside and run by the store; null when none.
  mlir::Operation *producer = nullptr;
};

// What a range compare computes, shared by the fused cmpi and the fused accesses.

// Int is the offsets' type: int32_t, or int64_t for wide ones.

/// Lane i's offset, exactly as addi(splat(start), make_range) wraps it.
template <class Int> inline Int laneOffset(Int start, int64_t rangeStart, int64_t i) {
  using U = std::make_unsigned_t<Int>;
  return Int(U(start) + U(rangeStart + i));
}

/// Whether lane i's offset is below `bound`.
template <class Int>
inline bool rangeLane(Int start, int64_t rangeStart, Int bound, bool isUnsigned, int64_t i) {
  using U = std::make_unsigned_t<Int>;
  Int offset = laneOffset(start, rangeStart, i);
  return isUnsigned ? U(offset) < U(bound) : offset < bound;
}

/// How many of n lanes hold when they are exactly a prefix: no offset wraps
/// and, unsigned, none is negative. nullopt otherwise (then use rangeLane).
template <class Int>
__attribute__((always_inline)) inline std::optional<int64_t>
rangePrefix(Int start, int64_t rangeStart, Int bound, bool isUnsigned, int64_t n) {
  // Holds every sum below: of two i64 values in 128 bits; for i32 offsets, whose rangeStart is
  // make_range's i32 start, in 64 (the common case, kept to plain compares).
  using Wide = std::conditional_t<sizeof(Int) == 4, int64_t, __int128>;
  Wide first = Wide(start) + rangeStart;
  if (first < std::numeric_limits<Int>::min() || first + n - 1 > std::numeric_limits<Int>::max() ||
      (isUnsigned && first < 0))
    return std::nullopt;
  Wide limit = isUnsigned ? Wide(std::make_unsigned_t<Int>(bound)) : Wide(bound);
  return int64_t(std::clamp<Wide>(limit - first, 0, n));
}

/// The mask of a 2-D tt.load or tt.store spelled as Triton spells a tile's bounds,
/// `(offs_m[:, None] < M) & (offs_k[None, :] < K)`: arith.andi of a tt.broadcast of an [M, 1]
/// mask and one of a [1, N] mask (either order), or one such broadcast alone. Lane (i, j) is
/// rows[i] && cols[j]. The andi and the broadcasts, which nothing else reads, are not emitted:
/// the access reads the two small masks, and has no mask at all when both are all true (a
/// tile inside the matrix), instead of building, combining and scanning M x N mask bytes.
struct OuterMask {
  mlir::Value rows, cols; ///< i1 [M, 1] and [1, N]; either may be null (true everywhere)
};

/// The pointers of a 2-D tt.load or tt.store spelled as Triton spells a tile's: lane (i, j) is
/// a pointer (the same for every lane, or one per row, or one per column) advanced by the sum
/// of row i's and column j's offsets (either may be absent: 0). Triton writes
///   x + (rows[:, None] * ld + cols[None, :])   tt.addptr(tt.splat(x),
///                                                 arith.addi(tt.broadcast(r), tt.broadcast(c)))
///   x + rows[:, None] * ld + cols[None, :]     tt.addptr(tt.broadcast(x + r), tt.broadcast(c))
/// (the last also with the pointers along the columns, [1, N], and the offsets along the rows).
/// The addptr, addi, splat and broadcasts, which nothing else reads, are not emitted: the
/// access finds its rows from M + N values instead of materialising, copying and scanning
/// M x N pointers (a 64 x 64 tile's 32 KiB), and the offsets wrap in their type as the addi
/// would have.
struct OuterPointers {
  enum Along : uint8_t { Everywhere, Rows, Columns };
  mlir::Value pointers; ///< scalar (Everywhere), [M, 1] (Rows) or [1, N] (Columns)
  Along along = Everywhere;
  mlir::Value rowOffsets, columnOffsets; ///< integer [M, 1] and [1, N]; null: none
};

/// The pointers of a 1-D gather, `tt.addptr(tt.splat(base), offsets)` with i32 offsets of any
/// values (`w + offs // per_channel`, `x + idx`), read only by tt.loads. The addptr (and the
/// splat, if nothing else reads it) is not emitted: the loads find their runs of consecutive
/// and of repeated elements from the offsets, four bytes a lane, instead of materialising and
/// scanning eight-byte pointers.
struct OffsetGather {
  mlir::Value base;    ///< Scalar !tt.ptr<T>.
  mlir::Value offsets; ///< i32 block of the pointers' shape.
};

/// An i32 operand that is the same in every lane: a `tt.splat` of a scalar, or a splat
/// constant.
struct SplatInt {
  mlir::Value scalar;   ///< The splat's scalar; null for a constant.
  int64_t constant = 0; ///< The constant's value when `scalar` is null.
};

/// Offsets that step: lane i is `addend + (start + rangeStart + i) / divisor` (tt.make_range,
/// tt.splat, arith.addi and arith.divsi, all i32; `addend` and `start` optional), as Triton
/// spells a group norm's channel per element (`group * cpg + offs // per_channel`) or a
/// per-block scale's index (`offs // block`). Consecutive lanes share an offset, a run of
/// `divisor` lanes each.
struct StepOffsets {
  mlir::Value start; ///< Scalar i32 added to the range; null when none.
  int64_t rangeStart = 0;
  SplatInt divisor;
  std::optional<SplatInt> addend;
};

/// A 1-D tt.load through `tt.addptr(tt.splat(base), offsets)` whose offsets step
/// (StepOffsets). It reads one element a run of lanes and fills the run, from the scalars:
/// the offsets, their division, the addptr (and the range compare, when its mask is the
/// numerator's `start + range < bound`) are not emitted when nothing else reads them.
struct StepGather {
  mlir::Value base; ///< Scalar !tt.ptr<T>.
  StepOffsets offsets;
  mlir::Value bound; ///< The mask as a bound on the numerator's range; null when not one.
  bool unsignedBound = false;
  mlir::Value mask; ///< Any other mask, read as a block (null: none).
};

/// The iteration arguments of an scf.for that are pointer tensors it only loads through and
/// advances by one offset for every lane (Lowerer::AdvancedPointer), with their addptrs:
/// argument i's yielded value is tt.addptr(argument, splat) in the loop's block, its other
/// uses are the pointers of tt.loads before that addptr in the same block (so every load
/// reads the pointers of its own iteration), and the loop's result i is unused (after the
/// loop, the argument's slot still holds the starting pointers).
std::vector<std::pair<unsigned, mlir::Operation *>> advancedPointers(mlir::Operation *forOp);

/// f32 tensor ops of one block (arith.addf/subf/mulf/divf/negf, maxnumf/minnumf/
/// maximumf/minimumf, math.sqrt/rsqrt/absf, arith.select of a tensor mask, arith.cmpf making
/// such a mask) in block order; each but the last has no reader but a later op of the chain.
/// The last op (the root, an f32 block) runs them all (ElementwiseChain.h).
struct ElementwiseChain {
  llvm::SmallVector<mlir::Operation *, 8> ops;
};

/// The sum of a row that a chain's result is (FusionPlan::rowSum): `reduce`, a tt.reduce
/// adding up a 1-D f32 block of a multiple of 32 elements (the tree's lanes), reads the
/// chain root's result itself (`loop` null), or the result of the scf.for `loop` whose body
/// the root is in and yields it (a layer norm's `_var += x * x`, summed after the loop). The
/// compiled chain then folds its lanes into the tree's 32 lanes as it makes them, and the
/// reduce only combines those (ElementwiseChain.h).
struct RowSum {
  mlir::Operation *reduce = nullptr;
  mlir::Operation *loop = nullptr;
};

class FusionPlan {
public:
  /// Finds the fusable accesses of one function's body (nested regions included).
  void analyze(mlir::Operation *function);
  /// The fused form of a tt.load or tt.store, or null.
  const ContiguousAccess *access(mlir::Operation *op) const {
    auto it = accesses_.find(op);
    return it == accesses_.end() ? nullptr : &it->second;
  }
  /// The fused form of an arith.cmpi, or null.
  const RangeCompare *rangeCompare(mlir::Operation *op) const {
    auto it = compares_.find(op);
    return it == compares_.end() ? nullptr : &it->second;
  }
  /// The outer-product mask of a 2-D tt.load or tt.store, or null.
  const OuterMask *outerMask(mlir::Operation *op) const {
    auto it = outerMasks_.find(op);
    return it == outerMasks_.end() ? nullptr : &it->second;
  }
  /// The outer form of a 2-D pointer tensor: a tt.load's or tt.store's pointer operand, or
  /// the advanced pointer (an scf.for's block argument) that a loop starts from one; null
  /// when it has none.
  const OuterPointers *outerPointers(mlir::Value pointers) const {
    auto it = outerPointers_.find(pointers);
    return it == outerPointers_.end() ? nullptr : &it->second;
  }
  /// The gather form of a tt.load's pointer operand, or null.
  const OffsetGather *offsetGather(mlir::Value pointers) const {
    auto it = offsetGathers_.find(pointers);
    return it == offsetGathers_.end() ? nullptr : &it->second;
  }
  /// The stepping form of a tt.load (StepGather), or null.
  const StepGather *stepGather(mlir::Operation *load) const {
    auto it = stepGathers_.find(load);
    return it == stepGathers_.end() ? nullptr : &it->second;
  }
  /// Ops whose every result is used only through fused accesses: not emitted.
  bool elided(mlir::Operation *op) const { return elided_.contains(op); }
  /// Element-wise ops that the fused store of their result runs (ContiguousAccess::producer):
  /// lowered, but emitted by the store instead of where they stand.
  bool forwarded(mlir::Operation *op) const { return forwarded_.contains(op); }

  /// The chain whose root `op` is, or null.
  const ElementwiseChain *chain(mlir::Operation *op) const {
    auto it = chains_.find(op);
    return it == chains_.end() ? nullptr : &it->second;
  }
  /// For an op of a chain other than its root: the root, which runs it (lowered aside,
  /// like a forwarded op). Null for any other op.
  mlir::Operation *chainRoot(mlir::Operation *op) const { return chained_.lookup(op); }
  /// The row sum that chain root `root`'s result is, or null. A root that is one is a chain
  /// even alone (`_mean += x`), for the compiled loop that folds the sum's lanes.
  const RowSum *rowSum(mlir::Operation *root) const {
    auto it = rowSums_.find(root);
    return it == rowSums_.end() ? nullptr : &it->second;
  }

private:
  void findChains(mlir::Operation *function);
  /// Records `access`'s mask as an OuterMask (and elides what built it) when it is one.
  void matchOuterMask(mlir::Operation *access);
  /// Records `addptr` as OuterPointers (and elides what built it) when it is one and only
  /// accesses and loops that advance it read it.
  void matchOuterPointers(mlir::Operation *addptr);
  /// Records `load` as a StepGather when its pointers `addptr` step from `base`, with the
  /// ops it may leave unread as candidates for elision.
  void matchStepGather(mlir::Operation *load, mlir::Value base, mlir::Operation *addptr,
                       llvm::SmallVectorImpl<mlir::Operation *> &candidates);
  /// Records `addptr` as an OffsetGather (and elides it) when it is one.
  void matchOffsetGather(mlir::Operation *addptr);

  llvm::DenseMap<mlir::Operation *, ContiguousAccess> accesses_;
  llvm::DenseMap<mlir::Operation *, RangeCompare> compares_;
  llvm::DenseMap<mlir::Operation *, OuterMask> outerMasks_;
  llvm::DenseMap<mlir::Value, OuterPointers> outerPointers_;
  llvm::DenseMap<mlir::Value, OffsetGather> offsetGathers_;
  llvm::DenseMap<mlir::Operation *, StepGather> stepGathers_;
  llvm::DenseSet<mlir::Operation *> elided_;
  llvm::DenseSet<mlir::Operation *> forwarded_;
  llvm::DenseMap<mlir::Operation *, ElementwiseChain> chains_;
  llvm::DenseMap<mlir::Operation *, mlir::Operation *> chained_;
  llvm::DenseMap<mlir::Operation *, RowSum> rowSums_;
};

} // namespace ttinterp::interp
