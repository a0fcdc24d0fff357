//===- ReduceOps.cpp - tt.reduce and tt.scan with any combine region ------===//
//
// The combine region is lowered like any other body and run once per element
// pair; several operands (argmax-style (value, index) pairs) travel together.
// Elements are combined in index order (a left fold; reverse scans from the
// end). The GPU combines in a tree, so float sums can differ in the last bits.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include <cstring>

namespace ttinterp::interp {
namespace {

struct FoldData {
  std::unique_ptr<Body> combine;
  std::vector<SlotId> inputs, outputs;
  int64_t outer = 1, length = 1, inner = 1;
  bool reverse = false;
};

/// Copies element `index` of slot `from` into the scalar slot `to`.
inline void copyElement(Frame &f, SlotId from, int64_t index, SlotId to, size_t size) {
  std::memcpy(f.arena + f.slot(to).offset, f.arena + f.slot(from).offset + index * size, size);
}
inline void storeElementTo(Frame &f, SlotId from, SlotId to, int64_t index, size_t size) {
  std::memcpy(f.arena + f.slot(to).offset + index * size, f.arena + f.slot(from).offset, size);
}

template <bool Scan> void foldKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const FoldData *>(in.data);
  const std::vector<SlotId> &args = d.combine->blocks[0].arguments;
  size_t n = d.inputs.size();
  std::vector<size_t> sizes(n);
  for (size_t k = 0; k < n; ++k)
    sizes[k] = computeSize(f.slot(d.inputs[k]).dtype);
  for (int64_t o = 0; o < d.outer; ++o) {
    for (int64_t i = 0; i < d.inner; ++i) {
      for (int64_t step = 0; step < d.length; ++step) {
        int64_t j = d.reverse ? d.length - 1 - step : step;
        int64_t index = (o * d.length + j) * d.inner + i;
        if (step == 0) {
          for (size_t k = 0; k < n; ++k)
            copyElement(f, d.inputs[k], index, args[k], sizes[k]);
        } else {
          for (size_t k = 0; k < n; ++k)
            copyElement(f, d.inputs[k], index, args[n + k], sizes[k]);
          const Terminator *t = runBody(f, *d.combine);
          if (!t)
            return;
          std::vector<SlotId> acc(args.begin(), args.begin() + n);
          copySlots(f, t->operands, acc);
        }
        if constexpr (Scan)
          for (size_t k = 0; k < n; ++k)
            storeElementTo(f, args[k], d.outputs[k], index, sizes[k]);
      }
      if constexpr (!Scan)
        for (size_t k = 0; k < n; ++k)
          storeElementTo(f, args[k], d.outputs[k], o * d.inner + i, sizes[k]);
    }
  }
}

template <bool Scan> bool lowerFold(mlir::Operation *op, Lowerer &L) {
  FoldData d;
  for (mlir::Value v : op->getOperands())
    d.inputs.push_back(L.use(v));
  const Slot &first = L.slot(d.inputs[0]);
  int64_t axis = intAttr(op, "axis", -1);
  if (axis < 0 || size_t(axis) >= first.shape.size())
    return L.error(op, "axis out of range");
  for (size_t k = 0; k < first.shape.size(); ++k) {
    if (int64_t(k) < axis)
      d.outer *= first.shape[k];
    else if (int64_t(k) > axis)
      d.inner *= first.shape[k];
  }
  d.length = first.shape[axis];
  if (d.length == 0)
    return L.error(op, "cannot combine an empty axis");
  if (auto rev = op->getAttrOfType<mlir::BoolAttr>("reverse"))
    d.reverse = rev.getValue();
  d.combine = L.lowerRegion(op->getRegion(0), op);
  if (!d.combine)
    return false;
  if (d.combine->blocks.size() != 1 || d.combine->blocks[0].arguments.size() != 2 * d.inputs.size())
    return L.error(op, "combine region must take two arguments per operand");
  for (mlir::Value r : op->getResults()) {
    SlotId s = L.def(r, op);
    if (s == kNoSlot)
      return false;
    d.outputs.push_back(s);
  }
  L.emit(op, &foldKernel<Scan>, {}, {}, L.keep(std::move(d)));
  return true;
}

} // namespace

void registerReduceOps(OpTable &t) {
  t.add("tt.reduce", &lowerFold<false>);
  t.add("tt.scan", &lowerFold<true>);
}

} // namespace ttinterp::interp
