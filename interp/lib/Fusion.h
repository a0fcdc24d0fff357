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
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <cstdint>

namespace ttinterp::interp {

/// Lane i of a fused tt.load/tt.store addresses element
/// i32(start + rangeStart + i) of `base`, and is active (when `bound` is set)
/// iff that offset is below `bound` (signed or unsigned compare).
/// Lane i of a fused range compare is `i32(start + rangeStart + i) < bound`
/// (signed or unsigned): `arith.cmpi slt/ult, splat(start) + make_range,
/// splat(bound)`, the mask of nearly every Triton block access, computed from
/// the scalars without the offsets tensor.
struct RangeCompare {
  mlir::Value start; ///< Scalar i32 added to the range; null when none.
  int64_t rangeStart = 0;
  mlir::Value bound; ///< Scalar i32.
  bool unsignedBound = false;
};

/// Lane i's offset, exactly as addi(splat(start), make_range) wraps it.
inline int32_t laneOffset(int32_t start, int64_t rangeStart, int64_t i) {
  return int32_t(uint32_t(start) + uint32_t(rangeStart + i));
}

struct ContiguousAccess {
  mlir::Value base;         ///< Scalar !tt.ptr<T>.
  mlir::Value start;        ///< Scalar i32 added to the range; null when none.
  int64_t rangeStart = 0;   ///< The make_range's start.
  mlir::Value bound;        ///< Scalar i32 n of `offsets < n`; null: the mask, if any, is a slot.
  bool unsignedBound = false;
  mlir::Value mask;         ///< The op's mask when `bound` does not express it (null: none).
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
  /// Ops whose every result is used only through fused accesses: not emitted.
  bool elided(mlir::Operation *op) const { return elided_.contains(op); }

private:
  llvm::DenseMap<mlir::Operation *, ContiguousAccess> accesses_;
  llvm::DenseMap<mlir::Operation *, RangeCompare> compares_;
  llvm::DenseSet<mlir::Operation *> elided_;
};

} // namespace ttinterp::interp
