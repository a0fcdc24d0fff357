//===- ElementwiseChainTest.cpp - Element-wise chains, interpreted and compiled -===//
//
// A chain of f32 ops (Fusion.h) runs as one instruction: its steps interpreted, or the
// loop ChainCompiler.h compiles. Each kernel here runs with compilation off and eager
// (and once in the background), over ordinary values and IEEE's special ones (signed
// zeros, subnormals, infinities, NaNs, the largest finite value), and every lane must
// hold the bits that the same IEEE operations give in plain C++, one at a time.
//
//===----------------------------------------------------------------------===//
#include "ChainTesting.h"
#include "Harness.h"

#include "ChainCompiler.h"
#include "simd/Simd.h"
#include "ttinterp/memory/StreamingStores.h"

#include <hwy/targets.h>

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

using Mode = ChainMode;

/// Ordinary values in [-8, 8) with IEEE's special values mixed in.
std::vector<float> values(size_t n, uint32_t seed) {
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::denorm_min(),
                            -1e-40f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            1.0f,
                            0.5f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> ordinary(-8.0f, 8.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = rng() % 4 == 0 ? specials[rng() % std::size(specials)] : ordinary(rng);
  return v;
}

/// Program p works on lanes [B p, B p + B) below n. Three chains:
///   t6 = -(y > 0 ? (x - s) * y : x) / y + 0.5, stored to out1 (the store runs the chain);
///   u3 = (m ? x * x : 0) + y, stored to out2 and, times s, to out3 (so the chain's result
///   is its own block, which the store copies);
///   v8 = rsqrt(minnum(maximum(ult(x, y) ? sqrt(|minimum(maxnum(x, y), s)|) : x, y), 0.5)),
///   stored to out4.
std::string chainKernel(int64_t block) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out1: !tt.ptr<f32>,
                    %out2: !tt.ptr<f32>, %out3: !tt.ptr<f32>, %out4: !tt.ptr<f32>, %n: i32,
                    %s: f32) {
    %cB = arith.constant $B : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %cB : i32
    %r = tt.make_range {end = $B : i32, start = 0 : i32} : tensor<$Bxi32>
    %ss = tt.splat %start : i32 -> tensor<$Bxi32>
    %offs = arith.addi %ss, %r : tensor<$Bxi32>
    %ns = tt.splat %n : i32 -> tensor<$Bxi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<$Bxi32>
    %zero = arith.constant dense<0.0> : tensor<$Bxf32>
    %half = arith.constant dense<0.5> : tensor<$Bxf32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    %xv = tt.load %xp, %m, %zero : tensor<$Bx!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    %yv = tt.load %yp, %m, %zero : tensor<$Bx!tt.ptr<f32>>
    %sv = tt.splat %s : f32 -> tensor<$Bxf32>
    %t1 = arith.subf %xv, %sv : tensor<$Bxf32>
    %t2 = arith.mulf %t1, %yv : tensor<$Bxf32>
    %pos = arith.cmpf ogt, %yv, %zero : tensor<$Bxf32>
    %t3 = arith.select %pos, %t2, %xv : tensor<$Bxi1>, tensor<$Bxf32>
    %t4 = arith.negf %t3 : tensor<$Bxf32>
    %t5 = arith.divf %t4, %yv : tensor<$Bxf32>
    %t6 = arith.addf %t5, %half : tensor<$Bxf32>
    %o1b = tt.splat %out1 : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %o1p = tt.addptr %o1b, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    tt.store %o1p, %t6, %m : tensor<$Bx!tt.ptr<f32>>
    %u1 = arith.mulf %xv, %xv : tensor<$Bxf32>
    %u2 = arith.select %m, %u1, %zero : tensor<$Bxi1>, tensor<$Bxf32>
    %u3 = arith.addf %u2, %yv : tensor<$Bxf32>
    %o2b = tt.splat %out2 : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %o2p = tt.addptr %o2b, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    tt.store %o2p, %u3, %m : tensor<$Bx!tt.ptr<f32>>
    %w = arith.mulf %u3, %sv : tensor<$Bxf32>
    %o3b = tt.splat %out3 : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %o3p = tt.addptr %o3b, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    tt.store %o3p, %w, %m : tensor<$Bx!tt.ptr<f32>>
    %lt = arith.cmpf ult, %xv, %yv : tensor<$Bxf32>
    %v1 = arith.maxnumf %xv, %yv : tensor<$Bxf32>
    %v2 = arith.minimumf %v1, %sv : tensor<$Bxf32>
    %v3 = math.absf %v2 : tensor<$Bxf32>
    %v4 = math.sqrt %v3 : tensor<$Bxf32>
    %v5 = arith.select %lt, %v4, %xv : tensor<$Bxi1>, tensor<$Bxf32>
    %v6 = arith.maximumf %v5, %yv : tensor<$Bxf32>
    %v7 = arith.minnumf %v6, %half : tensor<$Bxf32>
    %v8 = math.rsqrt %v7 : tensor<$Bxf32>
    %o4b = tt.splat %out4 : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %o4p = tt.addptr %o4b, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    tt.store %o4p, %v8, %m : tensor<$Bx!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$B", std::to_string(block)}});
}

struct Outputs {
  std::vector<float> out1, out2, out3, out4;
};

// ArithFunctors.h's rules, spelled out here: maxNum/minNum take the other operand of a NaN and
// order -0 below +0; maximum/minimum give the quiet NaN for any NaN operand.
float maxNum(float a, float b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
float minNum(float a, float b) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
float maximum(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : maxNum(a, b);
}
float minimum(float a, float b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : minNum(a, b);
}

/// The kernel's outputs, one IEEE operation at a time; lanes at or past n keep `fill`.
Outputs expected(const std::vector<float> &x, const std::vector<float> &y, size_t n, float s,
                 float fill) {
  Outputs o{std::vector<float>(x.size(), fill), std::vector<float>(x.size(), fill),
            std::vector<float>(x.size(), fill), std::vector<float>(x.size(), fill)};
  for (size_t i = 0; i < n; ++i) {
    float t1 = x[i] - s;
    float t2 = t1 * y[i];
    float t3 = y[i] > 0.0f ? t2 : x[i];
    float t4 = -t3;
    float t5 = t4 / y[i];
    o.out1[i] = t5 + 0.5f;
    float u1 = x[i] * x[i];
    float u3 = u1 + y[i];
    o.out2[i] = u3;
    o.out3[i] = u3 * s;
    bool lt = std::isnan(x[i]) || std::isnan(y[i]) || x[i] < y[i];
    float v2 = minimum(maxNum(x[i], y[i]), s);
    float v4 = std::sqrt(std::fabs(v2));
    float v7 = minNum(maximum(lt ? v4 : x[i], y[i]), 0.5f);
    o.out4[i] = 1.0f / std::sqrt(v7);
  }
  return o;
}

/// A contiguous f32 array of `size` elements at `data`, viewed as a kernel argument.
View floatView(float *data, size_t size) {
  View view;
  view.address = reinterpret_cast<uint64_t>(data);
  view.dtype = DType::F32;
  view.shape = {int64_t(size)};
  view.strides = {1};
  return view;
}

/// Launches chainKernel(block) over x and y into the four outputs, each of x.size() floats.
/// With `exchangePages`, the outputs' pages may be exchanged at the step (as the CLI and the
/// Python package let them be).
void launchInto(const interp::Kernel &k, std::vector<float> &x, std::vector<float> &y,
                const std::array<float *, 4> &outputs, size_t n, float s, int64_t block,
                unsigned threads, bool exchangePages) {
  std::vector<PointerArgument> pointers = {pointer("x", viewOf(x, DType::F32)),
                                           pointer("y", viewOf(y, DType::F32))};
  for (size_t i = 0; i < outputs.size(); ++i)
    pointers.push_back(pointer("out" + std::to_string(i + 1), floatView(outputs[i], x.size())));
  for (PointerArgument &p : pointers)
    p.exchangePages = exchangePages;
  LaunchResult r = launch(k, pointers,
                          {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3), ptrArg(4), ptrArg(5),
                           intArg(int64_t(n)), floatArg(s)},
                          {int64_t(x.size()) / block, 1, 1}, threads);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
}

Outputs run(const interp::Kernel &k, std::vector<float> x, std::vector<float> y, size_t n, float s,
            int64_t block, unsigned threads, float fill, bool exchangePages = false) {
  Outputs o{std::vector<float>(x.size(), fill), std::vector<float>(x.size(), fill),
            std::vector<float>(x.size(), fill), std::vector<float>(x.size(), fill)};
  launchInto(k, x, y, {o.out1.data(), o.out2.data(), o.out3.data(), o.out4.data()}, n, s, block,
             threads, exchangePages);
  return o;
}

void checkSame(const Outputs &got, const Outputs &want) {
  size_t wrong = 0;
  for (size_t i = 0; i < want.out1.size(); ++i) {
    bool same = sameFloat(got.out1[i], want.out1[i]) && sameFloat(got.out2[i], want.out2[i]) &&
                sameFloat(got.out3[i], want.out3[i]) && sameFloat(got.out4[i], want.out4[i]);
    if (!same && wrong++ < 5) {
      CAPTURE(i);
      CAPTURE(got.out1[i]);
      CAPTURE(want.out1[i]);
      CAPTURE(got.out2[i]);
      CAPTURE(want.out2[i]);
      CAPTURE(got.out3[i]);
      CAPTURE(want.out3[i]);
      CAPTURE(got.out4[i]);
      CAPTURE(want.out4[i]);
      CHECK(same);
    }
  }
  CHECK(wrong == 0);
}

} // namespace

TEST_CASE("element-wise chains give every lane the IEEE bits, interpreted and compiled") {
  // Blocks of 8 lanes run only the compiled loop's one-lane tail, 64 only its vector part,
  // 1024 many vector steps; n leaves the last program a masked tail.
  for (int64_t block : {8, 64, 1024})
    for (interp::ChainCompilation mode :
         {interp::ChainCompilation::Off, interp::ChainCompilation::Eager}) {
      Mode scoped(mode);
      CAPTURE(block);
      CAPTURE(int(mode));
      LoadedKernel k = loadKernel(chainKernel(block));
      REQUIRE_MESSAGE(k.kernel, k.error);
      const size_t size = size_t(block) * 6, n = size - size_t(block) / 2 - 1;
      std::vector<float> x = values(size, 7), y = values(size, 8);
      const float s = 0.3f; // not exact in binary: any other rounding shows
      uint64_t loopsBefore = interp::chainsGivenLoops();
      for (unsigned threads : {1u, 2u}) {
        CAPTURE(threads);
        checkSame(run(*k.kernel, x, y, n, s, block, threads, -7.0f), expected(x, y, n, s, -7.0f));
      }
      // Three chains of more than one op (%pos and t1..t6, u1..u3, %lt and v1..v8); %w is one
      // op, left alone.
      CHECK(interp::chainsGivenLoops() - loopsBefore ==
            (mode == interp::ChainCompilation::Eager ? 3u : 0u));
    }
}

TEST_CASE("a chain is compiled in the background once it has run enough lanes") {
  Mode scoped(interp::ChainCompilation::Background);
  const int64_t block = 1024;
  LoadedKernel k = loadKernel(chainKernel(block));
  REQUIRE_MESSAGE(k.kernel, k.error);
  // 2^21 lanes per chain: the point at which a chain asks to be compiled.
  const size_t size = size_t(1) << 21;
  std::vector<float> x = values(size, 11), y = values(size, 12);
  Outputs want = expected(x, y, size, 1.7f, 0.0f);
  uint64_t loopsBefore = interp::chainsGivenLoops();
  checkSame(run(*k.kernel, x, y, size, 1.7f, block, 2, 0.0f), want);
  interp::waitForChainCompilations();
  CHECK(interp::chainsGivenLoops() - loopsBefore == 3);
  checkSame(run(*k.kernel, x, y, size, 1.7f, block, 2, 0.0f), want);
}

TEST_CASE("outputs of 8 MiB that a launch only writes get the same bits by streaming stores") {
  // Each output is 8 MiB (kStreamStoresMinimum), written and never read, its pages exchanged
  // at the step: the compiled chains and the lone multiply (simd::basic) write their rows by
  // streaming stores, the masked last row is copied in by a streamed copy. Rows need not
  // start on a line (a vector's data), so each may have a plain head and tail. On one thread
  // and two (each fences its own stores).
  Mode scoped(interp::ChainCompilation::Eager);
  const int64_t block = 1024;
  LoadedKernel k = loadKernel(chainKernel(block));
  REQUIRE_MESSAGE(k.kernel, k.error);
  const size_t size = size_t(1) << 21, n = size - 300;
  std::vector<float> x = values(size, 31), y = values(size, 32);
  Outputs want = expected(x, y, n, 0.7f, -3.0f);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    checkSame(run(*k.kernel, x, y, n, 0.7f, block, threads, -3.0f, true), want);
  }
}

TEST_CASE("outputs of 8 MiB on fresh pages are streamed into where they are, with the same bits") {
  // Outputs as a fresh torch.empty of that size gets them: pages nothing has touched, written
  // in place (FreshPages) and, being only written and 8 MiB, by streaming stores. Lanes past n
  // are never stored: they read as the fresh pages' zeros.
  Mode scoped(interp::ChainCompilation::Eager);
  const int64_t block = 1024;
  LoadedKernel k = loadKernel(chainKernel(block));
  REQUIRE_MESSAGE(k.kernel, k.error);
  const size_t size = size_t(1) << 21, n = size - 300, bytes = size * sizeof(float);
  std::vector<float> x = values(size, 41), y = values(size, 42);
  Outputs want = expected(x, y, n, 0.7f, 0.0f);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    void *m = mmap(nullptr, 4 * bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(m != MAP_FAILED);
    auto *out = static_cast<float *>(m);
    launchInto(*k.kernel, x, y, {out, out + size, out + 2 * size, out + 3 * size}, n, 0.7f, block,
               threads, false);
    Outputs got{std::vector<float>(out, out + size), std::vector<float>(out + size, out + 2 * size),
                std::vector<float>(out + 2 * size, out + 3 * size),
                std::vector<float>(out + 3 * size, out + 4 * size)};
    munmap(m, 4 * bytes);
    checkSame(got, want);
  }
}

namespace {
/// Program p reads scalars x[p] and y[p] and stores two chains of scalars:
///   out1[p] = 1 / sqrt(x / y + s)         (a layer norm's rstd, as Triton spells it)
///   out2[p] = x > y ? x - s : -y          (a compare and a select on scalars)
const char *kScalarChains = R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out1: !tt.ptr<f32>,
                    %out2: !tt.ptr<f32>, %s: f32) {
    %one = arith.constant 1.000000e+00 : f32
    %pid = tt.get_program_id x : i32
    %xp = tt.addptr %x, %pid : !tt.ptr<f32>, i32
    %xv = tt.load %xp : !tt.ptr<f32>
    %yp = tt.addptr %y, %pid : !tt.ptr<f32>, i32
    %yv = tt.load %yp : !tt.ptr<f32>
    %a = arith.divf %xv, %yv : f32
    %b = arith.addf %a, %s : f32
    %c = math.sqrt %b : f32
    %r = arith.divf %one, %c : f32
    %o1 = tt.addptr %out1, %pid : !tt.ptr<f32>, i32
    tt.store %o1, %r : !tt.ptr<f32>
    %gt = arith.cmpf ogt, %xv, %yv : f32
    %d = arith.subf %xv, %s : f32
    %e = arith.negf %yv : f32
    %q = arith.select %gt, %d, %e : f32
    %o2 = tt.addptr %out2, %pid : !tt.ptr<f32>, i32
    tt.store %o2, %q : !tt.ptr<f32>
    tt.return
  }
}
)";

/// Launches kScalarChains over every element of x and y; returns (out1, out2).
std::pair<std::vector<float>, std::vector<float>> runScalarChains(const interp::Kernel &k,
                                                                  std::vector<float> x,
                                                                  std::vector<float> y, float s,
                                                                  uint64_t maxSteps = 0) {
  std::vector<float> out1(x.size(), -5.0f), out2(x.size(), -5.0f);
  LaunchResult r =
      launch(k,
             {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
              pointer("out1", viewOf(out1, DType::F32)), pointer("out2", viewOf(out2, DType::F32))},
             {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3), floatArg(s)}, {int64_t(x.size()), 1, 1},
             2, maxSteps);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return {out1, out2};
}

/// Each program's two scalars, one IEEE operation at a time.
void checkScalarChains(const std::vector<float> &x, const std::vector<float> &y, float s,
                       const std::pair<std::vector<float>, std::vector<float>> &got) {
  size_t wrong = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    float a = x[i] / y[i];
    float b = a + s;
    float r = 1.0f / std::sqrt(b);
    float q = x[i] > y[i] ? x[i] - s : -y[i];
    bool same = sameFloat(got.first[i], r) && sameFloat(got.second[i], q);
    if (!same && wrong++ < 5) {
      CAPTURE(i);
      CAPTURE(x[i]);
      CAPTURE(y[i]);
      CAPTURE(got.first[i]);
      CAPTURE(r);
      CAPTURE(got.second[i]);
      CAPTURE(q);
      CHECK(same);
    }
  }
  CHECK(wrong == 0);
}
/// Checks that a launch runs within `steps` interpreter steps and faults `step_limit` with
/// one fewer: `launch(maxSteps)` runs it under that limit.
template <class Launch> void requireExactStepCount(Launch launch, int64_t steps) {
  LaunchResult enough = launch(steps);
  CHECK(enough.error.empty());
  CHECK_FALSE(enough.fault);
  LaunchResult tooFew = launch(steps - 1);
  REQUIRE(tooFew.fault);
  CHECK(tooFew.fault->kind == "step_limit");
}

} // namespace

TEST_CASE("chains of scalars give each program the IEEE bits, interpreted and compiled") {
  LoadedKernel k = loadKernel(kScalarChains);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = values(300, 51), y = values(300, 52);
  const float s = 0.3f;
  for (interp::ChainCompilation mode :
       {interp::ChainCompilation::Off, interp::ChainCompilation::Eager}) {
    Mode scoped(mode);
    CAPTURE(int(mode));
    uint64_t loopsBefore = interp::chainsGivenLoops();
    checkScalarChains(x, y, s, runScalarChains(*k.kernel, x, y, s));
    CHECK(interp::chainsGivenLoops() - loopsBefore ==
          (mode == interp::ChainCompilation::Eager ? 2u : 0u));
  }
  // One instruction per chain: get_program_id, four addptrs, two loads, two chains, two stores
  // and the block itself: 12 steps, where op by op the chains' eight ops would be 6 more.
  Mode scoped(interp::ChainCompilation::Off);
  std::vector<float> one = {2.0f}, two = {0.5f};
  auto steps = [&](uint64_t maxSteps) {
    std::vector<float> out1(1), out2(1);
    return launch(
        *k.kernel,
        {pointer("x", viewOf(one, DType::F32)), pointer("y", viewOf(two, DType::F32)),
         pointer("out1", viewOf(out1, DType::F32)), pointer("out2", viewOf(out2, DType::F32))},
        {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3), floatArg(s)}, {1, 1, 1}, 1, maxSteps);
  };
  requireExactStepCount(steps, 12);
}

TEST_CASE("a chain of scalars is compiled in the background after enough runs, not lanes") {
  // A run of one lane counts as 64 toward the 2^21 lanes that ask for a compilation: 32,768
  // programs' runs, where counting lanes would take two million.
  Mode scoped(interp::ChainCompilation::Background);
  LoadedKernel k = loadKernel(kScalarChains);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = values(32768, 61), y = values(32768, 62);
  uint64_t loopsBefore = interp::chainsGivenLoops();
  checkScalarChains(x, y, 1.5f, runScalarChains(*k.kernel, x, y, 1.5f));
  interp::waitForChainCompilations();
  CHECK(interp::chainsGivenLoops() - loopsBefore == 2);
  checkScalarChains(x, y, 1.5f, runScalarChains(*k.kernel, x, y, 1.5f));
}

TEST_CASE("a chain counts as one instruction toward the step limit") {
  // The block runs get_program_id, muli, two loads, the store that runs chain %pos, t1..t6,
  // chain %m, u1..u3 (the select's mask, which the loads and stores read as their bound, is
  // made by the chain), its store, the store that runs %w, and the store that runs chain %lt,
  // v1..v8: 9 instructions, 10 steps with the block itself. Op by op, the chains would be 18
  // instructions more.
  Mode scoped(interp::ChainCompilation::Off);
  LoadedKernel k = loadKernel(chainKernel(8));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = values(8, 1), y = values(8, 2);
  std::vector<float> o1(8), o2(8), o3(8), o4(8);
  auto limited = [&](uint64_t maxSteps) {
    return launch(
        *k.kernel,
        {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
         pointer("out1", viewOf(o1, DType::F32)), pointer("out2", viewOf(o2, DType::F32)),
         pointer("out3", viewOf(o3, DType::F32)), pointer("out4", viewOf(o4, DType::F32))},
        {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3), ptrArg(4), ptrArg(5), intArg(8), floatArg(1)},
        {1, 1, 1}, 1, maxSteps);
  };
  requireExactStepCount(limited, 10);
}

namespace {
/// r = (a * 3 - b) / a over leaves (a, the constant 3, b).
interp::ChainCode mulSubDivChain() {
  interp::ChainCode code;
  using Leaf = interp::ChainCode::Leaf;
  using Node = interp::ChainCode::Node;
  code.leaves = {{Leaf::Tensor, 0}, {Leaf::Constant, 3.0f}, {Leaf::Tensor, 0}};
  code.nodes = {
      {Node::Mul, 0, {~0, ~1, 0}}, {Node::Sub, 0, {0, ~2, 0}}, {Node::Div, 0, {1, ~0, 0}}};
  return code;
}
/// mulSubDivChain's lane, each op rounded to f32 as C++ rounds it.
float mulSubDiv(float a, float b) {
  float p = a * 3.0f;
  float d = p - b;
  return d / a;
}
} // namespace

TEST_CASE("a compiled chain may write over the block it reads, lane for lane") {
  // out is leaf 0's own bytes (the arena lays a result over an operand it reads last):
  // r = (a * 3 - b) / a, 37 lanes (two vector steps and five single lanes).
  interp::ChainCode code = mulSubDivChain();
  std::string error;
  interp::ChainFn fn = interp::compileChain(code, error).plain;
  REQUIRE_MESSAGE(bool(fn), error);
  std::vector<float> a = values(37, 3), b = values(37, 4), want(37);
  for (size_t i = 0; i < 37; ++i)
    want[i] = mulSubDiv(a[i], b[i]);
  const uint8_t *leaves[3] = {reinterpret_cast<const uint8_t *>(a.data()), nullptr,
                              reinterpret_cast<const uint8_t *>(b.data())};
  fn(leaves, reinterpret_cast<uint8_t *>(a.data()), 37);
  for (size_t i = 0; i < 37; ++i) {
    CAPTURE(i);
    CHECK(sameFloat(a[i], want[i]));
  }
  // The same code is the same loop.
  CHECK(bool(interp::compileChain(code, error).plain == fn));
}

TEST_CASE("a chain's streaming loop writes the plain loop's lanes at every alignment") {
  // r = (a * 3 - b) / a: the streaming loop stores lanes one at a time up to the first
  // 64-byte boundary of out, whole lines by non-temporal stores, then the rest one at a time.
  // From every float offset of a line, over lengths that leave no whole line, exactly one,
  // and several with a tail; the floats around out stay untouched.
  std::string error;
  interp::ChainLoops loops = interp::compileChain(mulSubDivChain(), error);
  REQUIRE_MESSAGE(bool(loops), error);
  const int64_t most = 70;
  std::vector<float> a = values(most, 5), b = values(most, 6);
  const uint8_t *leaves[3] = {reinterpret_cast<const uint8_t *>(a.data()), nullptr,
                              reinterpret_cast<const uint8_t *>(b.data())};
  alignas(64) std::array<float, 16 + most + 16> out;
  for (int64_t offset = 0; offset < 16; ++offset)
    for (int64_t n : {int64_t(0), int64_t(3), int64_t(16), int64_t(37), most}) {
      CAPTURE(offset);
      CAPTURE(n);
      out.fill(-5.0f);
      loops.streaming(leaves, reinterpret_cast<uint8_t *>(out.data() + 16 + offset), n);
      fenceStreamingStores();
      bool same = true;
      for (int64_t i = 0; i < int64_t(out.size()); ++i) {
        int64_t k = i - 16 - offset;
        float want = k >= 0 && k < n ? mulSubDiv(a[k], b[k]) : -5.0f;
        same = same && sameFloat(out[i], want);
      }
      CHECK(same);
    }
}

TEST_CASE("a forked child runs the loops its parent compiled, and compiles nothing itself") {
  // The parent's compiler may hold its locks at the fork (its thread is not in the child):
  // the child must neither wait for it nor call into it, yet still get every lane right.
  Mode scoped(interp::ChainCompilation::Eager);
  const int64_t block = 64;
  LoadedKernel parentKernel = loadKernel(chainKernel(block));
  REQUIRE_MESSAGE(parentKernel.kernel, parentKernel.error);
  const size_t size = 256, n = 250;
  std::vector<float> x = values(size, 21), y = values(size, 22);
  Outputs want = expected(x, y, n, 0.3f, -7.0f);
  uint64_t before = interp::chainsGivenLoops();
  checkSame(run(*parentKernel.kernel, x, y, n, 0.3f, block, 1, -7.0f), want);
  REQUIRE(interp::chainsGivenLoops() - before == 3);

  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto same = [&](const Outputs &got) {
      for (size_t i = 0; i < size; ++i)
        if (!sameFloat(got.out1[i], want.out1[i]) || !sameFloat(got.out2[i], want.out2[i]) ||
            !sameFloat(got.out3[i], want.out3[i]) || !sameFloat(got.out4[i], want.out4[i]))
          return false;
      return true;
    };
    int status = 0;
    uint64_t inChild = interp::chainsGivenLoops();
    if (!same(run(*parentKernel.kernel, x, y, n, 0.3f, block, 2, -7.0f)))
      status |= 1; // the parent's loops, run in the child
    LoadedKernel fresh = loadKernel(chainKernel(block));
    if (!fresh.kernel || !same(run(*fresh.kernel, x, y, n, 0.3f, block, 1, -7.0f)))
      status |= 2; // a kernel lowered in the child, interpreted
    if (interp::chainsGivenLoops() != inChild)
      status |= 4;                      // the child compiled
    interp::waitForChainCompilations(); // returns at once in a child
    _exit(status);
  }
  int status = -1;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a chain of more than 16 outside values stays interpreted, as one instruction") {
  // v = x * 1.5 + s0 + s1 + ... + s16 reads 19 values from outside (x, the constant 1.5 and 17
  // splatted scalars), more than a compiled loop takes; every lane still gets the sum in order.
  Mode scoped(interp::ChainCompilation::Eager);
  std::string params, body = "    %v = arith.mulf %xv, %c15 : tensor<8xf32>\n";
  std::string last = "%v";
  for (int i = 0; i < 17; ++i) {
    std::string s = "%s" + std::to_string(i), splat = "%sp" + std::to_string(i),
                next = "%a" + std::to_string(i);
    params += ", " + s + ": f32";
    body += "    " + splat + " = tt.splat " + s + " : f32 -> tensor<8xf32>\n";
    body += "    " + next + " = arith.addf " + last + ", " + splat + " : tensor<8xf32>\n";
    last = next;
  }
  LoadedKernel k = loadKernel(subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>$PARAMS) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %xv = tt.load %xp : tensor<8x!tt.ptr<f32>>
    %c15 = arith.constant dense<1.5> : tensor<8xf32>
$BODY
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %op, $LAST : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
)",
                                    {{"$PARAMS", params}, {"$BODY", body}, {"$LAST", last}}));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = values(8, 31), out(8, -1.0f);
  std::vector<interp::ArgumentValue> args = {ptrArg(0), ptrArg(1)};
  for (int i = 0; i < 17; ++i)
    args.push_back(floatArg(0.1 * (i + 1)));
  uint64_t before = interp::chainsGivenLoops();
  LaunchResult r = launch(
      *k.kernel, {pointer("x", viewOf(x, DType::F32)), pointer("out", viewOf(out, DType::F32))},
      args, {1, 1, 1}, 1, /*maxSteps=*/3); // the load, the chain run by the store; the block
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  CHECK(interp::chainsGivenLoops() == before);
  for (size_t i = 0; i < 8; ++i) {
    float v = x[i] * 1.5f;
    for (int j = 0; j < 17; ++j)
      v = v + float(0.1 * (j + 1));
    CAPTURE(i);
    CHECK(sameFloat(out[i], v));
  }
}

namespace {
/// f rounded to the nearest bf16 (ties to the even one), found by comparing the two bf16s
/// around it rather than by adding to the bits; NaN stays a NaN.
float nearestBF16(float f) {
  if (std::isnan(f))
    return f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t lowBits = u & 0xFFFF0000u, highBits = lowBits + 0x10000u; // toward 0, away from 0
  float low, high;
  std::memcpy(&low, &lowBits, 4);
  std::memcpy(&high, &highBits, 4);
  if (u == lowBits)
    return f;
  // Past the largest finite bf16 the next one up is infinity, which stands for 2^128 here (as
  // IEEE rounds: overflow is what rounds beyond the largest finite value by half an ulp).
  double highValue = (highBits & 0x7F800000u) == 0x7F800000u
                         ? std::copysign(std::ldexp(1.0, 128), f)
                         : double(high);
  double toLow = std::fabs(double(f) - double(low)), toHigh = std::fabs(highValue - double(f));
  if (toLow != toHigh)
    return toLow < toHigh ? low : high;
  return (lowBits >> 16) % 2 == 0 ? low : high;
}

uint16_t bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t(u >> 16);
}
} // namespace

TEST_CASE("casts between bf16 or f16 and f32 join chains, rounding to bf16 as the GPU does") {
  // y = bf16(f32(x) * s + z), w = f32(bf16(f32(h) * s)) + 1: x bf16, h f16, z f32; y stored as
  // bf16, w as f32. s = 1 + 2^-8 makes each product exact in f32 and not in bf16, and a power
  // of two times s lies exactly halfway between two bf16s: ties, which go to the even one.
  const std::string ttir = R"(
module {
  tt.func public @k(%x: !tt.ptr<bf16>, %h: !tt.ptr<f16>, %z: !tt.ptr<f32>, %y: !tt.ptr<bf16>,
                    %w: !tt.ptr<f32>, %s: f32) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %xb = tt.splat %x : !tt.ptr<bf16> -> tensor<64x!tt.ptr<bf16>>
    %xp = tt.addptr %xb, %r : tensor<64x!tt.ptr<bf16>>, tensor<64xi32>
    %xv = tt.load %xp : tensor<64x!tt.ptr<bf16>>
    %hb = tt.splat %h : !tt.ptr<f16> -> tensor<64x!tt.ptr<f16>>
    %hp = tt.addptr %hb, %r : tensor<64x!tt.ptr<f16>>, tensor<64xi32>
    %hv = tt.load %hp : tensor<64x!tt.ptr<f16>>
    %zb = tt.splat %z : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %zp = tt.addptr %zb, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %zv = tt.load %zp : tensor<64x!tt.ptr<f32>>
    %sv = tt.splat %s : f32 -> tensor<64xf32>
    %one = arith.constant dense<1.0> : tensor<64xf32>
    %x32 = arith.extf %xv : tensor<64xbf16> to tensor<64xf32>
    %p = arith.mulf %x32, %sv : tensor<64xf32>
    %q = arith.addf %p, %zv : tensor<64xf32>
    %yv = arith.truncf %q : tensor<64xf32> to tensor<64xbf16>
    %yb = tt.splat %y : !tt.ptr<bf16> -> tensor<64x!tt.ptr<bf16>>
    %yp = tt.addptr %yb, %r : tensor<64x!tt.ptr<bf16>>, tensor<64xi32>
    tt.store %yp, %yv : tensor<64x!tt.ptr<bf16>>
    %h32 = arith.extf %hv : tensor<64xf16> to tensor<64xf32>
    %hs = arith.mulf %h32, %sv : tensor<64xf32>
    %hr = arith.truncf %hs : tensor<64xf32> to tensor<64xbf16>
    %hw = arith.extf %hr : tensor<64xbf16> to tensor<64xf32>
    %wv = arith.addf %hw, %one : tensor<64xf32>
    %wb = tt.splat %w : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %wp = tt.addptr %wb, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %wp, %wv : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
)";
  const float s = 1.00390625f;
  std::vector<float> values64 = values(64, 51), z = values(64, 52);
  for (size_t i = 0; i < 64; i += 3)
    z[i] = 0.0f; // q = x * s alone: ties where x is a power of two
  std::vector<uint16_t> x(64), h(64);
  std::vector<float> xf(64), hf(64);
  for (size_t i = 0; i < 64; ++i) {
    x[i] = bf16Bits(nearestBF16(values64[i])); // any bf16: its float is exact
    uint32_t u = uint32_t(x[i]) << 16;
    std::memcpy(&xf[i], &u, 4);
    // f16 inputs: small integers and halves, exact in f16 (its bits made here, 15 - 16 ones).
    float v = float(int(i % 31) - 15) / 2.0f;
    hf[i] = v;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    float a = std::fabs(v);
    if (a == 0) {
      h[i] = sign;
    } else {
      int e = int(std::floor(std::log2(a)));
      uint16_t mantissa = uint16_t(std::lround((a / std::ldexp(1.0f, e) - 1.0f) * 1024.0f));
      h[i] = uint16_t(sign | uint16_t((e + 15) << 10) | mantissa);
    }
  }
  for (interp::ChainCompilation mode :
       {interp::ChainCompilation::Off, interp::ChainCompilation::Eager}) {
    Mode scoped(mode);
    CAPTURE(int(mode));
    LoadedKernel k = loadKernel(ttir);
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<uint16_t> xs = x, hs = h, y(64, 0xDEAD);
    std::vector<float> zs = z, w(64, -1.0f);
    uint64_t before = interp::chainsGivenLoops();
    LaunchResult r =
        launch(*k.kernel,
               {pointer("x", viewOf(xs, DType::BF16)), pointer("h", viewOf(hs, DType::F16)),
                pointer("z", viewOf(zs, DType::F32)), pointer("y", viewOf(y, DType::BF16)),
                pointer("w", viewOf(w, DType::F32))},
               {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3), ptrArg(4), floatArg(s)}, {1, 1, 1});
    REQUIRE(r.error.empty());
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    // Two chains: extf, mulf, addf, truncf; and extf, mulf, truncf, extf, addf.
    CHECK(interp::chainsGivenLoops() - before ==
          (mode == interp::ChainCompilation::Eager ? 2u : 0u));
    for (size_t i = 0; i < 64; ++i) {
      CAPTURE(i);
      CAPTURE(xf[i]);
      CAPTURE(z[i]);
      float p = xf[i] * s;
      float q = p + z[i];
      float want = nearestBF16(q);
      if (std::isnan(want)) {
        CHECK((y[i] & 0x7F80) == 0x7F80);
        CHECK((y[i] & 0x007F) != 0);
      } else {
        CHECK(y[i] == bf16Bits(want));
      }
      float hs1 = hf[i] * s;
      CHECK(sameFloat(w[i], nearestBF16(hs1) + 1.0f));
    }
  }
}

TEST_CASE("a compiled rounding to bf16 breaks ties to even, overflows to infinity, quiets NaNs") {
  interp::ChainCode code;
  code.leaves = {{interp::ChainCode::Leaf::Tensor, 0}};
  code.nodes = {{interp::ChainCode::Node::RoundBF16, 0, {~0, 0, 0}}};
  std::string error;
  interp::ChainFn fn = interp::compileChain(code, error).plain;
  REQUIRE_MESSAGE(bool(fn), error);
  // (input bits, bf16 bits): ties below and above an even bf16, an odd one's tie, just past a
  // tie, the largest float (past bf16's largest finite value by more than half an ulp), a
  // signalling NaN, a negative tie.
  const std::vector<std::pair<uint32_t, uint16_t>> cases = {
      {0x40808000u, 0x4080}, {0x40818000u, 0x4082}, {0x40808001u, 0x4081}, {0x7F7FFFFFu, 0x7F80},
      {0x7F7F7FFFu, 0x7F7F}, {0xC0808000u, 0xC080}, {0x00008000u, 0x0000}, {0x00018000u, 0x0002}};
  std::vector<float> in(cases.size()), out(cases.size());
  for (size_t i = 0; i < cases.size(); ++i)
    std::memcpy(&in[i], &cases[i].first, 4);
  const uint8_t *leaves[1] = {reinterpret_cast<const uint8_t *>(in.data())};
  fn(leaves, reinterpret_cast<uint8_t *>(out.data()), int64_t(out.size()));
  for (size_t i = 0; i < cases.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &out[i], 4);
    CAPTURE(i);
    CHECK(bits == uint32_t(cases[i].second) << 16);
  }
  // A signalling NaN comes back quiet, its sign and top payload bits kept.
  uint32_t signalling = 0xFF810001u, quiet;
  float nan;
  std::memcpy(&nan, &signalling, 4);
  const uint8_t *nanLeaf[1] = {reinterpret_cast<const uint8_t *>(&nan)};
  float result;
  fn(nanLeaf, reinterpret_cast<uint8_t *>(&result), 1);
  std::memcpy(&quiet, &result, 4);
  CHECK(quiet == 0xFFC10000u);
}

TEST_CASE("transcendentals in a chain give the interpreter's bits, near the exact value") {
  // r = tanh(exp(x - s) * 0.5) + log(|x|): exp, tanh and log run SLEEF's 1-ulp vector
  // functions in both modes (simd::map). Both runs must agree bit for bit, and each
  // ordinary lane must lie within a few float roundings of the value in double precision.
  const std::string ttir = R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %s: f32) {
    %cB = arith.constant $B : i32
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %cB : i32
    %r = tt.make_range {end = $B : i32, start = 0 : i32} : tensor<$Bxi32>
    %ss = tt.splat %start : i32 -> tensor<$Bxi32>
    %offs = arith.addi %ss, %r : tensor<$Bxi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    %xv = tt.load %xp : tensor<$Bx!tt.ptr<f32>>
    %sv = tt.splat %s : f32 -> tensor<$Bxf32>
    %half = arith.constant dense<0.5> : tensor<$Bxf32>
    %d = arith.subf %xv, %sv : tensor<$Bxf32>
    %e = math.exp %d : tensor<$Bxf32>
    %h = arith.mulf %e, %half : tensor<$Bxf32>
    %t = math.tanh %h : tensor<$Bxf32>
    %a = math.absf %xv : tensor<$Bxf32>
    %l = math.log %a : tensor<$Bxf32>
    %y = arith.addf %t, %l : tensor<$Bxf32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %op = tt.addptr %ob, %offs : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    tt.store %op, %y : tensor<$Bx!tt.ptr<f32>>
    tt.return
  }
}
)";
  std::vector<float> x = values(64 * 8, 41);
  // Blocks of 64 lanes take the loop's vector steps, of 8 its one-lane tail.
  for (int64_t block : {64, 8}) {
    CAPTURE(block);
    auto runIn = [&](interp::ChainCompilation mode) {
      Mode scoped(mode);
      LoadedKernel k = loadKernel(subst(ttir, {{"$B", std::to_string(block)}}));
      REQUIRE_MESSAGE(k.kernel, k.error);
      std::vector<float> in = x, out(x.size(), -1.0f);
      LaunchResult r =
          launch(*k.kernel,
                 {pointer("x", viewOf(in, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                 {ptrArg(0), ptrArg(1), floatArg(0.3)}, {int64_t(x.size()) / block, 1, 1});
      REQUIRE(r.error.empty());
      REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
      return out;
    };
    uint64_t before = interp::chainsGivenLoops();
    std::vector<float> interpreted = runIn(interp::ChainCompilation::Off);
    std::vector<float> compiled = runIn(interp::ChainCompilation::Eager);
    CHECK(interp::chainsGivenLoops() - before == 1);
    size_t checked = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(i);
      CAPTURE(x[i]);
      CHECK(sameFloat(compiled[i], interpreted[i]));
      if (!std::isfinite(x[i]) || x[i] == 0.0f || std::fabs(x[i]) < 1e-30f)
        continue;
      double d = double(x[i] - 0.3f);
      double exact = std::tanh(std::exp(d) * 0.5) + std::log(std::fabs(double(x[i])));
      CHECK(std::fabs(compiled[i] - exact) <= 1e-5 * (1.0 + std::fabs(exact)));
      ++checked;
    }
    CHECK(checked > 300);
  }
}

TEST_CASE("a compiled transcendental calls each vector target's own function, whole or in halves") {
  // r = tanh(exp(x) * 0.5 + x) on 37 lanes (two 16-lane steps and five single lanes), compiled
  // with each target Highway can run here forced: on AVX-512 each step passes one register of
  // 16 lanes, on AVX2 two of 8; where map uses the C library, nothing is compiled. Every lane
  // must hold simd::map's bits on that target.
  interp::ChainCode code;
  using Node = interp::ChainCode::Node;
  code.leaves = {{interp::ChainCode::Leaf::Tensor, 0}, {interp::ChainCode::Leaf::Constant, 0.5f}};
  code.nodes = {{Node::Math, uint8_t(interp::simd::MathFn::Exp), {~0, 0, 0}},
                {Node::Mul, 0, {0, ~1, 0}},
                {Node::Add, 0, {1, ~0, 0}},
                {Node::Math, uint8_t(interp::simd::MathFn::Tanh), {2, 0, 0}}};
  std::vector<float> x = values(37, 61);
  int compiled = 0;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    std::string targetName = interp::simd::targetName();
    CAPTURE(targetName);
    std::vector<float> want(x.size()), got(x.size(), -1.0f);
    interp::simd::map(interp::simd::MathFn::Exp, x.data(), want.data(), int64_t(x.size()));
    for (size_t i = 0; i < x.size(); ++i)
      want[i] = want[i] * 0.5f + x[i];
    interp::simd::map(interp::simd::MathFn::Tanh, want.data(), want.data(), int64_t(x.size()));
    std::string error;
    interp::ChainFn fn = interp::compileChain(code, error).plain;
    bool vectorFunctions = interp::simd::vectorMathFunction(interp::simd::MathFn::Exp).fn;
    CHECK(bool(fn) == vectorFunctions);
    if (!fn)
      continue;
    ++compiled;
    const uint8_t *leaves[2] = {reinterpret_cast<const uint8_t *>(x.data()), nullptr};
    fn(leaves, reinterpret_cast<uint8_t *>(got.data()), int64_t(got.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(i);
      CHECK(sameFloat(got[i], want[i]));
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  CHECK(compiled >= 1);
}

TEST_CASE("compiled roundings, copysign and fma give the C library's bits") {
  // Halves (where the roundings differ), values past 2^23 (already whole), signed zeros,
  // infinities and NaN, through one node each; 21 lanes: a 16-lane step and five single ones.
  const std::vector<float> x = {2.5f,
                                -2.5f,
                                0.5f,
                                -0.5f,
                                1.5f,
                                -1.49999988f,
                                3.7f,
                                -3.7f,
                                0.0f,
                                -0.0f,
                                1e30f,
                                -8388609.0f,
                                1e-40f,
                                -1e-40f,
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(),
                                7.5f,
                                -6.5f,
                                0.49999997f,
                                123456.5f};
  const std::vector<float> y = values(x.size(), 71), z = values(x.size(), 72);
  using Node = interp::ChainCode::Node;
  using Leaf = interp::ChainCode::Leaf;
  struct Case {
    Node::Op op;
    std::function<float(float, float, float)> want;
  };
  const std::vector<Case> cases = {
      {Node::Floor, [](float a, float, float) { return std::floor(a); }},
      {Node::Ceil, [](float a, float, float) { return std::ceil(a); }},
      {Node::Trunc, [](float a, float, float) { return std::trunc(a); }},
      {Node::Round, [](float a, float, float) { return std::round(a); }},
      {Node::RoundEven, [](float a, float, float) { return std::nearbyint(a); }},
      {Node::CopySign, [](float a, float b, float) { return std::copysign(a, b); }},
      {Node::Fma, [](float a, float b, float c) { return std::fma(a, b, c); }},
  };
  for (const Case &c : cases) {
    CAPTURE(int(c.op));
    interp::ChainCode code;
    code.leaves = {{Leaf::Tensor, 0}, {Leaf::Tensor, 0}, {Leaf::Tensor, 0}};
    code.nodes = {{c.op, 0, {~0, ~1, ~2}}};
    std::string error;
    interp::ChainFn fn = interp::compileChain(code, error).plain;
    REQUIRE_MESSAGE(bool(fn), error);
    std::vector<float> got(x.size(), -1.0f);
    const uint8_t *leaves[3] = {reinterpret_cast<const uint8_t *>(x.data()),
                                reinterpret_cast<const uint8_t *>(y.data()),
                                reinterpret_cast<const uint8_t *>(z.data())};
    fn(leaves, reinterpret_cast<uint8_t *>(got.data()), int64_t(got.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(i);
      CAPTURE(x[i]);
      CHECK(sameFloat(got[i], c.want(x[i], y[i], z[i])));
    }
  }
}

TEST_CASE("math roundings, copysign and fma make one chain from TTIR, as each op alone") {
  // r = copysign(fma(floor(x), y, ceil(x)), y) + trunc(x) + round(x) + roundeven(x)
  const std::string ttir = R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %r = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %r : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    %xv = tt.load %xp : tensor<32x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %r : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    %yv = tt.load %yp : tensor<32x!tt.ptr<f32>>
    %f = math.floor %xv : tensor<32xf32>
    %c = math.ceil %xv : tensor<32xf32>
    %m = math.fma %f, %yv, %c : tensor<32xf32>
    %s = math.copysign %m, %yv : tensor<32xf32>
    %t = math.trunc %xv : tensor<32xf32>
    %a1 = arith.addf %s, %t : tensor<32xf32>
    %o = math.round %xv : tensor<32xf32>
    %a2 = arith.addf %a1, %o : tensor<32xf32>
    %e = math.roundeven %xv : tensor<32xf32>
    %a3 = arith.addf %a2, %e : tensor<32xf32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<32x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<32x!tt.ptr<f32>>, tensor<32xi32>
    tt.store %op, %a3 : tensor<32x!tt.ptr<f32>>
    tt.return
  }
}
)";
  std::vector<float> x = values(32, 81), y = values(32, 82);
  for (size_t i = 0; i < 32; i += 4)
    x[i] = float(int(i) - 16) + 0.5f; // halves
  for (interp::ChainCompilation mode :
       {interp::ChainCompilation::Off, interp::ChainCompilation::Eager}) {
    Mode scoped(mode);
    CAPTURE(int(mode));
    LoadedKernel k = loadKernel(ttir);
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<float> xs = x, ys = y, out(32, -1.0f);
    uint64_t before = interp::chainsGivenLoops();
    LaunchResult r =
        launch(*k.kernel,
               {pointer("x", viewOf(xs, DType::F32)), pointer("y", viewOf(ys, DType::F32)),
                pointer("out", viewOf(out, DType::F32))},
               {ptrArg(0), ptrArg(1), ptrArg(2)}, {1, 1, 1});
    REQUIRE(r.error.empty());
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
    CHECK(interp::chainsGivenLoops() - before ==
          (mode == interp::ChainCompilation::Eager ? 1u : 0u));
    for (size_t i = 0; i < 32; ++i) {
      CAPTURE(i);
      CAPTURE(x[i]);
      float m = std::fma(std::floor(x[i]), y[i], std::ceil(x[i]));
      float s = std::copysign(m, y[i]);
      float a1 = s + std::trunc(x[i]);
      float a2 = a1 + std::round(x[i]);
      CHECK(sameFloat(out[i], a2 + std::nearbyint(x[i])));
    }
  }
}

namespace {
/// out[i] = (m[i] ? x[i] * x[i] : 2.5) + x[i], where m is a range compare of its own offsets:
/// `$PRED(i32(start + $S + i), bound)` for lanes i of make_range [$S, $S + $B), read by the
/// select alone. The chain makes the mask from start and bound itself.
std::string rangeMaskKernel(int64_t block, int64_t rangeStart, const char *predicate) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>, %start: i32, %bound: i32) {
    %r = tt.make_range {end = $E : i32, start = $S : i32} : tensor<$Bxi32>
    %ss = tt.splat %start : i32 -> tensor<$Bxi32>
    %offs = arith.addi %ss, %r : tensor<$Bxi32>
    %bs = tt.splat %bound : i32 -> tensor<$Bxi32>
    %m = arith.cmpi $PRED, %offs, %bs : tensor<$Bxi32>
    %lanes = tt.make_range {end = $B : i32, start = 0 : i32} : tensor<$Bxi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %xp = tt.addptr %xb, %lanes : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    %xv = tt.load %xp : tensor<$Bx!tt.ptr<f32>>
    %c = arith.constant dense<2.5> : tensor<$Bxf32>
    %t = arith.mulf %xv, %xv : tensor<$Bxf32>
    %u = arith.select %m, %t, %c : tensor<$Bxi1>, tensor<$Bxf32>
    %v = arith.addf %u, %xv : tensor<$Bxf32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<$Bx!tt.ptr<f32>>
    %op = tt.addptr %ob, %lanes : tensor<$Bx!tt.ptr<f32>>, tensor<$Bxi32>
    tt.store %op, %v : tensor<$Bx!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$B", std::to_string(block)},
                {"$E", std::to_string(rangeStart + block)},
                {"$S", std::to_string(rangeStart)},
                {"$PRED", predicate}});
}
} // namespace

TEST_CASE("a where on a range compare is one chain, its mask made from the scalars") {
  // Starts that make the offsets wrap past INT32_MAX or cross zero, bounds below, inside and
  // past the lanes, signed and unsigned: every lane must get the mask the interpreter's
  // range compare gives it, in the compiled loop's vector steps and its one-lane tail.
  const int32_t max = std::numeric_limits<int32_t>::max(),
                min = std::numeric_limits<int32_t>::min();
  const int32_t starts[] = {0, -30, 7, max - 20, min + 3};
  const int32_t bounds[] = {10, -3, 0, max - 7, min + 10, 40};
  for (int64_t block : {24, 64})
    for (int64_t rangeStart : {0, 5})
      for (const char *predicate : {"slt", "ult"}) {
        LoadedKernel k = loadKernel(rangeMaskKernel(block, rangeStart, predicate));
        REQUIRE_MESSAGE(k.kernel, k.error);
        const bool isUnsigned = std::string(predicate) == "ult";
        std::vector<float> x = values(size_t(block), uint32_t(block + rangeStart));
        for (interp::ChainCompilation mode :
             {interp::ChainCompilation::Off, interp::ChainCompilation::Eager}) {
          Mode scoped(mode);
          for (int32_t start : starts)
            for (int32_t bound : bounds) {
              CAPTURE(block);
              CAPTURE(rangeStart);
              CAPTURE(predicate);
              CAPTURE(int(mode));
              CAPTURE(start);
              CAPTURE(bound);
              std::vector<float> xs = x, out(size_t(block), -1.0f);
              LaunchResult r = launch(
                  *k.kernel,
                  {pointer("x", viewOf(xs, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                  {ptrArg(0), ptrArg(1), intArg(start), intArg(bound)}, {1, 1, 1});
              REQUIRE(r.error.empty());
              REQUIRE_FALSE(r.fault);
              int wrong = 0;
              for (int64_t i = 0; i < block; ++i) {
                // The offset as i32 arithmetic wraps it.
                int32_t offset = int32_t(uint32_t(start) + uint32_t(rangeStart + i));
                bool m = isUnsigned ? uint32_t(offset) < uint32_t(bound) : offset < bound;
                float want = (m ? x[size_t(i)] * x[size_t(i)] : 2.5f) + x[size_t(i)];
                if (!sameFloat(out[size_t(i)], want) && wrong++ < 3) {
                  CAPTURE(i);
                  CAPTURE(offset);
                  CHECK(sameFloat(out[size_t(i)], want));
                }
              }
              CHECK(wrong == 0);
            }
        }
      }
  // The mask is no instruction of its own: the load, the store that runs the chain (%m, %t,
  // %u, %v) and the block are 3 steps; with the compare apart they were 4.
  Mode scoped(interp::ChainCompilation::Off);
  LoadedKernel k = loadKernel(rangeMaskKernel(24, 0, "slt"));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = values(24, 3), out(24);
  auto limited = [&](uint64_t maxSteps) {
    return launch(*k.kernel,
                  {pointer("x", viewOf(x, DType::F32)), pointer("out", viewOf(out, DType::F32))},
                  {ptrArg(0), ptrArg(1), intArg(0), intArg(10)}, {1, 1, 1}, 1, maxSteps);
  };
  requireExactStepCount(limited, 3);
}

namespace {
/// out = tanh(x * 0.7) * exp(x * 0.1) + floor(x) over 64 lanes, each function spelled `$TANH`,
/// `$EXP`, `$FLOOR` (a math op, or a libdevice call).
std::string twinKernel(const std::string &tanh, const std::string &exp, const std::string &floor) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    %xv = tt.load %xp : tensor<64x!tt.ptr<f32>>
    %c7 = arith.constant dense<0.7> : tensor<64xf32>
    %c1 = arith.constant dense<0.1> : tensor<64xf32>
    %a = arith.mulf %xv, %c7 : tensor<64xf32>
    %t = $TANH %a$CALL
    %b = arith.mulf %xv, %c1 : tensor<64xf32>
    %e = $EXP %b$CALL
    %f = $FLOOR %xv$CALL
    %m = arith.mulf %t, %e : tensor<64xf32>
    %y = arith.addf %m, %f : tensor<64xf32>
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
    %op = tt.addptr %ob, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
    tt.store %op, %y : tensor<64x!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$TANH", tanh}, {"$EXP", exp}, {"$FLOOR", floor}});
}
} // namespace

TEST_CASE("libdevice functions with a math twin join chains and give the math op's bits") {
  // __nv_tanhf, __nv_expf and __nv_floorf run as math.tanh, math.exp and math.floor: on
  // SLEEF's 1-ulp vector functions, inside the chain (LibdeviceTest checks them against
  // double precision). Each lane must hold the math kernel's bits, interpreted and compiled,
  // and the whole chain must count as one instruction, as the math kernel's does.
  const std::string math =
      subst(twinKernel("math.tanh", "math.exp", "math.floor"), {{"$CALL", " : tensor<64xf32>"}});
  // A call's attributes and type follow its operand: `%t = tt.extern_elementwise %a {...} : ...`.
  std::string libdevice =
      twinKernel("tt.extern_elementwise", "tt.extern_elementwise", "tt.extern_elementwise");
  for (const char *symbol : {"__nv_tanhf", "__nv_expf", "__nv_floorf"})
    libdevice.replace(libdevice.find("$CALL"), 5,
                      std::string(" {libname = \"\", libpath = \"\", pure = true, symbol = \"") +
                          symbol + "\"} : (tensor<64xf32>) -> tensor<64xf32>");
  std::vector<float> x = values(64 * 8, 91);
  auto run = [&](const std::string &ttir, interp::ChainCompilation mode, uint64_t maxSteps) {
    Mode scoped(mode);
    LoadedKernel k = loadKernel(ttir);
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<float> out(x.size(), -1.0f);
    for (size_t at = 0; at < x.size(); at += 64) {
      std::vector<float> in(x.begin() + at, x.begin() + at + 64), part(64, -1.0f);
      LaunchResult r =
          launch(*k.kernel,
                 {pointer("x", viewOf(in, DType::F32)), pointer("out", viewOf(part, DType::F32))},
                 {ptrArg(0), ptrArg(1)}, {1, 1, 1}, 1, maxSteps);
      if (maxSteps)
        return std::make_pair(r, out);
      REQUIRE(r.error.empty());
      REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
      std::copy(part.begin(), part.end(), out.begin() + at);
    }
    return std::make_pair(LaunchResult{}, out);
  };
  for (interp::ChainCompilation mode :
       {interp::ChainCompilation::Off, interp::ChainCompilation::Eager}) {
    CAPTURE(int(mode));
    std::vector<float> twin = run(libdevice, mode, 0).second, reference = run(math, mode, 0).second;
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(i);
      CAPTURE(x[i]);
      CHECK(sameFloat(twin[i], reference[i]));
    }
  }
  auto steps = [&](const std::string &ttir, uint64_t limit) {
    return run(ttir, interp::ChainCompilation::Off, limit).first;
  };
  // get_program_id is not used: the load, the store running the chain, and the block.
  requireExactStepCount([&](uint64_t n) { return steps(math, n); }, 3);
  requireExactStepCount([&](uint64_t n) { return steps(libdevice, n); }, 3);
}
