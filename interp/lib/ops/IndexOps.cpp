//===- IndexOps.cpp - Data-dependent indexing: tt.gather and tt.histogram -===//
//
// Both ops read positions out of a tensor's values. tt.gather faults on an index
// outside the source (the GPU reads whatever lies there); tt.histogram drops values
// outside [0, bins), as the NVIDIA lowering's unsigned bound check does.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include <fmt/format.h>

#include <algorithm>

namespace ttinterp::interp {
namespace {

//===----------------------------------------------------------------------===//
// tt.gather
//===----------------------------------------------------------------------===//

/// result[o, k, i] = src[o, index[o, k, i], i], with `o` the dimensions before the
/// axis and `i` those after it (the same in source, index and result).
struct GatherData {
  int64_t outer = 1, inner = 1;
  int64_t indexLength = 1;  ///< Result (and index) size along the axis.
  int64_t sourceLength = 1; ///< Source size along the axis.
  int64_t axis = 0;
};

template <class T, DType IndexType> void gatherKernel(Frame &f, const Instr &in) {
  // A copy, so stores of 64-bit or byte elements cannot alias its fields.
  const GatherData d = *static_cast<const GatherData *>(in.data);
  const T *src = f.at<T>(in.operands[0]);
  const Repr<IndexType> *index = f.at<Repr<IndexType>>(in.operands[1]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    int64_t k = signedValue<IndexType>(index[i]);
    if (k < 0 || k >= d.sourceLength) {
      f.fail(in.site, "out_of_bounds",
             fmt::format("gather index {} is outside [0, {}) along axis {}", k, d.sourceLength,
                         d.axis),
             i);
      return;
    }
  }
  for (int64_t o = 0; o < d.outer; ++o)
    for (int64_t k = 0; k < d.indexLength; ++k) {
      int64_t row = (o * d.indexLength + k) * d.inner;
      for (int64_t i = 0; i < d.inner; ++i) {
        int64_t from = signedValue<IndexType>(index[row + i]);
        r[row + i] = src[(o * d.sourceLength + from) * d.inner + i];
      }
    }
}

template <class T> ExecFn gatherBySize(DType indexType) {
  return visitInt(indexType,
                  [](auto tag) -> ExecFn { return &gatherKernel<T, decltype(tag)::value>; });
}

bool lowerGather(mlir::Operation *op, Lowerer &L) {
  SlotId src = L.use(op->getOperand(0)), index = L.use(op->getOperand(1));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  const Slot &s = L.slot(src), &x = L.slot(index), &res = L.slot(r);
  int64_t axis = intAttr(op, "axis", -1);
  size_t rank = s.shape.size();
  if (axis < 0 || size_t(axis) >= rank)
    return L.error(op, "axis out of range");
  if (x.shape != res.shape || x.shape.size() != rank || s.dtype != res.dtype)
    return L.error(op, "index and result must have the source's rank and element type, and "
                       "one shape");
  GatherData d;
  d.axis = axis;
  for (size_t k = 0; k < rank; ++k) {
    if (int64_t(k) == axis)
      continue;
    if (x.shape[k] != s.shape[k])
      return L.error(op, fmt::format("index dimension {} has size {}, the source has {}", k,
                                     x.shape[k], s.shape[k]));
    (int64_t(k) < axis ? d.outer : d.inner) *= s.shape[k];
  }
  d.indexLength = x.shape[axis];
  d.sourceLength = s.shape[axis];
  ExecFn fn;
  switch (computeSize(s.dtype)) {
  case 1:
    fn = gatherBySize<uint8_t>(x.dtype);
    break;
  case 2:
    fn = gatherBySize<uint16_t>(x.dtype);
    break;
  case 4:
    fn = gatherBySize<uint32_t>(x.dtype);
    break;
  default:
    fn = gatherBySize<uint64_t>(x.dtype);
    break;
  }
  if (!fn)
    return L.error(op, "indices must be integers");
  L.emit(op, fn, {src, index}, {r}, L.keep(d));
  return true;
}

//===----------------------------------------------------------------------===//
// tt.histogram
//===----------------------------------------------------------------------===//

template <DType Value, DType Count, bool HasMask> void histogramKernel(Frame &f, const Instr &in) {
  const Repr<Value> *v = f.at<Repr<Value>>(in.operands[0]);
  const uint8_t *mask = HasMask ? f.at<uint8_t>(in.operands[1]) : nullptr;
  Repr<Count> *bins = f.at<Repr<Count>>(in.results[0]);
  int64_t n = f.slot(in.operands[0]).numel;
  uint64_t numBins = uint64_t(in.n);
  std::fill(bins, bins + numBins, Repr<Count>(0));
  for (int64_t i = 0; i < n; ++i) {
    if (HasMask && !mask[i])
      continue;
    // One unsigned comparison drops negative values and values >= bins alike.
    uint64_t b = unsignedValue<Value>(v[i]);
    if (b < numBins)
      bins[b] = wrap<Count>(Repr<Count>(UnsignedRepr<Count>(bins[b]) + 1));
  }
}

bool lowerHistogram(mlir::Operation *op, Lowerer &L) {
  SlotId src = L.use(op->getOperand(0));
  bool hasMask = op->getNumOperands() > 1;
  SlotId mask = hasMask ? L.use(op->getOperand(1)) : kNoSlot;
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  if (L.slot(src).shape.size() != 1 || L.slot(r).shape.size() != 1)
    return L.error(op, "operand and result must be 1-D");
  if (hasMask && L.slot(mask).numel != L.slot(src).numel)
    return L.error(op, "the mask must have the operand's shape");
  ExecFn fn = visitInt(L.slot(src).dtype, [&](auto v) -> ExecFn {
    return visitInt(L.slot(r).dtype, [&](auto c) -> ExecFn {
      constexpr DType V = decltype(v)::value, C = decltype(c)::value;
      return hasMask ? &histogramKernel<V, C, true> : &histogramKernel<V, C, false>;
    });
  });
  if (!fn)
    return L.error(op, "operand and result must be integers");
  std::vector<SlotId> operands{src};
  if (hasMask)
    operands.push_back(mask);
  L.emit(op, fn, operands, {r});
  return true;
}

} // namespace

void registerIndexOps(OpTable &t) {
  t.add("tt.gather", &lowerGather);
  t.add("tt.histogram", &lowerHistogram);
}

} // namespace ttinterp::interp
