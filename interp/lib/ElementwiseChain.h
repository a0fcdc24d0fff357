//===- ElementwiseChain.h - The instruction that runs an element-wise chain -*- C++ -*-===//
//
// A chain (Fusion.h) is lowered op by op as usual, aside; its root then emits one
// instruction holding those steps. It runs them in order, each a block kernel over the
// frame as if unfused, until ChainCompiler.h has compiled the chain, and from then on the
// compiled loop, which reads the chain's leaves and writes only its result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ChainCompiler.h"
#include "Fusion.h"
#include "Lowering.h"

#include <optional>

namespace ttinterp::interp {

/// The node computing op `name` in a chain, if a chain can hold it (Fusion.cpp asks, for f32
/// tensor ops; a select or a compare is one only with a tensor mask or f32 operands).
std::optional<ChainCode::Node::Op> chainNodeOp(llvm::StringRef name);

/// Emits (through L, at `chain`'s root) the one instruction that runs `steps`: the chain's
/// ops lowered aside, in block order, one instruction each. False, emitting nothing, when
/// the steps are not one per op. The arena was laid out for the chain running as one
/// instruction where its root runs, so the caller must then fail the lowering.
bool emitChain(const ElementwiseChain &chain, const std::vector<Instr> &steps, Lowerer &L);

} // namespace ttinterp::interp
