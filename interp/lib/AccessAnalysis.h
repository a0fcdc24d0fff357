//===- AccessAnalysis.h - Which pointer parameters a kernel reads and writes -*- C++ -*-===//
//
// Proves, before any launch, what a kernel may do through each pointer
// parameter: the memory model then skips copying in regions that are only
// written and shadowing regions that are only read. Sound by construction:
// anything it cannot trace (a pointer loaded from memory, tt.int_to_ptr, a
// tt.bitcast from an integer) makes every parameter read-write, and what is done
// through such pointers is the access of the launch's reachable buffers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/Session.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <vector>

namespace ttinterp::interp {

struct AccessSummary {
  /// One Access per argument of `kernel` (None for scalars), covering the functions it calls.
  std::vector<Access> parameters;
  /// What the kernel does through pointers of untraceable provenance.
  Access untraced = Access::None;
};
AccessSummary analyzeAccess(mlir::FunctionOpInterface kernel);

} // namespace ttinterp::interp
