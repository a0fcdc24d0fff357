//===- TritonAttrs.td - tt enums and attributes -------------*- tablegen -*-===//
//
// Enum values match Triton's, because an attribute dictionary prints an enum as its
// integer (`padding = 2 : i32`). Inside an op's custom syntax they print as keywords.
//
//===----------------------------------------------------------------------------===//

#ifndef TTINTERP_TRITON_ATTRS_TD
#define TTINTERP_TRITON_ATTRS_TD

include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"
include "ttinterp/frontend/TritonDialect.td"

class TT_I32Enum<string name, list<I32EnumAttrCase> cases> : I32EnumAttr<name, "", cases> {
  let cppNamespace = "::mlir::triton";
}

// Cache operator of a load or store (`.ca`, `.cg`, ... in PTX).
def TT_CacheModifierAttr : TT_I32Enum<"CacheModifier", [
  I32EnumAttrCase<"NONE", 1, "none">, I32EnumAttrCase<"CA", 2, "ca">,
  I32EnumAttrCase<"CG", 3, "cg">,     I32EnumAttrCase<"WB", 4, "wb">,
  I32EnumAttrCase<"CS", 5, "cs">,     I32EnumAttrCase<"WT", 6, "wt">,
  I32EnumAttrCase<"CV", 7, "cv">]>;

def TT_EvictionPolicyAttr : TT_I32Enum<"EvictionPolicy", [
  I32EnumAttrCase<"NORMAL", 1, "evict_normal">,
  I32EnumAttrCase<"EVICT_FIRST", 2, "evict_first">,
  I32EnumAttrCase<"EVICT_LAST", 3, "evict_last">]>;

// Value read for out-of-bounds elements of a block-pointer load.
def TT_PaddingOptionAttr : TT_I32Enum<"PaddingOption", [
  I32EnumAttrCase<"PAD_ZERO", 1, "zero">,
  I32EnumAttrCase<"PAD_NAN", 2, "nan">]>;

def TT_AtomicRMWAttr : TT_I32Enum<"RMWOp", [
  I32EnumAttrCase<"AND", 1, "and">,   I32EnumAttrCase<"OR", 2, "or">,
  I32EnumAttrCase<"XOR", 3, "xor">,   I32EnumAttrCase<"ADD", 4, "add">,
  I32EnumAttrCase<"FADD", 5, "fadd">, I32EnumAttrCase<"MAX", 6, "max">,
  I32EnumAttrCase<"MIN", 7, "min">,   I32EnumAttrCase<"UMAX", 8, "umax">,
  I32EnumAttrCase<"UMIN", 9, "umin">, I32EnumAttrCase<"XCHG", 10, "exch">]>;

def TT_MemSemanticAttr : TT_I32Enum<"MemSemantic", [
  I32EnumAttrCase<"RELAXED", 1, "relaxed">,
  I32EnumAttrCase<"ACQUIRE", 2, "acquire">,
  I32EnumAttrCase<"RELEASE", 3, "release">,
  I32EnumAttrCase<"ACQUIRE_RELEASE", 4, "acq_rel">]>;

def TT_MemSyncScopeAttr : TT_I32Enum<"MemSyncScope", [
  I32EnumAttrCase<"GPU", 1, "gpu">,
  I32EnumAttrCase<"CTA", 2, "cta">,
  I32EnumAttrCase<"SYSTEM", 3, "sys">]>;

def TT_ProgramDim : TT_I32Enum<"ProgramIDDim", [
  I32EnumAttrCase<"X", 0, "x">, I32EnumAttrCase<"Y", 1, "y">, I32EnumAttrCase<"Z", 2, "z">]>;

def TT_RoundingModeAttr : TT_I32Enum<"RoundingMode", [
  I32EnumAttrCase<"RTZ", 0, "rtz">,
  I32EnumAttrCase<"RTNE", 1, "rtne">]>;

// Whether clampf propagates NaN operands (`all`) or not (`none`).
def TT_PropagateNanAttr : TT_I32Enum<"PropagateNan", [
  I32EnumAttrCase<"NONE", 0, "none">,
  I32EnumAttrCase<"ALL", 0xFFFF, "all">]>;

// How tt.dot treats f32 inputs: tf32 rounds them to tf32 first; ieee is exact f32.
def TT_InputPrecisionAttr : TT_I32Enum<"InputPrecision", [
  I32EnumAttrCase<"TF32", 0, "tf32">,
  I32EnumAttrCase<"TF32x3", 1, "tf32x3">,
  I32EnumAttrCase<"IEEE", 2, "ieee">,
  I32EnumAttrCase<"BF16x3", 3, "bf16x3">,
  I32EnumAttrCase<"BF16x6", 4, "bf16x6">]>;

// Element format of a tt.dot_scaled operand.
def TT_ScaleDotElemTypeAttr : TT_I32Enum<"ScaleDotElemType", [
  I32EnumAttrCase<"E4M3", 0, "e4m3">, I32EnumAttrCase<"E5M2", 1, "e5m2">,
  I32EnumAttrCase<"E2M3", 2, "e2m3">, I32EnumAttrCase<"E3M2", 3, "e3m2">,
  I32EnumAttrCase<"E2M1", 4, "e2m1">, I32EnumAttrCase<"BF16", 5, "bf16">,
  I32EnumAttrCase<"FP16", 6, "fp16">]>;

// Reduction applied by tt.descriptor_reduce.
def TT_DescriptorReduceKindAttr : TT_I32Enum<"DescriptorReduceKind", [
  I32EnumAttrCase<"ADD", 1, "add">, I32EnumAttrCase<"MIN", 2, "min">,
  I32EnumAttrCase<"MAX", 3, "max">, I32EnumAttrCase<"INC", 4, "inc">,
  I32EnumAttrCase<"DEC", 5, "dec">, I32EnumAttrCase<"AND", 6, "and">,
  I32EnumAttrCase<"OR", 7, "or">,   I32EnumAttrCase<"XOR", 8, "xor">]>;

// Triton 3.9 spells a load's or store's cache hints as one attribute:
//   {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = evict_normal>}
// The loader rewrites it into the `cache`/`evict` attributes of the op, so the
// interpreter and the structural hash see one form only.
def TT_CachePolicyAttr : AttrDef<Triton_Dialect, "CachePolicy"> {
  let mnemonic = "cache_policy";
  let summary = "cache modifier and eviction policy of one memory access (Triton 3.9 form)";
  let parameters = (ins EnumParameter<TT_CacheModifierAttr>:$cacheModifier,
                        EnumParameter<TT_EvictionPolicyAttr>:$evictionPolicy);
  let assemblyFormat = [{
    `<` `cache_modifier` `=` $cacheModifier `,` `eviction_policy` `=` $evictionPolicy `>`
  }];
}

#endif // TTINTERP_TRITON_ATTRS_TD
