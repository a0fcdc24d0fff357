//===- TritonDialect.td - the tt dialect and its op base class -*- tablegen -*-===//
//
// ttinterp's own definition of Triton's `tt` dialect, written to parse the TTIR that
// Triton 3.3 to 3.8 prints. Only the dialect record and the op base class live here.
//
//===----------------------------------------------------------------------------===//

#ifndef TTINTERP_TRITON_DIALECT_TD
#define TTINTERP_TRITON_DIALECT_TD

include "mlir/IR/OpBase.td"

def Triton_Dialect : Dialect {
  let name = "tt";
  let cppNamespace = "::mlir::triton";
  let summary = "Triton IR (TTIR) as printed by Triton's front end";
  let description = [{
    Block-level SPMD ops: every value of tensor type is a whole block held by one program
    instance. Unregistered `tt.*` hint attributes (tt.divisibility, tt.contiguity, ...) are
    accepted on ops, functions and function arguments.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

// Every tt op derives from this.
class TT_Op<string mnemonic, list<Trait> traits = []> : Op<Triton_Dialect, mnemonic, traits>;

// The memory a kernel reads and writes through pointers (side-effect resource).
def TT_GlobalMemory : Resource<"::mlir::triton::GlobalMemory">;

#endif // TTINTERP_TRITON_DIALECT_TD
