//===- BlockPointerOps.h - tt.load/tt.store on block pointers (for MemoryOps) -*- C++ -*-===//
#pragma once

#include "../Lowering.h"

namespace ttinterp::interp {

/// Lowers a tt.load whose pointer is a block pointer (!tt.ptr<tensor<...>>):
/// MemoryOps.cpp hands these over, since tt.load is registered only once.
bool lowerBlockPointerLoad(mlir::Operation *op, Lowerer &L);
/// As lowerBlockPointerLoad, for tt.store.
bool lowerBlockPointerStore(mlir::Operation *op, Lowerer &L);

} // namespace ttinterp::interp
