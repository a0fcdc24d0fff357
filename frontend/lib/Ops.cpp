//===- Ops.cpp - tt op verifiers, tt.func syntax, tt.call symbol check -----===//
//
// Verifiers reject malformed TTIR at load time with the op's location. They check what
// the interpreter relies on (shapes, ranks, axes, counts); element-type support is the
// interpreter's business.
//
//===----------------------------------------------------------------------===//

#include "ttinterp/frontend/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace mlir;
using namespace mlir::triton;

#define GET_OP_CLASSES
#include "ttinterp/frontend/TritonOps.cpp.inc"

namespace {

int64_t numElements(ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

/// Bit width of a scalar element; pointers count as 64 bits. 0 when unknown.
unsigned elementBitWidth(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (llvm::isa<PointerType>(element))
    return 64;
  if (element.isIntOrFloat())
    return element.getIntOrFloatBitWidth();
  return 0;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Checks a dimension list attribute against a rank (for boundaryCheck).
LogicalResult verifyDims(Operation *op, ArrayRef<int32_t> dims, int64_t rank, StringRef what) {
  for (int32_t d : dims)
    if (d < 0 || d >= rank)
      return op->emitOpError() << what << " dimension " << d << " is out of range for rank "
                               << rank;
  return success();
}

/// Shared check of a memory access through a block pointer or a pointer tensor.
LogicalResult verifyAccess(Operation *op, Type ptrType, Value mask, ArrayRef<int32_t> boundaryCheck,
                           bool hasOther) {
  if (isTensorPointerType(ptrType)) {
    if (mask || hasOther)
      return op->emitOpError("takes no mask or other value with a block pointer");
    auto block = llvm::cast<RankedTensorType>(llvm::cast<PointerType>(ptrType).getPointeeType());
    return verifyDims(op, boundaryCheck, block.getRank(), "boundaryCheck");
  }
  if (!boundaryCheck.empty())
    return op->emitOpError("boundaryCheck needs a block pointer");
  return success();
}

/// The region of a tt.reduce / tt.scan: 2N scalar arguments, N yielded scalars.
LogicalResult verifyCombineRegion(Operation *op, Region &region, ArrayRef<Type> elementTypes) {
  if (region.empty())
    return op->emitOpError("needs a combine region");
  Block &block = region.front();
  size_t n = elementTypes.size();
  if (block.getNumArguments() != 2 * n)
    return op->emitOpError() << "combine region must take " << 2 * n << " arguments, has "
                             << block.getNumArguments();
  for (size_t i = 0; i < 2 * n; ++i)
    if (block.getArgument(i).getType() != elementTypes[i % n])
      return op->emitOpError() << "combine region argument #" << i << " must be "
                               << elementTypes[i % n] << ", is " << block.getArgument(i).getType();
  Operation *terminator = block.empty() ? nullptr : &block.back();
  if (!terminator || terminator->getNumOperands() != n)
    return op->emitOpError() << "combine region must yield " << n << " values";
  for (size_t i = 0; i < n; ++i)
    if (terminator->getOperand(i).getType() != elementTypes[i])
      return op->emitOpError() << "combine region yields " << terminator->getOperand(i).getType()
                               << " at #" << i << ", expected " << elementTypes[i];
  return success();
}

/// Operands of a tt.reduce / tt.scan: non-empty, same shape, axis in range.
LogicalResult verifyReduceLikeOperands(Operation *op, ValueRange srcs, int64_t axis,
                                       SmallVectorImpl<Type> &elementTypes) {
  if (srcs.empty())
    return op->emitOpError("needs at least one operand");
  auto first = llvm::cast<RankedTensorType>(srcs.front().getType());
  for (Value src : srcs) {
    auto t = llvm::cast<RankedTensorType>(src.getType());
    if (t.getShape() != first.getShape())
      return op->emitOpError("operands must all have the same shape");
    elementTypes.push_back(t.getElementType());
  }
  if (axis < 0 || axis >= first.getRank())
    return op->emitOpError() << "axis " << axis << " is out of range for rank " << first.getRank();
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

LogicalResult BitcastOp::verify() {
  unsigned from = elementBitWidth(getSrc().getType());
  unsigned to = elementBitWidth(getType());
  if (from != to)
    return emitOpError() << "cannot bitcast " << from << "-bit elements to " << to
                         << "-bit elements";
  return success();
}

LogicalResult FpToFpOp::verify() {
  unsigned from = elementBitWidth(getSrc().getType());
  unsigned to = elementBitWidth(getType());
  if (to < from && !getRounding())
    return emitOpError("narrowing conversion needs a rounding mode");
  if (to > from && getRounding())
    return emitOpError("widening conversion takes no rounding mode");
  return success();
}

//===----------------------------------------------------------------------===//
// Pointers and memory
//===----------------------------------------------------------------------===//

LogicalResult AdvanceOp::verify() {
  auto block =
      llvm::cast<RankedTensorType>(llvm::cast<PointerType>(getPtr().getType()).getPointeeType());
  if (static_cast<int64_t>(getOffsets().size()) != block.getRank())
    return emitOpError() << "needs " << block.getRank() << " offsets, has " << getOffsets().size();
  return success();
}

LogicalResult LoadOp::verify() {
  if (getPadding() && !isTensorPointerType(getPtr().getType()))
    return emitOpError("padding needs a block pointer");
  return verifyAccess(*this, getPtr().getType(), getMask(), getBoundaryCheck(), !!getOther());
}

LogicalResult StoreOp::verify() {
  return verifyAccess(*this, getPtr().getType(), getMask(), getBoundaryCheck(), false);
}

LogicalResult MakeTensorPtrOp::verify() {
  auto block = llvm::cast<RankedTensorType>(llvm::cast<PointerType>(getType()).getPointeeType());
  size_t rank = block.getRank();
  if (getShape().size() != rank || getStrides().size() != rank || getOffsets().size() != rank)
    return emitOpError() << "needs " << rank << " shape, stride and offset values for a rank-"
                         << rank << " block";
  if (getOrder().size() != rank)
    return emitOpError() << "order must have " << rank << " entries";
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

LogicalResult UnsplatOp::verify() {
  if (numElements(getSrc().getType().getShape()) != 1)
    return emitOpError("source must have exactly one element");
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  ArrayRef<int64_t> src = getSrc().getType().getShape();
  int64_t axis = getAxis();
  if (axis < 0 || axis > static_cast<int64_t>(src.size()))
    return emitOpError() << "axis " << axis << " is out of range for rank " << src.size();
  SmallVector<int64_t> expected(src.begin(), src.end());
  expected.insert(expected.begin() + axis, 1);
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must be " << shapeString(expected) << ", is "
                         << shapeString(getType().getShape());
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (numElements(getSrc().getType().getShape()) != numElements(getType().getShape()))
    return emitOpError() << "cannot reshape " << shapeString(getSrc().getType().getShape())
                         << " to " << shapeString(getType().getShape())
                         << ": element counts differ";
  return success();
}

LogicalResult BroadcastOp::verify() {
  ArrayRef<int64_t> src = getSrc().getType().getShape();
  ArrayRef<int64_t> dst = getType().getShape();
  if (src.size() != dst.size())
    return emitOpError() << "source and result must have the same rank (" << src.size() << " vs "
                         << dst.size() << ")";
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] != dst[i] && src[i] != 1)
      return emitOpError() << "cannot broadcast dimension " << i << " of size " << src[i] << " to "
                           << dst[i];
  return success();
}

LogicalResult CatOp::verify() {
  auto src = getLhs().getType();
  if (src.getRank() != getType().getRank())
    return emitOpError("operands and result must have the same rank");
  if (numElements(getType().getShape()) != 2 * numElements(src.getShape()))
    return emitOpError("result must have twice as many elements as each operand");
  return success();
}

LogicalResult JoinOp::verify() {
  SmallVector<int64_t> expected(getLhs().getType().getShape());
  expected.push_back(2);
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must be " << shapeString(expected);
  return success();
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> src = getSrc().getType().getShape();
  if (src.empty() || src.back() != 2)
    return emitOpError("source's last dimension must have size 2");
  if (getOutLHS().getType().getShape() != src.drop_back())
    return emitOpError() << "result shape must be " << shapeString(src.drop_back());
  if (getOutLHS().getType().getElementType() != getSrc().getType().getElementType())
    return emitOpError("results must have the element type of the source");
  return success();
}

LogicalResult TransOp::verify() {
  ArrayRef<int64_t> src = getSrc().getType().getShape();
  ArrayRef<int32_t> order = getOrder();
  if (order.size() != src.size())
    return emitOpError() << "order must have " << src.size() << " entries";
  SmallVector<bool> seen(src.size(), false);
  SmallVector<int64_t> expected;
  for (int32_t d : order) {
    if (d < 0 || d >= static_cast<int32_t>(src.size()) || seen[d])
      return emitOpError("order must be a permutation of the source dimensions");
    seen[d] = true;
    expected.push_back(src[d]);
  }
  if (getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must be " << shapeString(expected);
  return success();
}

LogicalResult MakeRangeOp::verify() {
  auto type = getType();
  int64_t start = getStartAttr().getInt();
  int64_t end = getEndAttr().getInt();
  if (type.getRank() != 1 || !type.getElementType().isInteger(32))
    return emitOpError("result must be a 1-D tensor of i32");
  if (end <= start)
    return emitOpError() << "end (" << end << ") must be greater than start (" << start << ")";
  if (type.getShape()[0] != end - start)
    return emitOpError() << "result must have " << end - start << " elements";
  return success();
}

//===----------------------------------------------------------------------===//
// Dot, reduce, scan
//===----------------------------------------------------------------------===//

LogicalResult DotOp::verify() {
  ArrayRef<int64_t> a = getA().getType().getShape();
  ArrayRef<int64_t> b = getB().getType().getShape();
  ArrayRef<int64_t> d = getD().getType().getShape();
  if (a.size() != b.size() || a.size() != d.size() || a.size() < 2 || a.size() > 3)
    return emitOpError("operands must all be 2-D (or all 3-D, batched)");
  size_t r = a.size();
  if (r == 3 && (a[0] != b[0] || a[0] != d[0]))
    return emitOpError("batch dimensions differ");
  if (a[r - 1] != b[r - 2])
    return emitOpError() << "inner dimensions differ: a is " << shapeString(a) << ", b is "
                         << shapeString(b);
  if (d[r - 2] != a[r - 2] || d[r - 1] != b[r - 1])
    return emitOpError() << "result shape " << shapeString(d) << " does not match a "
                         << shapeString(a) << " times b " << shapeString(b);
  return success();
}

LogicalResult ReduceOp::verify() {
  SmallVector<Type> elementTypes;
  if (failed(verifyReduceLikeOperands(*this, getSrcs(), getAxis(), elementTypes)))
    return failure();
  if (getNumResults() != getSrcs().size())
    return emitOpError() << "must have one result per operand (" << getSrcs().size() << ")";
  auto srcType = llvm::cast<RankedTensorType>(getSrcs().front().getType());
  SmallVector<int64_t> shape(srcType.getShape());
  shape.erase(shape.begin() + getAxis());
  for (auto [i, result] : llvm::enumerate(getResult())) {
    Type expected =
        shape.empty() ? elementTypes[i] : Type(RankedTensorType::get(shape, elementTypes[i]));
    if (result.getType() != expected)
      return emitOpError() << "result #" << i << " must be " << expected << ", is "
                           << result.getType();
  }
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  SmallVector<Type> elementTypes;
  for (Value src : getSrcs())
    elementTypes.push_back(llvm::cast<RankedTensorType>(src.getType()).getElementType());
  return verifyCombineRegion(*this, getCombineOp(), elementTypes);
}

LogicalResult ScanOp::verify() {
  SmallVector<Type> elementTypes;
  if (failed(verifyReduceLikeOperands(*this, getSrcs(), getAxis(), elementTypes)))
    return failure();
  if (getNumResults() != getSrcs().size())
    return emitOpError() << "must have one result per operand (" << getSrcs().size() << ")";
  for (auto [i, result] : llvm::enumerate(getResult()))
    if (result.getType() != getSrcs()[i].getType())
      return emitOpError() << "result #" << i << " must have the type of operand #" << i;
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  SmallVector<Type> elementTypes;
  for (Value src : getSrcs())
    elementTypes.push_back(llvm::cast<RankedTensorType>(src.getType()).getElementType());
  return verifyCombineRegion(*this, getCombineOp(), elementTypes);
}

LogicalResult MapElementwiseOp::verify() {
  if (getSrcs().empty())
    return emitOpError("needs at least one operand");
  // Triton's own rule: the GPU hands a thread's registers to the region in groups.
  if (getPack() < 1 || !llvm::isPowerOf2_32(getPack()))
    return emitOpError() << "pack must be a power of 2, is " << getPack();
  auto shape = llvm::cast<RankedTensorType>(getSrcs().front().getType()).getShape();
  for (Value v : getOperands())
    if (llvm::cast<RankedTensorType>(v.getType()).getShape() != shape)
      return emitOpError("operands must all have the same shape");
  for (Value v : getResults())
    if (llvm::cast<RankedTensorType>(v.getType()).getShape() != shape)
      return emitOpError("results must have the operands' shape");
  return success();
}

LogicalResult MapElementwiseOp::verifyRegions() {
  Region &region = getScalarOp();
  if (region.empty())
    return emitOpError("needs a scalar region");
  const unsigned pack = getPack();
  // Operand-major: each element type `pack` times in a row (and so the results).
  auto repeated = [pack](auto values) {
    SmallVector<Type> types;
    for (Value v : values)
      types.append(pack, llvm::cast<RankedTensorType>(v.getType()).getElementType());
    return types;
  };
  SmallVector<Type> arguments = repeated(getSrcs()), returned = repeated(getResults());
  if (llvm::to_vector(region.front().getArgumentTypes()) != arguments)
    return emitOpError() << "scalar region must take " << arguments.size()
                         << " arguments of the operands' element types, pack at a time";
  WalkResult walk = region.walk([&](Operation *op) {
    // As Triton: a scalar store would lose the tensor's masking.
    auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
    if (effects && effects.hasEffect<MemoryEffects::Write>()) {
      op->emitOpError("cannot write memory inside tt.map_elementwise");
      return WalkResult::interrupt();
    }
    if (llvm::isa<MapElementwiseReturnOp>(op) &&
        llvm::to_vector(op->getOperandTypes()) != returned) {
      op->emitOpError() << "must return " << returned.size()
                        << " values of the results' element types, pack at a time";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Histogram, gather
//===----------------------------------------------------------------------===//

LogicalResult HistogramOp::verify() {
  if (getSrc().getType().getRank() != 1 || getType().getRank() != 1)
    return emitOpError("source and result must be 1-D");
  return success();
}

LogicalResult GatherOp::verify() {
  auto src = getSrc().getType();
  auto idx = getIndices().getType();
  int64_t axis = getAxis();
  if (src.getRank() != idx.getRank())
    return emitOpError("source and indices must have the same rank");
  if (axis < 0 || axis >= src.getRank())
    return emitOpError() << "axis " << axis << " is out of range for rank " << src.getRank();
  if (getType().getShape() != idx.getShape())
    return emitOpError("result must have the shape of the indices");
  if (getType().getElementType() != src.getElementType())
    return emitOpError("result must have the element type of the source");
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor descriptors
//===----------------------------------------------------------------------===//

namespace {

LogicalResult verifyDescBlock(Operation *op, TensorDescType desc, Type tensorType,
                              size_t numIndices, StringRef what) {
  auto block = desc.getBlockType();
  if (numIndices != static_cast<size_t>(block.getRank()))
    return op->emitOpError() << "needs " << block.getRank() << " indices, has " << numIndices;
  auto tensor = llvm::cast<RankedTensorType>(tensorType);
  if (numElements(tensor.getShape()) != numElements(block.getShape()) ||
      elementBitWidth(tensor) != elementBitWidth(block))
    return op->emitOpError() << what << " type " << tensorType
                             << " does not match the descriptor block " << block;
  return success();
}

} // namespace

LogicalResult MakeTensorDescOp::verify() {
  auto block = getType().getBlockType();
  size_t rank = block.getRank();
  if (getShape().size() != rank || getStrides().size() != rank)
    return emitOpError() << "needs " << rank << " shape and stride values for a rank-" << rank
                         << " block";
  if (elementBitWidth(getBase().getType().getPointeeType()) != elementBitWidth(block))
    return emitOpError("base pointee and block element types differ in width");
  return success();
}

LogicalResult DescriptorLoadOp::verify() {
  return verifyDescBlock(*this, getDesc().getType(), getType(), getIndices().size(), "result");
}

LogicalResult DescriptorStoreOp::verify() {
  return verifyDescBlock(*this, getDesc().getType(), getSrc().getType(), getIndices().size(),
                         "source");
}

LogicalResult DescriptorReduceOp::verify() {
  return verifyDescBlock(*this, getDesc().getType(), getSrc().getType(), getIndices().size(),
                         "source");
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &builder, ArrayRef<Type> inputs, ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag,
                      std::string &) { return builder.getFunctionType(inputs, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false, getFunctionTypeAttrName(result.name), buildType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(printer, *this, /*isVariadic=*/false,
                                           getFunctionTypeAttrName(), getArgAttrsAttrName(),
                                           getResAttrsAttrName());
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee = symbolTable.lookupNearestSymbolFrom<FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "calls '" << getCallee() << "', which is not a tt.func in this module";
  FunctionType type = callee.getFunctionType();
  if (type.getNumInputs() != getNumOperands())
    return emitOpError() << "passes " << getNumOperands() << " arguments to '" << getCallee()
                         << "', which takes " << type.getNumInputs();
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (getOperand(i).getType() != type.getInput(i))
      return emitOpError() << "argument #" << i << " has type " << getOperand(i).getType()
                           << ", callee expects " << type.getInput(i);
  if (type.getNumResults() != getNumResults())
    return emitOpError() << "expects " << getNumResults() << " results, callee returns "
                         << type.getNumResults();
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (getResult(i).getType() != type.getResult(i))
      return emitOpError() << "result #" << i << " has type " << getResult(i).getType()
                           << ", callee returns " << type.getResult(i);
  return success();
}

LogicalResult ReturnOp::verify() {
  auto func = (*this)->getParentOfType<FuncOp>();
  ArrayRef<Type> results = func.getFunctionType().getResults();
  if (getNumOperands() != results.size())
    return emitOpError() << "returns " << getNumOperands() << " values, but '" << func.getSymName()
                         << "' returns " << results.size();
  for (unsigned i = 0; i < results.size(); ++i)
    if (getOperand(i).getType() != results[i])
      return emitOpError() << "value #" << i << " has type " << getOperand(i).getType()
                           << ", function returns " << results[i];
  return success();
}
