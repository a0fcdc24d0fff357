//===- TritonGPUOps.td - the one ttg op found in TTIR --------*- tablegen -*-===//
//
// From Triton 3.8 on, tl.debug_barrier() prints as `ttg.barrier all` in TTIR (earlier
// versions print `gpu.barrier`). The TritonGPU dialect is otherwise a later compiler
// stage, so only this op is defined here.
//
//===----------------------------------------------------------------------------===//

#ifndef TTINTERP_TRITONGPU_OPS_TD
#define TTINTERP_TRITONGPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def TritonGPU_Dialect : Dialect {
  let name = "ttg";
  let cppNamespace = "::mlir::triton::gpu";
  let summary = "the part of TritonGPU that appears in TTIR (ttg.barrier)";
}

// Memory domains a barrier orders. Triton defines this as a bit mask (`local|global_read`);
// TTIR only ever shows `all` (tl.debug_barrier), so the single domains and `all` are
// accepted and combinations are not.
def TTG_AddrSpace : I32EnumAttr<"AddrSpace", "", [
    I32EnumAttrCase<"None", 0x00, "none">,
    I32EnumAttrCase<"Local", 0x01, "local">,
    I32EnumAttrCase<"GlobalRead", 0x02, "global_read">,
    I32EnumAttrCase<"GlobalWrite", 0x04, "global_write">,
    I32EnumAttrCase<"TensorRead", 0x08, "tensor_read">,
    I32EnumAttrCase<"TensorWrite", 0x10, "tensor_write">,
    I32EnumAttrCase<"All", 0x1F, "all">]> {
  let cppNamespace = "::mlir::triton::gpu";
}

def TTG_BarrierOp : Op<TritonGPU_Dialect, "barrier", []> {
  let summary = "CTA-wide barrier (all program threads reach it; orders the given memory)";
  let arguments = (ins TTG_AddrSpace:$addrspace);
  let assemblyFormat = "$addrspace attr-dict";
}

#endif // TTINTERP_TRITONGPU_OPS_TD
