//===- MapElementwiseTest.cpp - tt.map_elementwise: a scalar region per element group -===//
//
// Kernels spelled as Triton 3.9 prints tl.map_elementwise (generic form, the region's
// branches as cf.cond_br). Expected values are worked out by hand in each case.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// A kernel of one program of 8 lanes: out[i] = f(in[i]), f the region of `map` (which reads
/// %x, the loaded block, and defines %y).
std::string mapKernel(const std::string &map) {
  return subst(R"(
module {
  tt.func public @k(%in: !tt.ptr<i32>, %out: !tt.ptr<i32>) {
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %pi = tt.splat %in : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %ai = tt.addptr %pi, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    %x = tt.load %ai : tensor<8x!tt.ptr<i32>>
$MAP
    %po = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %ao = tt.addptr %po, %r : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %ao, %y : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)",
               {{"$MAP", map}});
}

std::vector<int32_t> runMap(const std::string &map, std::vector<int32_t> in,
                            std::optional<interp::Fault> *fault = nullptr) {
  LoadedKernel k = loadKernel(mapKernel(map));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> out(8, -1);
  LaunchResult r = launch(
      *k.kernel, {pointer("in", viewOf(in, DType::I32)), pointer("out", viewOf(out, DType::I32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  if (fault)
    *fault = r.fault;
  else
    REQUIRE_FALSE(r.fault);
  return out;
}

std::string loadError(const std::string &map) {
  LoadedKernel k = loadKernel(mapKernel(map));
  CHECK_FALSE(k.kernel);
  return k.error;
}

} // namespace

TEST_CASE("each element takes only its own branch of the region") {
  // Collatz's step, as `if x % 2 == 0: return x // 2` / `return 3 * x + 1`: an early return
  // is a cf.cond_br to the block that returns.
  std::vector<int32_t> out = runMap(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 1 : i32}> ({
    ^bb0(%v: i32):
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %rem = arith.remsi %v, %c2 : i32
      %even = arith.cmpi eq, %rem, %c0 : i32
      cf.cond_br %even, ^half, ^triple
    ^half:
      %h = arith.divsi %v, %c2 : i32
      cf.br ^done(%h : i32)
    ^triple:
      %t = arith.muli %v, %c3 : i32
      %t1 = arith.addi %t, %c1 : i32
      cf.br ^done(%t1 : i32)
    ^done(%res: i32):
      tt.map_elementwise.return %res : i32
    }) : (tensor<8xi32>) -> tensor<8xi32>)",
                                    {1, 2, 3, 4, 5, 6, 7, 27});
  CHECK(out == std::vector<int32_t>{4, 1, 10, 2, 16, 3, 22, 82});
}

TEST_CASE("a data-dependent loop per element (scf.while in the region)") {
  // Collatz steps to reach 1: 1 -> 0, 2 -> 1, 3 -> 7, 6 -> 8, 7 -> 16, 9 -> 19, 27 -> 111.
  std::vector<int32_t> out = runMap(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 1 : i32}> ({
    ^bb0(%v: i32):
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %w:2 = scf.while (%n = %v, %steps = %c0) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi ne, %n, %c1 : i32
        scf.condition(%more) %n, %steps : i32, i32
      } do {
      ^bb1(%n: i32, %steps: i32):
        %rem = arith.remsi %n, %c2 : i32
        %even = arith.cmpi eq, %rem, %c0 : i32
        %h = arith.divsi %n, %c2 : i32
        %t = arith.muli %n, %c3 : i32
        %t1 = arith.addi %t, %c1 : i32
        %next = arith.select %even, %h, %t1 : i32
        %s1 = arith.addi %steps, %c1 : i32
        scf.yield %next, %s1 : i32, i32
      }
      tt.map_elementwise.return %w#1 : i32
    }) : (tensor<8xi32>) -> tensor<8xi32>)",
                                    {1, 2, 3, 6, 7, 9, 27, 1});
  CHECK(out == std::vector<int32_t>{0, 1, 7, 8, 16, 19, 111, 0});
}

TEST_CASE("pack hands consecutive elements to one call, operand-major, results result-major") {
  // Two operands (x, 10x), pack 2: the region sees (x0, x1, 10x0, 10x1) and returns
  // (x1, x0) for the first result and (10x0 + 10x1, 10x0 - 10x1) for the second; out holds
  // result 0 + result 1.
  std::vector<int32_t> out = runMap(R"(
    %c10 = arith.constant dense<10> : tensor<8xi32>
    %x10 = arith.muli %x, %c10 : tensor<8xi32>
    %m:2 = "tt.map_elementwise"(%x, %x10) <{pack = 2 : i32}> ({
    ^bb0(%a: i32, %b: i32, %c: i32, %d: i32):
      %s = arith.addi %c, %d : i32
      %t = arith.subi %c, %d : i32
      tt.map_elementwise.return %b, %a, %s, %t : i32, i32, i32, i32
    }) : (tensor<8xi32>, tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>)
    %y = arith.addi %m#0, %m#1 : tensor<8xi32>)",
                                    {0, 1, 2, 3, 4, 5, 6, 7});
  // Pair (0, 1): results (1, 0) and (10, -10); pair (2, 3): (3, 2) and (50, -10); ...
  CHECK(out == std::vector<int32_t>{11, -10, 53, -8, 95, -6, 137, -4});
}

TEST_CASE("results may have other element types than the operands") {
  // i32 -> (i1 x > 2) as an i32 by extui outside, through an i1 result.
  std::vector<int32_t> out = runMap(R"(
    %b = "tt.map_elementwise"(%x) <{pack = 1 : i32}> ({
    ^bb0(%v: i32):
      %c2 = arith.constant 2 : i32
      %gt = arith.cmpi sgt, %v, %c2 : i32
      tt.map_elementwise.return %gt : i1
    }) : (tensor<8xi32>) -> tensor<8xi1>
    %y = arith.extui %b : tensor<8xi1> to tensor<8xi32>)",
                                    {0, 1, 2, 3, 4, -5, 2, 9});
  CHECK(out == std::vector<int32_t>{0, 0, 0, 1, 1, 0, 0, 1});
}

TEST_CASE("a division by zero inside the region gives all ones, as outside it") {
  // Each element divides 12 by itself; the lane holding 0 gets -1 (docs/semantics.md).
  std::optional<interp::Fault> fault;
  std::vector<int32_t> out = runMap(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 1 : i32}> ({
    ^bb0(%v: i32):
      %c12 = arith.constant 12 : i32
      %q = arith.divsi %c12, %v : i32 loc("map.py":3:12)
      tt.map_elementwise.return %q : i32
    }) : (tensor<8xi32>) -> tensor<8xi32>)",
                                    {1, 2, 3, 0, 4, 6, 12, 1}, &fault);
  CHECK_FALSE(fault);
  CHECK(out == std::vector<int32_t>{12, 6, 4, -1, 3, 2, 1, 12});
}

TEST_CASE("a pack that does not divide the tensor is refused when the kernel is lowered") {
  // pack 16 on 8 elements: the GPU would refuse it for want of 16 elements per thread.
  std::string error = loadError(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 16 : i32}> ({
    ^bb0(%a0: i32, %a1: i32, %a2: i32, %a3: i32, %a4: i32, %a5: i32, %a6: i32, %a7: i32,
         %a8: i32, %a9: i32, %a10: i32, %a11: i32, %a12: i32, %a13: i32, %a14: i32, %a15: i32):
      tt.map_elementwise.return %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8, %a9, %a10, %a11, %a12, %a13, %a14, %a15 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
    }) : (tensor<8xi32>) -> tensor<8xi32> loc("map.py":9:8))");
  CAPTURE(error);
  CHECK(error.find("map.py:9:8") != std::string::npos);
  CHECK(error.find("pack 16 does not divide the 8 elements") != std::string::npos);
}

TEST_CASE("malformed tt.map_elementwise is a verifier error naming the op") {
  // A pack that is no power of 2 (Triton's rule).
  std::string error = loadError(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 3 : i32}> ({
    ^bb0(%a: i32, %b: i32, %c: i32):
      tt.map_elementwise.return %a, %b, %c : i32, i32, i32
    }) : (tensor<8xi32>) -> tensor<8xi32>)");
  CAPTURE(error);
  CHECK(error.find("pack must be a power of 2, is 3") != std::string::npos);
  // Arguments that do not match the operands, pack at a time.
  error = loadError(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 2 : i32}> ({
    ^bb0(%a: i32):
      tt.map_elementwise.return %a, %a : i32, i32
    }) : (tensor<8xi32>) -> tensor<8xi32>)");
  CAPTURE(error);
  CHECK(error.find("scalar region must take 2 arguments") != std::string::npos);
  // Returns that do not match the results.
  error = loadError(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 1 : i32}> ({
    ^bb0(%a: i32):
      %f = arith.sitofp %a : i32 to f32
      tt.map_elementwise.return %f : f32
    }) : (tensor<8xi32>) -> tensor<8xi32>)");
  CAPTURE(error);
  CHECK(error.find("must return 1 values of the results' element types") != std::string::npos);
  // A store inside the region (Triton's front end never makes one).
  error = loadError(R"(
    %y = "tt.map_elementwise"(%x) <{pack = 1 : i32}> ({
    ^bb0(%a: i32):
      tt.store %in, %a : !tt.ptr<i32>
      tt.map_elementwise.return %a : i32
    }) : (tensor<8xi32>) -> tensor<8xi32>)");
  CAPTURE(error);
  CHECK(error.find("cannot write memory inside tt.map_elementwise") != std::string::npos);
}

TEST_CASE("Triton's own map_kernel (3.5, 3.8, 3.9): collatz per element, pairs swapped") {
  // tests/data/ttir/kernels.py: (steps, last) = collatz(x, limit 100), -1 and x itself for
  // x <= 0; then out = (2 f1, 2 f0) for each pair (f0, f1) of f, pack 2.
  std::vector<int32_t> x(64);
  for (int32_t i = 0; i < 64; ++i)
    x[size_t(i)] = i - 3;
  std::vector<int32_t> wantSteps(64), wantLast(64);
  for (size_t i = 0; i < 64; ++i) {
    int32_t n = x[i], steps = 0;
    if (n <= 0) {
      wantSteps[i] = -1;
      wantLast[i] = n;
      continue;
    }
    for (; n != 1 && steps < 100; ++steps)
      n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    wantSteps[i] = steps;
    wantLast[i] = n;
  }
  // 27 takes 111 steps: the limit stops it at 100 short of 1.
  CHECK(wantSteps[30] == 100);
  CHECK(wantLast[30] != 1);
  std::vector<float> f(512), wantOut(512);
  for (size_t i = 0; i < 512; ++i)
    f[i] = float(i) * 0.5f;
  for (size_t i = 0; i < 512; i += 2) {
    wantOut[i] = 2 * f[i + 1];
    wantOut[i + 1] = 2 * f[i];
  }
  for (const char *version : {"3.5.1", "3.8.0", "3.9.0"}) {
    CAPTURE(version);
    LoadedKernel k =
        loadKernel(source(std::string("tests/data/ttir/") + version + "/map_kernel.ttir"), true);
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<int32_t> steps(64, 7), last(64, 7);
    std::vector<float> out(512, 7);
    LaunchResult r = launch(*k.kernel,
                            {pointer("x", viewOf(x, DType::I32)),
                             pointer("steps", viewOf(steps, DType::I32)),
                             pointer("last", viewOf(last, DType::I32)),
                             pointer("f", viewOf(f, DType::F32)),
                             pointer("out", viewOf(out, DType::F32))},
                            {ptrArg(0), ptrArg(1), ptrArg(2), ptrArg(3), ptrArg(4)}, {1, 1, 1});
    REQUIRE_FALSE(r.fault);
    CHECK(steps == wantSteps);
    CHECK(last == wantLast);
    CHECK(out == wantOut);
  }
}
