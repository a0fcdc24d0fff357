//===- ChainCompiler.cpp - Element-wise chains as LLVM IR, compiled by ORC's LLJIT -===//
//
// Why LLVM: the MLIR we parse with already links libLLVM, whose ORC JIT compiles a
// chain's loop for the CPU it runs on (AVX-512 here, AVX2 or SSE elsewhere) in a few
// milliseconds; nothing new to install, and the IR states IEEE semantics exactly.
//
// One compiler per process: a thread started on the first request compiles queued chains
// one at a time. Compiled code lives as long as the process (a chain's loop is shared by
// every kernel that has the same chain, by key), so a function pointer handed to a chain
// never dangles, whatever outlives what.
//
//===----------------------------------------------------------------------===//
#include "ChainCompiler.h"

#include "ops/ReduceTree.h"
#include "simd/Simd.h"
#include "ttinterp/memory/StreamingStores.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace ttinterp::interp {

std::string ChainCode::key() const {
  // The vector target too: a transcendental calls that target's function (tests force one).
  std::string k = std::string(simd::targetName()) + " ";
  for (const Leaf &l : leaves) {
    uint32_t bits;
    std::memcpy(&bits, &l.constant, 4);
    k += fmt::format("l{}:{:08x} ", int(l.kind), l.kind == Leaf::Constant ? bits : 0);
  }
  for (const Node &n : nodes)
    k += fmt::format("n{}.{}:{},{},{} ", int(n.op), int(n.variant), n.operands[0], n.operands[1],
                     n.operands[2]);
  if (rowSum)
    k += "sum";
  return k;
}

namespace {

/// Lanes per iteration of the compiled loop: one AVX-512 register of f32, two of AVX2.
constexpr unsigned kWidth = 16;

std::atomic<uint64_t> loopsHandedOut{0};

void handOver(ChainState &state, const ChainLoops &loops) {
  state.streaming.store(loops.streaming, std::memory_order_relaxed);
  state.rowSum.store(loops.rowSum, std::memory_order_relaxed);
  state.compiled.store(loops.plain, std::memory_order_release); // publishes streaming too
  loopsHandedOut.fetch_add(1, std::memory_order_relaxed);
}

std::atomic<int> &modeFlag() {
  static std::atomic<int> mode = [] {
    const char *e = std::getenv("TTINTERP_JIT");
    std::string v = e ? e : "";
    if (v == "off" || v == "0")
      return int(ChainCompilation::Off);
    if (v == "eager")
      return int(ChainCompilation::Eager);
    return int(ChainCompilation::Background);
  }();
  return mode;
}

/// LLVM's predicate for arith.cmpf's (CmpFPredicate numbers them false, oeq, ogt, oge, olt,
/// ole, one, ord, ueq, ugt, uge, ult, ule, une, uno, true; LLVM puts uno before ueq).
llvm::CmpInst::Predicate fcmpPredicate(uint8_t arith) {
  using P = llvm::CmpInst::Predicate;
  static const P predicates[16] = {P::FCMP_FALSE, P::FCMP_OEQ, P::FCMP_OGT, P::FCMP_OGE,
                                   P::FCMP_OLT,   P::FCMP_OLE, P::FCMP_ONE, P::FCMP_ORD,
                                   P::FCMP_UEQ,   P::FCMP_UGT, P::FCMP_UGE, P::FCMP_ULT,
                                   P::FCMP_ULE,   P::FCMP_UNE, P::FCMP_UNO, P::FCMP_TRUE};
  return predicates[arith & 15];
}

/// Emits one step of the loop, `width` lanes at `index` (1: the scalar tail).
class LaneEmitter {
public:
  LaneEmitter(llvm::IRBuilder<> &b, const ChainCode &code, llvm::ArrayRef<llvm::Value *> pointers,
              llvm::ArrayRef<llvm::Value *> scalars)
      : b_(b), code_(code), pointers_(pointers), scalars_(scalars) {}

  llvm::Value *result(llvm::Value *index, unsigned width) {
    index_ = index;
    width_ = width;
    leafValues_.assign(code_.leaves.size(), nullptr);
    nodeValues_.clear();
    for (const ChainCode::Node &n : code_.nodes)
      nodeValues_.push_back(node(n));
    return nodeValues_.back();
  }

private:
  llvm::Type *lanes(llvm::Type *element) const {
    return width_ == 1 ? element : llvm::FixedVectorType::get(element, width_);
  }
  llvm::Value *broadcast(llvm::Value *v) const {
    return width_ == 1 ? v : b_.CreateVectorSplat(width_, v);
  }
  llvm::Value *load(llvm::Type *element, unsigned bytes, size_t leaf) {
    llvm::Value *offset = b_.CreateMul(index_, b_.getInt64(bytes));
    llvm::Value *at = b_.CreateGEP(b_.getInt8Ty(), pointers_[leaf], offset);
    return b_.CreateAlignedLoad(lanes(element), at, llvm::Align(1));
  }
  llvm::Value *leaf(size_t k) {
    if (leafValues_[k])
      return leafValues_[k];
    const ChainCode::Leaf &l = code_.leaves[k];
    llvm::Value *v = nullptr;
    switch (l.kind) {
    case ChainCode::Leaf::Tensor:
      v = load(b_.getFloatTy(), 4, k);
      break;
    case ChainCode::Leaf::Scalar:
      v = broadcast(scalars_[k]);
      break;
    case ChainCode::Leaf::Constant:
      v = broadcast(llvm::ConstantFP::get(b_.getFloatTy(), l.constant));
      break;
    case ChainCode::Leaf::Mask:
      v = b_.CreateICmpNE(load(b_.getInt8Ty(), 1, k),
                          llvm::Constant::getNullValue(lanes(b_.getInt8Ty())));
      break;
    case ChainCode::Leaf::Int:
      v = scalars_[k]; // read by a RangeMask alone, which broadcasts what it makes of it
      break;
    }
    return leafValues_[k] = v;
  }
  llvm::Value *operand(int32_t ref) { return ref >= 0 ? nodeValues_[size_t(ref)] : leaf(~ref); }
  /// Lanes [index, index + width) of a RangeMask: the offsets as the interpreter's
  /// rangeLane wraps them (i32 sums), compared with the bound.
  llvm::Value *rangeMask(const ChainCode::Node &n) {
    llvm::Type *i32 = b_.getInt32Ty();
    llvm::Value *first = b_.CreateAdd(b_.CreateTrunc(index_, i32),
                                      llvm::ConstantInt::get(i32, uint64_t(n.operands[2])));
    if (n.variant & ChainCode::Node::kRangeHasStart)
      first = b_.CreateAdd(first, operand(n.operands[0]));
    llvm::Value *offsets = broadcast(first);
    if (width_ > 1) {
      std::vector<llvm::Constant *> steps;
      for (unsigned l = 0; l < width_; ++l)
        steps.push_back(llvm::ConstantInt::get(i32, l));
      offsets = b_.CreateAdd(offsets, llvm::ConstantVector::get(steps));
    }
    llvm::Value *bound = broadcast(operand(n.operands[1]));
    return n.variant & ChainCode::Node::kRangeUnsigned ? b_.CreateICmpULT(offsets, bound)
                                                       : b_.CreateICmpSLT(offsets, bound);
  }
  llvm::Value *node(const ChainCode::Node &n) {
    if (n.op == ChainCode::Node::RangeMask)
      return rangeMask(n);
    llvm::Value *a = operand(n.operands[0]);
    switch (n.op) {
    case ChainCode::Node::Add:
      return b_.CreateFAdd(a, operand(n.operands[1]));
    case ChainCode::Node::Sub:
      return b_.CreateFSub(a, operand(n.operands[1]));
    case ChainCode::Node::Mul:
      return b_.CreateFMul(a, operand(n.operands[1]));
    case ChainCode::Node::Div:
      return b_.CreateFDiv(a, operand(n.operands[1]));
    case ChainCode::Node::Neg:
      return b_.CreateFNeg(a);
    case ChainCode::Node::Select:
      return b_.CreateSelect(a, operand(n.operands[1]), operand(n.operands[2]));
    case ChainCode::Node::Compare:
      return b_.CreateFCmp(fcmpPredicate(n.variant), a, operand(n.operands[1]));
    case ChainCode::Node::MaxNum:
      return maxNum(a, operand(n.operands[1]), true);
    case ChainCode::Node::MinNum:
      return maxNum(a, operand(n.operands[1]), false);
    case ChainCode::Node::Maximum:
    case ChainCode::Node::Minimum: {
      llvm::Value *b = operand(n.operands[1]);
      llvm::Value *quietNaN = broadcast(llvm::ConstantFP::getQNaN(b_.getFloatTy()));
      return b_.CreateSelect(b_.CreateFCmpUNO(a, b), quietNaN,
                             maxNum(a, b, n.op == ChainCode::Node::Maximum));
    }
    case ChainCode::Node::Sqrt:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
    case ChainCode::Node::RSqrt:
      return b_.CreateFDiv(broadcast(llvm::ConstantFP::get(b_.getFloatTy(), 1.0)),
                           b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a));
    case ChainCode::Node::Abs:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
    case ChainCode::Node::Widen:
      return a;
    case ChainCode::Node::RoundBF16:
      return roundToBF16(a);
    case ChainCode::Node::Math:
      return math(simd::MathFn(n.variant), a);
    case ChainCode::Node::Floor:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a);
    case ChainCode::Node::Ceil:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a);
    case ChainCode::Node::Trunc:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, a);
    case ChainCode::Node::Round:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::round, a);
    case ChainCode::Node::RoundEven:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, a);
    case ChainCode::Node::CopySign:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, a, operand(n.operands[1]));
    case ChainCode::Node::Fma:
      return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()},
                                {a, operand(n.operands[1]), operand(n.operands[2])});
    case ChainCode::Node::RangeMask:
      break; // above
    }
    return nullptr;
  }

  /// The transcendental `fn` of the lanes of x: a call of the vector function simd::map
  /// calls (SLEEF's lanes do not depend on where they sit, so a lane padded with zeros or a
  /// register's half gives the interpreter's bits). Unsupported (see `unsupported`) where map
  /// calls the C library.
  llvm::Value *math(simd::MathFn fn, llvm::Value *x) {
    simd::VectorMathFunction vector = simd::vectorMathFunction(fn);
    if (!vector.fn || kWidth % unsigned(vector.lanes) != 0) {
      unsupported_ = true;
      return x;
    }
    const unsigned lanes = unsigned(vector.lanes);
    minLegalVectorBits_ = std::max(minLegalVectorBits_, lanes * 32);
    auto *type = llvm::FixedVectorType::get(b_.getFloatTy(), lanes);
    auto *signature = llvm::FunctionType::get(type, {type}, false);
    llvm::Value *callee =
        b_.CreateIntToPtr(b_.getInt64(reinterpret_cast<uintptr_t>(vector.fn)), b_.getPtrTy());
    auto call = [&](llvm::Value *v) { return b_.CreateCall(signature, callee, {v}); };
    if (width_ == 1) {
      llvm::Value *padded =
          b_.CreateInsertElement(llvm::Constant::getNullValue(type), x, uint64_t(0));
      return b_.CreateExtractElement(call(padded), uint64_t(0));
    }
    std::vector<llvm::Value *> parts;
    for (unsigned at = 0; at < width_; at += lanes) {
      llvm::SmallVector<int, 16> pick;
      for (unsigned i = 0; i < lanes; ++i)
        pick.push_back(int(at + i));
      parts.push_back(call(lanes == width_ ? x : b_.CreateShuffleVector(x, pick)));
    }
    while (parts.size() > 1) { // join neighbours until one vector of width_ lanes is left
      std::vector<llvm::Value *> joined;
      for (size_t i = 0; i < parts.size(); i += 2) {
        unsigned half = llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements();
        llvm::SmallVector<int, 16> both;
        for (unsigned k = 0; k < 2 * half; ++k)
          both.push_back(int(k));
        joined.push_back(b_.CreateShuffleVector(parts[i], parts[i + 1], both));
      }
      parts = std::move(joined);
    }
    return parts.front();
  }

public:
  /// Whether the code asked for what this CPU's compiled chains cannot do.
  bool unsupported() const { return unsupported_; }
  /// The widest vector the loop passes to a function, in bits (0: none): the function must
  /// say so, or LLVM may split a 512-bit argument into two registers.
  unsigned minLegalVectorBits() const { return minLegalVectorBits_; }

private:
  /// Numeric.h's floatToBF16 and back, on the bits: a NaN keeps its top bits and turns quiet,
  /// anything else rounds to the nearest even bf16 (past the largest finite one, infinity).
  llvm::Value *roundToBF16(llvm::Value *x) {
    llvm::Type *i32 = lanes(b_.getInt32Ty());
    auto constant = [&](uint32_t v) { return llvm::ConstantInt::get(i32, v); };
    llvm::Value *u = b_.CreateBitCast(x, i32);
    llvm::Value *nan =
        b_.CreateICmpUGT(b_.CreateAnd(u, constant(0x7FFFFFFF)), constant(0x7F800000));
    llvm::Value *quiet = b_.CreateOr(b_.CreateAnd(u, constant(0xFFFF0000)), constant(0x00400000));
    llvm::Value *odd = b_.CreateAnd(b_.CreateLShr(u, constant(16)), constant(1));
    llvm::Value *rounded =
        b_.CreateAnd(b_.CreateAdd(b_.CreateAdd(u, constant(0x7FFF)), odd), constant(0xFFFF0000));
    return b_.CreateBitCast(b_.CreateSelect(nan, quiet, rounded), lanes(b_.getFloatTy()));
  }

  /// ArithFunctors.h's maxNum (minNum when !max) as selects, so the bits are its bits:
  /// `a == b ? (signbit(a) ? b : a) : (a > b ? a : b)`, then a NaN operand gives the other.
  llvm::Value *maxNum(llvm::Value *a, llvm::Value *b, bool max) {
    llvm::Value *negative = b_.CreateICmpSLT(b_.CreateBitCast(a, lanes(b_.getInt32Ty())),
                                             llvm::Constant::getNullValue(lanes(b_.getInt32Ty())));
    llvm::Value *zeros = max ? b_.CreateSelect(negative, b, a) : b_.CreateSelect(negative, a, b);
    llvm::Value *ordered = max ? b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b)
                               : b_.CreateSelect(b_.CreateFCmpOLT(a, b), a, b);
    llvm::Value *r = b_.CreateSelect(b_.CreateFCmpOEQ(a, b), zeros, ordered);
    r = b_.CreateSelect(b_.CreateFCmpUNO(b, b), a, r);
    return b_.CreateSelect(b_.CreateFCmpUNO(a, a), b, r);
  }

  llvm::IRBuilder<> &b_;
  const ChainCode &code_;
  llvm::ArrayRef<llvm::Value *> pointers_, scalars_;
  llvm::Value *index_ = nullptr;
  unsigned width_ = 1;
  std::vector<llvm::Value *> leafValues_, nodeValues_;
  bool unsupported_ = false;
  unsigned minLegalVectorBits_ = 0;
};

/// `result name(const uint8_t *const *leaves, uint8_t *out, int64_t n)`, the builder in its
/// entry block, and there each leaf's pointer and the value of each scalar leaf (read once).
struct ChainFunction {
  llvm::Function *fn;
  llvm::Value *out, *n;
  std::vector<llvm::Value *> pointers, scalars;
};
ChainFunction startChainFunction(llvm::Module &m, llvm::IRBuilder<> &b, const std::string &name,
                                 const ChainCode &code, llvm::Type *result) {
  llvm::Type *ptr = b.getPtrTy();
  auto *type = llvm::FunctionType::get(result, {ptr, ptr, b.getInt64Ty()}, false);
  ChainFunction f;
  f.fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, m);
  f.fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value *leaves = f.fn->getArg(0);
  f.out = f.fn->getArg(1);
  f.n = f.fn->getArg(2);
  b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", f.fn));
  for (size_t k = 0; k < code.leaves.size(); ++k) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, leaves, k);
    f.pointers.push_back(b.CreateLoad(ptr, slot));
    const ChainCode::Leaf::Kind kind = code.leaves[k].kind;
    f.scalars.push_back(kind == ChainCode::Leaf::Scalar
                            ? b.CreateAlignedLoad(b.getFloatTy(), f.pointers.back(), llvm::Align(1))
                        : kind == ChainCode::Leaf::Int
                            ? b.CreateAlignedLoad(b.getInt32Ty(), f.pointers.back(), llvm::Align(1))
                            : nullptr);
  }
  return f;
}

/// `float name(leaves, out, n)` (ChainRowSumFn): the lanes kTreeLanes at a time, as two
/// vectors of kWidth, each also added to its accumulator (the first two vectors start them: a
/// lane's first element is taken as it is, as in the tree), then the butterfly over the 32
/// accumulated lanes, halves added low + high. n is a positive multiple of kTreeLanes, which
/// the caller checks.
bool buildRowSumFunction(llvm::Module &m, const std::string &name, const ChainCode &code) {
  static_assert(2 * kWidth == kTreeLanes, "two vectors of lanes hold the tree's lanes");
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type *i64 = b.getInt64Ty();
  ChainFunction f = startChainFunction(m, b, name, code, b.getFloatTy());
  llvm::Function *fn = f.fn;
  llvm::Value *out = f.out, *n = f.n;
  LaneEmitter lanes(b, code, f.pointers, f.scalars);
  // The two vectors of lanes at i, stored to out: the tree's 32 lanes' next elements.
  auto lanesAt = [&](llvm::Value *i) {
    std::array<llvm::Value *, 2> v;
    for (unsigned half = 0; half < 2; ++half) {
      llvm::Value *at = b.CreateAdd(i, b.getInt64(half * kWidth));
      v[half] = lanes.result(at, kWidth);
      b.CreateAlignedStore(v[half], b.CreateGEP(b.getInt8Ty(), out, b.CreateMul(at, b.getInt64(4))),
                           llvm::Align(1));
    }
    return v;
  };
  std::array<llvm::Value *, 2> first = lanesAt(b.getInt64(0));
  llvm::BasicBlock *entry = b.GetInsertBlock();
  auto *body = llvm::BasicBlock::Create(ctx, "rows", fn);
  auto *after = llvm::BasicBlock::Create(ctx, "after", fn);
  llvm::Value *tree = b.getInt64(kTreeLanes);
  b.CreateCondBr(b.CreateICmpSLT(tree, n), body, after);
  b.SetInsertPoint(body);
  llvm::PHINode *i = b.CreatePHI(i64, 2);
  std::array<llvm::PHINode *, 2> acc;
  for (unsigned half = 0; half < 2; ++half) {
    acc[half] = b.CreatePHI(first[half]->getType(), 2);
    acc[half]->addIncoming(first[half], entry);
  }
  i->addIncoming(tree, entry);
  std::array<llvm::Value *, 2> next = lanesAt(i);
  std::array<llvm::Value *, 2> sum;
  for (unsigned half = 0; half < 2; ++half)
    sum[half] = b.CreateFAdd(acc[half], next[half]); // the running lane on the left, as the tree
  llvm::Value *step = b.CreateAdd(i, tree);
  llvm::BasicBlock *bodyEnd = b.GetInsertBlock();
  i->addIncoming(step, bodyEnd);
  for (unsigned half = 0; half < 2; ++half)
    acc[half]->addIncoming(sum[half], bodyEnd);
  b.CreateCondBr(b.CreateICmpSLT(step, n), body, after);
  b.SetInsertPoint(after);
  std::array<llvm::PHINode *, 2> total;
  for (unsigned half = 0; half < 2; ++half) {
    total[half] = b.CreatePHI(first[half]->getType(), 2);
    total[half]->addIncoming(first[half], entry);
    total[half]->addIncoming(sum[half], bodyEnd);
  }
  // The butterfly: lane l takes lane l + w, w = 16 (the other accumulator), 8, 4, 2, 1.
  llvm::Value *lanesLeft = b.CreateFAdd(total[0], total[1]);
  for (unsigned w = kWidth / 2; w >= 1; w /= 2) {
    llvm::SmallVector<int, 8> low, high;
    for (unsigned l = 0; l < w; ++l)
      low.push_back(int(l)), high.push_back(int(l + w));
    llvm::Value *lo = w == 1 ? b.CreateExtractElement(lanesLeft, uint64_t(0))
                             : b.CreateShuffleVector(lanesLeft, low);
    llvm::Value *hi = w == 1 ? b.CreateExtractElement(lanesLeft, uint64_t(1))
                             : b.CreateShuffleVector(lanesLeft, high);
    lanesLeft = b.CreateFAdd(lo, hi);
  }
  b.CreateRet(lanesLeft);
  if (unsigned bits = lanes.minLegalVectorBits())
    fn->addFnAttr("min-legal-vector-width", std::to_string(bits));
  return !lanes.unsupported();
}

/// `void name(const uint8_t *const *leaves, uint8_t *out, int64_t n)`: loops of kWidth lanes
/// (one 64-byte line of results) and of one lane. Streaming, the lanes before out's first line
/// boundary and after its last whole line go one at a time, and the whole lines by
/// non-temporal stores (memory/StreamingStores.h says why, LaunchMemory::streamsStores when);
/// otherwise kWidth lanes at a time, then one at a time. False if this CPU cannot run the code
/// compiled (a transcendental where simd::map uses the C library).
bool buildChainFunction(llvm::Module &m, const std::string &name, const ChainCode &code,
                        bool streaming) {
  static_assert(kWidth * sizeof(float) == kStreamedLine,
                "a streamed iteration writes one whole line");
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type *i64 = b.getInt64Ty();
  ChainFunction f = startChainFunction(m, b, name, code, b.getVoidTy());
  llvm::Function *fn = f.fn;
  llvm::Value *out = f.out, *n = f.n;
  LaneEmitter lanes(b, code, f.pointers, f.scalars);
  // Lanes [start, end), `width` at a time (end - start is a multiple of it), if any.
  auto loop = [&](llvm::Value *start, llvm::Value *end, unsigned width, bool nonTemporal) {
    llvm::BasicBlock *from = b.GetInsertBlock();
    auto *body = llvm::BasicBlock::Create(ctx, width == 1 ? "lanes" : "vectors", fn);
    auto *after = llvm::BasicBlock::Create(ctx, "after", fn);
    b.CreateCondBr(b.CreateICmpSLT(start, end), body, after);
    b.SetInsertPoint(body);
    llvm::PHINode *i = b.CreatePHI(i64, 2);
    i->addIncoming(start, from);
    llvm::Value *r = lanes.result(i, width);
    llvm::Value *at = b.CreateGEP(b.getInt8Ty(), out, b.CreateMul(i, b.getInt64(4)));
    llvm::StoreInst *store = b.CreateAlignedStore(r, at, llvm::Align(nonTemporal ? 64 : 1));
    if (nonTemporal)
      store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                         llvm::MDNode::get(ctx, llvm::ConstantAsMetadata::get(b.getInt32(1))));
    llvm::Value *next = b.CreateAdd(i, b.getInt64(width));
    i->addIncoming(next, b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpSLT(next, end), body, after);
    b.SetInsertPoint(after);
  };
  const int64_t wholeLanes = ~int64_t(kWidth - 1);
  if (streaming) {
    // out holds floats (4-byte aligned): lanes to its first line boundary, at most n.
    llvm::Value *misaligned =
        b.CreateLShr(b.CreateAnd(b.CreatePtrToInt(out, i64), int64_t(kStreamedLine - 1)), 2);
    llvm::Value *toBoundary =
        b.CreateAnd(b.CreateSub(b.getInt64(kWidth), misaligned), b.getInt64(kWidth - 1));
    llvm::Value *head = b.CreateSelect(b.CreateICmpSLT(toBoundary, n), toBoundary, n);
    llvm::Value *lines = b.CreateAdd(head, b.CreateAnd(b.CreateSub(n, head), wholeLanes));
    loop(b.getInt64(0), head, 1, false);
    loop(head, lines, kWidth, true);
    loop(lines, n, 1, false);
  } else {
    llvm::Value *vectorEnd = b.CreateAnd(n, wholeLanes);
    loop(b.getInt64(0), vectorEnd, kWidth, false);
    loop(vectorEnd, n, 1, false);
  }
  b.CreateRetVoid();
  if (unsigned bits = lanes.minLegalVectorBits())
    fn->addFnAttr("min-legal-vector-width", std::to_string(bits));
  return !lanes.unsupported();
}

/// The process's compiler: the LLJIT, the loops compiled so far, and the background thread.
class Compiler {
public:
  static Compiler &get() {
    static Compiler compiler;
    return compiler;
  }

  ChainLoops compile(const ChainCode &code, std::string &error) {
    std::lock_guard<std::mutex> lock(jitMutex_);
    std::string key = code.key();
    if (auto it = compiled_.find(key); it != compiled_.end())
      return it->second;
    if (!jit_ && !createJit(error))
      return {};
    std::string name = fmt::format("ttinterp_chain_{}", compiled_.size());
    std::string streamingName = name + "_streaming";
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>(name, *context);
    module->setDataLayout(jit_->getDataLayout());
    std::string rowSumName = name + "_row_sum";
    if (!buildChainFunction(*module, name, code, false) ||
        !buildChainFunction(*module, streamingName, code, true) ||
        (code.rowSum && !buildRowSumFunction(*module, rowSumName, code))) {
      error = "a transcendental that this CPU's vector functions do not cover";
      return {};
    }
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(*module, &os)) {
      error = "chain IR does not verify: " + problems;
      return {};
    }
    if (llvm::Error e =
            jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
      error = llvm::toString(std::move(e));
      return {};
    }
    ChainLoops loops;
    for (auto [symbolName, fn] : {std::pair{&name, &loops.plain}, {&streamingName, &loops.streaming}}) {
      auto symbol = jit_->lookup(*symbolName);
      if (!symbol) {
        error = llvm::toString(symbol.takeError());
        return {};
      }
      *fn = symbol->toPtr<ChainFn>();
    }
    if (code.rowSum) {
      auto symbol = jit_->lookup(rowSumName);
      if (!symbol) {
        error = llvm::toString(symbol.takeError());
        return {};
      }
      loops.rowSum = symbol->toPtr<ChainRowSumFn>();
    }
    compiled_.emplace(std::move(key), loops);
    return loops;
  }

  /// Queues a chain for the background thread (started on first use).
  void request(std::shared_ptr<ChainState> state) {
    if (getpid() != pid_)
      return; // a forked child: the parent's thread is not here, and its locks may be held
    // The process's first compilation runs here, on the thread that asks (once, some 10 ms):
    // LLVM makes static objects on its first code generation, which must outlive the thread
    // (stopAtExit). Later ones run in the background.
    bool first = false;
    std::call_once(firstCompilation_, [&] {
      first = true;
      std::string error;
      if (ChainLoops loops = compile(state->code, error))
        handOver(*state, loops);
      std::atexit(&stopAtExit);
    });
    if (first)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_)
      return; // the process is exiting
    queue_.push_back(std::move(state));
    if (!thread_.joinable())
      thread_ = std::thread([this] { serve(); });
    wake_.notify_one();
  }

  void waitIdle() {
    if (getpid() != pid_)
      return;
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

  /// Whether this process may compile (not a child forked while a compilation could hold
  /// the compiler's locks).
  bool usable() const { return getpid() == pid_; }

  ~Compiler() {
    stop();
    // jit_ is left to the process's end: compiled loops may still be reachable from
    // kernels that other static objects hold.
  }

  /// Stops the background thread after the compilation under way, if any; no more are
  /// queued. Idempotent.
  void stop() {
    if (getpid() != pid_) {
      // A forked child: the thread is the parent's, and it may have held the lock.
      if (thread_.joinable())
        thread_.detach();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
      thread_.join();
  }

  /// Registered with std::atexit after the first compilation and again after each one.
  /// Exit destroys static objects in the reverse order of their making, and LLVM makes some
  /// on first use (while the JIT is made, during a first code generation): the Compiler, made
  /// before them, would stop its thread only after they were gone, and a compilation still
  /// under way at exit then crashed in LLVM (a process ending right after a chain had asked
  /// to be compiled). A handler registered after them runs before they go.
  static void stopAtExit() { get().stop(); }

private:
  Compiler() : pid_(getpid()) {}

  bool createJit(std::string &error) {
    static std::once_flag initialized;
    std::call_once(initialized, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
    });
    auto machine = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!machine) {
      error = llvm::toString(machine.takeError());
      return false;
    }
    // Exactly the ops of the IR: never a multiply-add the kernel did not ask for.
    machine->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
    machine->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*machine)).create();
    if (!jit) {
      error = llvm::toString(jit.takeError());
      return false;
    }
    jit_ = jit->release();
    return true;
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_)
        return;
      std::shared_ptr<ChainState> state = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      std::string error;
      // On failure the chain stays interpreted: the same results, only slower.
      if (ChainLoops loops = compile(state->code, error))
        handOver(*state, loops);
      state.reset();
      std::atexit(&stopAtExit); // after whatever LLVM made for this compilation
      lock.lock();
      busy_ = false;
      if (queue_.empty())
        idle_.notify_all();
    }
  }

  const pid_t pid_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::shared_ptr<ChainState>> queue_;
  bool busy_ = false, stop_ = false;
  std::thread thread_;
  std::once_flag firstCompilation_;

  std::mutex jitMutex_;
  llvm::orc::LLJIT *jit_ = nullptr;
  std::unordered_map<std::string, ChainLoops> compiled_;
};

} // namespace

ChainLoops compileChain(const ChainCode &code, std::string &error) {
  return Compiler::get().compile(code, error);
}

ChainFn beforeInterpretedRun(const std::shared_ptr<ChainState> &state, int64_t lanes) {
  auto mode = ChainCompilation(modeFlag().load(std::memory_order_relaxed));
  // Asked for already (and, eager, compiled or failed): no write to the shared line.
  if (mode == ChainCompilation::Off || state->requested.load(std::memory_order_relaxed))
    return nullptr;
  // A run interprets each op of the chain once, a dispatch of some 10 ns whatever its lanes: a
  // short one (a chain of scalars has one lane) counts as what that costs in lanes' time.
  constexpr int64_t kLanesPerRunAtLeast = 64;
  lanes = std::max(lanes, kLanesPerRunAtLeast);
  if (mode == ChainCompilation::Background &&
      state->lanesBeforeCompile.fetch_sub(lanes, std::memory_order_relaxed) > lanes)
    return nullptr;
  if (state->requested.exchange(true, std::memory_order_acq_rel))
    return nullptr;
  Compiler &compiler = Compiler::get();
  if (!compiler.usable())
    return nullptr;
  if (mode == ChainCompilation::Background) {
    compiler.request(state);
    return nullptr;
  }
  std::string error;
  ChainLoops loops = compiler.compile(state->code, error);
  if (loops)
    handOver(*state, loops);
  return loops.plain;
}

uint64_t chainsGivenLoops() { return loopsHandedOut.load(std::memory_order_relaxed); }

void setChainCompilation(ChainCompilation mode) {
  modeFlag().store(int(mode), std::memory_order_relaxed);
}
ChainCompilation chainCompilation() {
  return ChainCompilation(modeFlag().load(std::memory_order_relaxed));
}
void waitForChainCompilations() { Compiler::get().waitIdle(); }

} // namespace ttinterp::interp
