//===- AccessAnalysis.h - Which pointer parameters a kernel reads and writes -*- C++ -*-===//
//
// Proves, before any launch, what a kernel may do through each pointer
// parameter: the memory model then skips copying in regions that are only
// written and shadowing regions that are only read. Sound by construction:
// anything it cannot trace (a pointer loaded from memory, tt.int_to_ptr, a
// tt.bitcast from an integer) makes every parameter read-write.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/Session.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <vector>

namespace ttinterp::interp {

/// One Access per argument of `kernel` (None for scalars), covering the
/// functions it calls.
std::vector<Access> analyzeAccess(mlir::FunctionOpInterface kernel);

} // namespace ttinterp::interp
