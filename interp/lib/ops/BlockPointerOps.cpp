//===- BlockPointerOps.cpp - Block pointers and tensor descriptors as i64 records ===//
//
// A block pointer (!tt.ptr<tensor<BxCxT>>) and a tensor descriptor
// (!tt.tensordesc<...>) are not addresses: each describes a strided tensor in
// memory and, for a block pointer, where its block starts. Both live in an I64
// slot as a record of words, so scf.for/scf.if/tt.call/arith.select move them
// like any other value (slot copies), with no special casing:
//
//   block pointer, rank r:  [base, shape[r], strides[r], offsets[r]]   1 + 3r words
//   descriptor, rank r:     [base, shape[r], strides[r], padding]      2 + 2r words
//
// `base` is the tagged pointer (provenance in the top 16 bits, see Session.h),
// so every address formed from it is still checked against the argument it
// derives from. Shapes, strides and offsets are in elements (offsets widened
// from i32 to i64); padding is 1 for NaN, 0 for zero. The block shape is
// static (it is the type's), so it sits in the op's data, not in the record.
//
// Element (i_0, ..., i_{r-1}) of a block is tensor index e_d = start_d + i_d
// at address base + sum_d e_d * strides_d elements. Only strides place
// elements; a block pointer's `order` is a layout hint and is ignored. A block
// pointer access masks the lanes with some e_d outside [0, shape_d) for the
// dimensions its boundaryCheck lists (loads read the padding, stores skip the
// lane); unlisted dimensions are not checked, as on the GPU, and their lanes go
// straight to LaunchMemory, which still faults by provenance. Descriptor
// accesses check every dimension, as TMA does: reads out of range give zero
// (NaN with padding = nan), writes and reductions out of range are dropped.
//
//===----------------------------------------------------------------------===//
#include "BlockPointerOps.h"
#include "OpSupport.h"

#include "ttinterp/frontend/Dialect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

namespace ttinterp::interp {

std::optional<int64_t> blockRecordWords(mlir::Type t) {
  if (auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(t))
    if (auto block = mlir::dyn_cast<mlir::RankedTensorType>(pointer.getPointeeType()))
      return 1 + 3 * block.getRank();
  if (auto desc = mlir::dyn_cast<mlir::triton::TensorDescType>(t))
    return 2 + 2 * desc.getBlockType().getRank();
  return std::nullopt;
}

namespace {

namespace tt = mlir::triton;
using ReduceKind = tt::DescriptorReduceKind;

/// Highest block rank handled: fixed-size index arrays keep the element loops
/// allocation-free (TMA itself stops at 5).
constexpr int kMaxRank = 8;

/// What an access op knows at lowering time.
struct BlockAccess {
  int rank = 0;
  int64_t block[kMaxRank] = {}; ///< The block's shape.
  uint32_t checked = 0;         ///< Bit d set: dimension d is bounds-checked.
  bool nanPadding = false;      ///< Block-pointer loads with padding = nan.
};

/// Where one execution's block lies: read from the record (and, for
/// descriptors, the op's index operands).
struct Placement {
  uint64_t base = 0;
  const int64_t *shape = nullptr;
  const int64_t *strides = nullptr;
  int64_t start[kMaxRank] = {}; ///< Tensor index of the block's first element.
};

Placement blockPointerPlacement(const int64_t *record, int rank) {
  Placement p;
  p.base = uint64_t(record[0]);
  p.shape = record + 1;
  p.strides = record + 1 + rank;
  for (int d = 0; d < rank; ++d)
    p.start[d] = record[1 + 2 * rank + d];
  return p;
}

/// A descriptor's placement; its indices are the op's i32 operands from `first` on.
Placement descriptorPlacement(Frame &f, const Instr &in, uint32_t first, int rank) {
  const int64_t *record = f.at<int64_t>(in.operands[0]);
  Placement p;
  p.base = uint64_t(record[0]);
  p.shape = record + 1;
  p.strides = record + 1 + rank;
  for (int d = 0; d < rank; ++d)
    p.start[d] = *f.at<int32_t>(in.operands[first + d]);
  return p;
}

bool descriptorPadsNaN(const int64_t *record, int rank) { return record[1 + 2 * rank] != 0; }

/// Address of the element `offset` elements of `size` bytes from base, keeping
/// the base's provenance (wrapping: a wild offset must fault, not overflow).
uint64_t elementAddress(uint64_t base, int64_t offset, uint32_t size) {
  return tagged::advance(base, int64_t(uint64_t(offset) * size));
}

/// Calls fn(lane, offset, inside) for each element of the block in row-major
/// lane order: offset = sum_d e_d * strides_d (elements), inside = every checked
/// dimension has 0 <= e_d < shape_d. Stops early (returning false) when fn does.
template <class Fn> bool walkBlock(const BlockAccess &a, const Placement &p, Fn &&fn) {
  int64_t index[kMaxRank] = {};
  int64_t n = 1;
  for (int d = 0; d < a.rank; ++d)
    n *= a.block[d];
  for (int64_t lane = 0; lane < n; ++lane) {
    uint64_t offset = 0;
    bool inside = true;
    for (int d = 0; d < a.rank; ++d) {
      int64_t e = int64_t(uint64_t(p.start[d]) + uint64_t(index[d]));
      offset += uint64_t(e) * uint64_t(p.strides[d]);
      if ((a.checked >> d) & 1)
        inside &= e >= 0 && e < p.shape[d];
    }
    if (!fn(lane, int64_t(offset), inside))
      return false;
    for (int d = a.rank - 1; d >= 0 && ++index[d] == a.block[d]; --d)
      index[d] = 0;
  }
  return true;
}

/// Records an out_of_bounds fault naming the tensor index of the lane (only on
/// the fault path, so building strings here costs nothing per element).
void reportFault(Frame &f, const Instr &in, const char *what, const int64_t *index, int rank,
                 int64_t lane, uint64_t address, uint32_t size) {
  std::string at;
  for (int d = 0; d < rank; ++d)
    at += (d ? ", " : "") + std::to_string(index[d]);
  f.fail(
      in.site, "out_of_bounds",
      fmt::format("{} tensor element ({}): {}", what, at, f.memory->describeFault(address, size)),
      lane);
}

void reportBlockFault(Frame &f, const Instr &in, const char *what, const BlockAccess &a,
                      const Placement &p, int64_t lane, uint64_t address, uint32_t size) {
  int64_t index[kMaxRank];
  int64_t rest = lane;
  for (int d = a.rank - 1; d >= 0; --d) {
    index[d] = p.start[d] + rest % a.block[d];
    rest /= a.block[d];
  }
  reportFault(f, in, what, index, a.rank, lane, address, size);
}

template <DType D> Repr<D> paddingValue(bool nan) {
  if constexpr (isFloat(D))
    return nan ? std::numeric_limits<Repr<D>>::quiet_NaN() : Repr<D>(0);
  else
    return Repr<D>(0);
}

//===----------------------------------------------------------------------===//
// Making and moving block pointers and descriptors
//===----------------------------------------------------------------------===//

/// Operands: base, shape[r] (i64), strides[r] (i64), offsets[r] (i32).
void makeTensorPtrKernel(Frame &f, const Instr &in) {
  uint32_t rank = (in.numOperands - 1) / 3;
  int64_t *record = f.at<int64_t>(in.results[0]);
  record[0] = int64_t(*f.at<uint64_t>(in.operands[0]));
  for (uint32_t d = 0; d < rank; ++d) {
    record[1 + d] = *f.at<int64_t>(in.operands[1 + d]);
    record[1 + rank + d] = *f.at<int64_t>(in.operands[1 + rank + d]);
    record[1 + 2 * rank + d] = *f.at<int32_t>(in.operands[1 + 2 * rank + d]);
  }
}

/// Operands: block pointer, offsets[r] (i32). Offsets accumulate in i64, as in
/// Triton's own rewrite of block pointers into pointer arithmetic.
void advanceKernel(Frame &f, const Instr &in) {
  uint32_t rank = in.numOperands - 1;
  const int64_t *src = f.at<int64_t>(in.operands[0]);
  int64_t *record = f.at<int64_t>(in.results[0]);
  std::copy(src, src + 1 + 2 * rank, record);
  for (uint32_t d = 0; d < rank; ++d)
    record[1 + 2 * rank + d] = src[1 + 2 * rank + d] + *f.at<int32_t>(in.operands[1 + d]);
}

/// Operands: base, shape[r] (i32), strides[r] (i64).
template <bool NaN> void makeDescriptorKernel(Frame &f, const Instr &in) {
  uint32_t rank = (in.numOperands - 1) / 2;
  writeDescriptorRecord(
      f.at<int64_t>(in.results[0]), *f.at<uint64_t>(in.operands[0]), rank,
      [&](unsigned d) { return int64_t(*f.at<int32_t>(in.operands[1 + d])); },
      [&](unsigned d) { return *f.at<int64_t>(in.operands[1 + rank + d]); }, NaN);
}

//===----------------------------------------------------------------------===//
// Block loads, stores and reductions
//===----------------------------------------------------------------------===//

/// Block pointer operands: [ptr]; descriptor operands: [desc, indices...].
template <DType D, bool Descriptor> void loadKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const BlockAccess &a = *static_cast<const BlockAccess *>(in.data);
  const int64_t *record = f.at<int64_t>(in.operands[0]);
  Placement p =
      Descriptor ? descriptorPlacement(f, in, 1, a.rank) : blockPointerPlacement(record, a.rank);
  const T pad = paddingValue<D>(Descriptor ? descriptorPadsNaN(record, a.rank) : a.nanPadding);
  const char *what = Descriptor ? "descriptor load of" : "block-pointer load of";
  T *r = f.at<T>(in.results[0]);
  const LaunchMemory &mem = *f.memory;
  walkBlock(a, p, [&](int64_t lane, int64_t offset, bool inside) {
    if (!inside) {
      r[lane] = pad;
      return true;
    }
    uint64_t address = elementAddress(p.base, offset, size);
    const uint8_t *h = mem.translateForRead(address, size);
    if (!h) {
      reportBlockFault(f, in, what, a, p, lane, address, size);
      return false;
    }
    r[lane] = loadElement<D>(h);
    return true;
  });
}

/// Checks every lane that will be written, so that a faulting op writes nothing.
bool checkWrites(Frame &f, const Instr &in, const BlockAccess &a, const Placement &p, uint32_t size,
                 const char *what) {
  const LaunchMemory &mem = *f.memory;
  return walkBlock(a, p, [&](int64_t lane, int64_t offset, bool inside) {
    if (!inside)
      return true;
    uint64_t address = elementAddress(p.base, offset, size);
    if (mem.translateWritable(address, size))
      return true;
    reportBlockFault(f, in, what, a, p, lane, address, size);
    return false;
  });
}

/// Block pointer operands: [ptr, value]; descriptor operands: [desc, src, indices...].
template <DType D, bool Descriptor> void storeKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const BlockAccess &a = *static_cast<const BlockAccess *>(in.data);
  Placement p = Descriptor ? descriptorPlacement(f, in, 2, a.rank)
                           : blockPointerPlacement(f.at<int64_t>(in.operands[0]), a.rank);
  if (!checkWrites(f, in, a, p, size,
                   Descriptor ? "descriptor store to" : "block-pointer store to"))
    return;
  const T *v = f.at<T>(in.operands[1]);
  const LaunchMemory &mem = *f.memory;
  walkBlock(a, p, [&](int64_t lane, int64_t offset, bool inside) {
    if (inside)
      storeElement<D>(
          mem.translateForWrite(elementAddress(p.base, offset, size), size, f.dirtyRuns), v[lane]);
    return true;
  });
}

/// The element types each reduction supports (TMA's: no i1, no fp8; inc/dec
/// are 32-bit unsigned; bitwise ops on integers only).
template <ReduceKind K, DType D> constexpr bool reduceSupports() {
  if (D == DType::I1 || D == DType::Ptr || isFP8(D))
    return false;
  if (K == ReduceKind::ADD || K == ReduceKind::MIN || K == ReduceKind::MAX)
    return true;
  if (K == ReduceKind::INC || K == ReduceKind::DEC)
    return D == DType::I32;
  return isInteger(D);
}

/// new = old (kind) v. Integers are signed for min/max (Triton's default), wrap
/// on add; inc/dec are PTX's: inc gives old >= v ? 0 : old + 1, dec gives
/// (old == 0 || old > v) ? v : old - 1, both unsigned. Float min/max return the
/// non-NaN operand, as PTX min/max do.
template <DType D, ReduceKind K> Repr<D> combine(Repr<D> old, Repr<D> v) {
  using T = Repr<D>;
  if constexpr (K == ReduceKind::ADD) {
    if constexpr (isFloat(D))
      return roundTo<D>(old + v);
    else
      return T(UnsignedRepr<D>(old) + UnsignedRepr<D>(v));
  } else if constexpr (K == ReduceKind::MIN) {
    if constexpr (isFloat(D))
      return std::fmin(old, v);
    else
      return std::min(old, v);
  } else if constexpr (K == ReduceKind::MAX) {
    if constexpr (isFloat(D))
      return std::fmax(old, v);
    else
      return std::max(old, v);
  } else if constexpr (K == ReduceKind::INC) {
    uint32_t o = uint32_t(old), s = uint32_t(v);
    return T(o >= s ? 0u : o + 1u);
  } else if constexpr (K == ReduceKind::DEC) {
    uint32_t o = uint32_t(old), s = uint32_t(v);
    return T(o == 0 || o > s ? s : o - 1u);
  } else if constexpr (K == ReduceKind::AND) {
    return T(UnsignedRepr<D>(old) & UnsignedRepr<D>(v));
  } else if constexpr (K == ReduceKind::OR) {
    return T(UnsignedRepr<D>(old) | UnsignedRepr<D>(v));
  } else {
    return T(UnsignedRepr<D>(old) ^ UnsignedRepr<D>(v));
  }
}

/// Serialises descriptor reductions of programs running on different threads:
/// each element's read-modify-write is atomic on the GPU (and is recorded as an
/// atomic access, so reductions from different programs are not hazards).
std::mutex &reduceMutex() {
  static std::mutex m;
  return m;
}

/// Operands: [desc, src, indices...].
template <DType D, ReduceKind K> void reduceKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const BlockAccess &a = *static_cast<const BlockAccess *>(in.data);
  Placement p = descriptorPlacement(f, in, 2, a.rank);
  std::lock_guard<std::mutex> lock(reduceMutex());
  if (!checkWrites(f, in, a, p, size, "descriptor reduction into"))
    return;
  const T *v = f.at<T>(in.operands[1]);
  const LaunchMemory &mem = *f.memory;
  walkBlock(a, p, [&](int64_t lane, int64_t offset, bool inside) {
    if (!inside)
      return true;
    uint8_t *h = mem.translateForAtomic(elementAddress(p.base, offset, size), size);
    storeElement<D>(h, combine<D, K>(loadElement<D>(h), v[lane]));
    return true;
  });
}

//===----------------------------------------------------------------------===//
// Gather and scatter: rows x_offsets[i], columns y_offset + j of a 2-D descriptor
//===----------------------------------------------------------------------===//

struct RowsAccess {
  int64_t rows = 0, cols = 0;
};

/// Calls fn(lane, row, col, offset, inside) over the rows x cols result, row-major.
template <DType X, class Fn>
bool walkRows(Frame &f, const Instr &in, const RowsAccess &a, const int64_t *record, Fn &&fn) {
  const Repr<X> *x = f.at<Repr<X>>(in.operands[1]);
  int64_t y = *f.at<int32_t>(in.operands[2]);
  const int64_t *shape = record + 1, *strides = record + 3;
  for (int64_t i = 0; i < a.rows; ++i) {
    int64_t row = x[i];
    bool rowInside = row >= 0 && row < shape[0];
    for (int64_t j = 0; j < a.cols; ++j) {
      int64_t col = y + j;
      bool inside = rowInside && col >= 0 && col < shape[1];
      uint64_t offset = uint64_t(row) * uint64_t(strides[0]) + uint64_t(col) * uint64_t(strides[1]);
      if (!fn(i * a.cols + j, row, col, int64_t(offset), inside))
        return false;
    }
  }
  return true;
}

/// Operands: [desc, x_offsets, y_offset].
template <DType D, DType X> void gatherKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const RowsAccess &a = *static_cast<const RowsAccess *>(in.data);
  const int64_t *record = f.at<int64_t>(in.operands[0]);
  uint64_t base = uint64_t(record[0]);
  const T pad = paddingValue<D>(descriptorPadsNaN(record, 2));
  T *r = f.at<T>(in.results[0]);
  const LaunchMemory &mem = *f.memory;
  walkRows<X>(f, in, a, record,
              [&](int64_t lane, int64_t row, int64_t col, int64_t offset, bool inside) {
                if (!inside) {
                  r[lane] = pad;
                  return true;
                }
                uint64_t address = elementAddress(base, offset, size);
                const uint8_t *h = mem.translateForRead(address, size);
                if (!h) {
                  int64_t index[2] = {row, col};
                  reportFault(f, in, "descriptor gather of", index, 2, lane, address, size);
                  return false;
                }
                r[lane] = loadElement<D>(h);
                return true;
              });
}

/// Operands: [desc, x_offsets, y_offset, src]. Rows named twice are written in
/// lane order (the last wins); the GPU leaves that order unspecified.
template <DType D, DType X> void scatterKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const RowsAccess &a = *static_cast<const RowsAccess *>(in.data);
  const int64_t *record = f.at<int64_t>(in.operands[0]);
  uint64_t base = uint64_t(record[0]);
  const LaunchMemory &mem = *f.memory;
  bool ok = walkRows<X>(
      f, in, a, record, [&](int64_t lane, int64_t row, int64_t col, int64_t offset, bool inside) {
        if (!inside)
          return true;
        uint64_t address = elementAddress(base, offset, size);
        if (mem.translateWritable(address, size))
          return true;
        int64_t index[2] = {row, col};
        reportFault(f, in, "descriptor scatter to", index, 2, lane, address, size);
        return false;
      });
  if (!ok)
    return;
  const T *v = f.at<T>(in.operands[3]);
  walkRows<X>(f, in, a, record, [&](int64_t lane, int64_t, int64_t, int64_t offset, bool inside) {
    if (inside)
      storeElement<D>(mem.translateForWrite(elementAddress(base, offset, size), size, f.dirtyRuns),
                      v[lane]);
    return true;
  });
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

/// Fills the static part of an access from its block type.
bool describeBlock(mlir::Operation *op, Lowerer &L, mlir::RankedTensorType block, BlockAccess &a) {
  if (block.getRank() < 1 || block.getRank() > kMaxRank)
    return L.error(op, fmt::format("blocks of rank {} are not supported (1 to {})", block.getRank(),
                                   kMaxRank));
  a.rank = int(block.getRank());
  for (int d = 0; d < a.rank; ++d)
    a.block[d] = block.getDimSize(d);
  return true;
}

mlir::RankedTensorType blockOf(mlir::Type blockPointer) {
  return mlir::cast<mlir::RankedTensorType>(
      mlir::cast<tt::PointerType>(blockPointer).getPointeeType());
}

bool lowerMakeTensorPtr(mlir::Operation *op, Lowerer &L) {
  auto make = mlir::cast<tt::MakeTensorPtrOp>(op);
  BlockAccess a;
  if (!describeBlock(op, L, blockOf(make.getType()), a))
    return false;
  // Operands in record order; the kernel derives the rank from their count.
  std::vector<SlotId> operands{L.use(make.getBase())};
  for (mlir::Value v : make.getShape())
    operands.push_back(L.use(v));
  for (mlir::Value v : make.getStrides())
    operands.push_back(L.use(v));
  for (mlir::Value v : make.getOffsets())
    operands.push_back(L.use(v));
  SlotId r = L.def(make.getResult(), op);
  if (r == kNoSlot)
    return false;
  L.emit(op, &makeTensorPtrKernel, operands, {r});
  return true;
}

bool lowerAdvance(mlir::Operation *op, Lowerer &L) {
  auto advance = mlir::cast<tt::AdvanceOp>(op);
  std::vector<SlotId> operands{L.use(advance.getPtr())};
  for (mlir::Value v : advance.getOffsets())
    operands.push_back(L.use(v));
  SlotId r = L.def(advance.getResult(), op);
  if (r == kNoSlot)
    return false;
  L.emit(op, &advanceKernel, operands, {r});
  return true;
}

bool lowerMakeDescriptor(mlir::Operation *op, Lowerer &L) {
  auto make = mlir::cast<tt::MakeTensorDescOp>(op);
  BlockAccess a;
  if (!describeBlock(op, L, make.getType().getBlockType(), a))
    return false;
  std::vector<SlotId> operands{L.use(make.getBase())};
  for (mlir::Value v : make.getShape())
    operands.push_back(L.use(v));
  for (mlir::Value v : make.getStrides())
    operands.push_back(L.use(v));
  SlotId r = L.def(make.getResult(), op);
  if (r == kNoSlot)
    return false;
  bool nan = make.getPadding() == tt::PaddingOption::PAD_NAN;
  L.emit(op, nan ? &makeDescriptorKernel<true> : &makeDescriptorKernel<false>, operands, {r});
  return true;
}

/// Block pointers and descriptors may point at any element type a tensor holds.
template <bool Descriptor> ExecFn loadFor(DType d) {
  return visitAny(d,
                  [](auto tag) -> ExecFn { return &loadKernel<decltype(tag)::value, Descriptor>; });
}
template <bool Descriptor> ExecFn storeFor(DType d) {
  return visitAny(
      d, [](auto tag) -> ExecFn { return &storeKernel<decltype(tag)::value, Descriptor>; });
}

bool lowerDescriptorLoad(mlir::Operation *op, Lowerer &L) {
  auto load = mlir::cast<tt::DescriptorLoadOp>(op);
  BlockAccess a;
  if (!describeBlock(op, L, load.getDesc().getType().getBlockType(), a))
    return false;
  a.checked = (1u << a.rank) - 1;
  std::vector<SlotId> operands{L.use(load.getDesc())};
  for (mlir::Value v : load.getIndices())
    operands.push_back(L.use(v));
  SlotId r = L.def(load.getResult(), op);
  if (r == kNoSlot)
    return false;
  // The result may reshape the block (same element count, e.g. a leading 1
  // dropped): lanes are matched in row-major order.
  L.emit(op, loadFor<true>(L.slot(r).dtype), operands, {r}, L.keep(a));
  return true;
}

bool lowerDescriptorStore(mlir::Operation *op, Lowerer &L) {
  auto store = mlir::cast<tt::DescriptorStoreOp>(op);
  BlockAccess a;
  if (!describeBlock(op, L, store.getDesc().getType().getBlockType(), a))
    return false;
  a.checked = (1u << a.rank) - 1;
  std::vector<SlotId> operands{L.use(store.getDesc()), L.use(store.getSrc())};
  for (mlir::Value v : store.getIndices())
    operands.push_back(L.use(v));
  L.emit(op, storeFor<true>(L.slot(operands[1]).dtype), operands, {}, L.keep(a));
  return true;
}

template <ReduceKind K> ExecFn reduceFor(DType d) {
  return visitAny(d, [](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if constexpr (reduceSupports<K, D>())
      return &reduceKernel<D, K>;
    else
      return nullptr;
  });
}

bool lowerDescriptorReduce(mlir::Operation *op, Lowerer &L) {
  auto reduce = mlir::cast<tt::DescriptorReduceOp>(op);
  BlockAccess a;
  if (!describeBlock(op, L, reduce.getDesc().getType().getBlockType(), a))
    return false;
  a.checked = (1u << a.rank) - 1;
  std::vector<SlotId> operands{L.use(reduce.getDesc()), L.use(reduce.getSrc())};
  for (mlir::Value v : reduce.getIndices())
    operands.push_back(L.use(v));
  DType d = L.slot(operands[1]).dtype;
  // One typed kernel family per kind, indexed by the kind's value (ADD = 1 ... XOR = 8).
  using Picker = ExecFn (*)(DType);
  static constexpr Picker kPickers[] = {
      nullptr,
      &reduceFor<ReduceKind::ADD>,
      &reduceFor<ReduceKind::MIN>,
      &reduceFor<ReduceKind::MAX>,
      &reduceFor<ReduceKind::INC>,
      &reduceFor<ReduceKind::DEC>,
      &reduceFor<ReduceKind::AND>,
      &reduceFor<ReduceKind::OR>,
      &reduceFor<ReduceKind::XOR>,
  };
  auto kind = static_cast<size_t>(reduce.getKind());
  ExecFn fn = kind < std::size(kPickers) && kPickers[kind] ? kPickers[kind](d) : nullptr;
  if (!fn)
    return L.error(op, fmt::format("reduction '{}' is not defined for element type {}",
                                   tt::stringifyDescriptorReduceKind(reduce.getKind()).str(),
                                   std::string(name(d))));
  L.emit(op, fn, operands, {}, L.keep(a));
  return true;
}

/// Shared checks of gather/scatter: a 2-D descriptor, i16/i32 row offsets, and a
/// rows x cols block with one row per offset.
bool describeRows(mlir::Operation *op, Lowerer &L, tt::TensorDescType desc, SlotId x,
                  mlir::Type blockType, RowsAccess &a) {
  if (desc.getBlockType().getRank() != 2)
    return L.error(op, "gather and scatter need a 2-D descriptor");
  auto block = mlir::cast<mlir::RankedTensorType>(blockType);
  if (block.getRank() != 2 || block.getDimSize(0) != L.slot(x).numel)
    return L.error(op, "the block must have one row per x offset");
  a.rows = block.getDimSize(0);
  a.cols = block.getDimSize(1);
  return true;
}

template <bool Scatter> ExecFn rowsFor(DType d, DType x) {
  return visitAny(d, [x](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if (x == DType::I16)
      return Scatter ? &scatterKernel<D, DType::I16> : &gatherKernel<D, DType::I16>;
    return Scatter ? &scatterKernel<D, DType::I32> : &gatherKernel<D, DType::I32>;
  });
}

bool lowerDescriptorGather(mlir::Operation *op, Lowerer &L) {
  auto gather = mlir::cast<tt::DescriptorGatherOp>(op);
  SlotId desc = L.use(gather.getDesc()), x = L.use(gather.getXOffsets()),
         y = L.use(gather.getYOffset());
  RowsAccess a;
  if (!describeRows(op, L, gather.getDesc().getType(), x, gather.getResult().getType(), a))
    return false;
  SlotId r = L.def(gather.getResult(), op);
  if (r == kNoSlot)
    return false;
  L.emit(op, rowsFor<false>(L.slot(r).dtype, L.slot(x).dtype), {desc, x, y}, {r}, L.keep(a));
  return true;
}

bool lowerDescriptorScatter(mlir::Operation *op, Lowerer &L) {
  auto scatter = mlir::cast<tt::DescriptorScatterOp>(op);
  SlotId desc = L.use(scatter.getDesc()), x = L.use(scatter.getXOffsets()),
         y = L.use(scatter.getYOffset()), src = L.use(scatter.getSrc());
  RowsAccess a;
  if (!describeRows(op, L, scatter.getDesc().getType(), x, scatter.getSrc().getType(), a))
    return false;
  L.emit(op, rowsFor<true>(L.slot(src).dtype, L.slot(x).dtype), {desc, x, y, src}, {}, L.keep(a));
  return true;
}

} // namespace

bool lowerBlockPointerLoad(mlir::Operation *op, Lowerer &L) {
  auto load = mlir::cast<tt::LoadOp>(op);
  BlockAccess a;
  if (!describeBlock(op, L, blockOf(load.getPtr().getType()), a))
    return false;
  for (int32_t d : load.getBoundaryCheck())
    a.checked |= 1u << d;
  a.nanPadding = load.getPadding() == tt::PaddingOption::PAD_NAN;
  SlotId p = L.use(load.getPtr());
  SlotId r = L.def(load.getResult(), op);
  if (r == kNoSlot)
    return false;
  // Without padding the GPU leaves masked lanes undefined; they read zero here.
  if (a.nanPadding && !isFloat(L.slot(r).dtype))
    return L.error(op, "padding = nan needs a floating-point element type");
  L.emit(op, loadFor<false>(L.slot(r).dtype), {p}, {r}, L.keep(a));
  return true;
}

bool lowerBlockPointerStore(mlir::Operation *op, Lowerer &L) {
  auto store = mlir::cast<tt::StoreOp>(op);
  BlockAccess a;
  if (!describeBlock(op, L, blockOf(store.getPtr().getType()), a))
    return false;
  for (int32_t d : store.getBoundaryCheck())
    a.checked |= 1u << d;
  SlotId p = L.use(store.getPtr()), v = L.use(store.getValue());
  L.emit(op, storeFor<false>(L.slot(v).dtype), {p, v}, {}, L.keep(a));
  return true;
}

void registerBlockPointerOps(OpTable &t) {
  t.add("tt.make_tensor_ptr", &lowerMakeTensorPtr);
  t.add("tt.advance", &lowerAdvance);
  t.add("tt.make_tensor_descriptor", &lowerMakeDescriptor);
  t.add("tt.descriptor_load", &lowerDescriptorLoad);
  t.add("tt.descriptor_store", &lowerDescriptorStore);
  t.add("tt.descriptor_reduce", &lowerDescriptorReduce);
  t.add("tt.descriptor_gather", &lowerDescriptorGather);
  t.add("tt.descriptor_scatter", &lowerDescriptorScatter);
}

} // namespace ttinterp::interp
