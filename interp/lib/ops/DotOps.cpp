//===- DotOps.cpp - tt.dot and tt.dot_scaled: matrix products -------------===//
//
// f32 (and f16/bf16/fp8, held as floats) products accumulate in f32 through the
// per-ISA GEMM micro-kernel (simd/Simd.h: one FMA chain per element, in k
// order, like the GPU's ieee path); f64 in double; i8 x i8 in i32. inputPrecision decides how f32
// inputs reach the tensor cores, and we feed the GEMM the same values: tf32
// keeps the top 19 bits (Triton's tf32 mma reads raw f32 registers); tf32x3,
// bf16x3 and bf16x6 are Triton's multi-pass emulations (TritonGPU passes
// F32DotTC and BF16DotTC), reproduced split for split and term for term, because
// their NaN cleanup and the late addition of c change results, not just bits.
// tt.dot_scaled follows sm_90's DecomposeScaledBlocked: both operands upcast to
// bf16 (f16 when either is fp16), multiplied by their scales in that type, then
// one bf16/f16 dot (docs/semantics.md, "Dot").
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include "ttinterp/frontend/Dialect.h"

#include "simd/Simd.h"

#include <limits>

namespace ttinterp::interp {
namespace {

enum Precision { TF32 = 0, TF32x3 = 1, IEEE = 2, BF16x3 = 3, BF16x6 = 4 };

/// Batch, M, N, K of a dot whose operands are [B x] M x K and [B x] K x N.
struct DotShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};
/// Both operands and the result 2-D, or all 3-D (batched); false after an error.
bool checkRanks(mlir::Operation *op, Lowerer &L, size_t a, size_t b, size_t r) {
  if ((a != 2 && a != 3) || b != a || r != a)
    return L.error(op, "operands must be 2-D (or 3-D batched) tensors");
  return true;
}

//===----------------------------------------------------------------------===//
// tt.dot
//===----------------------------------------------------------------------===//

inline float truncateToTF32(float x) {
  // Branch-free (NaN and infinity, exponent all ones, keep every bit), so
  // splitting a block vectorises.
  uint32_t u = floatBits(x);
  uint32_t keep = (u & 0x7F800000u) == 0x7F800000u ? 0xFFFFFFFFu : 0xFFFFE000u;
  return bitsFloat(u & keep);
}
inline float roundToTF32(float x) {
  if (std::isnan(x) || std::isinf(x))
    return x;
  uint32_t u = floatBits(x);
  u += 0x1000; // round half away from zero, as cvt.rna.tf32.f32
  return bitsFloat(u & 0xFFFFE000u);
}

/// The parts an f32 operand becomes, as the tensor cores see them.
void splitTF32(float x, float *p) { p[0] = truncateToTF32(x); }
/// F32DotTC: big = cvt.rna.tf32(x), small = x - big; the tf32 mma then drops
/// small's low 13 bits.
void splitTF32x3(float x, float *p) {
  p[0] = roundToTF32(x);
  p[1] = truncateToTF32(x - p[0]);
}
/// BF16DotTC: hi = bf16(x), then each next part is bf16 of what is left (f32
/// subtraction, exact unless hi overflowed).
template <int N> void splitBF16(float x, float *p) {
  for (int i = 0; i < N; ++i) {
    p[i] = roundTo<DType::BF16>(x);
    x -= p[i];
  }
}

struct Term {
  int a, b; ///< parts of a and b multiplied
};

/// How Triton 3.8 runs an f32 dot under one inputPrecision (ieee needs none).
/// With no cross terms it is one dot of part 0 accumulated into c (tf32). The
/// multi-pass precisions accumulate from zero: the cross terms in this order,
/// then NaNs of that partial sum become 0 (an infinite input has NaN residual
/// parts, and contributes through hi * hi alone), then hi * hi, then c is added
/// once in f32.
struct Emulation {
  int parts;
  /// Writes part j of x[i] to parts[j * n + i].
  void (*splitAll)(const float *x, int64_t n, float *parts);
  std::vector<Term> crossTerms;
};

constexpr int kMaxParts = 3;

/// One loop per split function (a template argument, so it inlines).
template <void (*Split)(float, float *), int Parts>
void splitAll(const float *x, int64_t n, float *parts) {
  float p[kMaxParts];
  for (int64_t i = 0; i < n; ++i) {
    Split(x[i], p);
    for (int j = 0; j < Parts; ++j)
      parts[j * n + i] = p[j];
  }
}

const Emulation *emulationOf(int precision) {
  static const Emulation tf32{1, &splitAll<&splitTF32, 1>, {}};
  static const Emulation tf32x3{2, &splitAll<&splitTF32x3, 2>, {{1, 0}, {0, 1}}};
  static const Emulation bf16x3{2, &splitAll<&splitBF16<2>, 2>, {{1, 0}, {0, 1}}};
  static const Emulation bf16x6{3, &splitAll<&splitBF16<3>, 3>,
                                {{1, 1}, {2, 0}, {0, 2}, {1, 0}, {0, 1}}};
  switch (precision) {
  case TF32:
    return &tf32;
  case TF32x3:
    return &tf32x3;
  case BF16x3:
    return &bf16x3;
  case BF16x6:
    return &bf16x6;
  default:
    return nullptr;
  }
}

struct DotData {
  DotShape s;
  const Emulation *emulation = nullptr; ///< null: ieee
  SlotId scratchAcc = kNoSlot, scratchA = kNoSlot, scratchB = kNoSlot;
};

template <DType Out> void floatDotKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const DotData *>(in.data);
  const DotShape &s = d.s;
  const float *a = f.at<float>(in.operands[0]);
  const float *b = f.at<float>(in.operands[1]);
  // a may be a tile view (readsTileViews): given only to an ieee dot of one batch with an f32
  // result, so only the one-pass f32 path below meets a stride other than k.
  const int64_t viewRows = f.rowStride[in.operands[0]];
  const int64_t lda = viewRows ? viewRows : s.k;
  const Repr<Out> *c = f.at<Repr<Out>>(in.operands[2]);
  Repr<Out> *r = f.at<Repr<Out>>(in.results[0]);
  int64_t sa = s.m * s.k, sb = s.k * s.n, sr = s.m * s.n;
  // Accumulate in f32 whatever the result type; narrow results round at the end.
  float *acc = f.at<float>(d.scratchAcc);
  for (int64_t bi = 0; bi < s.batch; ++bi) {
    const float *A = a + bi * sa, *B = b + bi * sb;
    const Repr<Out> *C = c + bi * sr;
    const Emulation *e = d.emulation;
    if (e) {
      float *pa = f.at<float>(d.scratchA), *pb = f.at<float>(d.scratchB);
      e->splitAll(A, sa, pa);
      e->splitAll(B, sb, pb);
      A = pa;
      B = pb;
    }
    if (!e || e->crossTerms.empty()) {
      if constexpr (Out == DType::F32) {
        // One pass (ieee, tf32): straight into the result, which may be c itself.
        simd::gemm(A, lda, B, s.n, C, r + bi * sr, s.m, s.n, s.k);
        continue;
      }
      for (int64_t i = 0; i < sr; ++i)
        acc[i] = float(C[i]);
      simd::gemm(A, B, acc, acc, s.m, s.n, s.k);
    } else {
      std::fill(acc, acc + sr, 0.0f);
      for (Term t : e->crossTerms)
        simd::gemm(A + t.a * sa, B + t.b * sb, acc, acc, s.m, s.n, s.k);
      for (int64_t i = 0; i < sr; ++i)
        if (std::isnan(acc[i]))
          acc[i] = 0.0f;
      simd::gemm(A, B, acc, acc, s.m, s.n, s.k);
      for (int64_t i = 0; i < sr; ++i)
        acc[i] += float(C[i]);
    }
    for (int64_t i = 0; i < sr; ++i)
      r[bi * sr + i] = roundTo<Out>(Repr<Out>(acc[i]));
  }
}

void doubleDotKernel(Frame &f, const Instr &in) {
  const DotShape &s = static_cast<const DotData *>(in.data)->s;
  const double *a = f.at<double>(in.operands[0]), *b = f.at<double>(in.operands[1]);
  const double *c = f.at<double>(in.operands[2]);
  double *r = f.at<double>(in.results[0]);
  for (int64_t bi = 0; bi < s.batch; ++bi)
    simd::gemm(a + bi * s.m * s.k, b + bi * s.k * s.n, c + bi * s.m * s.n, r + bi * s.m * s.n, s.m,
               s.n, s.k);
}

void int8DotKernel(Frame &f, const Instr &in) {
  const DotShape &s = static_cast<const DotData *>(in.data)->s;
  const int8_t *a = f.at<int8_t>(in.operands[0]), *b = f.at<int8_t>(in.operands[1]);
  const int32_t *c = f.at<int32_t>(in.operands[2]);
  int32_t *r = f.at<int32_t>(in.results[0]);
  for (int64_t bi = 0; bi < s.batch; ++bi) {
    const int8_t *A = a + bi * s.m * s.k, *B = b + bi * s.k * s.n;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        uint32_t acc = uint32_t(c[(bi * s.m + i) * s.n + j]); // wraps like the hardware
        for (int64_t p = 0; p < s.k; ++p)
          acc += uint32_t(int32_t(A[i * s.k + p]) * int32_t(B[p * s.n + j]));
        r[(bi * s.m + i) * s.n + j] = int32_t(acc);
      }
  }
}

} // namespace

bool readsTileViews(mlir::OpOperand &use) {
  mlir::Operation *dot = use.getOwner();
  // Only the left operand: the micro-kernel (simd::gemm) reads a few rows of `a` at a time,
  // but all k rows of `b` for every few rows of `a`, and b's rows a matrix row apart in memory
  // (2 KiB in a 512-wide matrix) fall into the same few L1 sets: read in place, b made a
  // 512^3 matmul 1-19% slower; `a` in place makes it 4-10% faster (docs/performance.md).
  if (dot->getName().getStringRef() != "tt.dot" || use.getOperandNumber() != 0)
    return false;
  auto isF32Matrix = [](mlir::Value v) {
    auto t = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
    return t && t.getRank() == 2 && t.getElementType().isF32();
  };
  return isF32Matrix(dot->getOperand(0)) && isF32Matrix(dot->getOperand(1)) &&
         isF32Matrix(dot->getResult(0)) &&
         !emulationOf(int(intAttr(dot, "inputPrecision", IEEE)));
}

namespace {

bool lowerDot(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0)), b = L.use(op->getOperand(1)), c = L.use(op->getOperand(2));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  const Slot &sa = L.slot(a), &sb = L.slot(b), &sr = L.slot(r);
  size_t rank = sa.shape.size();
  if (!checkRanks(op, L, rank, sb.shape.size(), sr.shape.size()))
    return false;
  DotData d;
  d.s.batch = rank == 3 ? sa.shape[0] : 1;
  d.s.m = sa.shape[rank - 2];
  d.s.k = sa.shape[rank - 1];
  d.s.n = sb.shape[rank - 1];
  if (sb.shape[rank - 2] != d.s.k || sr.shape[rank - 2] != d.s.m || sr.shape[rank - 1] != d.s.n)
    return L.error(op, "operand shapes do not multiply");
  ExecFn fn = nullptr;
  if (sa.dtype == DType::F64 && sr.dtype == DType::F64) {
    fn = &doubleDotKernel;
  } else if (sa.dtype == DType::I8 && sb.dtype == DType::I8 && sr.dtype == DType::I32) {
    fn = &int8DotKernel;
  } else if (isFloat(sa.dtype) && computeSize(sa.dtype) == 4 && isFloat(sb.dtype) &&
             computeSize(sb.dtype) == 4 && isFloat(sr.dtype) && sr.dtype != DType::F64) {
    // Only f32 inputs are rounded or split by inputPrecision (Triton's passes match f32
    // operands only); narrower inputs are exact in every precision.
    if (sa.dtype == DType::F32 && sb.dtype == DType::F32)
      d.emulation = emulationOf(int(intAttr(op, "inputPrecision", IEEE)));
    fn = visitFloat(sr.dtype, [](auto tag) -> ExecFn {
      constexpr DType D = decltype(tag)::value;
      if constexpr (D == DType::F64)
        return nullptr;
      else
        return &floatDotKernel<D>;
    });
    d.scratchAcc = L.scratch(DType::F32, {d.s.m, d.s.n});
    if (d.emulation) {
      int64_t parts = d.emulation->parts;
      d.scratchA = L.scratch(DType::F32, {parts, d.s.m, d.s.k});
      d.scratchB = L.scratch(DType::F32, {parts, d.s.k, d.s.n});
    }
  }
  if (!fn)
    return L.error(op, "unsupported combination of operand and result types");
  L.emit(op, fn, {a, b, c}, {r}, L.keep(d));
  return true;
}

//===----------------------------------------------------------------------===//
// tt.dot_scaled
//===----------------------------------------------------------------------===//

using ElemType = mlir::triton::ScaleDotElemType;

/// E2M1 (1 sign, 2 exponent bits with bias 1, 1 mantissa bit, no inf or NaN):
/// the magnitudes of codes 0..7.
constexpr float kE2M1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

/// One operand seen as its logical matrix: lhs M x K (K along columns), rhs K x N
/// (K along rows), per batch.
struct ScaledOperand {
  SlotId value = kNoSlot, scale = kNoSlot, scratch = kNoSlot;
  ElemType format = ElemType::BF16;
  /// An fp8 operand given as raw i8 bytes: codes of byteFormat (e2m1 is always bytes).
  bool bytes = false;
  DType byteFormat = DType::I8;
  bool scaleIsE8M0 = true;      ///< i8 scales are e8m0 exponents; otherwise a float type
  bool packedAlongRows = false; ///< e2m1: a byte's two values are consecutive rows
  bool kAlongRows = false;
  int64_t rows = 0, cols = 0;
};

struct DotScaledData {
  DotShape s;
  int64_t group = 32; ///< elements along K sharing one scale
  bool fastMath = false;
  ScaledOperand a, b;
};

/// Element (r, c) of batch bi, before scaling.
float scaledOperandElement(Frame &f, const ScaledOperand &o, int64_t bi, int64_t r, int64_t c) {
  int64_t size = o.rows * o.cols;
  if (o.format == ElemType::E2M1) {
    // Two values per byte, the first in the low nibble (Triton's dot_scaled docs; the
    // GPU's cvt.rn.bf16x2.e2m1x2 puts the low nibble in the lower half).
    const int8_t *p = f.at<int8_t>(o.value) + bi * size / 2;
    int64_t idx = o.packedAlongRows ? r : c;
    uint8_t byte =
        uint8_t(o.packedAlongRows ? p[(r / 2) * o.cols + c] : p[r * (o.cols / 2) + c / 2]);
    uint8_t code = (idx & 1) ? uint8_t(byte >> 4) : uint8_t(byte & 0xF);
    float v = kE2M1[code & 7];
    return (code & 8) ? -v : v;
  }
  if (o.bytes)
    return fp8ToFloat(o.byteFormat, uint8_t(f.at<int8_t>(o.value)[bi * size + r * o.cols + c]));
  return f.at<float>(o.value)[bi * size + r * o.cols + c];
}

/// Fills o.scratch with the operand as the GPU's dot sees it: each value upcast to
/// Compute, multiplied by its scale in Compute (rounded once), NaN where the scale
/// is NaN unless fastMath.
template <DType Compute>
void decodeScaledOperand(Frame &f, const DotScaledData &d, const ScaledOperand &o, int64_t bi) {
  float *out = f.at<float>(o.scratch);
  int64_t kGroups = d.s.k / d.group;
  int64_t other = o.kAlongRows ? o.cols : o.rows; // M or N
  for (int64_t r = 0; r < o.rows; ++r)
    for (int64_t c = 0; c < o.cols; ++c) {
      float v = roundTo<Compute>(scaledOperandElement(f, o, bi, r, c));
      if (o.scale != kNoSlot) {
        int64_t kk = o.kAlongRows ? r : c, mn = o.kAlongRows ? c : r;
        int64_t si = (bi * other + mn) * kGroups + kk / d.group;
        float scale;
        bool nan;
        if (o.scaleIsE8M0) {
          // The decomposition builds the scale as the float with exponent field s and
          // no mantissa: 2^(s-127), but +0 for s = 0 and +inf for s = 0xFF.
          uint8_t bits = uint8_t(f.at<int8_t>(o.scale)[si]);
          scale = roundTo<Compute>(bitsFloat(uint32_t(bits) << 23));
          nan = bits == 0xFF;
        } else {
          scale = roundTo<Compute>(f.at<float>(o.scale)[si]);
          nan = std::isnan(scale);
        }
        v = roundTo<Compute>(v * scale);
        if (nan && !d.fastMath)
          v = std::numeric_limits<float>::quiet_NaN();
      }
      out[r * o.cols + c] = v;
    }
}

template <DType Compute> void dotScaledKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const DotScaledData *>(in.data);
  const DotShape &s = d.s;
  const float *c = f.at<float>(in.operands[2]);
  float *r = f.at<float>(in.results[0]);
  for (int64_t bi = 0; bi < s.batch; ++bi) {
    decodeScaledOperand<Compute>(f, d, d.a, bi);
    decodeScaledOperand<Compute>(f, d, d.b, bi);
    simd::gemm(f.at<float>(d.a.scratch), f.at<float>(d.b.scratch), c + bi * s.m * s.n,
               r + bi * s.m * s.n, s.m, s.n, s.k);
  }
}

/// Checks one operand's element type against its format and works out its logical
/// shape (rows x cols) from the physical one; false after an error.
bool describeOperand(mlir::Operation *op, Lowerer &L, const char *side, ScaledOperand &o,
                     bool kPack, bool isRhs) {
  const Slot &v = L.slot(o.value);
  size_t rank = v.shape.size();
  o.rows = v.shape[rank - 2];
  o.cols = v.shape[rank - 1];
  o.kAlongRows = isRhs;
  std::string name =
      std::string(side) + " = " + mlir::triton::stringifyScaleDotElemType(o.format).str();
  auto need = [&](bool ok, const char *what) {
    return ok || L.error(op, name + " needs " + what + " elements, not " +
                                 std::string(ttinterp::name(v.dtype)));
  };
  if (!kPack && o.format != ElemType::E2M1)
    return L.error(op, name + ": only e2m1 operands can be packed along a dimension other than K");
  switch (o.format) {
  case ElemType::E2M1:
    if (!need(v.dtype == DType::I8, "i8 (two e2m1 values per byte)"))
      return false;
    // Packed along K: K's dimension holds half the values; otherwise M's (lhs) or N's (rhs).
    o.packedAlongRows = kPack == isRhs;
    (o.packedAlongRows ? o.rows : o.cols) *= 2;
    return true;
  case ElemType::E4M3:
  case ElemType::E5M2: {
    DType fp8 = o.format == ElemType::E4M3 ? DType::F8E4M3FN : DType::F8E5M2;
    o.bytes = v.dtype == DType::I8;
    o.byteFormat = fp8;
    return need(o.bytes || v.dtype == fp8,
                o.format == ElemType::E4M3 ? "f8E4M3FN (or i8)" : "f8E5M2 (or i8)");
  }
  case ElemType::BF16:
    return need(v.dtype == DType::BF16, "bf16");
  case ElemType::FP16:
    return need(v.dtype == DType::F16, "f16");
  default:
    return L.error(op, name + ": the fp6 formats (e2m3, e3m2) are not supported (Triton's front "
                              "end rejects them too)");
  }
}

/// Checks a scale's shape ([B x] M-or-N x K/group) and element type; sets group.
bool describeScale(mlir::Operation *op, Lowerer &L, const char *side, ScaledOperand &o,
                   const DotShape &s, int64_t &group) {
  if (o.scale == kNoSlot)
    return true;
  const Slot &sc = L.slot(o.scale);
  const Slot &v = L.slot(o.value);
  size_t rank = v.shape.size();
  int64_t mn = o.kAlongRows ? o.cols : o.rows;
  std::string what = std::string(side) + " scale";
  if (sc.shape.size() != rank || (rank == 3 && sc.shape[0] != s.batch) ||
      sc.shape[rank - 2] != mn || sc.shape[rank - 1] <= 0 || s.k % sc.shape[rank - 1] != 0)
    return L.error(op, what + " must be [" + (rank == 3 ? std::to_string(s.batch) + " x " : "") +
                           std::to_string(mn) + " x K/group] with K = " + std::to_string(s.k));
  int64_t g = s.k / sc.shape[rank - 1];
  if (group != 0 && g != group)
    return L.error(op, "operands must have the same scale group size (" + std::to_string(group) +
                           " vs " + std::to_string(g) + ")");
  group = g;
  o.scaleIsE8M0 = sc.dtype == DType::I8;
  if (!o.scaleIsE8M0 && !isFloat(sc.dtype))
    return L.error(op, what + " must hold i8 (e8m0) or float elements");
  return true;
}

bool lowerDotScaled(mlir::Operation *op, Lowerer &L) {
  auto ds = mlir::cast<mlir::triton::DotScaledOp>(op);
  DotScaledData d;
  d.a.value = L.use(ds.getA());
  d.b.value = L.use(ds.getB());
  SlotId c = L.use(ds.getC());
  if (ds.getAScale())
    d.a.scale = L.use(ds.getAScale());
  if (ds.getBScale())
    d.b.scale = L.use(ds.getBScale());
  SlotId r = L.def(ds.getD(), op);
  if (r == kNoSlot)
    return false;
  const Slot &sa = L.slot(d.a.value), &sb = L.slot(d.b.value), &sr = L.slot(r);
  size_t rank = sa.shape.size();
  if (!checkRanks(op, L, rank, sb.shape.size(), sr.shape.size()))
    return false;
  if (sr.dtype != DType::F32)
    return L.error(op, "the result must be f32 (the only type Triton's front end produces)");
  d.a.format = ds.getAElemType();
  d.b.format = ds.getBElemType();
  d.fastMath = ds.getFastMath();
  if (!describeOperand(op, L, "lhs", d.a, ds.getLhsKPack(), false) ||
      !describeOperand(op, L, "rhs", d.b, ds.getRhsKPack(), true))
    return false;
  d.s.batch = rank == 3 ? sa.shape[0] : 1;
  d.s.m = d.a.rows;
  d.s.k = d.a.cols;
  d.s.n = d.b.cols;
  if (d.b.rows != d.s.k || sr.shape[rank - 2] != d.s.m || sr.shape[rank - 1] != d.s.n ||
      (rank == 3 && (sb.shape[0] != d.s.batch || sr.shape[0] != d.s.batch)))
    return L.error(op, "operand shapes do not multiply (after unpacking e2m1 pairs)");
  int64_t group = 0;
  if (!describeScale(op, L, "lhs", d.a, d.s, group) ||
      !describeScale(op, L, "rhs", d.b, d.s, group))
    return false;
  if (group != 0)
    d.group = group;
  d.a.scratch = L.scratch(DType::F32, {d.s.m, d.s.k});
  d.b.scratch = L.scratch(DType::F32, {d.s.k, d.s.n});
  // Upcast to f16 when either side is fp16, else to bf16 (DecomposeScaledBlocked::getComputeType).
  bool f16 = d.a.format == ElemType::FP16 || d.b.format == ElemType::FP16;
  ExecFn fn = f16 ? &dotScaledKernel<DType::F16> : &dotScaledKernel<DType::BF16>;
  std::vector<SlotId> operands = {d.a.value, d.b.value, c};
  for (SlotId s : {d.a.scale, d.b.scale})
    if (s != kNoSlot)
      operands.push_back(s);
  L.emit(op, fn, operands, {r}, L.keep(d));
  return true;
}

} // namespace

void registerDotOps(OpTable &t) {
  t.add("tt.dot", &lowerDot);
  t.add("tt.dot_scaled", &lowerDotScaled);
}

} // namespace ttinterp::interp
