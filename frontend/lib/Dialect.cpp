//===- Dialect.cpp - tt and ttg dialect registration, enums, attributes ----===//

#include "ttinterp/frontend/Dialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::triton;

#include "ttinterp/frontend/TritonDialect.cpp.inc"
#include "ttinterp/frontend/TritonEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ttinterp/frontend/TritonAttrs.cpp.inc"

void TritonDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "ttinterp/frontend/TritonOps.cpp.inc"
      >();
}

void TritonDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ttinterp/frontend/TritonAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ttg (only ttg.barrier)
//===----------------------------------------------------------------------===//

#include "ttinterp/frontend/TritonGPUDialect.cpp.inc"
#include "ttinterp/frontend/TritonGPUEnums.cpp.inc"

#define GET_OP_CLASSES
#include "ttinterp/frontend/TritonGPUOps.cpp.inc"

void mlir::triton::gpu::TritonGPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ttinterp/frontend/TritonGPUOps.cpp.inc"
      >();
}
