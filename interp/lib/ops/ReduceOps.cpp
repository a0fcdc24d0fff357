//===- ReduceOps.cpp - tt.reduce and tt.scan with any combine region ------===//
//
// The combine region is lowered like any other body and run once per element
// pair; several operands (argmax-style (value, index) pairs) travel together.
// tt.reduce combines in one fixed tree shaped like the GPU's (kTreeLanes lanes,
// each folding its elements in order, then a butterfly): deterministic, the same
// for every thread count and ISA, and its lane loops vectorise. tt.scan runs in
// index order (reverse scans from the end). docs/semantics.md, "Reductions".
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"
#include "ReduceTree.h"

#include "mlir/IR/Block.h"

#include <algorithm>
#include <cstring>

namespace ttinterp::interp {
namespace {

struct FoldData {
  std::unique_ptr<Body> combine;
  SlotTransfer combined; ///< The combine region's results into its first arguments.
  std::vector<SlotId> inputs, outputs;
  int64_t outer = 1, length = 1, inner = 1;
  bool reverse = false;
};

/// tt.reduce with a general combine region, in tree order. Each lane's fold runs in
/// the region's arguments as one chain; lane results wait in `lanes` for the butterfly.
void reduceKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const FoldData *>(in.data);
  const std::vector<SlotId> &args = d.combine->blocks[0].arguments;
  size_t n = d.inputs.size();
  std::vector<size_t> sizes(n), offsets(n);
  size_t tuple = 0;
  for (size_t k = 0; k < n; ++k) {
    sizes[k] = computeSize(f.slot(d.inputs[k]).dtype);
    offsets[k] = tuple;
    tuple += sizes[k];
  }
  std::vector<uint8_t> lanes(size_t(kTreeLanes) * tuple);
  auto save = [&](int64_t lane) {
    for (size_t k = 0; k < n; ++k)
      std::memcpy(&lanes[lane * tuple + offsets[k]], f.bytes(args[k]), sizes[k]);
  };
  auto restore = [&](int64_t lane, size_t first) {
    for (size_t k = 0; k < n; ++k)
      std::memcpy(f.atHome<uint8_t>(args[first + k]), &lanes[lane * tuple + offsets[k]], sizes[k]);
  };
  auto combine = [&]() {
    if (!runBody(f, *d.combine))
      return false;
    transfer(f, d.combined);
    return true;
  };
  int64_t present = std::min(d.length, kTreeLanes);
  for (int64_t o = 0; o < d.outer; ++o)
    for (int64_t i = 0; i < d.inner; ++i) {
      for (int64_t l = 0; l < present; ++l) {
        for (int64_t j = l; j < d.length; j += kTreeLanes) {
          int64_t index = (o * d.length + j) * d.inner + i;
          for (size_t k = 0; k < n; ++k)
            copyElement(f, d.inputs[k], index, args[j == l ? k : n + k], sizes[k]);
          if (j != l && !combine())
            return;
        }
        save(l);
      }
      bool ok = butterfly(present, [&](int64_t a, int64_t b) {
        restore(a, 0);
        restore(b, n);
        if (!combine())
          return false;
        save(a);
        return true;
      });
      if (!ok)
        return;
      for (size_t k = 0; k < n; ++k)
        std::memcpy(f.bytes(d.outputs[k]) + (o * d.inner + i) * sizes[k], &lanes[offsets[k]],
                    sizes[k]);
    }
}

/// tt.scan with a general combine region, in index order.
void scanKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const FoldData *>(in.data);
  const std::vector<SlotId> &args = d.combine->blocks[0].arguments;
  size_t n = d.inputs.size();
  std::vector<size_t> sizes(n);
  for (size_t k = 0; k < n; ++k)
    sizes[k] = computeSize(f.slot(d.inputs[k]).dtype);
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
          if (!runBody(f, *d.combine))
            return;
          transfer(f, d.combined);
        }
        for (size_t k = 0; k < n; ++k)
          storeElementTo(f, args[k], d.outputs[k], index, sizes[k]);
      }
    }
  }
}

/// A fold whose combine region is one arith op on its two arguments: a typed
/// loop, no region execution per element. Same order as the general path.
struct FastFoldData {
  int64_t outer = 1, length = 1, inner = 1;
  bool reverse = false;
};

/// tt.reduce in tree order along a major axis (stride `inner`): the same tree for
/// every column, vectorised across a chunk of columns.
template <DType D, class Fn>
void treeReduceColumns(const Repr<D> *src, int64_t length, int64_t inner, Repr<D> *dst) {
  using T = Repr<D>;
  constexpr int64_t kChunk = 64;
  T lanes[kTreeLanes][kChunk];
  int64_t present = std::min(length, kTreeLanes);
  for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
    int64_t w = std::min(kChunk, inner - i0);
    for (int64_t j = 0; j < length; ++j) {
      const T *row = src + j * inner + i0;
      T *lane = lanes[j % kTreeLanes];
      if (j < kTreeLanes)
        std::copy(row, row + w, lane);
      else
        for (int64_t c = 0; c < w; ++c)
          lane[c] = combineOp<D, Fn>(lane[c], row[c]);
    }
    butterfly(present, [&](int64_t a, int64_t b) {
      for (int64_t c = 0; c < w; ++c)
        lanes[a][c] = combineOp<D, Fn>(lanes[a][c], lanes[b][c]);
      return true;
    });
    std::copy(lanes[0], lanes[0] + w, dst + i0);
  }
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
    if constexpr (!Scan) {
      if constexpr (D == DType::F32 && SimdReduceOf<Fn>::available) {
        if (d.inner == 1) {
          out[o] = simd::treeReduce(SimdReduceOf<Fn>::fn, src, d.length); // the same tree, per ISA
          continue;
        }
      }
      if (d.inner == 1)
        out[o] = treeReduceRow<D, Fn>(src, d.length);
      else
        treeReduceColumns<D, Fn>(src, d.length, d.inner, out + o * d.inner);
      continue;
    }
    T *dst = out + o * d.length * d.inner;
    int64_t first = d.reverse ? d.length - 1 : 0, step = d.reverse ? -1 : 1;
    if (d.inner == 1) {
      // Along the minor axis: one running accumulator.
      T acc = src[first];
      dst[first] = acc;
      for (int64_t k = 1, j = first + step; k < d.length; ++k, j += step) {
        acc = combineOp<D, Fn>(acc, src[j]);
        dst[j] = acc;
      }
      continue;
    }
    // Along a major axis: whole rows combine elementwise, which vectorises.
    T *acc = dst + first * d.inner;
    if (acc != src + first * d.inner)
      std::memcpy(acc, src + first * d.inner, size_t(d.inner) * sizeof(T));
    for (int64_t k = 1, j = first + step; k < d.length; ++k, j += step) {
      const T *row = src + j * d.inner;
      T *next = dst + j * d.inner;
      for (int64_t i = 0; i < d.inner; ++i)
        next[i] = combineOp<D, Fn>(acc[i], row[i]);
      acc = next;
    }
  }
}

/// A row sum whose operand's chain may have added it up as it made the row
/// (Lowerer::RowSumSlots): then it is taken; otherwise the row is added up as any other.
struct RowSumData {
  FastFoldData fold;
  SlotId sum, valid;
};

void rowSumKernel(Frame &f, const Instr &in) {
  const RowSumData &d = *static_cast<const RowSumData *>(in.data);
  if (*f.at<uint8_t>(d.valid)) {
    *f.at<float>(in.results[0]) = *f.at<float>(d.sum);
    return;
  }
  Instr fold = in;
  fold.data = &d.fold;
  fastFoldKernel<DType::F32, AddF, false>(f, fold);
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
      FastFoldData fold{d.outer, d.length, d.inner, d.reverse};
      if (const Lowerer::RowSumSlots *s = Scan ? nullptr : L.rowSumSlotsOf(op)) {
        L.emit(op, &rowSumKernel, {d.inputs[0], s->sum, s->valid}, {r},
               L.keep(RowSumData{fold, s->sum, s->valid}));
        return true;
      }
      L.emit(op, fn, {d.inputs[0]}, {r}, L.keep(fold));
      return true;
    }
  d.combine = L.lowerRegion(op->getRegion(0), op);
  if (!d.combine)
    return false;
  if (d.combine->blocks.size() != 1 || d.combine->blocks[0].arguments.size() != 2 * d.inputs.size())
    return L.error(op, "combine region must take two arguments per operand");
  // Its first n arguments hold the running values.
  const std::vector<SlotId> &args = d.combine->blocks[0].arguments;
  d.combined = planMoves(L.program(), d.combine->blocks[0].term,
                         std::vector<SlotId>(args.begin(), args.begin() + d.inputs.size()));
  for (mlir::Value r : op->getResults()) {
    SlotId s = L.def(r, op);
    if (s == kNoSlot)
      return false;
    d.outputs.push_back(s);
  }
  L.emit(op, Scan ? &scanKernel : &reduceKernel, {}, {}, L.keep(std::move(d)));
  return true;
}

} // namespace

void registerReduceOps(OpTable &t) {
  t.add("tt.reduce", &lowerFold<false>);
  t.add("tt.scan", &lowerFold<true>);
}

} // namespace ttinterp::interp
