//===- ChainCompiler.h - Element-wise chains compiled to one machine-code loop -*- C++ -*-===//
//
// Interpreted, `y = (x - mean) * rstd * w + b` is four passes over four blocks: each op
// reads its operands from the frame and writes its result back, at L1's load/store rate.
// Compiled, it is one loop that keeps every intermediate in a vector register. Chains
// (Fusion.h finds them) start interpreted; once a chain has run enough lanes to repay a
// compilation (a few milliseconds), a background thread builds it as LLVM IR and compiles
// it with ORC's LLJIT for the host CPU, and the chain switches to the machine code at its
// next run. Test suites and fuzzers, whose kernels run a few thousand lanes, never wait
// for a compiler; a benchmark or a large launch gets the loop.
//
// Exactness: the IR holds the ops as they are, IEEE and correctly rounded, with no
// fast-math flags and no multiply-add contraction (the backend is told so), so every lane
// gets the bits the interpreter's kernels give it, on every ISA (docs/semantics.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/interp/Interpreter.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ttinterp::interp {

/// What a chain computes, lane by lane: f32 operations on its leaves (the values it reads
/// from outside) and on the results of earlier nodes; the last node is its result.
struct ChainCode {
  struct Leaf {
    enum Kind : uint8_t {
      Tensor,   ///< an f32 block, lane i at element i
      Scalar,   ///< an f32 scalar standing for a splat, read once
      Mask,     ///< an i1 block (a byte per lane, 0 or 1)
      Constant, ///< a splat constant, `constant` in every lane
      Int,      ///< an i32 scalar read once: a RangeMask's start or bound
    } kind = Tensor;
    float constant = 0;
  };
  /// Each op as ttinterp's block kernel defines it (ArithFunctors.h, MathOps.cpp): the IEEE
  /// operations, maxNum/minNum ordering -0 below +0, maximum/minimum giving the quiet NaN,
  /// the transcendentals by the very vector function simd::map calls.
  struct Node {
    enum Op : uint8_t {
      Add,
      Sub,
      Mul,
      Div,
      Neg,
      Select,
      Compare, ///< arith.cmpf, `variant` its CmpFPredicate number: a mask
      MaxNum,
      MinNum,
      Maximum,
      Minimum,
      Sqrt,
      RSqrt,
      Abs,
      Widen,     ///< arith.extf from bf16 or f16: their blocks hold floats already
      RoundBF16, ///< arith.truncf to bf16: to nearest even, NaN quiet (Numeric.h)
      Math,      ///< a transcendental, `variant` its simd::MathFn
      Floor,
      Ceil,
      Trunc,
      Round,     ///< halves away from zero (std::round)
      RoundEven, ///< halves to even (std::nearbyint in the default mode)
      CopySign,
      Fma, ///< one rounding (std::fma): operands (a, b, c) for a * b + c
      /// A fused range compare (Fusion.h's RangeCompare), the mask of a `tl.where(offs < n,
      /// ...)`: lane i is i32(start + rangeStart + i) < bound. Operands (start, bound: Int
      /// leaves; rangeStart itself); `variant` kRangeUnsigned and kRangeHasStart (without a
      /// start, 0 and operands[0] unused).
      RangeMask,
    } op = Add;
    static constexpr uint8_t kRangeUnsigned = 1, kRangeHasStart = 2;
    /// Compare: the CmpFPredicate number; Math: the simd::MathFn; RangeMask: its flags.
    uint8_t variant = 0;
    /// Operands: a node's index, or ~k for leaf k. Select is (mask, taken, otherwise).
    int32_t operands[3] = {0, 0, 0};
  };
  std::vector<Leaf> leaves;
  std::vector<Node> nodes;
  /// Also compile the loop that adds the result up as tt.reduce does (ChainRowSumFn).
  bool rowSum = false;

  /// A text naming exactly what the code computes, and with which vector functions: equal
  /// keys compile to the same loop.
  std::string key() const;
};

/// The compiled loop: lanes [0, n) of the result from the leaves, each a pointer to its
/// block, scalar or mask in leaf order. `out` may be a Tensor leaf's own bytes (every lane
/// is written after it is read); it overlaps no leaf otherwise.
using ChainFn = void (*)(const uint8_t *const *leaves, uint8_t *out, int64_t n);

/// The same lanes as ChainFn, n a positive multiple of kTreeLanes (ReduceTree.h), returning
/// their sum in tt.reduce's tree order (docs/semantics.md): lane l adds lanes l, l + 32, ...
/// as they are made, then the butterfly. Folded as the lanes are made, the sum's dependent
/// adds overlap the chain's own work instead of following it.
using ChainRowSumFn = float (*)(const uint8_t *const *leaves, uint8_t *out, int64_t n);

/// A chain's two loops, the same lanes computed alike: `streaming` writes the whole 64-byte
/// lines of `out` by non-temporal stores (for Frame::streamResult; `out` 4-byte aligned, and
/// the thread owes fenceStreamingStores() before others read it).
struct ChainLoops {
  ChainFn plain = nullptr, streaming = nullptr;
  ChainRowSumFn rowSum = nullptr; ///< Only for ChainCode::rowSum.
  explicit operator bool() const { return plain && streaming; }
};

/// A chain's compilation, shared by its instruction and the compiler while one is under way.
struct ChainState {
  ChainCode code;
  std::atomic<ChainFn> compiled{nullptr};
  std::atomic<ChainFn> streaming{nullptr}; ///< Set before `compiled` (ChainLoops).
  std::atomic<ChainRowSumFn> rowSum{nullptr}; ///< Likewise.
  /// Lanes still to run interpreted before compilation is asked for (in the background:
  /// about 2 ms of interpreting a short chain, against a compilation of some 10 ms on
  /// another core).
  std::atomic<int64_t> lanesBeforeCompile{int64_t(1) << 21};
  std::atomic<bool> requested{false};
};

/// Called by a chain that has no loop yet, each time before it runs `lanes` lanes: asks for
/// its compilation as the mode (setChainCompilation) says. Eager compiles it and returns the
/// loop, to run this time already; otherwise null (run the steps).
ChainFn beforeInterpretedRun(const std::shared_ptr<ChainState> &state, int64_t lanes);

/// How many chains have been handed a compiled loop in this process (tests read it).
uint64_t chainsGivenLoops();

/// Compiles `code` now on the calling thread (the same loop every time for one key).
/// Null, with `error` set, if LLVM could not.
ChainLoops compileChain(const ChainCode &code, std::string &error);

} // namespace ttinterp::interp
