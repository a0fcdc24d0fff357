//===- BlockPointerOps.h - tt.load/tt.store on block pointers (for MemoryOps) -*- C++ -*-===//
#pragma once

#include "../Lowering.h"

namespace ttinterp::interp {

/// Lowers a tt.load whose pointer is a block pointer (!tt.ptr<tensor<...>>):
/// MemoryOps.cpp hands these over, since tt.load is registered only once.
bool lowerBlockPointerLoad(mlir::Operation *op, Lowerer &L);
/// As lowerBlockPointerLoad, for tt.store.
bool lowerBlockPointerStore(mlir::Operation *op, Lowerer &L);

/// Fills a tensor descriptor's record (layout in BlockPointerOps.cpp) from its
/// tagged base pointer, `shape(d)` and `stride(d)` in elements, and padding.
/// tt.make_tensor_descriptor and descriptor kernel parameters both build theirs here.
template <class Shape, class Stride>
void writeDescriptorRecord(int64_t *record, uint64_t base, unsigned rank, Shape shape,
                           Stride stride, bool padNaN) {
  record[0] = int64_t(base);
  for (unsigned d = 0; d < rank; ++d) {
    record[1 + d] = shape(d);
    record[1 + rank + d] = stride(d);
  }
  record[1 + 2 * rank] = padNaN ? 1 : 0;
}

} // namespace ttinterp::interp
