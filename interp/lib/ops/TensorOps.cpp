//===- TensorOps.cpp - Program ids, ranges and shape/layout ops -----------===//
//
// tt.get_program_id, tt.get_num_programs, tt.make_range, tt.splat, tt.unsplat,
// tt.broadcast, tt.expand_dims, tt.reshape, tt.trans, tt.join, tt.split, tt.cat,
// tt.addptr, tt.int_to_ptr, tt.ptr_to_int, tt.bitcast. Data movement works on
// element bytes, so one kernel per element size serves every dtype.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include "ttinterp/frontend/Dialect.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ttinterp::interp {
namespace {

ExecFn bySize(size_t size, ExecFn f1, ExecFn f2, ExecFn f4, ExecFn f8) {
  return size == 1 ? f1 : size == 2 ? f2 : size == 4 ? f4 : f8;
}

//===----------------------------------------------------------------------===//
// Program ids and ranges
//===----------------------------------------------------------------------===//

struct AxisData {
  int axis;
};

void programId(Frame &f, const Instr &in) {
  *f.at<int32_t>(in.results[0]) = f.pid[static_cast<const AxisData *>(in.data)->axis];
}
void numPrograms(Frame &f, const Instr &in) {
  *f.at<int32_t>(in.results[0]) = f.numPrograms[static_cast<const AxisData *>(in.data)->axis];
}

template <ExecFn Fn> bool lowerProgramQuery(mlir::Operation *op, Lowerer &L) {
  int64_t axis = intAttr(op, "axis", -1);
  if (axis < 0 || axis > 2)
    return L.error(op, "axis must be x, y or z");
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (L.slot(r).dtype != DType::I32)
    return L.error(op, "result must be i32");
  L.emit(op, Fn, {}, {r}, L.keep(AxisData{int(axis)}));
  return true;
}

bool lowerMakeRange(mlir::Operation *op, Lowerer &L) {
  int64_t start = intAttr(op, "start"), end = intAttr(op, "end");
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (L.slot(r).numel != end - start || L.slot(r).dtype != DType::I32)
    return L.error(op, "result must be a tensor of end - start i32 values");
  // A range never changes: it is a frame constant.
  std::vector<uint8_t> bytes(size_t(end - start) * 4);
  for (int64_t i = start; i < end; ++i) {
    int32_t v = int32_t(i);
    std::memcpy(bytes.data() + (i - start) * 4, &v, 4);
  }
  L.constant(r, std::move(bytes));
  return true;
}

//===----------------------------------------------------------------------===//
// Splat, broadcast and friends
//===----------------------------------------------------------------------===//

template <class T> void splatKernel(Frame &f, const Instr &in) {
  T v = *f.at<T>(in.operands[0]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = v;
}

bool lowerSplat(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (L.slot(a).numel != 1)
    return L.error(op, "operand must be a scalar (or a one-element tensor)");
  // A splat whose every user can read the scalar (the base of tt.addptr, an
  // operand of `x - splat(mean)`) is never written out as a block.
  if (onlyScalarReaders(op->getResult(0))) {
    L.recordSplat(op->getResult(0), a);
    return true;
  }
  size_t size = computeSize(L.slot(r).dtype);
  L.emit(op,
         bySize(size, &splatKernel<uint8_t>, &splatKernel<uint16_t>, &splatKernel<uint32_t>,
                      &splatKernel<uint64_t>),
         {a}, {r});
  return true;
}

/// Same bytes, other shape: expand_dims, reshape (we keep C order, a valid
/// choice for allow_reorder too), unsplat, and a bitcast between equal sizes.
void copyKernel(Frame &f, const Instr &in) {
  std::memcpy(f.at<uint8_t>(in.results[0]), f.at<uint8_t>(in.operands[0]),
              f.slot(in.results[0]).bytes());
}

bool lowerSameBytes(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  if (op->getOperand(0).getType() == op->getResult(0).getType()) {
    // The same type (what `tl.sum(x)` of a 1-D block reshapes it to): the result is the
    // operand, no copy. A bound slot never shares its bytes (ArenaLayout.cpp), so nothing
    // that outlives one of the two names can overwrite it.
    L.bind(op->getResult(0), a);
    return true;
  }
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (L.slot(a).numel != L.slot(r).numel || L.slot(a).dtype != L.slot(r).dtype)
    return L.error(op, "operand and result must have the same element type and count");
  L.emit(op, &copyKernel, {a}, {r});
  return true;
}

/// out[i] = in[sum_d idx_d(i) * srcStride[d]] for the result's row-major index
/// i: broadcast (stride 0) and transpose (permuted strides) are both this.
struct StridedData {
  std::vector<int64_t> shape;     ///< Result shape.
  std::vector<int64_t> srcStride; ///< Source stride per result dimension.
};

/// Drops dimensions of size 1 and merges neighbours that the source walks as one
/// (stride[k] == stride[k + 1] * shape[k + 1], zero strides included). Triton's sort
/// reshapes 2^k lanes into a rank-k tensor of 2s (rank 16 for 2^16 lanes); merged, its
/// broadcasts and transposes are rank 2 or 3 again, and common ranks get longer rows.
StridedData mergedDimensions(StridedData data) {
  StridedData out;
  for (size_t d = 0; d < data.shape.size(); ++d) {
    if (data.shape[d] == 1)
      continue;
    if (!out.shape.empty() &&
        out.srcStride.back() == data.srcStride[d] * data.shape[d]) {
      out.shape.back() *= data.shape[d];
      out.srcStride.back() = data.srcStride[d];
      continue;
    }
    out.shape.push_back(data.shape[d]);
    out.srcStride.push_back(data.srcStride[d]);
  }
  return out;
}

template <class T> void stridedGather(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const StridedData *>(in.data);
  const T *src = f.at<T>(in.operands[0]);
  T *out = f.at<T>(in.results[0]);
  size_t rank = d.shape.size();
  if (rank == 0) {
    out[0] = src[0];
    return;
  }
  int64_t inner = d.shape[rank - 1], innerStride = d.srcStride[rank - 1];
  int64_t outer = in.n / (inner ? inner : 1);
  if (rank == 2 && d.srcStride[0] == 0 && innerStride == 1) {
    // One row repeated (a [1, C] mask broadcast to a tile): copy it, then double what is
    // copied, log2(rows) copies instead of one short memcpy per row.
    const size_t rowBytes = size_t(inner) * sizeof(T);
    auto *bytes = reinterpret_cast<uint8_t *>(out);
    std::memcpy(bytes, src, rowBytes);
    for (int64_t done = 1; done < outer;) {
      int64_t more = std::min(done, outer - done);
      std::memcpy(bytes + size_t(done) * rowBytes, bytes, size_t(more) * rowBytes);
      done += more;
    }
    return;
  }
  // Index of the current row in the outer dimensions; any rank (see mergedDimensions).
  constexpr size_t kInlineRank = 8;
  int64_t inlineIndex[kInlineRank] = {0};
  std::vector<int64_t> heapIndex(rank > kInlineRank ? rank : 0, 0);
  int64_t *idx = rank > kInlineRank ? heapIndex.data() : inlineIndex;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = 0;
    for (size_t k = 0; k + 1 < rank; ++k)
      base += idx[k] * d.srcStride[k];
    T *row = out + o * inner;
    if (innerStride == 0) {
      T v = src[base];
      for (int64_t i = 0; i < inner; ++i)
        row[i] = v;
    } else if (innerStride == 1) {
      std::memcpy(row, src + base, size_t(inner) * sizeof(T));
    } else {
      for (int64_t i = 0; i < inner; ++i)
        row[i] = src[base + i * innerStride];
    }
    for (int k = int(rank) - 2; k >= 0; --k) {
      if (++idx[k] < d.shape[k])
        break;
      idx[k] = 0;
    }
  }
}

bool emitStrided(mlir::Operation *op, Lowerer &L, SlotId a, SlotId r, StridedData data) {
  StridedData merged = mergedDimensions(std::move(data));
  if (merged.shape.size() == 1 && merged.srcStride[0] == 1) {
    L.emit(op, &copyKernel, {a}, {r}); // an identity: broadcast of nothing, trans of 1s
    return true;
  }
  size_t size = computeSize(L.slot(r).dtype);
  L.emit(op,
         bySize(size, &stridedGather<uint8_t>, &stridedGather<uint16_t>,
                      &stridedGather<uint32_t>, &stridedGather<uint64_t>),
         {a}, {r}, L.keep(std::move(merged)));
  return true;
}

bool lowerBroadcast(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  const Slot &src = L.slot(a), &res = L.slot(r);
  if (src.shape.size() != res.shape.size())
    return L.error(op, "operand and result must have the same rank");
  StridedData data{res.shape, rowMajorStrides(src.shape)};
  for (size_t d = 0; d < res.shape.size(); ++d) {
    if (src.shape[d] == res.shape[d])
      continue;
    if (src.shape[d] != 1)
      return L.error(op, "only dimensions of size 1 can be broadcast");
    data.srcStride[d] = 0;
  }
  return emitStrided(op, L, a, r, std::move(data));
}

bool lowerTrans(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  auto order = op->getAttrOfType<mlir::DenseI32ArrayAttr>("order");
  const Slot &src = L.slot(a), &res = L.slot(r);
  if (!order || size_t(order.size()) != src.shape.size())
    return L.error(op, "order must list every dimension");
  std::vector<int64_t> srcStrides = rowMajorStrides(src.shape);
  StridedData data{res.shape, {}};
  for (int32_t d : order.asArrayRef()) {
    if (d < 0 || size_t(d) >= src.shape.size())
      return L.error(op, "order out of range");
    data.srcStride.push_back(srcStrides[d]);
  }
  return emitStrided(op, L, a, r, std::move(data));
}

//===----------------------------------------------------------------------===//
// join / split / cat
//===----------------------------------------------------------------------===//

template <class T> void joinKernel(Frame &f, const Instr &in) {
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0, half = in.n / 2; i < half; ++i) {
    r[2 * i] = a[i];
    r[2 * i + 1] = b[i];
  }
}

template <class T> void splitKernel(Frame &f, const Instr &in) {
  const T *a = f.at<T>(in.operands[0]);
  T *lo = f.at<T>(in.results[0]), *hi = f.at<T>(in.results[1]);
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    lo[i] = a[2 * i];
    hi[i] = a[2 * i + 1];
  }
}

void catKernel(Frame &f, const Instr &in) {
  size_t first = f.slot(in.operands[0]).bytes();
  uint8_t *r = f.at<uint8_t>(in.results[0]);
  std::memcpy(r, f.at<uint8_t>(in.operands[0]), first);
  std::memcpy(r + first, f.at<uint8_t>(in.operands[1]), f.slot(in.operands[1]).bytes());
}

bool lowerJoin(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0)), b = L.use(op->getOperand(1));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (L.slot(r).numel != 2 * L.slot(a).numel || L.slot(r).shape.back() != 2)
    return L.error(op, "result must add a minor dimension of size 2");
  size_t size = computeSize(L.slot(r).dtype);
  L.emit(op,
         bySize(size, &joinKernel<uint8_t>, &joinKernel<uint16_t>, &joinKernel<uint32_t>,
                      &joinKernel<uint64_t>),
         {a, b}, {r});
  return true;
}

bool lowerSplit(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId lo = L.def(op->getResult(0), op), hi = L.def(op->getResult(1), op);
  if (lo == kNoSlot || hi == kNoSlot)
    return false;
  if (L.slot(a).shape.empty() || L.slot(a).shape.back() != 2)
    return L.error(op, "operand's minor dimension must have size 2");
  size_t size = computeSize(L.slot(lo).dtype);
  L.emit(op,
         bySize(size, &splitKernel<uint8_t>, &splitKernel<uint16_t>,
                      &splitKernel<uint32_t>, &splitKernel<uint64_t>),
         {a}, {lo, hi});
  return true;
}

bool lowerCat(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0)), b = L.use(op->getOperand(1));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (L.slot(a).numel + L.slot(b).numel != L.slot(r).numel)
    return L.error(op, "result must hold both operands");
  L.emit(op, &catKernel, {a, b}, {r});
  return true;
}

//===----------------------------------------------------------------------===//
// Pointers
//===----------------------------------------------------------------------===//

/// Element sizes are 1, 2, 4 or 8 bytes: a shift, known at compile time, so the
/// loop vectorises (x86-64's baseline has no 64-bit vector multiply).
/// A splatted operand (Splatted) is a scalar read once: `addptr(splat(base),
/// offsets)` forms pointer blocks, `addptr(ptrs, splat(step))` advances them.
template <DType OffsetType, unsigned Shift, Splatted S> void addPtrKernel(Frame &f, const Instr &in) {
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const Repr<OffsetType> *off = f.at<Repr<OffsetType>>(in.operands[1]);
  uint64_t *r = f.at<uint64_t>(in.results[0]);
  auto add = [](uint64_t pointer, Repr<OffsetType> offset) {
    return tagged::advance(pointer, int64_t(uint64_t(int64_t(offset)) << Shift));
  };
  if constexpr (OffsetType == DType::I32 && (S == Splatted::None || S == Splatted::Lhs)) {
    // Pointer blocks from i32 offsets, the usual spelling: on the vector unit. (Not a
    // scalar pointer, `X + row * stride`: the dispatch would cost more than the sum.)
    if (in.n >= 16) {
      simd::addOffsets(p, S == Splatted::Lhs, off, Shift, r, in.n);
      return;
    }
  }
  if constexpr (S == Splatted::None) {
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = add(p[i], off[i]);
  } else if constexpr (S == Splatted::Lhs) {
    const uint64_t base = p[0];
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = add(base, off[i]);
  } else if constexpr (S == Splatted::Rhs) {
    // add() for one offset, on the vector unit (a loop's pointer increments).
    simd::advanceAddresses(p, int64_t(uint64_t(int64_t(off[0])) << Shift), r, in.n);
  } else {
    const uint64_t v = add(p[0], off[0]);
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = v;
  }
}
template <DType OffsetType, unsigned Shift> struct AddPtrKernelOf {
  template <Splatted S> struct With {
    static void run(Frame &f, const Instr &in) { addPtrKernel<OffsetType, Shift, S>(f, in); }
  };
};

/// Bytes of the pointee of a pointer type (scalar or tensor of pointers).
std::optional<int64_t> pointeeSize(mlir::Type t) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t))
    t = tensor.getElementType();
  auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(t);
  if (!pointer)
    return std::nullopt;
  mlir::Type pointee = pointer.getPointeeType();
  std::optional<DType> d = Lowerer::dtypeOf(pointee);
  if (!d || mlir::isa<mlir::RankedTensorType>(pointee))
    return std::nullopt;
  return int64_t(byteSize(*d));
}

/// pick(std::integral_constant<unsigned, log2(bytes)>) for a pointee of 1, 2, 4 or 8 bytes (the
/// shift that turns an element offset into bytes); null for any other size.
template <class Pick> ExecFn byPointeeShift(std::optional<int64_t> bytes, Pick pick) {
  switch (bytes.value_or(0)) {
  case 1:
    return pick(std::integral_constant<unsigned, 0>{});
  case 2:
    return pick(std::integral_constant<unsigned, 1>{});
  case 4:
    return pick(std::integral_constant<unsigned, 2>{});
  case 8:
    return pick(std::integral_constant<unsigned, 3>{});
  default:
    return nullptr;
  }
}

/// The increment of an advanced pointer (Lowerer::AdvancedPointer): the loop's addptr of one
/// offset for every lane adds the offset's bytes to the counter instead of to every lane.
/// tagged::advance of a sum is the advances one after another (both wrap the address bits).
template <DType OffsetType, unsigned Shift> void advanceCounterKernel(Frame &f, const Instr &in) {
  const Repr<OffsetType> offset = *f.at<Repr<OffsetType>>(in.operands[0]);
  f.at<uint64_t>(in.operands[1])[0] += uint64_t(int64_t(offset)) << Shift;
}

bool lowerAdvanceCounter(mlir::Operation *op, mlir::Value iterArg, Lowerer &L) {
  // Lane 0 of the offset is every lane's (the loop matched a splat); the scalar where the
  // splat is not materialised.
  SlotId offset = L.splatOf(op->getOperand(1)).value_or(L.use(op->getOperand(1)));
  ExecFn fn = visitInt(L.slot(offset).dtype, [&](auto tag) -> ExecFn {
    return byPointeeShift(pointeeSize(op->getResult(0).getType()), [](auto shift) -> ExecFn {
      return &advanceCounterKernel<decltype(tag)::value, decltype(shift)::value>;
    });
  });
  if (!fn)
    return L.error(op, "only pointers to scalars are supported here");
  // The loop yields the pointers it began with; the counter holds the advance.
  L.bind(op->getResult(0), L.use(iterArg));
  L.emit(op, fn, {offset, L.advancedPointer(iterArg)->counter}, {});
  return true;
}

bool lowerAddPtr(mlir::Operation *op, Lowerer &L) {
  if (mlir::Value iterArg = L.advancedBy(op))
    return lowerAdvanceCounter(op, iterArg, L);
  std::optional<SlotId> sp = L.splatOf(op->getOperand(0)), so = L.splatOf(op->getOperand(1));
  SlotId p = sp.value_or(L.use(op->getOperand(0)));
  SlotId off = so.value_or(L.use(op->getOperand(1)));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  std::optional<int64_t> elem = pointeeSize(op->getResult(0).getType());
  if (!elem)
    return L.error(op, "only pointers to scalars are supported here");
  ExecFn fn = visitInt(L.slot(off).dtype, [&](auto tag) -> ExecFn {
    return byPointeeShift(elem, [&](auto shift) -> ExecFn {
      return pickSplatted<
          AddPtrKernelOf<decltype(tag)::value, decltype(shift)::value>::template With>(sp, so);
    });
  });
  if (!fn || (!so && L.slot(off).numel != L.slot(r).numel))
    return L.error(op, "offset must be an integer of the pointer's shape");
  L.emit(op, fn, {p, off}, {r});
  return true;
}

template <DType To> void ptrToIntKernel(Frame &f, const Instr &in) {
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  Repr<To> *r = f.at<Repr<To>>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = Repr<To>(tagged::address(p[i]));
}

template <DType From> void intToPtrKernel(Frame &f, const Instr &in) {
  const Repr<From> *a = f.at<Repr<From>>(in.operands[0]);
  uint64_t *r = f.at<uint64_t>(in.results[0]);
  // The address names its buffer (a pointer table's entry, an argument's address
  // round-tripped): accesses through it are bounded by that buffer from here on.
  const LaunchMemory &memory = *f.memory;
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = memory.provenance(uint64_t(a[i]));
}

bool lowerPtrToInt(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visitInt(L.slot(r).dtype, [](auto tag) -> ExecFn {
    return &ptrToIntKernel<decltype(tag)::value>;
  });
  if (!fn)
    return L.error(op, "result must be an integer");
  L.emit(op, fn, {a}, {r});
  return true;
}

} // namespace

/// tt.int_to_ptr's kernel for an integer dtype (shared with tt.bitcast from i64).
ExecFn intToPtrKernelFor(DType from) {
  return visitInt(from, [](auto tag) -> ExecFn { return &intToPtrKernel<decltype(tag)::value>; });
}

namespace {

bool lowerIntToPtr(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = intToPtrKernelFor(L.slot(a).dtype);
  if (!fn)
    return L.error(op, "operand must be an integer");
  L.emit(op, fn, {a}, {r});
  return true;
}

} // namespace

/// Reinterprets bits between types of one width (shared with arith.bitcast).
bool lowerBitcast(mlir::Operation *op, Lowerer &L);

void registerTensorOps(OpTable &t) {
  t.add("tt.get_program_id", &lowerProgramQuery<&programId>);
  t.add("tt.get_num_programs", &lowerProgramQuery<&numPrograms>);
  t.add("tt.make_range", &lowerMakeRange);
  t.add("tt.splat", &lowerSplat);
  t.add("tt.unsplat", &lowerSameBytes);
  t.add("tt.expand_dims", &lowerSameBytes);
  t.add("tt.reshape", &lowerSameBytes);
  t.add("tt.broadcast", &lowerBroadcast);
  t.add("tt.trans", &lowerTrans);
  t.add("tt.join", &lowerJoin);
  t.add("tt.split", &lowerSplit);
  t.add("tt.cat", &lowerCat);
  t.add("tt.addptr", &lowerAddPtr, kBothOperands);
  t.add("tt.ptr_to_int", &lowerPtrToInt);
  t.add("tt.int_to_ptr", &lowerIntToPtr);
  t.add("tt.bitcast", &lowerBitcast);
}

} // namespace ttinterp::interp
