//===- Types.cpp - tt types: registration, tensordesc syntax, type helpers -===//

#include "ttinterp/frontend/Dialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::triton;

#define GET_TYPEDEF_CLASSES
#include "ttinterp/frontend/TritonTypes.cpp.inc"

void TritonDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "ttinterp/frontend/TritonTypes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// !tt.ptr: `<f32>`, `<f32, 3>` or, for a `tl.const` pointer (Triton 3.9), `<f32, "constant">`
//===----------------------------------------------------------------------===//

Type PointerType::parse(AsmParser &parser) {
  Type pointee;
  if (parser.parseLess() || parser.parseType(pointee))
    return {};
  int addressSpace = 1;
  if (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    std::string name;
    if (succeeded(parser.parseOptionalString(&name))) {
      // Triton's names of the address spaces a TTIR pointer can be in.
      if (name == "global")
        addressSpace = 1;
      else if (name == "constant")
        addressSpace = kConstantAddressSpace;
      else {
        parser.emitError(loc, "unknown pointer address space \"") << name << "\"";
        return {};
      }
    } else if (parser.parseInteger(addressSpace)) {
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return PointerType::get(pointee, addressSpace);
}

void PointerType::print(AsmPrinter &printer) const {
  printer << "<" << getPointeeType();
  if (getAddressSpace() == kConstantAddressSpace)
    printer << ", \"constant\"";
  else if (getAddressSpace() != 1)
    printer << ", " << getAddressSpace();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// !tt.tensordesc: `<tensor<128x64xf16>>` (Triton <= 3.7) or `<128x64xf16>` (3.8+)
//===----------------------------------------------------------------------===//

Type TensorDescType::parse(AsmParser &parser) {
  if (parser.parseLess())
    return {};
  SMLoc loc = parser.getCurrentLocation();
  RankedTensorType blockType;
  Type full;
  OptionalParseResult parsedFull = parser.parseOptionalType(full);
  if (parsedFull.has_value()) {
    if (failed(*parsedFull))
      return {};
    blockType = llvm::dyn_cast<RankedTensorType>(full);
    if (!blockType) {
      parser.emitError(loc, "expected a ranked tensor type as tensor descriptor block, got ")
          << full;
      return {};
    }
  } else {
    SmallVector<int64_t> shape;
    Type elementType;
    if (parser.parseDimensionList(shape, /*allowDynamic=*/false, /*withTrailingX=*/true) ||
        parser.parseType(elementType))
      return {};
    blockType = RankedTensorType::get(shape, elementType);
  }
  // Later stages add a shared-memory layout after a comma; TTIR has none.
  if (succeeded(parser.parseOptionalComma())) {
    parser.emitError(parser.getCurrentLocation(),
                     "tensor descriptor layouts (TritonGPU IR) are not supported");
    return {};
  }
  if (parser.parseGreater())
    return {};
  if (blockType.getEncoding()) {
    parser.emitError(loc, "tensor descriptor block must not carry an encoding");
    return {};
  }
  return TensorDescType::get(blockType);
}

void TensorDescType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape())
    printer << dim << "x";
  printer << getElementType() << ">";
}

//===----------------------------------------------------------------------===//
// Helpers used by TypesMatchWith and by clients
//===----------------------------------------------------------------------===//

Type mlir::triton::getPointeeType(Type type) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type)) {
    if (auto ptr = llvm::dyn_cast<PointerType>(tensor.getElementType()))
      return RankedTensorType::get(tensor.getShape(), ptr.getPointeeType(), tensor.getEncoding());
    return type;
  }
  if (auto ptr = llvm::dyn_cast<PointerType>(type))
    return ptr.getPointeeType();
  return type;
}

Type mlir::triton::getI1SameShape(Type type) {
  auto i1 = IntegerType::get(type.getContext(), 1);
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tensor.getShape(), i1, tensor.getEncoding());
  return i1;
}

Type mlir::triton::getPointerTypeSameShape(Type type) {
  if (auto tensor = llvm::dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tensor.getShape(), PointerType::get(tensor.getElementType()),
                                 tensor.getEncoding());
  return PointerType::get(type);
}

Type mlir::triton::getBasePointerType(Type blockPointerType) {
  auto ptr = llvm::dyn_cast<PointerType>(blockPointerType);
  if (!ptr)
    return blockPointerType;
  auto block = llvm::dyn_cast<RankedTensorType>(ptr.getPointeeType());
  if (!block)
    return blockPointerType;
  return PointerType::get(block.getElementType(), ptr.getAddressSpace());
}

bool mlir::triton::isTensorPointerType(Type type) {
  auto ptr = llvm::dyn_cast<PointerType>(type);
  return ptr && llvm::isa<RankedTensorType>(ptr.getPointeeType());
}
