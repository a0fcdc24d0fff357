//===- MemoryOps.cpp - tt.load and tt.store through the launch's shadows --===//
//
// Every lane's address is translated (and bounds-checked against the
// provenance of its pointer) by LaunchMemory; masked-off lanes are never
// checked or touched. A faulting lane stops the program before anything of
// the op is stored.
//
//===----------------------------------------------------------------------===//
#include "BlockPointerOps.h"
#include "OpSupport.h"

#include "ttinterp/frontend/Dialect.h"

#include <cstring>

namespace ttinterp::interp {
namespace {

/// True when D's bytes in memory are its compute representation (no
/// conversion: i8..i64, f32, f64), so runs move with memcpy.
template <DType D> constexpr bool sameLayout() {
  return sizeof(Repr<D>) == byteSize(D) && D != DType::I1 && D != DType::Ptr;
}

void reportAccessFault(Frame &f, const Instr &in, uint64_t p, uint32_t size, int64_t lane,
                       const char *what) {
  f.fail(in.site, "out_of_bounds",
         std::string(what) + " " + f.memory->describeFault(p, size), lane);
}

/// Length of the run of active, consecutive lanes starting at active lane i:
/// lanes whose pointers step by exactly one element. Most real loads and
/// stores are one such run per row, so they translate, bounds-check and mark
/// dirty once per run instead of once per lane.
template <bool HasMask>
inline int64_t contiguousRun(const uint64_t *p, const uint8_t *mask, int64_t i, int64_t n,
                             uint64_t size) {
  int64_t j = i + 1;
  while (j < n && (!HasMask || mask[j]) && p[j] == p[j - 1] + size)
    ++j;
  return j - i;
}

template <DType D, bool HasMask, bool HasOther> void loadKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const uint8_t *mask = HasMask ? f.at<uint8_t>(in.operands[1]) : nullptr;
  const T *other = HasOther ? f.at<T>(in.operands[2]) : nullptr;
  T *r = f.at<T>(in.results[0]);
  const LaunchMemory &mem = *f.memory;
  for (int64_t i = 0; i < in.n;) {
    if (HasMask && !mask[i]) {
      // A masked-off lane without `other` is undefined on the GPU; 0 here.
      r[i] = HasOther ? other[i] : T(0);
      ++i;
      continue;
    }
    int64_t run = contiguousRun<HasMask>(p, mask, i, in.n, size);
    if (const uint8_t *h = mem.translateForRead(p[i], uint32_t(run * size))) {
      if constexpr (sameLayout<D>())
        std::memcpy(r + i, h, size_t(run) * size); // memory and compute layouts agree
      else
        for (int64_t k = 0; k < run; ++k)
          r[i + k] = loadElement<D>(h + k * size);
      i += run;
      continue;
    }
    // Part of the run is out of bounds: find the lane, lane by lane.
    for (int64_t end = i + run; i < end; ++i) {
      const uint8_t *h = mem.translateForRead(p[i], size);
      if (!h) {
        reportAccessFault(f, in, p[i], size, i, "load of");
        return;
      }
      r[i] = loadElement<D>(h);
    }
  }
}

template <DType D, bool HasMask> void storeKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const T *v = f.at<T>(in.operands[1]);
  const uint8_t *mask = HasMask ? f.at<uint8_t>(in.operands[2]) : nullptr;
  int64_t n = f.slot(in.operands[0]).numel;
  const LaunchMemory &mem = *f.memory;
  // Check every run first: a faulting store writes nothing.
  std::vector<std::pair<int64_t, int64_t>> &runs = f.runs;
  runs.clear();
  for (int64_t i = 0; i < n;) {
    if (HasMask && !mask[i]) {
      ++i;
      continue;
    }
    int64_t run = contiguousRun<HasMask>(p, mask, i, n, size);
    if (mem.translate(p[i], uint32_t(run * size))) {
      runs.emplace_back(i, run);
      i += run;
      continue;
    }
    // The run leaves its window (or spans two regions): lane by lane.
    for (int64_t end = i + run; i < end; ++i) {
      if (!mem.translate(p[i], size)) {
        reportAccessFault(f, in, p[i], size, i, "store to");
        return;
      }
      runs.emplace_back(i, 1);
    }
  }
  for (auto [i, run] : runs) {
    uint8_t *h = mem.translateForWrite(p[i], uint32_t(run * size));
    if constexpr (sameLayout<D>())
      std::memcpy(h, v + i, size_t(run) * size);
    else
      for (int64_t k = 0; k < run; ++k)
        storeElement<D>(h + k * size, v[i + k]);
  }
}

/// The element type behind a pointer-typed value (scalar or tensor of pointers).
std::optional<DType> pointeeDType(mlir::Type t) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t))
    t = tensor.getElementType();
  auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(t);
  if (!pointer)
    return std::nullopt;
  mlir::Type pointee = pointer.getPointeeType();
  if (mlir::isa<mlir::RankedTensorType>(pointee))
    return std::nullopt;
  return Lowerer::dtypeOf(pointee);
}

bool lowerLoad(mlir::Operation *op, Lowerer &L) {
  // A block pointer carries its own shape, strides and bounds.
  if (mlir::triton::isTensorPointerType(op->getOperand(0).getType()))
    return lowerBlockPointerLoad(op, L);
  std::optional<DType> d = pointeeDType(op->getOperand(0).getType());
  if (!d)
    return L.error(op, "unsupported pointer operand");
  unsigned nOps = op->getNumOperands();
  SlotId p = L.use(op->getOperand(0));
  SlotId mask = nOps > 1 ? L.use(op->getOperand(1)) : kNoSlot;
  SlotId other = nOps > 2 ? L.use(op->getOperand(2)) : kNoSlot;
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visitAny(*d, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if (nOps > 2)
      return &loadKernel<D, true, true>;
    if (nOps > 1)
      return &loadKernel<D, true, false>;
    return &loadKernel<D, false, false>;
  });
  std::vector<SlotId> operands{p};
  if (mask != kNoSlot)
    operands.push_back(mask);
  if (other != kNoSlot)
    operands.push_back(other);
  L.emit(op, fn, operands, {r});
  return true;
}

bool lowerStore(mlir::Operation *op, Lowerer &L) {
  if (mlir::triton::isTensorPointerType(op->getOperand(0).getType()))
    return lowerBlockPointerStore(op, L);
  std::optional<DType> d = pointeeDType(op->getOperand(0).getType());
  if (!d)
    return L.error(op, "unsupported pointer operand");
  bool hasMask = op->getNumOperands() > 2;
  std::vector<SlotId> operands{L.use(op->getOperand(0)), L.use(op->getOperand(1))};
  if (hasMask)
    operands.push_back(L.use(op->getOperand(2)));
  ExecFn fn = visitAny(*d, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    return hasMask ? &storeKernel<D, true> : &storeKernel<D, false>;
  });
  L.emit(op, fn, operands, {});
  return true;
}

} // namespace

void registerMemoryOps(OpTable &t) {
  t.add("tt.load", &lowerLoad);
  t.add("tt.store", &lowerStore);
}

} // namespace ttinterp::interp
