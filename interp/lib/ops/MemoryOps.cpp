//===- MemoryOps.cpp - tt.load and tt.store through the launch's shadows --===//
//
// Every lane's address is translated (and bounds-checked against the
// provenance of its pointer) by LaunchMemory; masked-off lanes are never
// checked or touched. A faulting lane stops the program before anything of
// the op is stored.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include "ttinterp/frontend/Dialect.h"

namespace ttinterp::interp {
namespace {

struct AccessData {
  bool hasMask = false;
  bool hasOther = false;
};

void reportAccessFault(Frame &f, const Instr &in, uint64_t p, uint32_t size, int64_t lane,
                       const char *what) {
  f.fail(in.site, "out_of_bounds",
         std::string(what) + " " + f.memory->describeFault(p, size), lane);
}

template <DType D, bool HasMask, bool HasOther> void loadKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const uint8_t *mask = HasMask ? f.at<uint8_t>(in.operands[1]) : nullptr;
  const T *other = HasOther ? f.at<T>(in.operands[2]) : nullptr;
  T *r = f.at<T>(in.results[0]);
  const LaunchMemory &mem = *f.memory;
  for (int64_t i = 0; i < in.n; ++i) {
    if (HasMask && !mask[i]) {
      // A masked-off lane without `other` is undefined on the GPU; 0 here.
      r[i] = HasOther ? other[i] : T(0);
      continue;
    }
    const uint8_t *h = mem.translate(p[i], size);
    if (!h) {
      reportAccessFault(f, in, p[i], size, i, "load of");
      return;
    }
    r[i] = loadElement<D>(h);
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
  // Check every lane first: a faulting store writes nothing.
  for (int64_t i = 0; i < n; ++i) {
    if (HasMask && !mask[i])
      continue;
    if (!mem.translate(p[i], size)) {
      reportAccessFault(f, in, p[i], size, i, "store to");
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (HasMask && !mask[i])
      continue;
    storeElement<D>(mem.translateForWrite(p[i], size), v[i]);
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
  if (op->getAttr("boundaryCheck") && mlir::cast<mlir::DenseI32ArrayAttr>(op->getAttr("boundaryCheck")).size() > 0)
    return L.error(op, "block-pointer loads are not supported yet");
  std::optional<DType> d = pointeeDType(op->getOperand(0).getType());
  if (!d)
    return L.error(op, "loads through block pointers or descriptors are not supported yet");
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
  if (op->getAttr("boundaryCheck") && mlir::cast<mlir::DenseI32ArrayAttr>(op->getAttr("boundaryCheck")).size() > 0)
    return L.error(op, "block-pointer stores are not supported yet");
  std::optional<DType> d = pointeeDType(op->getOperand(0).getType());
  if (!d)
    return L.error(op, "stores through block pointers or descriptors are not supported yet");
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
