//===- ReduceOps.cpp - tt.reduce and tt.scan with any combine region ------===//
//
// The combine region is lowered like any other body and run once per element
// pair; several operands (argmax-style (value, index) pairs) travel together.
// Elements are combined in index order (a left fold; reverse scans from the
// end). The GPU combines in a tree, so float sums can differ in the last bits.
// Combiners whose result cannot depend on the order (integer ops, max/min)
// may run in any order: the result is the left fold's, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "ArithFunctors.h"
#include "OpSupport.h"

#include "mlir/IR/Block.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

namespace ttinterp::interp {
namespace {

struct FoldData {
  std::unique_ptr<Body> combine;
  std::vector<SlotId> inputs, outputs;
  int64_t outer = 1, length = 1, inner = 1;
  bool reverse = false;
};

/// Copies element `index` of slot `from` into the scalar slot `to`.
inline void copyElement(Frame &f, SlotId from, int64_t index, SlotId to, size_t size) {
  std::memcpy(f.bytes(to), f.bytes(from) + index * size, size);
}
inline void storeElementTo(Frame &f, SlotId from, SlotId to, int64_t index, size_t size) {
  std::memcpy(f.bytes(to) + index * size, f.bytes(from), size);
}

template <bool Scan> void foldKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const FoldData *>(in.data);
  const std::vector<SlotId> &args = d.combine->blocks[0].arguments;
  size_t n = d.inputs.size();
  std::vector<size_t> sizes(n);
  for (size_t k = 0; k < n; ++k)
    sizes[k] = computeSize(f.slot(d.inputs[k]).dtype);
  // The combine region's first n arguments hold the running values.
  const std::vector<SlotId> accumulators(args.begin(), args.begin() + n);
  for (int64_t o = 0; o < d.outer; ++o) {
    for (int64_t i = 0; i < d.inner; ++i) {
      for (int64_t step = 0; step < d.length; ++step) {
        int64_t j = d.reverse ? d.length - 1 - step : step;
        int64_t index = (o * d.length + j) * d.inner + i;
        if (step == 0) {
          for (size_t k = 0; k < n; ++k)
            copyElement(f, d.inputs[k], index, args[k], sizes[k]);
        } else {
          for (size_t k = 0; k < n; ++k)
            copyElement(f, d.inputs[k], index, args[n + k], sizes[k]);
          const Terminator *t = runBody(f, *d.combine);
          if (!t)
            return;
          moveSlots(f, *t, accumulators);
        }
        if constexpr (Scan)
          for (size_t k = 0; k < n; ++k)
            storeElementTo(f, args[k], d.outputs[k], index, sizes[k]);
      }
      if constexpr (!Scan)
        for (size_t k = 0; k < n; ++k)
          storeElementTo(f, args[k], d.outputs[k], o * d.inner + i, sizes[k]);
    }
  }
}

/// A fold whose combine region is one arith op on its two arguments: a typed
/// loop, no region execution per element. Same order as the general path.
struct FastFoldData {
  int64_t outer = 1, length = 1, inner = 1;
  bool reverse = false;
};

/// Combiners whose result does not depend on how the elements are grouped or
/// ordered, bit for bit: the commutative integer ops (wrapping arithmetic,
/// bitwise ops, max/min) and float max/min (a total order once -0 < +0; the
/// NaN-propagating ones return the one canonical NaN). Not float add and mul.
#define TTINTERP_IS(NAME, FN) || std::is_same_v<Fn, FN>
template <class Fn>
constexpr bool kRegroupable =
    false TTINTERP_COMMUTATIVE_INT_OPS(TTINTERP_IS) TTINTERP_FLOAT_MIN_MAX_OPS(TTINTERP_IS);
#undef TTINTERP_IS

/// Reduces src[0, length) with kRegroupable Fn over independent lanes, so the
/// loop is not one long dependency chain; the left fold's result exactly. Only
/// maxnum/minnum over all-NaN input could differ (in which NaN comes out), so
/// that case returns nullopt and the caller folds in order.
template <DType D, class Fn> std::optional<Repr<D>> laneFold(const Repr<D> *src, int64_t length) {
  using T = Repr<D>;
  constexpr int64_t kLanes = 8;
  T lanes[kLanes];
  std::copy(src, src + kLanes, lanes);
  int64_t k = kLanes;
  for (; k + kLanes <= length; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] = roundTo<D>(Fn::template apply<D>(lanes[l], src[k + l]));
  for (; k < length; ++k)
    lanes[0] = roundTo<D>(Fn::template apply<D>(lanes[0], src[k]));
  T acc = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l)
    acc = roundTo<D>(Fn::template apply<D>(acc, lanes[l]));
  if constexpr (std::is_same_v<Fn, MaxNumF> || std::is_same_v<Fn, MinNumF>)
    if (std::isnan(acc))
      return std::nullopt;
  return acc;
}

template <DType D, class Fn, bool Scan> void fastFoldKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  // A copy: stores through 64-bit or byte elements could alias the fields of
  // the shared descriptor, and the compiler would reload them every element.
  const FastFoldData d = *static_cast<const FastFoldData *>(in.data);
  const T *x = f.at<T>(in.operands[0]);
  T *out = f.at<T>(in.results[0]);
  for (int64_t o = 0; o < d.outer; ++o) {
    const T *src = x + o * d.length * d.inner;
    T *dst = Scan ? out + o * d.length * d.inner : out + o * d.inner;
    int64_t first = d.reverse ? d.length - 1 : 0, step = d.reverse ? -1 : 1;
    if constexpr (!Scan && kRegroupable<Fn>) {
      if (d.inner == 1 && d.length >= 16)
        if (std::optional<T> acc = laneFold<D, Fn>(src, d.length)) {
          dst[0] = *acc;
          continue;
        }
    }
    if (d.inner == 1) {
      // Along the minor axis: one running accumulator.
      T acc = src[first];
      if (Scan)
        dst[first] = acc;
      for (int64_t k = 1, j = first + step; k < d.length; ++k, j += step) {
        acc = roundTo<D>(Fn::template apply<D>(acc, src[j]));
        if (Scan)
          dst[j] = acc;
      }
      if (!Scan)
        dst[0] = acc;
      continue;
    }
    // Along a major axis: whole rows combine elementwise, which vectorises.
    T *acc = Scan ? dst + first * d.inner : dst;
    if (!Scan || acc != src + first * d.inner)
      std::memcpy(acc, src + first * d.inner, size_t(d.inner) * sizeof(T));
    for (int64_t k = 1, j = first + step; k < d.length; ++k, j += step) {
      const T *row = src + j * d.inner;
      T *next = Scan ? dst + j * d.inner : acc;
      for (int64_t i = 0; i < d.inner; ++i)
        next[i] = roundTo<D>(Fn::template apply<D>(acc[i], row[i]));
      acc = next;
    }
  }
}

/// The fast kernel for a combine region that is exactly `r = OP(a, b); return r`
/// (or `OP(b, a)`: every op here is commutative), or null.
template <bool Scan> ExecFn fastFold(mlir::Region &region, DType d) {
  mlir::Block &block = region.front();
  if (block.getNumArguments() != 2 || block.getOperations().size() != 2)
    return nullptr;
  mlir::Operation &op = block.front();
  mlir::Operation *ret = block.getTerminator();
  if (op.getNumOperands() != 2 || op.getNumResults() != 1 || ret->getNumOperands() != 1 ||
      ret->getOperand(0) != op.getResult(0))
    return nullptr;
  mlir::Value a = block.getArgument(0), b = block.getArgument(1);
  if (!((op.getOperand(0) == a && op.getOperand(1) == b) ||
        (op.getOperand(0) == b && op.getOperand(1) == a)))
    return nullptr;
  llvm::StringRef name = op.getName().getStringRef();
  auto ints = [&](auto fn) -> ExecFn {
    using Fn = decltype(fn);
    return visitInt(
        d, [](auto tag) -> ExecFn { return &fastFoldKernel<decltype(tag)::value, Fn, Scan>; });
  };
  auto floats = [&](auto fn) -> ExecFn {
    using Fn = decltype(fn);
    return visitFloat(
        d, [](auto tag) -> ExecFn { return &fastFoldKernel<decltype(tag)::value, Fn, Scan>; });
  };
#define TTINTERP_FOLD_INT(NAME, FN)                                                                \
  if (name == NAME)                                                                                \
    return ints(FN{});
#define TTINTERP_FOLD_FLOAT(NAME, FN)                                                              \
  if (name == NAME)                                                                                \
    return floats(FN{});
  TTINTERP_COMMUTATIVE_INT_OPS(TTINTERP_FOLD_INT)
  TTINTERP_COMMUTATIVE_FLOAT_OPS(TTINTERP_FOLD_FLOAT)
#undef TTINTERP_FOLD_INT
#undef TTINTERP_FOLD_FLOAT
  return nullptr;
}

template <bool Scan> bool lowerFold(mlir::Operation *op, Lowerer &L) {
  FoldData d;
  for (mlir::Value v : op->getOperands())
    d.inputs.push_back(L.use(v));
  const Slot &first = L.slot(d.inputs[0]);
  int64_t axis = intAttr(op, "axis", -1);
  if (axis < 0 || size_t(axis) >= first.shape.size())
    return L.error(op, "axis out of range");
  for (size_t k = 0; k < first.shape.size(); ++k) {
    if (int64_t(k) < axis)
      d.outer *= first.shape[k];
    else if (int64_t(k) > axis)
      d.inner *= first.shape[k];
  }
  d.length = first.shape[axis];
  if (d.length == 0)
    return L.error(op, "cannot combine an empty axis");
  if (auto rev = op->getAttrOfType<mlir::BoolAttr>("reverse"))
    d.reverse = rev.getValue();
  if (d.inputs.size() == 1)
    if (ExecFn fn = fastFold<Scan>(op->getRegion(0), first.dtype)) {
      SlotId r = L.def(op->getResult(0), op);
      if (r == kNoSlot)
        return false;
      L.emit(op, fn, {d.inputs[0]}, {r},
             L.keep(FastFoldData{d.outer, d.length, d.inner, d.reverse}));
      return true;
    }
  d.combine = L.lowerRegion(op->getRegion(0), op);
  if (!d.combine)
    return false;
  if (d.combine->blocks.size() != 1 || d.combine->blocks[0].arguments.size() != 2 * d.inputs.size())
    return L.error(op, "combine region must take two arguments per operand");
  for (mlir::Value r : op->getResults()) {
    SlotId s = L.def(r, op);
    if (s == kNoSlot)
      return false;
    d.outputs.push_back(s);
  }
  L.emit(op, &foldKernel<Scan>, {}, {}, L.keep(std::move(d)));
  return true;
}

} // namespace

void registerReduceOps(OpTable &t) {
  t.add("tt.reduce", &lowerFold<false>);
  t.add("tt.scan", &lowerFold<true>);
}

} // namespace ttinterp::interp
