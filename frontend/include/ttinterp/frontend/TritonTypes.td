//===- TritonTypes.td - tt types and type constraints ------*- tablegen -*-===//

#ifndef TTINTERP_TRITON_TYPES_TD
#define TTINTERP_TRITON_TYPES_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "ttinterp/frontend/TritonDialect.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// `!tt.ptr<f32>`, `!tt.ptr<f16, 3>` (address space printed only when not 1), and the
// block pointer `!tt.ptr<tensor<128x32xf16>>` made by tt.make_tensor_ptr. Triton 3.9 names
// the address space of a `tl.const` pointer: `!tt.ptr<f32, "constant">` (Types.cpp).
def TT_PointerType : TypeDef<Triton_Dialect, "Pointer"> {
  let mnemonic = "ptr";
  let summary = "pointer to a scalar (or, for block pointers, to a tensor block)";
  let parameters = (ins "::mlir::Type":$pointeeType,
                        DefaultValuedParameter<"int", "1">:$addressSpace);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$pointeeType,
                                        CArg<"int", "1">:$addressSpace), [{
      return $_get(pointeeType.getContext(), pointeeType, addressSpace);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The address space a `tl.const` pointer is in (printed `"constant"`, as Triton does).
    static constexpr int kConstantAddressSpace = 4;
  }];
}

// A tensor descriptor of one block. Parses both `!tt.tensordesc<tensor<128x64xf16>>`
// (Triton <= 3.7) and `!tt.tensordesc<128x64xf16>` (3.8+); prints the latter.
def TT_TensorDescType : TypeDef<Triton_Dialect, "TensorDesc"> {
  let mnemonic = "tensordesc";
  let summary = "descriptor of a strided global tensor, accessed one block at a time";
  let parameters = (ins "::mlir::RankedTensorType":$blockType);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::RankedTensorType":$blockType), [{
      return $_get(blockType.getContext(), blockType);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Shape of the block one load or store moves.
    ::llvm::ArrayRef<int64_t> getShape() const { return getBlockType().getShape(); }
    /// Element type of the described tensor.
    ::mlir::Type getElementType() const { return getBlockType().getElementType(); }
  }];
}

//===----------------------------------------------------------------------===//
// Constraints (loosely typed on purpose: element types the interpreter does not
// support are rejected there, with its own message)
//===----------------------------------------------------------------------===//

def TT_Float : AnyTypeOf<[AnyFloat], "floating-point">;
def TT_FloatTensor : RankedTensorOf<[AnyFloat]>;
def TT_FloatLike : AnyTypeOf<[TT_Float, TT_FloatTensor]>;

def TT_Int : AnyTypeOf<[AnyInteger], "integer">;
def TT_IntTensor : RankedTensorOf<[AnyInteger]>;
def TT_IntLike : AnyTypeOf<[TT_Int, TT_IntTensor]>;

def TT_BoolTensor : RankedTensorOf<[I1]>;
def TT_BoolLike : AnyTypeOf<[I1, TT_BoolTensor]>;

def TT_I64Tensor : RankedTensorOf<[I64]>;
def TT_I64Like : AnyTypeOf<[I64, TT_I64Tensor]>;

// A `!tt.ptr<...>` of any pointee (scalar pointer or block pointer).
def TT_Ptr : DialectType<Triton_Dialect,
    CPred<"::llvm::isa<::mlir::triton::PointerType>($_self)">,
    "ptr", "::mlir::triton::PointerType">;

// A block pointer: `!tt.ptr<tensor<...>>`.
def TT_TensorPtr : DialectType<Triton_Dialect,
    And<[CPred<"::llvm::isa<::mlir::triton::PointerType>($_self)">,
         CPred<"::llvm::isa<::mlir::RankedTensorType>("
               "::llvm::cast<::mlir::triton::PointerType>($_self).getPointeeType())">]>,
    "block pointer", "::mlir::triton::PointerType">;

def TT_PtrTensor : RankedTensorOf<[TT_Ptr]>;
def TT_PtrLike : AnyTypeOf<[TT_Ptr, TT_PtrTensor]>;

def TT_FpIntTensor : RankedTensorOf<[AnyFloat, AnyInteger]>;
def TT_Tensor : RankedTensorOf<[AnyFloat, AnyInteger, TT_Ptr]>;
def TT_Type : AnyTypeOf<[TT_FloatLike, TT_IntLike, TT_PtrLike]>;

#endif // TTINTERP_TRITON_TYPES_TD
