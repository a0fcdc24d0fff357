//===- Simd.cpp - Per-ISA GEMM micro-kernel and vector math, dispatched by Highway -===//
//
// Highway (Debian's libhwy-dev) compiles this file once per target (foreach_target.h
// re-includes it) and HWY_DYNAMIC_DISPATCH picks the best target the CPU supports on
// first call. We chose it over compiler multiversioning because one source serves
// SSE4, AVX2, AVX-512 and NEON alike, and over -march because the binary must run
// anywhere. Transcendentals come from SLEEF (libsleef-dev): its 1-ulp kernels have
// stated bounds and "finz" variants whose results do not depend on the vector width.
//
// Determinism across targets is the design rule: the GEMM gives each output element
// one FMA chain in k order (tile and vector width only change which elements are
// computed together), and targets without native FMA run that chain through
// std::fma rather than Highway's MulAdd (a separate multiply and add there).
//
//===----------------------------------------------------------------------===//
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/Simd.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep
#include <hwy/highway.h>

#include "simd/Simd.h"
#include "ttinterp/memory/Session.h"
#include "ttinterp/memory/StreamingStores.h"

#include <algorithm>
#include <cmath>
#include <cstring>

// SLEEF's header declares its AVX and AVX-512 entry points only when the whole file
// is compiled for them; here only the per-target functions are, so declare them.
#ifndef TTINTERP_SLEEF_DECLARED
#define TTINTERP_SLEEF_DECLARED
#define TTINTERP_SLEEF_MATH(X)                                                                    \
  X(Exp, expf, u10) X(Exp2, exp2f, u10) X(ExpM1, expm1f, u10) X(Log, logf, u10)                   \
  X(Log2, log2f, u10) X(Log10, log10f, u10) X(Log1p, log1pf, u10) X(Sin, sinf, u10)               \
  X(Cos, cosf, u10) X(Tan, tanf, u10) X(Tanh, tanhf, u10) X(Sinh, sinhf, u10)                     \
  X(Cosh, coshf, u10) X(Erf, erff, u10) X(Atan, atanf, u10) X(Asin, asinf, u10)                   \
  X(Acos, acosf, u10) X(Cbrt, cbrtf, u10)
#if HWY_ARCH_X86_64
#include <immintrin.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
extern "C" {
#define TTINTERP_DECLARE(NAME, SLEEF, ULP)                                                         \
  __m256 Sleef_finz_##SLEEF##8_##ULP##avx2(__m256);                                               \
  __m512 Sleef_finz_##SLEEF##16_##ULP##avx512f(__m512);
TTINTERP_SLEEF_MATH(TTINTERP_DECLARE)
#undef TTINTERP_DECLARE
}
#pragma GCC diagnostic pop
#endif
#endif

HWY_BEFORE_NAMESPACE();
namespace ttinterp::interp::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Element (i, j) of out, the exact FMA chain any target must reproduce.
template <class T>
HWY_INLINE void scalarChain(const T *a, int64_t lda, const T *b, int64_t ldb, const T *c, T *out,
                            int64_t n, int64_t k, int64_t i, int64_t j) {
  T acc = c[i * n + j];
  for (int64_t p = 0; p < k; ++p)
    acc = std::fma(a[i * lda + p], b[p * ldb + j], acc);
  out[i * n + j] = acc;
}

#if HWY_NATIVE_FMA && !HWY_HAVE_SCALABLE
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool kWideRegisterFile = true;
#else
constexpr bool kWideRegisterFile = false;
#endif
/// Rows a block of NV vectors' columns takes at a time. Two FMA units of four cycles' latency
/// keep eight accumulators busy with no slack, and 4 x 2 blocks spent 1.5 loads per FMA: with
/// AVX-512's 32 registers, 6 x 4 (24 accumulators, 4 of b, a broadcast) and 8 x 2 run a
/// 64 x 64 x 32 tile at 147 GF/s instead of 125 (docs/performance.md, twenty-second round).
/// AVX2's 16 registers hold the 4 x 2 block and no bigger.
template <int NV> constexpr int gemmRows() { return !kWideRegisterFile ? 4 : NV >= 4 ? 6 : 8; }
/// Rows [i, i + MR) x columns [j, j + NV vectors): MR * NV accumulators in
/// registers, each lane its own chain over p.
template <int MR, int NV, class D, class T = hn::TFromD<D>>
HWY_INLINE void block(D d, const T *a, int64_t lda, const T *b, int64_t ldb, const T *c, T *out,
                      int64_t n, int64_t k, int64_t i, int64_t j) {
  using V = hn::Vec<D>;
  const int64_t L = int64_t(hn::Lanes(d));
  V acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = hn::LoadU(d, c + (i + r) * n + j + v * L);
  for (int64_t p = 0; p < k; ++p) {
    V bv[NV];
    for (int v = 0; v < NV; ++v)
      bv[v] = hn::LoadU(d, b + p * ldb + j + v * L);
    for (int r = 0; r < MR; ++r) {
      const V av = hn::Set(d, a[(i + r) * lda + p]);
      for (int v = 0; v < NV; ++v)
        acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v)
      hn::StoreU(acc[r][v], d, out + (i + r) * n + j + v * L);
}

/// Columns [j, j + NV vectors) of out, every row: `b`'s k x NV-vector panel stays in L1 while
/// the row blocks use it. With `prefetchRows`, the next block's rows of `a` are asked for while
/// this one computes: in a tile view they lie a matrix row apart, beyond the hardware
/// prefetchers' reach, and each first touch waited on L3 (docs/performance.md, twentieth
/// round).
template <int NV, class D, class T = hn::TFromD<D>>
HWY_INLINE void columnPanel(D d, const T *a, int64_t lda, const T *b, int64_t ldb, const T *c,
                            T *out, int64_t m, int64_t n, int64_t k, int64_t j,
                            bool prefetchRows) {
  constexpr int MR = gemmRows<NV>();
  int64_t i = 0;
  for (; i + MR <= m; i += MR) {
    if (prefetchRows && i + 2 * MR <= m)
      for (int r = 0; r < MR; ++r)
        for (int64_t at = 0; at < k * int64_t(sizeof(T)); at += 64)
          __builtin_prefetch(reinterpret_cast<const uint8_t *>(a + (i + MR + r) * lda) + at);
    block<MR, NV>(d, a, lda, b, ldb, c, out, n, k, i, j);
  }
  if constexpr (MR > 4)
    for (; i + 4 <= m; i += 4)
      block<4, NV>(d, a, lda, b, ldb, c, out, n, k, i, j);
  for (; i < m; ++i)
    block<1, NV>(d, a, lda, b, ldb, c, out, n, k, i, j);
}
#endif

template <class T>
HWY_NOINLINE void Gemm(const T *a, int64_t lda, const T *b, int64_t ldb, const T *c, T *out,
                       int64_t m, int64_t n, int64_t k) {
  int64_t j = 0;
#if HWY_NATIVE_FMA && !HWY_HAVE_SCALABLE
  const hn::ScalableTag<T> d;
  const int64_t L = int64_t(hn::Lanes(d));
  // Only the first panel asks for a's rows, and only when they are strided: the later panels
  // find them in L2, and contiguous rows are what the hardware prefetchers follow; a prefetch
  // that finds its line cached still costs its instructions (twenty-first round).
  const bool strided = lda != k;
  if constexpr (kWideRegisterFile)
    for (; j + 4 * L <= n; j += 4 * L)
      columnPanel<4>(d, a, lda, b, ldb, c, out, m, n, k, j, j == 0 && strided);
  for (; j + 2 * L <= n; j += 2 * L)
    columnPanel<2>(d, a, lda, b, ldb, c, out, m, n, k, j, j == 0 && strided);
  for (; j + L <= n; j += L)
    columnPanel<1>(d, a, lda, b, ldb, c, out, m, n, k, j, j == 0 && strided);
#endif
  for (; j < n; ++j)
    for (int64_t i = 0; i < m; ++i)
      scalarChain(a, lda, b, ldb, c, out, n, k, i, j);
}

void GemmF32(const float *a, int64_t lda, const float *b, int64_t ldb, const float *c, float *out,
             int64_t m, int64_t n, int64_t k) {
  Gemm(a, lda, b, ldb, c, out, m, n, k);
}
void GemmF64(const double *a, const double *b, const double *c, double *out, int64_t m,
             int64_t n, int64_t k) {
  Gemm(a, k, b, n, c, out, m, n, k);
}

// Lanes [from, to) of r = a OP b: whole vectors, written by `store`, then single lanes.
template <class Store, class VecOp, class ScalarOp>
HWY_INLINE void basicRange(const float *a, const float *b, float *r, int64_t from, int64_t to,
                           ScalarOperand scalar, Store store, VecOp vecOp, ScalarOp scalarOp) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t i = from;
  if (scalar == ScalarOperand::None) {
    for (; i + L <= to; i += L)
      store(vecOp(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, r + i);
    for (; i < to; ++i)
      r[i] = scalarOp(a[i], b[i]);
  } else if (scalar == ScalarOperand::Lhs) {
    const float x = a[0];
    const auto vx = hn::Set(d, x);
    for (; i + L <= to; i += L)
      store(vecOp(vx, hn::LoadU(d, b + i)), d, r + i);
    for (; i < to; ++i)
      r[i] = scalarOp(x, b[i]);
  } else {
    const float y = b[0];
    const auto vy = hn::Set(d, y);
    for (; i + L <= to; i += L)
      store(vecOp(hn::LoadU(d, a + i), vy), d, r + i);
    for (; i < to; ++i)
      r[i] = scalarOp(a[i], y);
  }
}

template <class VecOp, class ScalarOp>
HWY_INLINE void basicLoop(const float *a, const float *b, float *r, int64_t n, ScalarOperand scalar,
                          bool stream, VecOp vecOp, ScalarOp scalarOp) {
  const hn::ScalableTag<float> d;
  auto storeU = [](auto v, auto tag, float *p) { hn::StoreU(v, tag, p); };
  constexpr int64_t kLineLanes = int64_t(kStreamedLine / sizeof(float));
  const int64_t L = int64_t(hn::Lanes(d));
  if (!stream || L > kLineLanes || kLineLanes % L != 0)
    return basicRange(a, b, r, 0, n, scalar, storeU, vecOp, scalarOp);
  // Plain stores up to r's first line boundary and after its last whole line (as
  // ttinterp::streamingCopy); r holds floats, so the boundary is a whole lane away.
  const auto head = int64_t(bytesBeforeLine(r, size_t(n) * sizeof(float)) / sizeof(float));
  const int64_t lines = head + (n - head) / kLineLanes * kLineLanes;
  auto streamed = [](auto v, auto tag, float *p) { hn::Stream(v, tag, p); };
  basicRange(a, b, r, 0, head, scalar, storeU, vecOp, scalarOp);
  basicRange(a, b, r, head, lines, scalar, streamed, vecOp, scalarOp);
  basicRange(a, b, r, lines, n, scalar, storeU, vecOp, scalarOp);
}

void Basic(BasicOp op, const float *a, const float *b, float *r, int64_t n, ScalarOperand scalar,
           bool stream) {
  switch (op) {
  case BasicOp::Add:
    return basicLoop(a, b, r, n, scalar, stream, [](auto x, auto y) { return hn::Add(x, y); },
                     [](float x, float y) { return x + y; });
  case BasicOp::Sub:
    return basicLoop(a, b, r, n, scalar, stream, [](auto x, auto y) { return hn::Sub(x, y); },
                     [](float x, float y) { return x - y; });
  case BasicOp::Mul:
    return basicLoop(a, b, r, n, scalar, stream, [](auto x, auto y) { return hn::Mul(x, y); },
                     [](float x, float y) { return x * y; });
  case BasicOp::Div:
    return basicLoop(a, b, r, n, scalar, stream, [](auto x, auto y) { return hn::Div(x, y); },
                     [](float x, float y) { return x / y; });
  }
}

bool AtomicAddRunF32(float *host, const float *v, float *old, int64_t n) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const auto L = int64_t(hn::Lanes(d));
  constexpr uint32_t kExponent = 0x7F800000u, kSign = 0x80000000u;
  const auto exponent = hn::Set(du, kExponent), sign = hn::Set(du, kSign);
  // flushSubnormal's rule (Simd.h) on a vector.
  auto flush = [&](auto x) {
    const auto bits = hn::BitCast(du, x);
    return hn::BitCast(d, hn::IfThenElse(hn::Eq(hn::And(bits, exponent), hn::Zero(du)),
                                         hn::And(bits, sign), bits));
  };
  auto changed = hn::Zero(du);
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const auto before = hn::LoadU(d, host + i);
    const auto after = flush(hn::Add(flush(before), flush(hn::LoadU(d, v + i))));
    hn::StoreU(before, d, old + i);
    hn::StoreU(after, d, host + i);
    changed = hn::Or(changed, hn::Xor(hn::BitCast(du, after), hn::BitCast(du, before)));
  }
  bool any = !hn::AllTrue(du, hn::Eq(changed, hn::Zero(du)));
  for (; i < n; ++i) {
    const float before = host[i],
                after = flushSubnormal(flushSubnormal(before) + flushSubnormal(v[i]));
    old[i] = before;
    host[i] = after;
    any |= std::memcmp(&before, &after, sizeof before) != 0;
  }
  return any;
}

// A plain loop: compiled for each target, the compiler vectorises it at that target's width
// (a 2048-lane pointer tensor in L1: 656 ns on baseline SSE2, 285 ns on AVX2).
void AdvanceAddresses(const uint64_t *p, int64_t bytes, uint64_t *r, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    r[i] = tagged::advance(p[i], bytes);
}

void AddOffsets(const uint64_t *p, bool splatBase, const int32_t *off, unsigned shift,
                uint64_t *r, int64_t n) {
  // The offset's bits shifted as unsigned: a negative offset's shift is defined.
  auto bytes = [shift](int32_t o) { return int64_t(uint64_t(int64_t(o)) << shift); };
  if (splatBase) {
    const uint64_t base = p[0];
    for (int64_t i = 0; i < n; ++i)
      r[i] = tagged::advance(base, bytes(off[i]));
  } else {
    for (int64_t i = 0; i < n; ++i)
      r[i] = tagged::advance(p[i], bytes(off[i]));
  }
}

// Runs of consecutive lanes (laneBreaks, offsetBreaks and laneActive in Simd.h), found for a
// whole tensor in one pass of vector compares. Each word of bits is gathered in a register and
// stored once. Vector groups start at multiples of the vector width, a power of two that
// divides 64, so a group's bits never straddle two words. breakAt(j) says lane j breaks one
// lane at a time (the first group, which must read no lane before 0, and the tail);
// brokenFrom(j) says it for the vector group of lanes j.. as a mask of `d`.
template <class D, class BreakAt, class BrokenFrom>
void breakWords(D d, int64_t n, uint64_t *breaks, BreakAt breakAt, BrokenFrom brokenFrom) {
  const int64_t lanes = int64_t(hn::Lanes(d));
  uint8_t bits[8];
  for (int64_t base = 0; base < n; base += 64) {
    const int64_t end = std::min(n, base + 64);
    uint64_t word = end - base == 64 ? 0 : ~uint64_t(0) << (end - base); // past n: breaks
    int64_t j = base;
    for (; j < end && j < lanes; ++j)
      word |= uint64_t(breakAt(j)) << (j - base);
    for (; j + lanes <= end; j += lanes) {
      uint64_t group = 0;
      std::memcpy(&group, bits, hn::StoreMaskBits(d, brokenFrom(j), bits));
      word |= group << (j - base);
    }
    for (; j < end; ++j)
      word |= uint64_t(breakAt(j)) << (j - base);
    breaks[base >> 6] = word;
  }
}

void LaneBreaks(const uint64_t *p, int64_t n, uint64_t step, uint64_t *breaks) {
  const hn::ScalableTag<uint64_t> d;
  const auto vstep = hn::Set(d, step), vaddress = hn::Set(d, tagged::kAddressMask);
  // p[j] == p[j - 1] + step with an address below the step carried into the tag: another
  // buffer's pointer, never the same run.
  breakWords(
      d, n, breaks,
      [&](int64_t j) { return j == 0 || p[j] != p[j - 1] + step || tagged::address(p[j]) < step; },
      [&](int64_t j) {
        const auto cur = hn::LoadU(d, p + j);
        return hn::Or(hn::Ne(cur, hn::Add(hn::LoadU(d, p + j - 1), vstep)),
                      hn::Lt(hn::And(cur, vaddress), vstep));
      });
}

void OffsetBreaks(const int32_t *off, int64_t n, uint64_t *breaks, int32_t &lo, int32_t &hi) {
  const hn::ScalableTag<int32_t> d;
  const auto one = hn::Set(d, 1), largest = hn::Set(d, INT32_MAX);
  auto vlo = hn::Set(d, INT32_MAX), vhi = hn::Set(d, INT32_MIN);
  int32_t slo = INT32_MAX, shi = INT32_MIN;
  breakWords(
      d, n, breaks,
      [&](int64_t j) {
        slo = std::min(slo, off[j]);
        shi = std::max(shi, off[j]);
        return j == 0 || off[j - 1] == INT32_MAX || off[j] != off[j - 1] + 1;
      },
      [&](int64_t j) {
        const auto cur = hn::LoadU(d, off + j), prev = hn::LoadU(d, off + j - 1);
        vlo = hn::Min(vlo, cur);
        vhi = hn::Max(vhi, cur);
        // prev + 1 wraps only for INT32_MAX, which the second compare catches.
        return hn::Or(hn::Ne(cur, hn::Add(prev, one)), hn::Eq(prev, largest));
      });
  lo = std::min(slo, hn::GetLane(hn::MinOfLanes(d, vlo)));
  hi = std::max(shi, hn::GetLane(hn::MaxOfLanes(d, vhi)));
}

// The first lane j >= from whose value differs from lane from - 1's (repeated offsets or
// pointers of a gather), or n.
template <class T> int64_t RepeatedEnd(const T *v, int64_t from, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = int64_t(hn::Lanes(d));
  const T repeated = v[from - 1];
  const auto same = hn::Set(d, repeated);
  int64_t j = from;
  for (; j + lanes <= n; j += lanes) {
    const intptr_t other = hn::FindFirstTrue(d, hn::Ne(hn::LoadU(d, v + j), same));
    if (other >= 0)
      return j + other;
  }
  while (j < n && v[j] == repeated)
    ++j;
  return j;
}
int64_t RepeatedOffsetEnd(const int32_t *off, int64_t from, int64_t n) {
  return RepeatedEnd(off, from, n);
}
int64_t RepeatedPointerEnd(const uint64_t *p, int64_t from, int64_t n) {
  return RepeatedEnd(p, from, n);
}

void LaneActive(const uint8_t *mask, int64_t n, uint64_t *active) {
  const hn::ScalableTag<uint8_t> d8;
  const int64_t bytes = int64_t(hn::Lanes(d8));
  uint8_t bits[8];
  for (int64_t base = 0; base < n; base += 64) {
    const int64_t end = std::min(n, base + 64);
    uint64_t word = 0;
    int64_t i = base;
    if (!mask) {
      word = end - base == 64 ? ~uint64_t(0) : (uint64_t(1) << (end - base)) - 1;
      i = end;
    }
    for (; bytes <= 64 && i + bytes <= end; i += bytes) {
      uint64_t group = 0;
      std::memcpy(&group, bits,
                  hn::StoreMaskBits(d8, hn::Ne(hn::LoadU(d8, mask + i), hn::Zero(d8)), bits));
      word |= group << (i - base);
    }
    for (; i < end; ++i)
      word |= uint64_t(mask[i] != 0) << (i - base);
    active[base >> 6] = word;
  }
}

/// The C library's function for targets SLEEF's FMA variants cannot serve.
float libmCall(MathFn fn, float x) {
  switch (fn) {
#define TTINTERP_LIBM(NAME, SLEEF, ULP)                                                            \
  case MathFn::NAME:                                                                               \
    return ::SLEEF(x);
    TTINTERP_SLEEF_MATH(TTINTERP_LIBM)
#undef TTINTERP_LIBM
  }
  return x;
}

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#if HWY_TARGET == HWY_AVX2
using Raw = __m256;
#define TTINTERP_SLEEF_NAME(SLEEF, ULP) Sleef_finz_##SLEEF##8_##ULP##avx2
#else
using Raw = __m512;
#define TTINTERP_SLEEF_NAME(SLEEF, ULP) Sleef_finz_##SLEEF##16_##ULP##avx512f
#endif
using RawFn = Raw (*)(Raw);
RawFn sleefFunction(MathFn fn) {
  switch (fn) {
#define TTINTERP_CASE(NAME, SLEEF, ULP)                                                            \
  case MathFn::NAME:                                                                               \
    return &TTINTERP_SLEEF_NAME(SLEEF, ULP);
    TTINTERP_SLEEF_MATH(TTINTERP_CASE)
#undef TTINTERP_CASE
  }
  return nullptr;
}
#undef TTINTERP_SLEEF_NAME

VectorMathFunction VectorMath(MathFn fn) {
  return {reinterpret_cast<const void *>(sleefFunction(fn)), int(sizeof(Raw) / sizeof(float))};
}

void Map(MathFn fn, const float *x, float *y, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const RawFn f = sleefFunction(fn);
  int64_t i = 0;
  for (; i + L <= n; i += L)
    hn::StoreU(decltype(hn::Zero(d)){f(hn::LoadU(d, x + i).raw)}, d, y + i);
  if (i < n) {
    // The tail through the same vector function, so an element's result does not
    // depend on where it sits in the block.
    HWY_ALIGN float tail[hn::MaxLanes(d)] = {};
    std::memcpy(tail, x + i, size_t(n - i) * sizeof(float));
    hn::Store(decltype(hn::Zero(d)){f(hn::Load(d, tail).raw)}, d, tail);
    std::memcpy(y + i, tail, size_t(n - i) * sizeof(float));
  }
}
#else
VectorMathFunction VectorMath(MathFn) { return {}; }

void Map(MathFn fn, const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = libmCall(fn, x[i]);
}
#endif

const char *TargetName() { return hwy::TargetName(HWY_TARGET); }

} // namespace ttinterp::interp::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ttinterp::interp::simd {

HWY_EXPORT(GemmF32);
HWY_EXPORT(GemmF64);
HWY_EXPORT(Map);
HWY_EXPORT(VectorMath);
HWY_EXPORT(Basic);
HWY_EXPORT(AdvanceAddresses);
HWY_EXPORT(AddOffsets);
HWY_EXPORT(LaneBreaks);
HWY_EXPORT(LaneActive);
HWY_EXPORT(RepeatedPointerEnd);
HWY_EXPORT(OffsetBreaks);
HWY_EXPORT(RepeatedOffsetEnd);
HWY_EXPORT(TargetName);
HWY_EXPORT(AtomicAddRunF32);

void gemm(const float *a, const float *b, const float *c, float *out, int64_t m, int64_t n,
          int64_t k) {
  HWY_DYNAMIC_DISPATCH(GemmF32)(a, k, b, n, c, out, m, n, k);
}
void gemm(const float *a, int64_t lda, const float *b, int64_t ldb, const float *c, float *out,
          int64_t m, int64_t n, int64_t k) {
  HWY_DYNAMIC_DISPATCH(GemmF32)(a, lda, b, ldb, c, out, m, n, k);
}
void gemm(const double *a, const double *b, const double *c, double *out, int64_t m, int64_t n,
          int64_t k) {
  HWY_DYNAMIC_DISPATCH(GemmF64)(a, b, c, out, m, n, k);
}
void basic(BasicOp op, const float *a, const float *b, float *r, int64_t n, ScalarOperand scalar,
           bool stream) {
  HWY_DYNAMIC_DISPATCH(Basic)(op, a, b, r, n, scalar, stream);
}
void advanceAddresses(const uint64_t *p, int64_t bytes, uint64_t *r, int64_t n) {
  HWY_DYNAMIC_DISPATCH(AdvanceAddresses)(p, bytes, r, n);
}
void addOffsets(const uint64_t *p, bool splatBase, const int32_t *off, unsigned shift,
                uint64_t *r, int64_t n) {
  HWY_DYNAMIC_DISPATCH(AddOffsets)(p, splatBase, off, shift, r, n);
}
void laneBreaks(const uint64_t *p, int64_t n, uint64_t step, uint64_t *breaks) {
  HWY_DYNAMIC_DISPATCH(LaneBreaks)(p, n, step, breaks);
}
void laneActive(const uint8_t *mask, int64_t n, uint64_t *active) {
  HWY_DYNAMIC_DISPATCH(LaneActive)(mask, n, active);
}
int64_t repeatedPointerEnd(const uint64_t *p, int64_t from, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(RepeatedPointerEnd)(p, from, n);
}
void offsetBreaks(const int32_t *off, int64_t n, uint64_t *breaks, int32_t &lo, int32_t &hi) {
  HWY_DYNAMIC_DISPATCH(OffsetBreaks)(off, n, breaks, lo, hi);
}
int64_t repeatedOffsetEnd(const int32_t *off, int64_t from, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(RepeatedOffsetEnd)(off, from, n);
}
void map(MathFn fn, const float *x, float *y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(Map)(fn, x, y, n);
}
VectorMathFunction vectorMathFunction(MathFn fn) { return HWY_DYNAMIC_DISPATCH(VectorMath)(fn); }
const char *targetName() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
bool atomicAddRunF32(float *host, const float *v, float *old, int64_t n) {
  return HWY_DYNAMIC_DISPATCH(AtomicAddRunF32)(host, v, old, n);
}

} // namespace ttinterp::interp::simd
#endif
