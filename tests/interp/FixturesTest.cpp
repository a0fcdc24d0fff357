//===- FixturesTest.cpp - Real Triton compiles against their numpy expectations -===//
//
// tests/data/kernels/*: each kernel compiled by Triton for sm_90, its inputs and
// its expected outputs computed independently with numpy; tolerances are the
// ones each fixture's README states.
//
//===----------------------------------------------------------------------===//
#include "Fixtures.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
std::string kernelDir(const std::string &name) { return source("tests/data/kernels/" + name); }

/// Runs a spec and compares every buffer that has an expected file bit for bit.
void checkAllExact(const std::string &name, const std::string &spec = "spec.json",
                   const std::string &folder = "expected", unsigned threads = 1) {
  std::string dir = kernelDir(name);
  SpecRun run = runSpec(dir, spec, threads);
  REQUIRE_MESSAGE(!run.fault, (run.fault ? run.fault->message : ""));
  for (const auto &[buffer, data] : run.buffers)
    checkExact(data, expected(dir, folder, buffer, data.dtype), name + ": " + buffer);
}
} // namespace

TEST_CASE("argmax fixture: two-operand reduce with the left tie-break, and max") {
  checkAllExact("argmax");
}

TEST_CASE("cumsum fixture: forward and reverse scans") { checkAllExact("cumsum"); }

TEST_CASE("while_loop fixture: Collatz step counts through scf.while") {
  checkAllExact("while_loop");
  checkAllExact("while_loop", "spec.json", "expected", 4);
}

TEST_CASE("dot_precision fixture: every inputPrecision within the README's tolerances") {
  std::string dir = kernelDir("dot_precision");
  struct Case {
    const char *spec, *folder;
    float atol;
  };
  // The *_inf specs' row 0 is +-inf (a[0][0] = inf): non-finite values must match in class.
  for (Case c :
       {Case{"spec.json", "expected", 2e-5f}, Case{"spec_tf32.json", "expected_tf32", 1e-4f},
        Case{"spec_tf32x3.json", "expected_tf32x3", 2e-5f},
        Case{"spec_tf32x3_inf.json", "expected_tf32x3_inf", 2e-5f},
        Case{"spec_bf16x3.json", "expected_bf16x3", 2e-5f},
        Case{"spec_bf16x6.json", "expected_bf16x6", 2e-5f}}) {
    INFO(c.spec);
    SpecRun run = runSpec(dir, c.spec);
    REQUIRE_FALSE(run.fault);
    NpyArray want = expected(dir, c.folder, "c", DType::F32);
    const Buffer &got = run.buffers.at("c");
    float worst = 0;
    int64_t classMismatches = 0;
    for (int64_t i = 0; i < got.numel(); ++i) {
      float w, g = got.at<float>(i);
      std::memcpy(&w, want.bytes.data() + i * 4, 4);
      if (std::isfinite(w) && std::isfinite(g))
        worst = std::max(worst, std::fabs(g - w));
      else
        classMismatches += !(g == w || (std::isnan(g) && std::isnan(w)));
    }
    CHECK(worst <= c.atol);
    CHECK(classMismatches == 0);
  }
}

TEST_CASE("dot_scaled fixture: mxfp4 x e4m3, bf16 x e5m2 (fastMath), M/N-packed mxfp4, exact") {
  checkAllExact("dot_scaled");
  checkAllExact("dot_scaled", "spec_bf16_e5m2.json", "expected_bf16_e5m2");
  checkAllExact("dot_scaled", "spec_mn_packed.json", "expected_mn_packed");
}

TEST_CASE("device_assert fixture: passes on valid input, faults at x(77) otherwise") {
  checkAllExact("device_assert");
  SpecRun run = runSpec(kernelDir("device_assert"), "spec_fail.json");
  REQUIRE(run.fault);
  CHECK(run.fault->kind == "assert");
  CHECK(run.fault->program == std::array<int64_t, 3>{1, 0, 0}); // 77 // 64
  CHECK(run.fault->element == 13);                              // 77 % 64
  CHECK(run.fault->message.find("x must be non-negative") != std::string::npos);
}

TEST_CASE("atomics fixture: racing histograms, old values, exchange and a CAS loop") {
  std::string dir = kernelDir("atomics");
  // The spec's inputs/xbuf.npy is not in the fixture; the xchg returns xbuf's
  // initial contents, so expected/xold.npy is exactly that input.
  std::map<std::string, std::string> init{{"xbuf", "expected/xold.npy"}};
  SpecRun one = runSpec(dir, "spec.json", 1, init);
  SpecRun two = runSpec(dir, "spec.json", 2, init);
  REQUIRE_FALSE(one.fault);
  REQUIRE_FALSE(two.fault);
  for (const auto &entry : one.buffers) {
    // Named: CHECK_MESSAGE cannot capture a structured binding (clang 14).
    const auto &buffer = entry.first;
    const auto &data = entry.second;
    checkExact(data, expected(dir, "expected", buffer, data.dtype), "1 thread: " + buffer);
    // Every result is order-independent: two threads must give the same bytes.
    CHECK_MESSAGE(two.buffers.at(buffer).bytes == data.bytes, "2 threads: " << buffer);
  }
}

TEST_CASE("fp8_convert fixture: f32 -> e4m3fn/e5m2 (rtne, satfinite) and back") {
  std::string dir = kernelDir("fp8_convert");
  SpecRun run = runSpec(dir, "spec.json");
  REQUIRE_FALSE(run.fault);
  for (const char *name : {"x", "e4_back", "e5_back"})
    checkExact(run.buffers.at(name), expected(dir, "expected", name, DType::F32), name);
  // Bytes exact, except that the NaN lane compares by class (README).
  NpyArray x = expected(dir, "expected", "x", DType::F32);
  for (const char *name : {"e4_bits", "e5_bits"}) {
    INFO(name);
    NpyArray want = expected(dir, "expected", name, DType::I8);
    const Buffer &got = run.buffers.at(name);
    bool e4 = name[1] == '4';
    for (int64_t i = 0; i < got.numel(); ++i) {
      float xi;
      std::memcpy(&xi, x.bytes.data() + i * 4, 4);
      uint8_t g = got.bytes[i], w = want.bytes[i];
      if (std::isnan(xi)) {
        bool gotNaN = e4 ? (g & 0x7F) == 0x7F : (g & 0x7C) == 0x7C && (g & 3) != 0;
        CHECK_MESSAGE(gotNaN, "lane " << i);
      } else {
        CHECK_MESSAGE(g == w, "lane " << i << " x=" << xi << " got 0x" << std::hex << int(g)
                                      << " want 0x" << int(w));
      }
    }
  }
}

TEST_CASE("libdevice fixture: __nv_ functions within 4 ulp, floor exact") {
  std::string dir = kernelDir("libdevice");
  SpecRun run = runSpec(dir, "spec.json");
  REQUIRE_FALSE(run.fault);
  NpyArray want = expected(dir, "expected", "out", DType::F32);
  const Buffer &got = run.buffers.at("out");
  const char *rows[] = {"expf", "log1pf", "erff", "tanhf", "powf", "atan2f", "rsqrtf", "floorf"};
  int64_t n = got.numel() / 8;
  for (int row = 0; row < 8; ++row) {
    INFO(rows[row]);
    int64_t worst = 0;
    for (int64_t i = row * n; i < (row + 1) * n; ++i) {
      float w;
      std::memcpy(&w, want.bytes.data() + i * 4, 4);
      worst = std::max(worst, ulpDistance(got.at<float>(i), w));
    }
    CHECK(worst <= (row == 7 ? 0 : 4));
  }
}

TEST_CASE("tensor_desc fixture: a TMA matmul over host descriptors, whole and windowed") {
  // Integer-valued f16 inputs: every sum is exact, so the result is numpy's bit for bit.
  checkAllExact("tensor_desc", "spec.json", "expected");
  checkAllExact("tensor_desc", "spec_view.json", "expected_view");
  checkAllExact("tensor_desc", "spec.json", "expected", 4);
}

TEST_CASE("tensor_desc fixture: blocks over the edges read the padding, stores there are dropped") {
  checkAllExact("tensor_desc", "spec_shift.json", "expected_shift");
  checkAllExact("tensor_desc", "spec_shift_nan.json", "expected_shift_nan");
}
