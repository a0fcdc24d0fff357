//===- OpSupport.h - Building blocks shared by op implementations -*- C++ -*-===//
#pragma once

#include "../Lowering.h"
#include "../simd/Simd.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstring>

namespace ttinterp::interp {

/// Whether every use of `v` reads a splat's scalar in place (OpTable), so a
/// splat-valued `v` need never be written out as a block (Lowerer::recordSplat).
inline bool onlyScalarReaders(mlir::Value v) {
  const OpTable &table = OpTable::get();
  bool all = !v.use_empty();
  for (mlir::OpOperand &use : v.getUses())
    all &= table.readsSplatScalar(use);
  return all;
}

/// Copies element `index` of slot `from` into the scalar slot `to` (a region's argument).
inline void copyElement(Frame &f, SlotId from, int64_t index, SlotId to, size_t size) {
  std::memcpy(f.atHome<uint8_t>(to), f.bytes(from) + index * size, size);
}
/// Copies the scalar slot `from` (a region's result) into element `index` of slot `to`.
inline void storeElementTo(Frame &f, SlotId from, SlotId to, int64_t index, size_t size) {
  std::memcpy(f.bytes(to) + index * size, f.bytes(from), size);
}

/// Which operands of an elementwise kernel are scalars standing for a splat
/// that was never materialised (Lowerer::splatOf).
enum class Splatted { None, Lhs, Rhs, Both };

/// The variant of a kernel template K<..., Splatted> for how `a` and `b` are held.
template <template <Splatted> class K>
ExecFn pickSplatted(const std::optional<SlotId> &a, const std::optional<SlotId> &b) {
  if (a && b)
    return &K<Splatted::Both>::run;
  if (a)
    return &K<Splatted::Lhs>::run;
  return b ? &K<Splatted::Rhs>::run : &K<Splatted::None>::run;
}

/// Functors whose f32 blocks run on simd::basic, the same IEEE operation compiled
/// for the CPU's vector unit (ArithFunctors.h marks them).
template <class Fn> struct SimdBasicOf {
  static constexpr bool available = false;
};

/// Elementwise kernels over same-shaped operands: r[i] = Fn(a[i], b[i]), where
/// a splatted operand is read once. Fn::apply<D> works on compute
/// representations; narrow floats round after.
template <DType D, class Fn, Splatted S = Splatted::None>
void binaryKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const T *a = f.at<T>(in.operands[0]);
  const T *b = f.at<T>(in.operands[1]);
  T *r = f.at<T>(in.results[0]);
  if constexpr (D == DType::F32 && SimdBasicOf<Fn>::available && S != Splatted::Both) {
    simd::basic(SimdBasicOf<Fn>::op, a, b, r, in.n,
                S == Splatted::Lhs   ? simd::ScalarOperand::Lhs
                : S == Splatted::Rhs ? simd::ScalarOperand::Rhs
                                     : simd::ScalarOperand::None,
                f.streamResult);
  } else if constexpr (S == Splatted::None) {
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = roundTo<D>(Fn::template apply<D>(a[i], b[i]));
  } else if constexpr (S == Splatted::Lhs) {
    const T x = a[0];
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = roundTo<D>(Fn::template apply<D>(x, b[i]));
  } else if constexpr (S == Splatted::Rhs) {
    const T y = b[0];
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = roundTo<D>(Fn::template apply<D>(a[i], y));
  } else {
    const T v = roundTo<D>(Fn::template apply<D>(a[0], b[0]));
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = v;
  }
}

/// binaryKernel for a value of one element (a scalar's index or statistic): no loop, no
/// call into the vector unit's dispatched kernel, which cost a scalar op more than the op.
template <DType D, class Fn> void scalarBinaryKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  *f.at<T>(in.results[0]) =
      roundTo<D>(Fn::template apply<D>(*f.at<T>(in.operands[0]), *f.at<T>(in.operands[1])));
}

/// binaryKernel<D, Fn, S> as a template of S alone (for pickSplatted).
template <DType D, class Fn> struct BinaryKernelOf {
  template <Splatted S> struct With {
    static void run(Frame &f, const Instr &in) { binaryKernel<D, Fn, S>(f, in); }
  };
};

template <DType D, class Fn> void unaryKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const T *a = f.at<T>(in.operands[0]);
  T *r = f.at<T>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = roundTo<D>(Fn::template apply<D>(a[i]));
}

/// Lowers a same-type binary op with a kernel picked by the visitor (visitInt
/// or visitFloat). Register such ops with kBothOperands: either operand may be
/// a splat's scalar.
template <class Fn, class Visit> bool lowerBinary(mlir::Operation *op, Lowerer &L, Visit visit) {
  std::optional<SlotId> sa = L.splatOf(op->getOperand(0)), sb = L.splatOf(op->getOperand(1));
  SlotId a = sa.value_or(L.use(op->getOperand(0))), b = sb.value_or(L.use(op->getOperand(1)));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  const bool scalar = L.slot(r).numel == 1;
  ExecFn fn = visit(L.slot(r).dtype, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if (scalar)
      return &scalarBinaryKernel<D, Fn>;
    return pickSplatted<BinaryKernelOf<D, Fn>::template With>(sa, sb);
  });
  if (!fn)
    return L.error(op, "unsupported element type");
  L.emit(op, fn, {a, b}, {r});
  L.mayOverwrite(r, {a, b}); // binaryKernel: one pass, r[i] after a[i] and b[i]
  return true;
}

template <class Fn, class Visit> bool lowerUnary(mlir::Operation *op, Lowerer &L, Visit visit) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visit(L.slot(r).dtype, [](auto tag) -> ExecFn {
    return &unaryKernel<decltype(tag)::value, Fn>;
  });
  if (!fn)
    return L.error(op, "unsupported element type");
  L.emit(op, fn, {a}, {r});
  L.mayOverwrite(r, {a}); // unaryKernel: one pass, r[i] after a[i]
  return true;
}

// Visitors as callables, so lowerBinary<Fn>(op, L, Ints) reads like the op's type rule.
struct IntsT {
  template <class V> ExecFn operator()(DType d, V &&v) const { return visitInt(d, v); }
};
struct FloatsT {
  template <class V> ExecFn operator()(DType d, V &&v) const { return visitFloat(d, v); }
};
inline constexpr IntsT Ints{};
inline constexpr FloatsT Floats{};

/// LowerFns of integer and float binary ops (register with kBothOperands).
template <class Fn> bool binaryI(mlir::Operation *op, Lowerer &L) {
  return lowerBinary<Fn>(op, L, Ints);
}
template <class Fn> bool binaryF(mlir::Operation *op, Lowerer &L) {
  return lowerBinary<Fn>(op, L, Floats);
}

/// Unsigned view of an integer compute type (for wrapping arithmetic and
/// unsigned comparisons); i1 is a byte holding 0/1.
template <DType D> using UnsignedRepr = std::make_unsigned_t<Repr<D>>;

/// Reduces an integer result to its type's bit width (only i1 needs it: the
/// byte holding an i1 must stay 0 or 1).
template <DType D> constexpr Repr<D> wrap(Repr<D> v) {
  if constexpr (D == DType::I1)
    return Repr<D>(v & 1);
  else
    return v;
}

/// The signed value of an integer compute value (i1: true is -1, as in MLIR).
template <DType D> constexpr int64_t signedValue(Repr<D> v) {
  if constexpr (D == DType::I1)
    return v ? -1 : 0;
  else
    return int64_t(v);
}
/// The unsigned value of an integer compute value.
template <DType D> constexpr uint64_t unsignedValue(Repr<D> v) {
  return uint64_t(UnsignedRepr<D>(v));
}

/// The transcendentals whose float-held blocks run on simd::map (f64 on the C library), as
/// X(op name, simd::MathFn): MathOps.cpp registers them, and chains (ElementwiseChain.cpp)
/// call the same vector functions.
#define TTINTERP_VECTOR_MATH_OPS(X)                                                                \
  X("math.exp", Exp)                                                                               \
  X("math.exp2", Exp2)                                                                             \
  X("math.expm1", ExpM1)                                                                           \
  X("math.log", Log)                                                                               \
  X("math.log2", Log2)                                                                             \
  X("math.log10", Log10)                                                                           \
  X("math.log1p", Log1p)                                                                           \
  X("math.sin", Sin)                                                                               \
  X("math.cos", Cos)                                                                               \
  X("math.tan", Tan)                                                                               \
  X("math.tanh", Tanh)                                                                             \
  X("math.erf", Erf)                                                                               \
  X("math.atan", Atan)                                                                             \
  X("math.asin", Asin)                                                                             \
  X("math.acos", Acos)                                                                             \
  X("math.sinh", Sinh)                                                                             \
  X("math.cosh", Cosh)                                                                             \
  X("math.cbrt", Cbrt)
/// The vector function of a TTINTERP_VECTOR_MATH_OPS op, or nullopt for any other op.
std::optional<simd::MathFn> vectorMathFn(llvm::StringRef opName);

/// The name of the op that `op` runs as: its own, except for a libdevice call on f32 that
/// computes what a math-dialect op computes (`__nv_tanhf` is `math.tanh`), which is lowered,
/// fused into chains and compiled as that op (LibdeviceOps.cpp says which and why).
llvm::StringRef elementwiseOpName(mlir::Operation *op);

/// Row-major strides of a shape, in elements.
inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// The splat value of a float constant (dense splat or scalar), if `v` is one: exact for every
/// float type ttinterp holds (a double holds each of their values).
inline std::optional<double> splatConstant(mlir::Value v) {
  mlir::Operation *def = v.getDefiningOp();
  if (!def || def->getName().getStringRef() != "arith.constant")
    return std::nullopt;
  mlir::Attribute value = def->getAttr("value");
  if (auto dense = mlir::dyn_cast_or_null<mlir::DenseFPElementsAttr>(value))
    if (dense.isSplat())
      return dense.getSplatValue<llvm::APFloat>().convertToDouble();
  if (auto f = mlir::dyn_cast_or_null<mlir::FloatAttr>(value))
    return f.getValueAsDouble();
  return std::nullopt;
}

/// Whether the value read at `use` may be a tile view: a 2-D f32 block left where it lies in
/// memory, its rows Frame::rowStride elements apart, instead of copied into its slot. Only a
/// tt.dot that multiplies f32 operands as they are (ieee, an f32 result) reads a view, as its
/// left operand; the loader of that operand (MemoryOps.cpp) may then leave a tile of
/// immutable memory in place.
bool readsTileViews(mlir::OpOperand &use);

/// Integer attribute value, or `fallback` when absent.
inline int64_t intAttr(mlir::Operation *op, llvm::StringRef name, int64_t fallback = 0) {
  if (auto a = op->getAttrOfType<mlir::IntegerAttr>(name))
    return a.getValue().getSExtValue();
  return fallback;
}

} // namespace ttinterp::interp
