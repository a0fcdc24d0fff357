//===- MapElementwiseOps.cpp - tt.map_elementwise: a scalar region over tensors -===//
//
// tl.map_elementwise(fn, *tensors, pack=P) runs `fn` on scalars, so that each element
// takes only its own branch. The region is lowered like any other body (it may branch:
// an early return becomes cf.cond_br) and runs once per group of P elements. A GPU
// groups a thread's registers, which its layout decides; here a group is P elements
// consecutive in row-major order (docs/semantics.md).
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

namespace ttinterp::interp {
namespace {

struct MapData {
  std::unique_ptr<Body> scalar;
  std::vector<SlotId> inputs, outputs;
  std::vector<size_t> inputSizes, outputSizes;
  int64_t pack = 1, groups = 0;
};

void mapKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const MapData *>(in.data);
  const std::vector<SlotId> &args = d.scalar->blocks[0].arguments;
  // Written element by element below: into their own storage, never into memory a
  // result's slot was last pointed at (a load read in place).
  for (SlotId out : d.outputs)
    f.atHome<uint8_t>(out);
  for (int64_t g = 0; g < d.groups; ++g) {
    for (size_t k = 0; k < d.inputs.size(); ++k)
      for (int64_t p = 0; p < d.pack; ++p)
        copyElement(f, d.inputs[k], g * d.pack + p, args[k * size_t(d.pack) + size_t(p)],
                    d.inputSizes[k]);
    const Terminator *t = runBody(f, *d.scalar);
    if (!t)
      return;
    for (size_t r = 0; r < d.outputs.size(); ++r)
      for (int64_t p = 0; p < d.pack; ++p)
        storeElementTo(f, t->operands[r * size_t(d.pack) + size_t(p)], d.outputs[r], g * d.pack + p,
                       d.outputSizes[r]);
  }
}

bool lowerMapElementwise(mlir::Operation *op, Lowerer &L) {
  MapData d;
  d.pack = intAttr(op, "pack", 1);
  for (mlir::Value v : op->getOperands()) {
    d.inputs.push_back(L.use(v));
    d.inputSizes.push_back(computeSize(L.slot(d.inputs.back()).dtype));
  }
  const int64_t numel = L.slot(d.inputs.front()).numel;
  // The GPU needs `pack` to divide a thread's elements; here, the tensor's.
  if (numel % d.pack != 0)
    return L.error(op, "pack " + std::to_string(d.pack) + " does not divide the " +
                           std::to_string(numel) + " elements of the operands");
  d.groups = numel / d.pack;
  d.scalar = L.lowerRegion(op->getRegion(0), op);
  if (!d.scalar)
    return false;
  for (mlir::Value r : op->getResults()) {
    SlotId s = L.def(r, op);
    if (s == kNoSlot)
      return false;
    d.outputs.push_back(s);
    d.outputSizes.push_back(computeSize(L.slot(s).dtype));
  }
  L.emit(op, &mapKernel, {}, {}, L.keep(std::move(d)));
  return true;
}

} // namespace

void registerMapElementwiseOps(OpTable &t) { t.add("tt.map_elementwise", &lowerMapElementwise); }

} // namespace ttinterp::interp
