//===- ArithOps.cpp - The arith dialect: constants, arithmetic, compares, casts -===//
//
// Integers wrap (two's complement); shifts by the bit width or more give what
// NVIDIA's shl/shr give (0, or the sign fill for shrsi); division by zero gives
// all ones (a remainder: the dividend), not undefined behaviour. Float min/max
// follow MLIR: maximumf/minimumf propagate NaN, maxnumf/minnumf return the
// non-NaN operand. fptosi/fptoui saturate and map NaN to 0, as the GPU's cvt.rzi does.
//
//===----------------------------------------------------------------------===//
#include "ArithFunctors.h"
#include "OpSupport.h"
#include "ttinterp/frontend/Frontend.h"

#include "llvm/ADT/APFloat.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace ttinterp::interp {
namespace {

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// Writes one attribute element into a compute-representation buffer.
template <DType D> void putElement(uint8_t *dst, const llvm::APInt *i, const llvm::APFloat *f) {
  Repr<D> v{};
  if constexpr (isFloat(D)) {
    llvm::APFloat x = *f;
    bool lost;
    x.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
    v = Repr<D>(x.convertToDouble()); // exact: the value came from type D
  } else if constexpr (D == DType::I1) {
    v = uint8_t(i->getZExtValue() & 1);
  } else if constexpr (D == DType::Ptr) {
    v = i->getZExtValue();
  } else {
    v = Repr<D>(i->getSExtValue());
  }
  std::memcpy(dst, &v, sizeof(v));
}

bool lowerConstant(mlir::Operation *op, Lowerer &L) {
  // MLIR parses `dense<16> : tensor<4x!tt.ptr<f32>>`, but reading its elements as numbers
  // asserts (or, without assertions, reads out of bounds): only integer and float elements
  // have a number's storage.
  if (auto dense = mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(op->getAttr("value"));
      dense &&
      !mlir::isa<mlir::IntegerType, mlir::IndexType, mlir::FloatType>(dense.getElementType())) {
    return L.error(op, fmt::format("dense constants of element type {} are not supported",
                                   frontend::printed(dense.getElementType())));
  }
  // `dense<32>` feeding only ops that take a splat's scalar (`ptrs + 32`) is
  // held as that one scalar, like a tt.splat.
  auto splat = mlir::dyn_cast_or_null<mlir::SplatElementsAttr>(op->getAttr("value"));
  if (splat && splat.getNumElements() > 1 && onlyScalarReaders(op->getResult(0))) {
    std::optional<DType> d = Lowerer::dtypeOf(splat.getElementType());
    if (!d)
      return L.error(op, "unsupported constant element type");
    SlotId scalar = L.scratch(*d, {});
    std::vector<uint8_t> bytes(computeSize(*d));
    llvm::APInt i = isFloat(*d) ? llvm::APInt() : splat.getSplatValue<llvm::APInt>();
    llvm::APFloat f = isFloat(*d) ? splat.getSplatValue<llvm::APFloat>() : llvm::APFloat(0.0);
    visitAny(*d, [&](auto tag) {
      putElement<decltype(tag)::value>(bytes.data(), &i, &f);
      return 0;
    });
    L.constant(scalar, std::move(bytes));
    L.recordSplat(op->getResult(0), scalar);
    return true;
  }
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  const Slot &s = L.slot(r);
  size_t size = computeSize(s.dtype);
  std::vector<uint8_t> bytes(s.bytes());
  mlir::Attribute value = op->getAttr("value");
  auto put = [&](size_t index, const llvm::APInt *i, const llvm::APFloat *f) {
    visitAny(s.dtype, [&](auto tag) {
      putElement<decltype(tag)::value>(bytes.data() + index * size, i, f);
      return 0;
    });
  };
  if (auto dense = mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(value)) {
    if (dense.getNumElements() != s.numel)
      return L.error(op, "constant has the wrong number of elements");
    bool isF = isFloat(s.dtype);
    if (dense.isSplat()) {
      llvm::APInt i = isF ? llvm::APInt() : dense.getSplatValue<llvm::APInt>();
      llvm::APFloat f = isF ? dense.getSplatValue<llvm::APFloat>() : llvm::APFloat(0.0);
      for (int64_t k = 0; k < s.numel; ++k)
        put(size_t(k), &i, &f);
    } else if (isF) {
      size_t k = 0;
      for (llvm::APFloat f : dense.getValues<llvm::APFloat>())
        put(k++, nullptr, &f);
    } else {
      size_t k = 0;
      for (llvm::APInt i : dense.getValues<llvm::APInt>())
        put(k++, &i, nullptr);
    }
  } else if (auto i = mlir::dyn_cast_or_null<mlir::IntegerAttr>(value)) {
    llvm::APInt v = i.getValue();
    put(0, &v, nullptr);
  } else if (auto f = mlir::dyn_cast_or_null<mlir::FloatAttr>(value)) {
    llvm::APFloat v = f.getValue();
    put(0, nullptr, &v);
  } else {
    return L.error(op, "unsupported constant attribute");
  }
  L.constant(r, std::move(bytes));
  return true;
}

//===----------------------------------------------------------------------===//
// Integer arithmetic
//===----------------------------------------------------------------------===//

/// Division family. With SplatDivisor, b is one scalar standing for every lane's. A zero
/// divisor gives all ones for a quotient and the dividend for a remainder (docs/semantics.md):
/// masked-off lanes load 0, and kernels divide whole blocks before a masked store.
enum class DivKind { DivSI, DivUI, RemSI, RemUI, CeilDivSI, FloorDivSI, CeilDivUI };

template <DType D, DivKind K, bool SplatDivisor> void divKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  using U = UnsignedRepr<D>;
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]);
  T *r = f.at<T>(in.results[0]);
  const int64_t n = in.n;
  auto divisor = [b](int64_t i) { return b[SplatDivisor ? 0 : i]; };
  constexpr bool remainder = K == DivKind::RemSI || K == DivKind::RemUI;
  const T byZero = wrap<D>(T(U(~uint64_t(0)))); // a quotient by zero: all ones
  int64_t zeros = 0;
  for (int64_t i = 0, checked = SplatDivisor ? std::min<int64_t>(n, 1) : n; i < checked; ++i)
    zeros += b[i] == 0;
  constexpr bool truncating =
      K == DivKind::DivSI || K == DivKind::RemSI || K == DivKind::DivUI || K == DivKind::RemUI;
  if constexpr (D == DType::I32 && truncating) {
    // The vector unit's exact division (simd/Division.cpp): a group norm's per-lane channel
    // `offsets // per_channel` took a quarter of its launch in scalar divides.
    constexpr simd::IntDivOp op = K == DivKind::DivSI   ? simd::IntDivOp::DivS
                                  : K == DivKind::DivUI ? simd::IntDivOp::DivU
                                  : K == DivKind::RemSI ? simd::IntDivOp::RemS
                                                        : simd::IntDivOp::RemU;
    if (zeros == 0) {
      simd::intDivide32(op, a, b, SplatDivisor, r, n);
      return;
    }
    if constexpr (SplatDivisor) {
      for (int64_t i = 0; i < n; ++i)
        r[i] = remainder ? a[i] : byZero;
    } else {
      // The vector code divides every lane: it gets divisors without the zeros, and their
      // lanes are set after it (from values kept first: r may be a's or b's slot).
      std::vector<T> nonzero(b, b + n);
      std::vector<std::pair<int64_t, T>> byZeroLanes;
      for (int64_t i = 0; i < n; ++i)
        if (nonzero[size_t(i)] == 0) {
          nonzero[size_t(i)] = 1;
          byZeroLanes.emplace_back(i, remainder ? a[i] : byZero);
        }
      simd::intDivide32(op, a, nonzero.data(), false, r, n);
      for (auto [i, v] : byZeroLanes)
        r[i] = v;
    }
    return;
  }
  // Other widths and the rounding kinds (rare in kernels): 64-bit integer division a lane.
  for (int64_t i = 0; i < n; ++i) {
    if (zeros != 0 && divisor(i) == 0) {
      r[i] = remainder ? a[i] : byZero;
      continue;
    }
    int64_t sa = signedValue<D>(a[i]), sb = signedValue<D>(divisor(i));
    uint64_t ua = unsignedValue<D>(a[i]), ub = unsignedValue<D>(divisor(i));
    // The only signed overflow, MIN / -1, wraps to MIN (remainder 0): done in
    // 64 bits it cannot overflow except for i64, handled explicitly.
    bool overflow = sb == -1 && sa == std::numeric_limits<int64_t>::min();
    int64_t q = overflow ? sa : sa / sb;
    int64_t rem = overflow ? 0 : sa % sb;
    uint64_t v = 0;
    switch (K) {
    case DivKind::DivSI:
      v = uint64_t(q);
      break;
    case DivKind::RemSI:
      v = uint64_t(rem);
      break;
    case DivKind::DivUI:
      v = ua / ub;
      break;
    case DivKind::RemUI:
      v = ua % ub;
      break;
    case DivKind::CeilDivSI:
      v = uint64_t(q + ((rem != 0 && ((rem > 0) == (sb > 0))) ? 1 : 0));
      break;
    case DivKind::FloorDivSI:
      v = uint64_t(q - ((rem != 0 && ((rem < 0) != (sb < 0))) ? 1 : 0));
      break;
    case DivKind::CeilDivUI:
      v = ua / ub + (ua % ub != 0);
      break;
    }
    r[i] = wrap<D>(T(U(v)));
  }
}

/// arith.mulsi_extended / mului_extended: the low and high halves of the
/// double-width product.
template <DType D, bool Signed> void mulExtendedKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  using U = UnsignedRepr<D>;
  constexpr unsigned bits = bitWidth<D>();
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]);
  T *lo = f.at<T>(in.results[0]), *hi = f.at<T>(in.results[1]);
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    __int128 p = Signed
                     ? __int128(signedValue<D>(a[i])) * signedValue<D>(b[i])
                     : __int128((unsigned __int128)unsignedValue<D>(a[i]) * unsignedValue<D>(b[i]));
    lo[i] = wrap<D>(T(U(uint64_t(p))));
    hi[i] = wrap<D>(T(U(uint64_t(p >> bits))));
  }
}

template <bool Signed> bool lowerMulExtended(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0)), b = L.use(op->getOperand(1));
  SlotId lo = L.def(op->getResult(0), op), hi = L.def(op->getResult(1), op);
  if (lo == kNoSlot || hi == kNoSlot)
    return false;
  ExecFn fn = visitInt(L.slot(lo).dtype, [](auto tag) -> ExecFn {
    return &mulExtendedKernel<decltype(tag)::value, Signed>;
  });
  if (!fn)
    return L.error(op, "operands must be integers");
  L.emit(op, fn, {a, b}, {lo, hi});
  return true;
}

/// Registered with the divisor a splat's scalar (kDivisorOperand): one check for zero, one
/// reciprocal (simd::intDivide32).
template <DivKind K> bool lowerDiv(mlir::Operation *op, Lowerer &L) {
  std::optional<SlotId> splatDivisor = L.splatOf(op->getOperand(1));
  SlotId a = L.use(op->getOperand(0));
  SlotId b = splatDivisor.value_or(L.use(op->getOperand(1)));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visitInt(L.slot(r).dtype, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    return splatDivisor ? &divKernel<D, K, true> : &divKernel<D, K, false>;
  });
  L.emit(op, fn, {a, b}, {r});
  return true;
}

//===----------------------------------------------------------------------===//
// Float arithmetic
//===----------------------------------------------------------------------===//


struct NegF {
  template <DType D> static Repr<D> apply(Repr<D> a) { return -a; }
};

//===----------------------------------------------------------------------===//
// Comparisons and select
//===----------------------------------------------------------------------===//

/// Integer predicate P (arith::CmpIPredicate) on compute values. Compared in
/// the type's own width, so the loop vectorises; i1 is signed (true is -1).
template <DType D, int P> bool compareInts(Repr<D> x, Repr<D> y) {
  using Signed = std::conditional_t<D == DType::I1, int8_t, std::make_signed_t<Repr<D>>>;
  using Unsigned = std::make_unsigned_t<Signed>;
  Signed sx = D == DType::I1 ? Signed(-Signed(x & 1)) : Signed(x);
  Signed sy = D == DType::I1 ? Signed(-Signed(y & 1)) : Signed(y);
  Unsigned ux = Unsigned(x), uy = Unsigned(y);
  switch (P) {
  case 0: return ux == uy;
  case 1: return ux != uy;
  case 2: return sx < sy;
  case 3: return sx <= sy;
  case 4: return sx > sy;
  case 5: return sx >= sy;
  case 6: return ux < uy;
  case 7: return ux <= uy;
  case 8: return ux > uy;
  case 9: return ux >= uy;
  }
  return false;
}

/// `ScalarRhs`: the right operand is a splat's scalar (`offsets < splat(n)`).
template <DType D, int P, bool ScalarRhs> void cmpIKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]);
  uint8_t *r = f.at<uint8_t>(in.results[0]);
  if constexpr (ScalarRhs) {
    const T y = b[0];
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = compareInts<D, P>(a[i], y);
  } else {
    for (int64_t i = 0, n = in.n; i < n; ++i)
      r[i] = compareInts<D, P>(a[i], b[i]);
  }
}

template <DType D, int P> void cmpFKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  const T *a = f.at<T>(in.operands[0]), *b = f.at<T>(in.operands[1]);
  uint8_t *r = f.at<uint8_t>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    T x = a[i], y = b[i];
    bool unordered = std::isnan(x) || std::isnan(y);
    bool v = false;
    switch (P) { // arith::CmpFPredicate values
    case 0: v = false; break;
    case 1: v = !unordered && x == y; break;
    case 2: v = !unordered && x > y; break;
    case 3: v = !unordered && x >= y; break;
    case 4: v = !unordered && x < y; break;
    case 5: v = !unordered && x <= y; break;
    case 6: v = !unordered && x != y; break;
    case 7: v = !unordered; break;
    case 8: v = unordered || x == y; break;
    case 9: v = unordered || x > y; break;
    case 10: v = unordered || x >= y; break;
    case 11: v = unordered || x < y; break;
    case 12: v = unordered || x <= y; break;
    case 13: v = unordered || x != y; break;
    case 14: v = unordered; break;
    case 15: v = true; break;
    }
    r[i] = v;
  }
}

template <template <DType, int> class K, DType D, int... P>
ExecFn pickPredicate(int p, std::integer_sequence<int, P...>) {
  ExecFn fn = nullptr;
  ((p == P ? (fn = &K<D, P>::run, 0) : 0), ...);
  return fn;
}

template <DType D, int P> struct CmpI {
  static void run(Frame &f, const Instr &in) { cmpIKernel<D, P, false>(f, in); }
};
template <DType D, int P> struct CmpIScalarRhs {
  static void run(Frame &f, const Instr &in) { cmpIKernel<D, P, true>(f, in); }
};
template <DType D, int P> struct CmpF {
  static void run(Frame &f, const Instr &in) { cmpFKernel<D, P>(f, in); }
};

struct RangeCompareData {
  int64_t rangeStart = 0;
  bool hasStart = false;
};

/// A fused range compare (Fusion.h): r[i] = i32(start + rangeStart + i) < bound.
/// Operands: bound, then start if any.
template <bool Unsigned> void rangeCompareKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const RangeCompareData *>(in.data);
  int32_t bound = *f.at<int32_t>(in.operands[0]);
  int32_t start = d.hasStart ? *f.at<int32_t>(in.operands[1]) : 0;
  uint8_t *r = f.at<uint8_t>(in.results[0]);
  if (std::optional<int64_t> active = rangePrefix(start, d.rangeStart, bound, Unsigned, in.n)) {
    std::memset(r, 1, size_t(*active));
    std::memset(r + *active, 0, size_t(in.n - *active));
    return;
  }
  for (int64_t i = 0, n = in.n; i < n; ++i)
    r[i] = rangeLane(start, d.rangeStart, bound, Unsigned, i);
}

bool lowerRangeCompare(mlir::Operation *op, const RangeCompare &c, Lowerer &L) {
  SlotId bound = L.use(c.bound);
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  std::vector<SlotId> operands{bound};
  if (c.start)
    operands.push_back(L.use(c.start));
  const RangeCompareData *data = L.keep(RangeCompareData{c.rangeStart, bool(c.start)});
  L.emit(op, c.unsignedBound ? &rangeCompareKernel<true> : &rangeCompareKernel<false>, operands,
         {r}, data);
  return true;
}

bool lowerCmpI(mlir::Operation *op, Lowerer &L) {
  if (const RangeCompare *c = L.rangeCompare(op))
    return lowerRangeCompare(op, *c, L);
  std::optional<SlotId> scalarRhs = L.splatOf(op->getOperand(1));
  SlotId a = L.use(op->getOperand(0)), b = scalarRhs.value_or(L.use(op->getOperand(1)));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  int p = int(intAttr(op, "predicate", -1));
  DType d = L.slot(a).dtype;
  auto pick = [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    return scalarRhs ? pickPredicate<CmpIScalarRhs, D>(p, std::make_integer_sequence<int, 10>())
                     : pickPredicate<CmpI, D>(p, std::make_integer_sequence<int, 10>());
  };
  ExecFn fn = d == DType::Ptr ? pick(DTypeTag<DType::I64>{}) : visitInt(d, pick);
  if (!fn)
    return L.error(op, "unsupported predicate or operand type");
  L.emit(op, fn, {a, b}, {r});
  return true;
}

bool lowerCmpF(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0)), b = L.use(op->getOperand(1));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  int p = int(intAttr(op, "predicate", -1));
  ExecFn fn = visitFloat(L.slot(a).dtype, [&](auto tag) -> ExecFn {
    return pickPredicate<CmpF, decltype(tag)::value>(p, std::make_integer_sequence<int, 16>());
  });
  if (!fn)
    return L.error(op, "unsupported predicate or operand type");
  L.emit(op, fn, {a, b}, {r});
  return true;
}

template <class T, bool ScalarCondition> void selectKernel(Frame &f, const Instr &in) {
  const uint8_t *c = f.at<uint8_t>(in.operands[0]);
  const T *a = f.at<T>(in.operands[1]), *b = f.at<T>(in.operands[2]);
  T *r = f.at<T>(in.results[0]);
  const int64_t n = in.n;
  // r may be a's or b's own bytes (Lowerer::mayOverwrite): then a copy of them is no copy.
  if constexpr (ScalarCondition) {
    if (const T *taken = c[0] ? a : b; taken != r)
      std::memcpy(r, taken, size_t(n) * sizeof(T));
  } else if (!std::memchr(c, 0, size_t(n))) {
    // The usual mask of a block that is not a tail: every lane takes a.
    if (a != r)
      std::memcpy(r, a, size_t(n) * sizeof(T));
  } else {
    // A blend of bits rather than a branch per lane, so it vectorises.
    for (int64_t i = 0; i < n; ++i) {
      T take = T(T(0) - T(c[i] != 0));
      r[i] = T((a[i] & take) | (b[i] & T(~take)));
    }
  }
}

template <bool S> ExecFn selectBySize(size_t size) {
  switch (size) {
  case 1:
    return &selectKernel<uint8_t, S>;
  case 2:
    return &selectKernel<uint16_t, S>;
  case 4:
    return &selectKernel<uint32_t, S>;
  default:
    return &selectKernel<uint64_t, S>;
  }
}

bool lowerSelect(mlir::Operation *op, Lowerer &L) {
  SlotId c = L.use(op->getOperand(0)), a = L.use(op->getOperand(1)), b = L.use(op->getOperand(2));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  size_t size = computeSize(L.slot(r).dtype);
  bool scalar = L.slot(c).numel == 1 && L.slot(r).numel != 1;
  L.emit(op, scalar ? selectBySize<true>(size) : selectBySize<false>(size), {c, a, b}, {r});
  if (L.slot(a).numel == L.slot(r).numel && L.slot(b).numel == L.slot(r).numel)
    L.mayOverwrite(r, {a, b}); // one pass, r[i] after a[i] and b[i]; the mask is another size
  return true;
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

enum class Cast { ExtSI, ExtUI, TruncI, SIToFP, UIToFP, FPToSI, FPToUI, ExtF, TruncF };

/// double -> narrow float D, rounding once: round to odd into float first
/// (float keeps >= p+2 bits of every narrow type), then to nearest even.
template <DType D> Repr<D> roundFromDouble(double v) {
  if constexpr (D == DType::F64) {
    return v;
  } else if constexpr (D == DType::F32) {
    return float(v); // one rounding, to nearest even
  } else {
    float f = floatRoundToOdd(v);
    // Narrowing to fp8 saturates as tt.fp_to_fp's rtne does (Triton never lowers
    // arith.truncf to fp8 itself; docs/semantics.md).
    if constexpr (isFP8(D))
      return fp8ToFloat(D, convertToFP8(D, f, /*towardZero=*/false));
    return roundTo<D>(f);
  }
}

template <DType To> Repr<To> saturateToInt(double v, bool isSigned) {
  if (std::isnan(v))
    return 0;
  using U = UnsignedRepr<To>;
  double lo, hi;
  if constexpr (To == DType::I1) {
    lo = isSigned ? -1 : 0;
    hi = isSigned ? 0 : 1;
  } else if (isSigned) {
    lo = double(std::numeric_limits<Repr<To>>::min());
    hi = double(std::numeric_limits<Repr<To>>::max());
  } else {
    lo = 0;
    hi = double(std::numeric_limits<U>::max());
  }
  v = std::trunc(v);
  // Compare before converting: casting an out-of-range double is UB in C++.
  if (v <= lo)
    return isSigned ? (To == DType::I1 ? Repr<To>(lo != 0) : Repr<To>(int64_t(lo))) : Repr<To>(0);
  if (v >= hi) {
    if (isSigned)
      return To == DType::I1 ? Repr<To>(0) : Repr<To>(std::numeric_limits<Repr<To>>::max());
    return To == DType::I1 ? Repr<To>(1) : Repr<To>(U(std::numeric_limits<U>::max()));
  }
  if (isSigned)
    return wrap<To>(Repr<To>(int64_t(v)));
  return Repr<To>(U(uint64_t(v)));
}

template <DType From, DType To, Cast C> void castKernel(Frame &f, const Instr &in) {
  const Repr<From> *a = f.at<Repr<From>>(in.operands[0]);
  Repr<To> *r = f.at<Repr<To>>(in.results[0]);
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    if constexpr (C == Cast::ExtSI)
      r[i] = wrap<To>(Repr<To>(signedValue<From>(a[i])));
    else if constexpr (C == Cast::ExtUI || C == Cast::TruncI)
      r[i] = wrap<To>(Repr<To>(UnsignedRepr<To>(unsignedValue<From>(a[i]))));
    else if constexpr (C == Cast::SIToFP)
      r[i] = To == DType::F32 ? Repr<To>(signedValue<From>(a[i]))
                              : roundFromDouble<To>(double(signedValue<From>(a[i])));
    else if constexpr (C == Cast::UIToFP)
      r[i] = To == DType::F32 ? Repr<To>(unsignedValue<From>(a[i]))
                              : roundFromDouble<To>(double(unsignedValue<From>(a[i])));
    else if constexpr (C == Cast::FPToSI)
      r[i] = saturateToInt<To>(double(a[i]), true);
    else if constexpr (C == Cast::FPToUI)
      r[i] = saturateToInt<To>(double(a[i]), false);
    else
      r[i] = roundFromDouble<To>(double(a[i]));
  }
}

template <Cast C> bool lowerCast(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  constexpr bool fromInt = C == Cast::ExtSI || C == Cast::ExtUI || C == Cast::TruncI ||
                           C == Cast::SIToFP || C == Cast::UIToFP;
  constexpr bool toInt = C == Cast::ExtSI || C == Cast::ExtUI || C == Cast::TruncI ||
                         C == Cast::FPToSI || C == Cast::FPToUI;
  auto pickTo = [&](auto from) -> ExecFn {
    auto inner = [](auto to) -> ExecFn {
      return &castKernel<decltype(from)::value, decltype(to)::value, C>;
    };
    if constexpr (toInt)
      return visitInt(L.slot(r).dtype, inner);
    else
      return visitFloat(L.slot(r).dtype, inner);
  };
  ExecFn fn;
  if constexpr (fromInt)
    fn = visitInt(L.slot(a).dtype, pickTo);
  else
    fn = visitFloat(L.slot(a).dtype, pickTo);
  if (!fn)
    return L.error(op, "unsupported operand or result type");
  L.emit(op, fn, {a}, {r});
  return true;
}

template <DType From, DType To> void bitcastKernel(Frame &f, const Instr &in) {
  const Repr<From> *a = f.at<Repr<From>>(in.operands[0]);
  Repr<To> *r = f.at<Repr<To>>(in.results[0]);
  uint8_t bits[8];
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    storeElement<From>(bits, a[i]);
    r[i] = loadElement<To>(bits);
  }
}

/// A pointer bitcast to another pointee type is the same address with the
/// same provenance (it stays bounded by, and tracked as, its argument).
void pointerBitcastKernel(Frame &f, const Instr &in) {
  std::memcpy(f.at<uint64_t>(in.results[0]), f.at<uint64_t>(in.operands[0]),
              size_t(in.n) * sizeof(uint64_t));
}

bool lowerIndexCast(mlir::Operation *op, Lowerer &L) {
  // index is i64 here: index_cast is a sign extension or truncation.
  DType from = L.slot(L.use(op->getOperand(0))).dtype;
  auto to = Lowerer::dtypeOf(op->getResult(0).getType());
  if (!to)
    return L.error(op, "unsupported result type");
  return byteSize(*to) > byteSize(from) ? lowerCast<Cast::ExtSI>(op, L)
                                        : lowerCast<Cast::TruncI>(op, L);
}

} // namespace

/// tt.int_to_ptr's kernel (TensorOps.cpp).
ExecFn intToPtrKernelFor(DType from);

bool lowerBitcast(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  DType from = L.slot(a).dtype, to = L.slot(r).dtype;
  if (byteSize(from) != byteSize(to) || L.slot(a).numel != L.slot(r).numel)
    return L.error(op, "bitcast needs types of one bit width");
  if (from == DType::Ptr && to == DType::Ptr) {
    L.emit(op, &pointerBitcastKernel, {a}, {r});
    return true;
  }
  if (to == DType::Ptr && isInteger(from)) {
    // An integer made into a pointer, as tt.int_to_ptr makes it (provenance by address).
    L.emit(op, intToPtrKernelFor(from), {a}, {r});
    return true;
  }
  ExecFn fn = visitAny(from, [&](auto f) -> ExecFn {
    return visitAny(to, [](auto t) -> ExecFn {
      if constexpr (byteSize(decltype(f)::value) == byteSize(decltype(t)::value))
        return &bitcastKernel<decltype(f)::value, decltype(t)::value>;
      else
        return nullptr;
    });
  });
  L.emit(op, fn, {a}, {r});
  return true;
}

void registerArithOps(OpTable &t) {
  constexpr ScalarOperands kDivisorOperand = 0b10;
  t.add("arith.constant", &lowerConstant);
#define TTINTERP_ADD_INT(NAME, FN) t.add(NAME, &binaryI<FN>, kBothOperands);
  TTINTERP_COMMUTATIVE_INT_OPS(TTINTERP_ADD_INT)
  TTINTERP_OTHER_INT_OPS(TTINTERP_ADD_INT)
#undef TTINTERP_ADD_INT
  t.add("arith.mulsi_extended", &lowerMulExtended<true>);
  t.add("arith.mului_extended", &lowerMulExtended<false>);
  t.add("arith.divsi", &lowerDiv<DivKind::DivSI>, kDivisorOperand);
  t.add("arith.divui", &lowerDiv<DivKind::DivUI>, kDivisorOperand);
  t.add("arith.remsi", &lowerDiv<DivKind::RemSI>, kDivisorOperand);
  t.add("arith.remui", &lowerDiv<DivKind::RemUI>, kDivisorOperand);
  t.add("arith.ceildivsi", &lowerDiv<DivKind::CeilDivSI>, kDivisorOperand);
  t.add("arith.floordivsi", &lowerDiv<DivKind::FloorDivSI>, kDivisorOperand);
  t.add("arith.ceildivui", &lowerDiv<DivKind::CeilDivUI>, kDivisorOperand);
#define TTINTERP_ADD_FLOAT(NAME, FN) t.add(NAME, &binaryF<FN>, kBothOperands);
  TTINTERP_COMMUTATIVE_FLOAT_OPS(TTINTERP_ADD_FLOAT)
  TTINTERP_OTHER_FLOAT_OPS(TTINTERP_ADD_FLOAT)
#undef TTINTERP_ADD_FLOAT
  t.add("arith.negf", [](mlir::Operation *op, Lowerer &L) { return lowerUnary<NegF>(op, L, Floats); });
  t.add("arith.cmpi", &lowerCmpI, /*scalarOperands=*/0b10);
  t.add("arith.cmpf", &lowerCmpF);
  t.add("arith.select", &lowerSelect);
  t.add("arith.extsi", &lowerCast<Cast::ExtSI>);
  t.add("arith.extui", &lowerCast<Cast::ExtUI>);
  t.add("arith.trunci", &lowerCast<Cast::TruncI>);
  t.add("arith.sitofp", &lowerCast<Cast::SIToFP>);
  t.add("arith.uitofp", &lowerCast<Cast::UIToFP>);
  t.add("arith.fptosi", &lowerCast<Cast::FPToSI>);
  t.add("arith.fptoui", &lowerCast<Cast::FPToUI>);
  t.add("arith.extf", &lowerCast<Cast::ExtF>);
  t.add("arith.truncf", &lowerCast<Cast::TruncF>);
  t.add("arith.index_cast", &lowerIndexCast);
  t.add("arith.index_castui", &lowerIndexCast);
  t.add("arith.bitcast", &lowerBitcast);
}

} // namespace ttinterp::interp
