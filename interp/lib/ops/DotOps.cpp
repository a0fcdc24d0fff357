//===- DotOps.cpp - tt.dot: matrix products on Eigen's GEMM ---------------===//
//
// f32 (and f16/bf16/fp8, held as floats) products accumulate in f32 through
// Eigen's GEMM; f64 in double; i8 x i8 in i32. inputPrecision decides how f32
// inputs are rounded first: ieee keeps them; tf32 keeps the top 19 bits, as the
// tensor cores read raw f32 registers for Triton's tf32 mma; tf32x3 splits
// each input into a tf32 "big" part and a tf32 remainder and sums three
// products, as Triton's emulation does.
//
//===----------------------------------------------------------------------===//
#include "OpSupport.h"

#include <Eigen/Core>

namespace ttinterp::interp {
namespace {

enum Precision { TF32 = 0, TF32x3 = 1, IEEE = 2, BF16x3 = 3, BF16x6 = 4 };

struct DotData {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int precision = IEEE;
  SlotId scratchAcc = kNoSlot, scratchA = kNoSlot, scratchB = kNoSlot, scratchA2 = kNoSlot, scratchB2 = kNoSlot;
};

inline float truncateToTF32(float x) {
  if (std::isnan(x) || std::isinf(x))
    return x;
  return bitsFloat(floatBits(x) & 0xFFFFE000u);
}
inline float roundToTF32(float x) {
  if (std::isnan(x) || std::isinf(x))
    return x;
  uint32_t u = floatBits(x);
  u += 0x1000; // round half away from zero, as cvt.rna.tf32.f32
  return bitsFloat(u & 0xFFFFE000u);
}

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T, class R>
void gemm(const T *a, const T *b, R *out, const R *c, int64_t m, int64_t n, int64_t k) {
  Eigen::Map<const RowMajor<T>> A(a, m, k);
  Eigen::Map<const RowMajor<T>> B(b, k, n);
  Eigen::Map<RowMajor<R>> D(out, m, n);
  Eigen::Map<const RowMajor<R>> C(c, m, n);
  if (out != c)
    D = C;
  D.noalias() += (A * B).template cast<R>();
}

template <DType Out> void floatDotKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const DotData *>(in.data);
  const float *a = f.at<float>(in.operands[0]);
  const float *b = f.at<float>(in.operands[1]);
  const Repr<Out> *c = f.at<Repr<Out>>(in.operands[2]);
  Repr<Out> *r = f.at<Repr<Out>>(in.results[0]);
  int64_t sa = d.m * d.k, sb = d.k * d.n, sr = d.m * d.n;
  // Accumulate in f32 whatever the result type; narrow results round at the end.
  float *acc = f.at<float>(d.scratchAcc);
  for (int64_t bi = 0; bi < d.batch; ++bi) {
    const float *A = a + bi * sa, *B = b + bi * sb;
    for (int64_t i = 0; i < sr; ++i)
      acc[i] = float(c[bi * sr + i]);
    if (d.precision == IEEE) {
      gemm(A, B, acc, acc, d.m, d.n, d.k);
    } else if (d.precision == TF32) {
      float *ta = f.at<float>(d.scratchA), *tb = f.at<float>(d.scratchB);
      for (int64_t i = 0; i < sa; ++i)
        ta[i] = truncateToTF32(A[i]);
      for (int64_t i = 0; i < sb; ++i)
        tb[i] = truncateToTF32(B[i]);
      gemm(ta, tb, acc, acc, d.m, d.n, d.k);
    } else {
      // big + small splits; the small*small term is dropped, as on the GPU.
      float *ab = f.at<float>(d.scratchA), *bb = f.at<float>(d.scratchB);
      float *as = f.at<float>(d.scratchA2), *bs = f.at<float>(d.scratchB2);
      for (int64_t i = 0; i < sa; ++i) {
        ab[i] = roundToTF32(A[i]);
        as[i] = roundToTF32(A[i] - ab[i]);
      }
      for (int64_t i = 0; i < sb; ++i) {
        bb[i] = roundToTF32(B[i]);
        bs[i] = roundToTF32(B[i] - bb[i]);
      }
      gemm(as, bb, acc, acc, d.m, d.n, d.k);
      gemm(ab, bs, acc, acc, d.m, d.n, d.k);
      gemm(ab, bb, acc, acc, d.m, d.n, d.k);
    }
    for (int64_t i = 0; i < sr; ++i)
      r[bi * sr + i] = roundTo<Out>(Repr<Out>(acc[i]));
  }
}

void doubleDotKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const DotData *>(in.data);
  const double *a = f.at<double>(in.operands[0]), *b = f.at<double>(in.operands[1]);
  const double *c = f.at<double>(in.operands[2]);
  double *r = f.at<double>(in.results[0]);
  for (int64_t bi = 0; bi < d.batch; ++bi)
    gemm(a + bi * d.m * d.k, b + bi * d.k * d.n, r + bi * d.m * d.n, c + bi * d.m * d.n, d.m,
         d.n, d.k);
}

void int8DotKernel(Frame &f, const Instr &in) {
  const auto &d = *static_cast<const DotData *>(in.data);
  const int8_t *a = f.at<int8_t>(in.operands[0]), *b = f.at<int8_t>(in.operands[1]);
  const int32_t *c = f.at<int32_t>(in.operands[2]);
  int32_t *r = f.at<int32_t>(in.results[0]);
  for (int64_t bi = 0; bi < d.batch; ++bi) {
    const int8_t *A = a + bi * d.m * d.k, *B = b + bi * d.k * d.n;
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        uint32_t acc = uint32_t(c[(bi * d.m + i) * d.n + j]); // wraps like the hardware
        for (int64_t p = 0; p < d.k; ++p)
          acc += uint32_t(int32_t(A[i * d.k + p]) * int32_t(B[p * d.n + j]));
        r[(bi * d.m + i) * d.n + j] = int32_t(acc);
      }
  }
}

bool lowerDot(mlir::Operation *op, Lowerer &L) {
  SlotId a = L.use(op->getOperand(0)), b = L.use(op->getOperand(1)), c = L.use(op->getOperand(2));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  const Slot &sa = L.slot(a), &sb = L.slot(b), &sr = L.slot(r);
  size_t rank = sa.shape.size();
  if ((rank != 2 && rank != 3) || sb.shape.size() != rank || sr.shape.size() != rank)
    return L.error(op, "operands must be 2-D (or 3-D batched) tensors");
  DotData d;
  d.batch = rank == 3 ? sa.shape[0] : 1;
  d.m = sa.shape[rank - 2];
  d.k = sa.shape[rank - 1];
  d.n = sb.shape[rank - 1];
  if (sb.shape[rank - 2] != d.k || sr.shape[rank - 2] != d.m || sr.shape[rank - 1] != d.n)
    return L.error(op, "operand shapes do not multiply");
  d.precision = int(intAttr(op, "inputPrecision", IEEE));
  ExecFn fn = nullptr;
  if (sa.dtype == DType::F64 && sr.dtype == DType::F64) {
    fn = &doubleDotKernel;
  } else if (sa.dtype == DType::I8 && sb.dtype == DType::I8 && sr.dtype == DType::I32) {
    fn = &int8DotKernel;
  } else if (isFloat(sa.dtype) && computeSize(sa.dtype) == 4 && isFloat(sb.dtype) &&
             computeSize(sb.dtype) == 4 && isFloat(sr.dtype) && sr.dtype != DType::F64) {
    // Only f32 inputs are rounded by inputPrecision; narrower inputs are exact in tf32.
    if (sa.dtype != DType::F32)
      d.precision = IEEE;
    if (d.precision == BF16x3 || d.precision == BF16x6)
      return L.error(op, "inputPrecision bf16x3/bf16x6 is not supported yet");
    fn = visitFloat(sr.dtype, [](auto tag) -> ExecFn {
      constexpr DType D = decltype(tag)::value;
      if constexpr (D == DType::F64)
        return nullptr;
      else
        return &floatDotKernel<D>;
    });
    d.scratchAcc = L.scratch(DType::F32, {d.m, d.n});
    if (d.precision != IEEE) {
      d.scratchA = L.scratch(DType::F32, {d.m, d.k});
      d.scratchB = L.scratch(DType::F32, {d.k, d.n});
    }
    if (d.precision == TF32x3) {
      d.scratchA2 = L.scratch(DType::F32, {d.m, d.k});
      d.scratchB2 = L.scratch(DType::F32, {d.k, d.n});
    }
  }
  if (!fn)
    return L.error(op, "unsupported combination of operand and result types");
  L.emit(op, fn, {a, b, c}, {r}, L.keep(d));
  return true;
}

} // namespace

void registerDotOps(OpTable &t) { t.add("tt.dot", &lowerDot); }

} // namespace ttinterp::interp
