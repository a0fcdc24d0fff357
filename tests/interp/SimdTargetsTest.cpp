//===- SimdTargetsTest.cpp - The per-ISA kernels agree bit for bit on every target -===//
//
// Highway compiles interp/lib/simd for every target and lets a test force each one the
// CPU supports (SSE4, SSSE3 and scalar emulation everywhere; AVX2 and AVX-512 where the
// CPU has them). The dot's micro-kernel must give every target the same bits, equal to
// the definition run here by a plain loop: per element, c followed by std::fma over k in
// order. f32 basic arithmetic must equal C++ float arithmetic on every target. Sizes are
// odd so that every kernel's tails run.
//
//===----------------------------------------------------------------------===//
#include "simd/Simd.h"
#include "ttinterp/memory/StreamingStores.h"

#include <doctest/doctest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace ttinterp::interp;

namespace {

template <class T> std::vector<T> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<T> v(n);
  for (T &x : v)
    x = T(u(rng));
  return v;
}

template <class T> std::vector<T> referenceGemm(const std::vector<T> &a, const std::vector<T> &b,
                                                const std::vector<T> &c, int64_t m, int64_t n,
                                                int64_t k) {
  std::vector<T> out(c);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T acc = c[i * n + j];
      for (int64_t p = 0; p < k; ++p)
        acc = std::fma(a[i * k + p], b[p * n + j], acc);
      out[i * n + j] = acc;
    }
  return out;
}

template <class T> bool sameBits(const std::vector<T> &x, const std::vector<T> &y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

/// Runs `check` once per target this CPU supports, with dispatch forced to it.
template <class Check> void onEveryTarget(Check check) {
  int targets = 0;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    INFO("target " << simd::targetName());
    CHECK(std::string(simd::targetName()) == hwy::TargetName(target));
    check();
    ++targets;
  }
  hwy::SetSupportedTargetsForTest(0);
  CHECK(targets >= 2); // at least one SIMD target and the scalar one, on any x86-64
}

} // namespace

TEST_CASE("the dot's micro-kernel gives every target the FMA chain's bits") {
  for (const std::array<int64_t, 3> &shape :
       {std::array<int64_t, 3>{37, 29, 53}, {64, 64, 32}, {47, 96, 17}, {1, 70, 3}, {5, 3, 0}}) {
    // Named, not structured bindings: INFO and the lambda capture them, which clang 14 refuses.
    const int64_t m = shape[0], n = shape[1], k = shape[2];
    INFO(m << "x" << n << "x" << k);
    auto a = randomValues<float>(size_t(m * k), 1), b = randomValues<float>(size_t(k * n), 2),
         c = randomValues<float>(size_t(m * n), 3);
    auto da = randomValues<double>(size_t(m * k), 4), db = randomValues<double>(size_t(k * n), 5),
         dc = randomValues<double>(size_t(m * n), 6);
    std::vector<float> want = referenceGemm(a, b, c, m, n, k);
    std::vector<double> dwant = referenceGemm(da, db, dc, m, n, k);
    onEveryTarget([&] {
      std::vector<float> out(c.size());
      simd::gemm(a.data(), b.data(), c.data(), out.data(), m, n, k);
      CHECK(sameBits(out, want));
      std::vector<float> inPlace = c; // out may be c
      simd::gemm(a.data(), b.data(), inPlace.data(), inPlace.data(), m, n, k);
      CHECK(sameBits(inPlace, want));
      std::vector<double> dout(dc.size());
      simd::gemm(da.data(), db.data(), dc.data(), dout.data(), m, n, k);
      CHECK(sameBits(dout, dwant));
    });
  }
}

TEST_CASE("the micro-kernel reads a tile of a larger matrix where it lies, with the same bits") {
  // a is the 37 x 29 tile at (3, 5) of a 50-column matrix, b the 29 x 45 tile at (2, 7) of a
  // 61-column one: what a tile view (Frame::rowStride) hands the dot. The dense copies of the
  // tiles give the expected bits.
  const int64_t m = 37, n = 45, k = 29, lda = 50, ldb = 61;
  auto bigA = randomValues<float>(size_t((m + 3) * lda), 9);
  auto bigB = randomValues<float>(size_t((k + 2) * ldb), 10);
  auto c = randomValues<float>(size_t(m * n), 11);
  const float *tileA = bigA.data() + 3 * lda + 5, *tileB = bigB.data() + 2 * ldb + 7;
  std::vector<float> a(size_t(m * k)), b(size_t(k * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      a[size_t(i * k + p)] = tileA[i * lda + p];
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      b[size_t(p * n + j)] = tileB[p * ldb + j];
  std::vector<float> want = referenceGemm(a, b, c, m, n, k);
  onEveryTarget([&] {
    std::vector<float> out(c.size());
    simd::gemm(tileA, lda, tileB, ldb, c.data(), out.data(), m, n, k);
    CHECK(sameBits(out, want));
    simd::gemm(tileA, lda, b.data(), n, c.data(), out.data(), m, n, k); // only a in place
    CHECK(sameBits(out, want));
  });
}

TEST_CASE("f32 basic arithmetic is C++ float arithmetic on every target") {
  const int64_t n = 29;
  auto a = randomValues<float>(n, 7), b = randomValues<float>(n, 8);
  b[3] = 0.0f; // a division by zero
  a[5] = std::nanf("");
  using Op = float (*)(float, float);
  const std::pair<simd::BasicOp, Op> ops[] = {
      {simd::BasicOp::Add, [](float x, float y) { return x + y; }},
      {simd::BasicOp::Sub, [](float x, float y) { return x - y; }},
      {simd::BasicOp::Mul, [](float x, float y) { return x * y; }},
      {simd::BasicOp::Div, [](float x, float y) { return x / y; }}};
  onEveryTarget([&] {
    for (const auto &[op, f] : ops) {
      std::vector<float> none(n), lhs(n), rhs(n), wantNone(n), wantLhs(n), wantRhs(n);
      for (int64_t i = 0; i < n; ++i) {
        wantNone[i] = f(a[i], b[i]);
        wantLhs[i] = f(a[0], b[i]);
        wantRhs[i] = f(a[i], b[0]);
      }
      simd::basic(op, a.data(), b.data(), none.data(), n, simd::ScalarOperand::None);
      simd::basic(op, a.data(), b.data(), lhs.data(), n, simd::ScalarOperand::Lhs);
      simd::basic(op, a.data(), b.data(), rhs.data(), n, simd::ScalarOperand::Rhs);
      CHECK(sameBits(none, wantNone));
      CHECK(sameBits(lhs, wantLhs));
      CHECK(sameBits(rhs, wantRhs));
    }
  });
}

TEST_CASE("f32 basic arithmetic streamed gives C++ float arithmetic at every alignment") {
  // r = a + b (and with a splat of a or b) written with streaming stores from every float
  // offset of a line, over lengths that leave no whole line, one, and several with tails.
  const int64_t most = 100;
  auto a = randomValues<float>(most, 17), b = randomValues<float>(most, 18);
  onEveryTarget([&] {
    alignas(64) std::array<float, 16 + most + 16> r;
    for (int64_t offset = 0; offset < 16; ++offset)
      for (int64_t n : {int64_t(0), int64_t(5), int64_t(16), int64_t(33), most}) {
        for (auto scalar :
             {simd::ScalarOperand::None, simd::ScalarOperand::Lhs, simd::ScalarOperand::Rhs}) {
          CAPTURE(offset);
          CAPTURE(n);
          CAPTURE(int(scalar));
          r.fill(-7.0f);
          simd::basic(simd::BasicOp::Sub, a.data(), b.data(), r.data() + 16 + offset, n, scalar,
                      true);
          ttinterp::fenceStreamingStores();
          bool same = true;
          for (int64_t i = 0; i < int64_t(r.size()); ++i) {
            int64_t k = i - 16 - offset;
            float want = k < 0 || k >= n                        ? -7.0f
                         : scalar == simd::ScalarOperand::None ? a[k] - b[k]
                         : scalar == simd::ScalarOperand::Lhs  ? a[0] - b[k]
                                                                : a[k] - b[0];
            same = same && std::memcmp(&r[i], &want, 4) == 0;
          }
          CHECK(same);
        }
      }
  });
}

TEST_CASE("vector math stays within SLEEF's 1-ulp bound of the exact value on every target") {
  // Against long double (64-bit mantissa) libm as the exact value: 1 ulp of the f32 result.
  const int64_t n = 37;
  std::vector<float> x = randomValues<float>(n, 9);
  auto ulpError = [](float got, long double exact) {
    float e = float(exact);
    float ulp = std::nextafter(std::fabs(e), INFINITY) - std::fabs(e);
    return double(std::fabs((long double)got - exact) / (long double)ulp);
  };
  onEveryTarget([&] {
    std::vector<float> y(n);
    simd::map(simd::MathFn::Exp, x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i)
      CHECK(ulpError(y[i], std::exp((long double)x[i])) <= 1.0);
    simd::map(simd::MathFn::Sin, x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i)
      CHECK(ulpError(y[i], std::sin((long double)x[i])) <= 1.0);
    std::vector<float> positive(x);
    for (float &v : positive)
      v = std::fabs(v) + 0.01f;
    simd::map(simd::MathFn::Log, positive.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i)
      CHECK(ulpError(y[i], std::log((long double)positive[i])) <= 1.0);
  });
}

TEST_CASE("tt.reduce's f32 row tree gives every target the same bits") {
  // By hand (docs/semantics.md's tree): 2^24, 31 ones, -2^24 sum to 31 (lane 0 cancels,
  // the butterfly adds small integers exactly); a left fold would give 0.
  std::vector<float> cancel(33, 1.0f);
  cancel[0] = 16777216.0f;
  cancel[32] = -16777216.0f;
  // A row shorter than the 32 lanes (ReduceOrderTest.cpp works it out): lanes 0 and 8 cancel
  // first, then the ten ones add exactly.
  std::vector<float> short12(12, 1.0f);
  short12[0] = 16777216.0f;
  short12[8] = -16777216.0f;
  // Random rows of awkward lengths with NaNs and both zeros: every target against the first.
  std::vector<std::vector<float>> rows;
  for (int64_t length : {1, 2, 3, 5, 12, 17, 31, 32, 33, 100, 1027}) {
    std::vector<float> row = randomValues<float>(size_t(length), unsigned(length));
    if (length > 5) {
      row[3] = -0.0f;
      row[4] = 0.0f;
      row[length - 2] = std::nanf("");
    }
    rows.push_back(row);
  }
  const simd::ReduceFn fns[] = {simd::ReduceFn::Add,    simd::ReduceFn::Mul,
                                simd::ReduceFn::MaxNum, simd::ReduceFn::MinNum,
                                simd::ReduceFn::Maximum, simd::ReduceFn::Minimum};
  std::vector<uint32_t> first;
  bool haveFirst = false;
  onEveryTarget([&] {
    CHECK(simd::treeReduce(simd::ReduceFn::Add, cancel.data(), 33) == 31.0f);
    CHECK(simd::treeReduce(simd::ReduceFn::Add, short12.data(), 12) == 10.0f);
    std::vector<uint32_t> bits;
    for (const auto &row : rows)
      for (simd::ReduceFn fn : fns) {
        float r = simd::treeReduce(fn, row.data(), int64_t(row.size()));
        uint32_t b;
        std::memcpy(&b, &r, 4);
        bits.push_back(b);
      }
    if (!haveFirst) {
      first = bits;
      haveFirst = true;
    }
    CHECK(bits == first);
  });
}

TEST_CASE("pointer advances keep the tag and wrap inside the address bits on every target") {
  // Tagged pointers: a tag above bit 48, an address below. The definition, applied by a
  // plain loop: the address bits advance (wrapping within them), the tag bits stay.
  const uint64_t addressMask = (uint64_t(1) << 48) - 1;
  const int64_t n = 2048 + 13;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> p(static_cast<size_t>(n));
  for (uint64_t &x : p)
    x = rng();
  p[0] = (uint64_t(5) << 48) | addressMask; // the largest address: a step wraps it to 0
  p[1] = uint64_t(9) << 48;                 // address 0: a step back wraps to the top
  for (uint64_t delta : {uint64_t(128), uint64_t(0) - 4096, uint64_t(1) << 47}) {
    CAPTURE(delta);
    std::vector<uint64_t> expected(p.size());
    for (size_t i = 0; i < p.size(); ++i)
      expected[i] = (p[i] & ~addressMask) | ((p[i] + delta) & addressMask);
    onEveryTarget([&] {
      std::vector<uint64_t> r(p.size());
      simd::advanceAddresses(p.data(), int64_t(delta), r.data(), n);
      CHECK(r == expected);
      std::vector<uint64_t> inPlace(p);
      simd::advanceAddresses(inPlace.data(), int64_t(delta), inPlace.data(), n);
      CHECK(inPlace == expected);
    });
    if (delta == 128) {
      CHECK(expected[0] == (uint64_t(5) << 48) + 127); // wrapped, tag kept
    }
  }
}

TEST_CASE("pointer blocks from i32 offsets keep the tag and wrap inside the address bits") {
  // tt.addptr of an i32 offset block: lane i's address moves by off[i] elements (off[i] *
  // 2^shift bytes, negative offsets backwards), wrapping within the 48 address bits, the tag
  // kept; with a splatted base every lane starts from p[0]. The definition by a plain loop.
  const uint64_t addressMask = (uint64_t(1) << 48) - 1;
  const int64_t n = 2048 + 13;
  std::mt19937_64 rng(5);
  std::vector<uint64_t> p(static_cast<size_t>(n));
  std::vector<int32_t> off(static_cast<size_t>(n));
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] = rng();
    off[i] = int32_t(uint32_t(rng()));
  }
  p[0] = (uint64_t(5) << 48) | (addressMask - 3); // near the top: +1 element of 4 wraps to 0
  off[0] = 1;
  p[1] = uint64_t(9) << 48; // address 0: -1 element wraps to the top
  off[1] = -1;
  off[2] = INT32_MIN;
  off[3] = INT32_MAX;
  for (unsigned shift : {0u, 2u, 3u}) {
    for (bool splatBase : {false, true}) {
      CAPTURE(shift);
      CAPTURE(splatBase);
      std::vector<uint64_t> expected(p.size());
      for (size_t i = 0; i < p.size(); ++i) {
        uint64_t from = splatBase ? p[0] : p[i];
        uint64_t bytes = uint64_t(int64_t(off[i])) << shift;
        expected[i] = (from & ~addressMask) | ((from + bytes) & addressMask);
      }
      onEveryTarget([&] {
        std::vector<uint64_t> r(p.size());
        simd::addOffsets(p.data(), splatBase, off.data(), shift, r.data(), n);
        CHECK(r == expected);
        if (!splatBase) {
          std::vector<uint64_t> inPlace(p);
          simd::addOffsets(inPlace.data(), false, off.data(), shift, inPlace.data(), n);
          CHECK(inPlace == expected);
        }
      });
      if (shift == 2 && !splatBase) {
        CHECK(expected[0] == uint64_t(5) << 48);                 // wrapped to 0, tag kept
        CHECK(expected[1] == ((uint64_t(9) << 48) | (addressMask - 3))); // back past 0
      }
    }
  }
}

TEST_CASE("lane runs: pointer breaks and active lanes land on the right bits on every target") {
  // The definition, by plain loops: lane j breaks a run iff it is lane 0, its pointer is not
  // the previous lane's plus the step, or its address (the low 48 bits) is below the step
  // (the sum carried into the tag); it is active iff its mask byte is nonzero (every lane
  // without a mask). Bits past n: breaks set, active clear. Sizes cover words and a half,
  // word boundaries and vector tails.
  std::mt19937_64 rng(11);
  for (int64_t n : {1, 3, 8, 63, 64, 65, 130, 2048 + 13}) {
    CAPTURE(n);
    const uint64_t step = 4;
    std::vector<uint64_t> p(static_cast<size_t>(n));
    std::vector<uint8_t> mask(static_cast<size_t>(n));
    uint64_t next = (uint64_t(3) << 48) + 4096;
    for (int64_t j = 0; j < n; ++j) {
      if (rng() % 7 == 0)
        next += rng() % 3 == 0 ? 0 - 64 : 8; // a jump back or a skipped element
      p[j] = next;
      next += step;
      mask[j] = rng() % 5 == 0 ? 0 : uint8_t(1 + rng() % 2); // any nonzero byte is active
    }
    if (n > 40) {
      // One step that carries out of the address bits into the tag: a break.
      p[39] = (uint64_t(3) << 48) | ((uint64_t(1) << 48) - step);
      p[40] = p[39] + step;
      CHECK(p[40] == uint64_t(4) << 48);
    }
    size_t words = size_t((n + 63) / 64);
    std::vector<uint64_t> breaks(words, 0), active(words, 0), all(words, 0);
    for (int64_t j = 0; j < int64_t(words) * 64; ++j) {
      bool broken =
          j >= n || j == 0 || p[j] != p[j - 1] + step || (p[j] & ((uint64_t(1) << 48) - 1)) < step;
      breaks[j / 64] |= uint64_t(broken) << (j % 64);
      active[j / 64] |= uint64_t(j < n && mask[j] != 0) << (j % 64);
      all[j / 64] |= uint64_t(j < n) << (j % 64);
    }
    onEveryTarget([&] {
      std::vector<uint64_t> got(words, 0x5555);
      simd::laneBreaks(p.data(), n, step, got.data());
      CHECK(got == breaks);
      std::fill(got.begin(), got.end(), 0xAAAA);
      simd::laneActive(mask.data(), n, got.data());
      CHECK(got == active);
      simd::laneActive(nullptr, n, got.data());
      CHECK(got == all);
    });
  }
}

TEST_CASE("gather runs: offset breaks, their span and repeated lanes on every target") {
  // The definitions, by plain loops: lane j breaks iff it is lane 0, the previous offset is
  // INT32_MAX (its successor wraps) or off[j] != off[j - 1] + 1; lo and hi the least and
  // greatest offset; a repeat ends at the first lane from `from` whose offset (or pointer)
  // differs from lane from - 1's.
  std::mt19937 rng(12);
  for (int64_t n : {1, 5, 16, 63, 64, 65, 200, 1000 + 7}) {
    CAPTURE(n);
    std::vector<int32_t> off;
    while (int64_t(off.size()) < n) {
      const int kind = int(rng() % 4);
      const int32_t start = kind == 3 ? INT32_MAX - 2 : int32_t(rng() % 1000) - 500;
      for (int64_t len = 1 + rng() % 40, k = 0; k < len && int64_t(off.size()) < n; ++k)
        off.push_back(kind == 0 ? start : kind == 1 ? int32_t(rng()) : start + int32_t(k % 3));
    }
    if (n > 10)
      off[size_t(n / 2)] = INT32_MIN; // after whatever came before: a break, the least value
    const size_t words = size_t((n + 63) / 64);
    std::vector<uint64_t> breaks(words, 0);
    for (int64_t j = 0; j < int64_t(words) * 64; ++j) {
      const bool broken =
          j >= n || j == 0 || off[j - 1] == INT32_MAX || int64_t(off[j]) != int64_t(off[j - 1]) + 1;
      breaks[j / 64] |= uint64_t(broken) << (j % 64);
    }
    const int32_t lo = *std::min_element(off.begin(), off.end());
    const int32_t hi = *std::max_element(off.begin(), off.end());
    std::vector<uint64_t> pointers(off.size());
    for (size_t j = 0; j < off.size(); ++j)
      pointers[j] = (uint64_t(2) << 48) + uint64_t(int64_t(off[j]) * 4 + (int64_t(1) << 40));
    onEveryTarget([&] {
      std::vector<uint64_t> got(words, 0x5555);
      int32_t gotLo = 0, gotHi = 0;
      simd::offsetBreaks(off.data(), n, got.data(), gotLo, gotHi);
      CHECK(got == breaks);
      CHECK(gotLo == lo);
      CHECK(gotHi == hi);
      int wrong = 0;
      for (int64_t from = 1; from < n; ++from) {
        int64_t end = from;
        while (end < n && off[size_t(end)] == off[size_t(from - 1)])
          ++end;
        wrong += simd::repeatedOffsetEnd(off.data(), from, n) != end;
        wrong += simd::repeatedPointerEnd(pointers.data(), from, n) != end;
      }
      CHECK(wrong == 0);
    });
  }
}

TEST_CASE("32-bit integer division gives every target C++'s quotients and remainders") {
  // Both of intDivide32's ways (a divisor per lane: the double quotient; one divisor: its
  // reciprocal and a correction), every op, 203 lanes (tails on every width), against C++'s
  // integer division in 64 bits, MIN / -1 wrapping to MIN as arith defines it.
  std::mt19937 rng(11);
  const int32_t specials[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, 7, -7, INT32_MAX, 98, 2006};
  std::vector<int32_t> a, b;
  for (int32_t x : specials)
    for (int32_t y : specials)
      if (y != 0) {
        a.push_back(x);
        b.push_back(y);
      }
  while (a.size() < 203) {
    const int32_t y = int32_t(rng() >> (rng() % 32));
    if (y == 0)
      continue;
    a.push_back(rng() % 2 ? int32_t(rng()) : int32_t(uint32_t(y) * (rng() % 5000)));
    b.push_back(y);
  }
  auto expected = [](simd::IntDivOp op, int32_t x, int32_t y) {
    const int64_t sx = x, sy = y;
    const uint64_t ux = uint32_t(x), uy = uint32_t(y);
    switch (op) {
    case simd::IntDivOp::DivS:
      return int32_t(uint32_t(uint64_t(sx / sy)));
    case simd::IntDivOp::RemS:
      return int32_t(sx % sy);
    case simd::IntDivOp::DivU:
      return int32_t(uint32_t(ux / uy));
    case simd::IntDivOp::RemU:
      return int32_t(uint32_t(ux % uy));
    }
    return int32_t(0);
  };
  const simd::IntDivOp ops[] = {simd::IntDivOp::DivS, simd::IntDivOp::DivU, simd::IntDivOp::RemS,
                                simd::IntDivOp::RemU};
  const int32_t splats[] = {1, -1, 3, -7, 98, 2006, INT32_MIN, INT32_MAX, int32_t(0x80000001u)};
  onEveryTarget([&] {
    for (simd::IntDivOp op : ops) {
      INFO("op " << int(op));
      std::vector<int32_t> out(a.size()), want(a.size());
      simd::intDivide32(op, a.data(), b.data(), false, out.data(), int64_t(a.size()));
      for (size_t i = 0; i < a.size(); ++i)
        want[i] = expected(op, a[i], b[i]);
      CHECK(out == want);
      for (int32_t y : splats) {
        INFO("divisor " << y);
        simd::intDivide32(op, a.data(), &y, true, out.data(), int64_t(a.size()));
        for (size_t i = 0; i < a.size(); ++i)
          want[i] = expected(op, a[i], y);
        CHECK(out == want);
      }
    }
  });
}

TEST_CASE("a one-thread f32 atomic-add run flushes subnormals as atom.add.f32 on every target") {
  // PTX's atom.add.f32: subnormal inputs and a subnormal result become the zero of their sign.
  auto flushed = [](float x) {
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
  };
  const float tiny = std::numeric_limits<float>::denorm_min() * 5,
              minNormal = std::numeric_limits<float>::min();
  const int64_t n = 37; // whole vectors and a tail on every target
  auto start = randomValues<float>(n, 11), v = randomValues<float>(n, 12);
  start[0] = tiny;             // a subnormal input: 0 + v
  v[1] = -tiny;                // a subnormal operand: start + 0
  start[2] = 1.5f * minNormal; // 1.5 - 1 times 2^-126 is subnormal: +0
  v[2] = -minNormal;
  start[3] = -1.5f * minNormal; // -0
  v[3] = minNormal;
  start[4] = -0.0f; // -0 + -0 = -0
  v[4] = -0.0f;
  start[20] = std::nanf(""); // NaN stays NaN
  start[21] = std::numeric_limits<float>::infinity();
  v[21] = -std::numeric_limits<float>::infinity(); // inf - inf: NaN
  start[33] = -tiny;                               // a tail lane: -0 + v
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[size_t(i)] = flushed(flushed(start[size_t(i)]) + flushed(v[size_t(i)]));
  onEveryTarget([&] {
    std::vector<float> host = start, old(n, 99.0f);
    CHECK(simd::atomicAddRunF32(host.data(), v.data(), old.data(), n));
    CHECK(sameBits(old, start));
    CHECK(sameBits(host, want));
    // Adding zeros to normal numbers changes no bits: nothing to report.
    std::vector<float> ones(n, 1.0f), zeros(n, 0.0f), seen(n);
    CHECK_FALSE(simd::atomicAddRunF32(ones.data(), zeros.data(), seen.data(), n));
    CHECK(ones == std::vector<float>(n, 1.0f));
    // `old` may be the values' own block (a result slot sharing its operand's storage).
    std::vector<float> shared = v;
    host = start;
    simd::atomicAddRunF32(host.data(), shared.data(), shared.data(), n);
    CHECK(sameBits(shared, start));
    CHECK(sameBits(host, want));
  });
}
