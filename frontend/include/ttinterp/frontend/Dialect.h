//===- Dialect.h - the tt dialect: types, enums, attributes, ops -----------===//
//
// Everything a client of the `tt` dialect needs. Namespace mlir::triton, class names as in
// Triton. Operands and attributes are reached with ODS accessors get<Name>() (the value or
// enum) and get<Name>Attr() (the attribute); optional operands return a null Value.
//
// Types
//   PointerType         getPointeeType() (scalar type, or RankedTensorType for a block
//                       pointer), getAddressSpace() (int, default 1)
//   TensorDescType      getBlockType() (RankedTensorType), getShape(), getElementType()
// Enums (enum class, values as in Triton; stringifyX / symbolizeX available)
//   CacheModifier NONE=1 CA CG WB CS WT CV; EvictionPolicy NORMAL=1 EVICT_FIRST EVICT_LAST;
//   PaddingOption PAD_ZERO=1 PAD_NAN; RMWOp AND=1 OR XOR ADD FADD MAX MIN UMAX UMIN XCHG;
//   MemSemantic RELAXED=1 ACQUIRE RELEASE ACQUIRE_RELEASE; MemSyncScope GPU=1 CTA SYSTEM;
//   ProgramIDDim X=0 Y Z; RoundingMode RTZ=0 RTNE; PropagateNan NONE=0 ALL=0xFFFF;
//   InputPrecision TF32=0 TF32x3 IEEE BF16x3 BF16x6; ScaleDotElemType E4M3=0 ... FP16;
//   DescriptorReduceKind ADD=1 MIN MAX INC DEC AND OR XOR
//
// Ops (op -> class: accessors)
//   tt.func               FuncOp: getSymName, getFunctionType, getBody, getArgAttrs...,
//                         isPublic/isPrivate (FunctionOpInterface, CallableOpInterface)
//   tt.return             ReturnOp: getSrcs
//   tt.call               CallOp: getCallee (StringRef), getOperands (CallOpInterface)
//   tt.get_program_id     GetProgramIdOp: getAxis (ProgramIDDim), getAxisAsInt
//   tt.get_num_programs   GetNumProgramsOp: getAxis, getAxisAsInt
//   tt.make_range         MakeRangeOp: getStart, getEnd (uint32_t; signed: getStartAttr().getInt())
//   tt.splat / unsplat    SplatOp, UnsplatOp: getSrc
//   tt.broadcast          BroadcastOp: getSrc
//   tt.expand_dims        ExpandDimsOp: getSrc, getAxis
//   tt.reshape            ReshapeOp: getSrc, getAllowReorder, getEfficientLayout
//   tt.trans              TransOp: getSrc, getOrder (ArrayRef<int32_t>; result dim i is
//                         source dim order[i])
//   tt.join               JoinOp: getLhs, getRhs (new minor dimension of size 2)
//   tt.split              SplitOp: getSrc, getOutLHS, getOutRHS
//   tt.cat                CatOp: getLhs, getRhs
//   tt.addptr             AddPtrOp: getPtr, getOffset
//   tt.advance            AdvanceOp: getPtr, getOffsets
//   tt.make_tensor_ptr    MakeTensorPtrOp: getBase, getShape, getStrides, getOffsets, getOrder
//   tt.load               LoadOp: getPtr, getMask, getOther, getBoundaryCheck, getPadding
//                         (optional<PaddingOption>), getCache, getEvict, getIsVolatile
//   tt.store              StoreOp: getPtr, getValue, getMask, getBoundaryCheck, getCache,
//                         getEvict
//   tt.atomic_rmw         AtomicRMWOp: getAtomicRmwOp (RMWOp), getPtr, getVal, getMask,
//                         getSem, getScope
//   tt.atomic_cas         AtomicCASOp: getPtr, getCmp, getVal, getSem, getScope
//   tt.dot                DotOp: getA, getB, getC, getD, getInputPrecision,
//                         getMaxNumImpreciseAcc
//   tt.dot_scaled         DotScaledOp: getA, getB, getC, getAScale, getBScale, getAElemType,
//                         getBElemType, getFastMath, getLhsKPack, getRhsKPack
//   tt.reduce             ReduceOp: getSrcs, getAxis, getCombineOp (Region&), getResult (range)
//   tt.reduce.return      ReduceReturnOp: getResult (operands)
//   tt.scan               ScanOp: getSrcs, getAxis, getReverse, getCombineOp
//   tt.scan.return        ScanReturnOp: getResult
//   tt.map_elementwise    MapElementwiseOp: getSrcs, getPack, getScalarOp (Region&), getResult
//   tt.map_elementwise.return MapElementwiseReturnOp: getResult
//   tt.bitcast            BitcastOp: getSrc
//   tt.fp_to_fp           FpToFpOp: getSrc, getRounding (optional<RoundingMode>)
//   tt.int_to_ptr         IntToPtrOp: getSrc
//   tt.ptr_to_int         PtrToIntOp: getSrc
//   tt.histogram          HistogramOp: getSrc, getMask
//   tt.gather             GatherOp: getSrc, getIndices, getAxis, getEfficientLayout
//   tt.print              PrintOp: getPrefix, getHex, getArgs, getIsSigned
//   tt.assert             AssertOp: getCondition, getMessage
//   tt.precise_sqrt       PreciseSqrtOp: getX
//   tt.precise_divf       PreciseDivFOp: getX, getY
//   tt.mulhiui            MulhiUIOp: getX, getY
//   tt.clampf             ClampFOp: getX, getMin, getMax, getPropagateNan
//   tt.extern_elementwise ExternElementwiseOp: getSrcs, getLibname, getLibpath, getSymbol,
//                         getPure
//   tt.elementwise_inline_asm ElementwiseInlineAsmOp: getAsmString, getConstraints, getPure,
//                         getPackedElement, getArgs
//   tt.make_tensor_descriptor MakeTensorDescOp: getBase, getShape, getStrides, getPadding
//   tt.descriptor_load    DescriptorLoadOp: getDesc, getIndices, getCache, getEvict
//   tt.descriptor_store   DescriptorStoreOp: getDesc, getSrc, getIndices
//   tt.descriptor_reduce  DescriptorReduceOp: getKind, getDesc, getSrc, getIndices
//   tt.descriptor_gather  DescriptorGatherOp: getDesc, getXOffsets, getYOffset
//   tt.descriptor_scatter DescriptorScatterOp: getDesc, getXOffsets, getYOffset, getSrc
//   ttg.barrier           gpu::BarrierOp (namespace mlir::triton::gpu): getAddrspace
//                         (tl.debug_barrier from Triton 3.8 on)
// Other dialects in TTIR: arith, math, scf, cf, ub (ub.poison), gpu (gpu.barrier),
// llvm (llvm.intr.assume). After loadTTIRFile/parseTTIR, the Triton 3.3 ops
// tt.experimental_descriptor_{load,store} and the 3.9 `cachePolicy` attribute have been
// rewritten to the forms above.
//
//===----------------------------------------------------------------------===//

#ifndef TTINTERP_FRONTEND_DIALECT_H
#define TTINTERP_FRONTEND_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::triton {

/// Side-effect resource for memory reached through tt pointers.
struct GlobalMemory : public SideEffects::Resource::Base<GlobalMemory> {
  StringRef getName() final { return "<GlobalMemory>"; }
};

} // namespace mlir::triton

#include "ttinterp/frontend/TritonEnums.h.inc"

#include "ttinterp/frontend/TritonDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "ttinterp/frontend/TritonTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ttinterp/frontend/TritonAttrs.h.inc"

namespace mlir::triton {

/// Pointee of a pointer, or tensor of pointees (same shape) of a tensor of pointers.
/// Other types are returned unchanged (so that the verifier reports them).
Type getPointeeType(Type type);
/// i1, or tensor of i1 with the shape of `type` when it is a tensor.
Type getI1SameShape(Type type);
/// !tt.ptr<T> for T, tensor<S x !tt.ptr<T>> for tensor<S x T>.
Type getPointerTypeSameShape(Type type);
/// For a block pointer !tt.ptr<tensor<S x T>, as>: the base pointer type !tt.ptr<T, as>.
Type getBasePointerType(Type blockPointerType);
/// True for !tt.ptr<tensor<...>>.
bool isTensorPointerType(Type type);

} // namespace mlir::triton

#define GET_OP_CLASSES
#include "ttinterp/frontend/TritonOps.h.inc"

#include "ttinterp/frontend/TritonGPUEnums.h.inc"

#include "ttinterp/frontend/TritonGPUDialect.h.inc"

#define GET_OP_CLASSES
#include "ttinterp/frontend/TritonGPUOps.h.inc"

#endif // TTINTERP_FRONTEND_DIALECT_H
