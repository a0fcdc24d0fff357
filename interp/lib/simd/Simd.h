//===- Simd.h - Hot block kernels compiled for every ISA, chosen at start-up -*- C++ -*-===//
//
// The ops that dominate real kernels (tt.dot, transcendentals, f32 arithmetic) run through these
// entry points. Simd.cpp compiles each for every x86 (or Arm) target Highway knows
// and dispatches once, on first use, to the best the CPU has; the binary itself
// stays baseline x86-64. Results are bit-identical across the FMA targets (AVX2,
// AVX-512): every kernel fixes its operation order, and uses no FMA that the op
// does not imply (docs/semantics.md, "Vector units").
//
//===----------------------------------------------------------------------===//
#ifndef TTINTERP_INTERP_SIMD_H
#define TTINTERP_INTERP_SIMD_H

#include <cstdint>
#include <cstring>

namespace ttinterp::interp::simd {

/// out = c + a * b for row-major m x k, k x n and m x n blocks; out may be c.
/// Element (i, j) is c(i, j) followed by one fused multiply-add per p = 0..k-1,
/// in that order: the GPU's ieee FMA chain, and independent of how the kernel
/// tiles the block or how wide the vectors are.
void gemm(const float *a, const float *b, const float *c, float *out, int64_t m, int64_t n,
          int64_t k);
void gemm(const double *a, const double *b, const double *c, double *out, int64_t m, int64_t n,
          int64_t k);
/// The same with a's rows `lda` elements apart and b's `ldb`: operands read where they lie in
/// memory (a tile of a larger matrix) instead of from a dense copy. They are only read, so any
/// stride is right, rows overlapping or in reverse too.
void gemm(const float *a, int64_t lda, const float *b, int64_t ldb, const float *c, float *out,
          int64_t m, int64_t n, int64_t k);

/// f32 blocks of the IEEE basic operations, r[i] = a[i] OP b[i], correctly rounded on every
/// target; with `scalar` Lhs (Rhs), a[0] (b[0]) stands for every element (a splat). With
/// `stream`, the whole 64-byte lines of r are written by streaming stores
/// (ttinterp/memory/StreamingStores.h says when, and what the caller then owes).
enum class BasicOp { Add, Sub, Mul, Div };
enum class ScalarOperand { None, Lhs, Rhs };
void basic(BasicOp op, const float *a, const float *b, float *r, int64_t n, ScalarOperand scalar,
           bool stream = false);

/// An f32 row (contiguous, `length` >= 1) reduced in tt.reduce's tree order
/// (ops/ReduceTree.h), with the combiner's own element semantics (ArithFunctors.h).
enum class ReduceFn { Add, Mul, MaxNum, MinNum, Maximum, Minimum };
float treeReduce(ReduceFn fn, const float *src, int64_t length);

/// Elementwise transcendentals of f32 blocks with SLEEF's 1-ulp kernels (the
/// deterministic FMA variants) where the CPU has FMA; without FMA, the C library.
enum class MathFn { Exp, Exp2, ExpM1, Log, Log2, Log10, Log1p, Sin, Cos, Tan, Tanh, Sinh, Cosh,
                    Erf, Atan, Asin, Acos, Cbrt };
void map(MathFn fn, const float *x, float *y, int64_t n);

/// The vector function map runs for `fn` on this CPU: SLEEF's, `lanes` f32 lanes in one
/// vector register in and out (`__m512 (*)(__m512)` on AVX-512, `__m256 (*)(__m256)` on AVX2);
/// null where map calls the C library per element. Compiled chains call it directly.
struct VectorMathFunction {
  const void *fn = nullptr;
  int lanes = 0;
};
VectorMathFunction vectorMathFunction(MathFn fn);

/// r[i] = tagged::advance(p[i], bytes) (memory/Session.h): tt.addptr of one offset for
/// every lane, as a loop advances its pointer tensors each iteration. r may be p.
void advanceAddresses(const uint64_t *p, int64_t bytes, uint64_t *r, int64_t n);

/// r[i] = tagged::advance(p[i], off[i] << shift) (with `splatBase`, p[0] for every p[i]):
/// tt.addptr of a block of i32 element offsets, `shift` the log2 of the pointee's bytes, as
/// pointer blocks are made (`base + rows[:, None] * stride + cols[None, :]`). r may be p.
void addOffsets(const uint64_t *p, bool splatBase, const int32_t *off, unsigned shift,
                uint64_t *r, int64_t n);

/// Where a tt.load or tt.store through a pointer tensor can move runs of lanes at once, as
/// bits of n lanes in words of 64 (lane j is bit j % 64 of word j / 64). `breaks` has bit j
/// iff lane j cannot continue a run of consecutive pointers from lane j - 1: j is 0,
/// p[j] != p[j - 1] + step, or lane j's address is below the step (then the sum carried into
/// the tag of tagged pointers, memory/Session.h: a run never changes buffers). Bits past n
/// come back set.
void laneBreaks(const uint64_t *p, int64_t n, uint64_t step, uint64_t *breaks);
/// The first lane j >= from (from >= 1) whose pointer is not p[from - 1], or n: the extent of
/// lanes that read one element (a gather of one weight per channel).
int64_t repeatedPointerEnd(const uint64_t *p, int64_t from, int64_t n);
/// laneBreaks for the lanes of a gather, `base + off[j]` (Fusion.h, OffsetGather): bit j
/// iff j is 0 or off[j] != off[j - 1] + 1 (off[j - 1] = INT32_MAX included: its successor
/// wraps); bits past n come back set. Also the least and greatest offset, so the caller can
/// check that no lane's address wraps the address space (then these are the pointers' breaks).
void offsetBreaks(const int32_t *off, int64_t n, uint64_t *breaks, int32_t &lo, int32_t &hi);
/// The first lane j >= from (from >= 1) whose offset is not off[from - 1], or n.
int64_t repeatedOffsetEnd(const int32_t *off, int64_t from, int64_t n);
/// `active` has bit j iff mask[j] != 0 (every lane of n when mask is null; bits past n clear).
void laneActive(const uint8_t *mask, int64_t n, uint64_t *active);

/// 32-bit integer division of blocks, r[i] = a[i] OP b[i] (with `splatDivisor`, b[0] for every
/// b[i]), as arith.divsi/divui/remsi/remui define it: truncated toward zero, the remainder
/// with the dividend's sign, MIN / -1 wrapping to MIN (remainder 0). No divisor may be 0 (the
/// caller sets those lanes: ArithOps.cpp's divKernel). Exact on every target (simd/Division.cpp).
enum class IntDivOp { DivS, DivU, RemS, RemU };
void intDivide32(IntDivOp op, const int32_t *a, const int32_t *b, bool splatDivisor, int32_t *r,
                 int64_t n);

/// atom.add.f32 on global memory flushes subnormal inputs and results to a zero of the same
/// sign (PTX ISA, atom): a zero exponent (a zero or a subnormal) keeps only the sign bit.
inline float flushSubnormal(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7F800000u) == 0)
    bits &= 0x80000000u;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// One thread's `tt.atomic_rmw fadd` of a run of n distinct f32 elements at `host`: old[i] gets
/// host[i], then host[i] becomes host[i] + v[i] with PTX's atom.add.f32 subnormal flushing
/// (inputs and result, to a zero of the same sign). Whether any element's bits changed.
/// `old` may be `v`; neither may overlap `host`.
bool atomicAddRunF32(float *host, const float *v, float *old, int64_t n);

/// What the dispatch chose on this CPU, e.g. "AVX2" (for benchmark reports).
const char *targetName();

} // namespace ttinterp::interp::simd

#endif // TTINTERP_INTERP_SIMD_H
