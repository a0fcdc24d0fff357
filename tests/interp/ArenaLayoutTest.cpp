//===- ArenaLayoutTest.cpp - Values whose lives do not overlap share frame bytes -===//
//
// Lowering packs the blocks of values whose lives are disjoint into the same bytes of the
// frame (ArenaLayout.h). Sharing too eagerly gives wrong numbers, so besides the frame
// shrinking, these kernels check the cases where a value is read later than its last
// use in the op list says: inside a loop that runs again, and by an op that a fused
// store runs at the store. Expected values are worked out here in plain C++.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// `@k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>)` over one program; $BODY sees %x4 (x[0..4)
/// loaded), %ptrs (out + 0..4, a fused store's pointers), %base (out) and %range.
std::string kernel(const std::string &body) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %range = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %range : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
    %x4 = tt.load %xp : tensor<4x!tt.ptr<f32>>
    %base = tt.splat %out : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
    %ptrs = tt.addptr %base, %range : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
$BODY
    tt.return
  }
}
)",
               {{"$BODY", body}});
}

/// `@k(%x, %out)` over one program and blocks of 1024 f32: `body` sees %xv (x[0..1024)
/// loaded) and its value `result` is stored to out[0..1024).
std::string blockKernel(const std::string &body, const std::string &result) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %range = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %range : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %xv = tt.load %xp : tensor<1024x!tt.ptr<f32>>
$BODY
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %op = tt.addptr %ob, %range : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %op, $RESULT : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$BODY", body}, {"$RESULT", result}});
}

/// `kernel`'s body: `before`, then a loop of three iterations whose body sees %p (out + 4i
/// + 0..4, row i of a 3x4 output) and runs `body`.
std::string threeRowLoop(const std::string &before, const std::string &body) {
  return kernel(subst(R"($BEFORE
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c3 = arith.constant 3 : i32
    %c4 = arith.constant 4 : i32
    scf.for %i = %c0 to %c3 step %c1 : i32 {
      %row = arith.muli %i, %c4 : i32
      %rows = tt.splat %row : i32 -> tensor<4xi32>
      %p = tt.addptr %ptrs, %rows : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
$BODY
    }
)",
                      {{"$BEFORE", before}, {"$BODY", body}}));
}

std::vector<float> run(const interp::Kernel &k, std::vector<float> x, size_t outSize) {
  std::vector<float> out(outSize, -1.0f);
  LaunchResult r =
      launch(k, {pointer("x", viewOf(x, DType::F32)), pointer("out", viewOf(out, DType::F32))},
             {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE_FALSE(r.fault);
  REQUIRE(r.error.empty());
  return out;
}

} // namespace

TEST_CASE("a chain of element-wise ops needs a few blocks of frame, not one per value") {
  // y = ((((x + 1) * 2) + 1) * 2 ...) twelve ops; each value dies at the next op, so two or
  // three blocks of 1024 floats are alive at once, where one per value would be 12 x 4 KiB.
  std::string chain;
  std::string last = "%xv";
  for (int i = 0; i < 12; ++i) {
    std::string next = "%v" + std::to_string(i);
    chain += "    " + next + (i % 2 ? " = arith.mulf " : " = arith.addf ") + last +
             (i % 2 ? ", %two" : ", %one") + " : tensor<1024xf32>\n";
    last = next;
  }
  LoadedKernel k = loadKernel(blockKernel(R"(
    %c1 = arith.constant 1.0 : f32
    %c2 = arith.constant 2.0 : f32
    %one = tt.splat %c1 : f32 -> tensor<1024xf32>
    %two = tt.splat %c2 : f32 -> tensor<1024xf32>
)" + chain,
                                          last));
  REQUIRE_MESSAGE(k.kernel, k.error);
  CHECK(k.kernel->frameBytes() < 5 * 4096);

  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 7) - 3.0f;
  std::vector<float> out = run(*k.kernel, x, 1024);
  for (size_t i = 0; i < x.size(); ++i) {
    float v = x[i];
    for (int op = 0; op < 12; ++op)
      v = op % 2 ? v * 2.0f : v + 1.0f;
    CHECK(out[i] == v);
  }
}

TEST_CASE("a value a loop reads keeps its bytes through every iteration") {
  // %a is last read by the body's first tensor op; the body's later values must not take its
  // bytes, or the second iteration reads 9x^2 - 3x where it should read 2x.
  LoadedKernel k = loadKernel(threeRowLoop(R"(
    %a = arith.addf %x4, %x4 : tensor<4xf32>)",
                                           R"(
      %u = arith.addf %x4, %a : tensor<4xf32>
      %w = arith.mulf %u, %u : tensor<4xf32>
      %z = arith.subf %w, %u : tensor<4xf32>
      tt.store %p, %z : tensor<4x!tt.ptr<f32>>)"));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> out = run(*k.kernel, x, 12);
  for (size_t r = 0; r < 3; ++r)
    for (size_t i = 0; i < 4; ++i) {
      float u = x[i] + (x[i] + x[i]);
      CHECK(out[r * 4 + i] == u * u - u);
    }
}

TEST_CASE("an op that a fused store runs reads its operands at the store") {
  // %p = %a * %a is only used by the last store, which runs the mulf itself (Fusion.h):
  // %a is read there, after %q and %r were made, so they must not take its bytes.
  LoadedKernel k = loadKernel(kernel(R"(
    %c1 = arith.constant 1.0 : f32
    %c2 = arith.constant 2.0 : f32
    %one = tt.splat %c1 : f32 -> tensor<4xf32>
    %two = tt.splat %c2 : f32 -> tensor<4xf32>
    %a = arith.addf %x4, %one : tensor<4xf32>
    %p = arith.mulf %a, %a : tensor<4xf32>
    %q = arith.addf %x4, %two : tensor<4xf32>
    %r = arith.mulf %q, %q : tensor<4xf32>
    %c4 = arith.constant 4 : i32
    %fours = tt.splat %c4 : i32 -> tensor<4xi32>
    %second = arith.addi %range, %fours : tensor<4xi32>
    %p2 = tt.addptr %base, %second : tensor<4x!tt.ptr<f32>>, tensor<4xi32>
    tt.store %p2, %r : tensor<4x!tt.ptr<f32>>
    tt.store %ptrs, %p : tensor<4x!tt.ptr<f32>>
)"));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> out = run(*k.kernel, x, 8);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(out[i] == (x[i] + 1) * (x[i] + 1));
    CHECK(out[4 + i] == (x[i] + 2) * (x[i] + 2));
  }
}

TEST_CASE("an element-wise op writes its result over the operand it reads last") {
  // Each value but %a dies at the op that makes the next, which takes its bytes.
  LoadedKernel k = loadKernel(blockKernel(R"(
    %c3 = arith.constant 3.0 : f32
    %three = tt.splat %c3 : f32 -> tensor<1024xf32>
    %a = arith.subf %xv, %three : tensor<1024xf32>
    %b = arith.mulf %a, %a : tensor<1024xf32>
    %n = arith.negf %b : tensor<1024xf32>
    %pos = arith.cmpf ogt, %a, %three : tensor<1024xf32>
    %s = arith.select %pos, %n, %a : tensor<1024xi1>, tensor<1024xf32>
    %d = arith.divf %s, %three : tensor<1024xf32>)",
                                          "%d"));
  REQUIRE_MESSAGE(k.kernel, k.error);
  // Blocks alive at once: %a's (it lives on to the select), the chain's from %b on, and the
  // splat of 3 that cmpf reads as a block; plus the mask's 1 KiB. Without the sharing, %n is
  // made while %a, %b and the splat are alive: four blocks.
  CHECK(k.kernel->frameBytes() < 4 * 4096);
  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int(i % 13) - 4);
  std::vector<float> out = run(*k.kernel, x, 1024);
  for (size_t i = 0; i < x.size(); ++i) {
    float a = x[i] - 3.0f, n = -(a * a);
    CHECK(out[i] == (a > 3.0f ? n : a) / 3.0f);
  }
}

TEST_CASE("a select whose every lane takes the operand it overwrites keeps it") {
  // The all-true mask copies the chosen operand; here that operand's bytes are the result's.
  LoadedKernel k = loadKernel(kernel(R"(
    %c1 = arith.constant 1.0 : f32
    %one = tt.splat %c1 : f32 -> tensor<4xf32>
    %u = arith.addf %x4, %one : tensor<4xf32>
    %w = arith.mulf %x4, %x4 : tensor<4xf32>
    %t = arith.constant dense<true> : tensor<4xi1>
    %s = arith.select %t, %u, %w : tensor<4xi1>, tensor<4xf32>
    %y = arith.mulf %s, %w : tensor<4xf32>
    tt.store %ptrs, %y : tensor<4x!tt.ptr<f32>>
)"));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> out = run(*k.kernel, x, 4);
  for (size_t i = 0; i < 4; ++i)
    CHECK(out[i] == (x[i] + 1) * (x[i] * x[i]));
}

TEST_CASE("an element-wise op in a loop never writes over a value of the block around it") {
  // %a is last read by the loop body's last op, %z; were %z to take %a's bytes, the second
  // and third iterations would store 4x^2 where they must store 2x.
  LoadedKernel k = loadKernel(threeRowLoop(R"(
    %a = arith.addf %x4, %x4 : tensor<4xf32>)",
                                           R"(
      tt.store %p, %a : tensor<4x!tt.ptr<f32>>
      %z = arith.mulf %a, %a : tensor<4xf32>)"));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> out = run(*k.kernel, x, 12);
  for (size_t r = 0; r < 3; ++r)
    for (size_t i = 0; i < 4; ++i)
      CHECK(out[r * 4 + i] == 2 * x[i]);
}

TEST_CASE("a tensor type too large to hold is a lowering error naming the op, not a frame") {
  // An unused splat to 2^37.6 elements (a fuzzer's mutation): lowering it as it stood asked
  // each thread for an 858 GB frame. Shapes whose element count overflows int64 likewise.
  for (const char *shape :
       {"214748364764", "16777217", "4611686018427387904x4", "3037000500x3037000500"}) {
    CAPTURE(shape);
    LoadedKernel k = loadKernel(kernel(subst(R"(
    %c0 = arith.constant 0 : i32
    %huge = tt.splat %c0 : i32 -> tensor<$SHAPExi32>
    tt.store %ptrs, %x4 : tensor<4x!tt.ptr<f32>>)",
                                             {{"$SHAPE", shape}})));
    CHECK_FALSE(k.kernel);
    CHECK(k.error.find("'tt.splat'") != std::string::npos);
    CHECK(k.error.find("has more than 16777216 elements") != std::string::npos);
  }
  // 2^24 elements is the limit itself: allowed.
  LoadedKernel atLimit = loadKernel(kernel(R"(
    %c0 = arith.constant 0 : i32
    %big = tt.splat %c0 : i32 -> tensor<16777216xi32>
    tt.store %ptrs, %x4 : tensor<4x!tt.ptr<f32>>)"));
  CHECK_MESSAGE(atLimit.kernel, atLimit.error);
}

TEST_CASE("a kernel whose tensors need over a gigabyte of frame per program is refused") {
  // Values a loop carries keep bytes of their own: `count` carried tensors of 2^24 i64
  // (128 MiB each) and the splat they start from, count + 1 blocks in all, plus a few hundred
  // bytes of the rest. Lowered, never run: the frame is only counted.
  auto carried = [](int count) {
    std::string args, types, yields;
    for (int i = 0; i < count; ++i) {
      args += std::string(i ? ", " : "") + "%a" + std::to_string(i) + " = %z";
      types += std::string(i ? ", " : "") + "tensor<16777216xi64>";
      yields += std::string(i ? ", " : "") + "%a" + std::to_string(i);
    }
    return kernel(subst(R"(
    %c0 = arith.constant 0 : i64
    %z = tt.splat %c0 : i64 -> tensor<16777216xi64>
    %lo = arith.constant 0 : i32
    %hi = arith.constant 2 : i32
    %step = arith.constant 1 : i32
    %r:$COUNT = scf.for %i = %lo to %hi step %step iter_args($ARGS) -> ($TYPES) : i32 {
      scf.yield $YIELDS : $TYPES
    }
    tt.store %ptrs, %x4 : tensor<4x!tt.ptr<f32>>)",
                        {{"$COUNT", std::to_string(count)},
                         {"$ARGS", args},
                         {"$TYPES", types},
                         {"$YIELDS", yields}}));
  };
  LoadedKernel fits = loadKernel(carried(6)); // 7 x 128 MiB = 896 MiB
  CHECK_MESSAGE(fits.kernel, fits.error);
  LoadedKernel tooBig = loadKernel(carried(7)); // 8 x 128 MiB = 1 GiB, and then the rest
  CHECK_FALSE(tooBig.kernel);
  CHECK(tooBig.error.find("kernel 'k' needs") != std::string::npos);
  CHECK(tooBig.error.find("more than ttinterp's limit of 1073741824") != std::string::npos);
}

TEST_CASE("tensor constants over a gigabyte are refused before their bytes are made") {
  // Nine 128 MiB constants: lowering each makes its bytes, so they are counted first; the
  // ninth passes 1 GiB and is named. (The test would take 1 GiB if any were made.)
  std::string body = "    %c0 = arith.constant 0 : i32\n";
  for (int i = 0; i < 9; ++i)
    body += "    %k" + std::to_string(i) + " = arith.constant dense<" + std::to_string(i) +
            "> : tensor<16777216xi64>\n";
  body += "    tt.store %ptrs, %x4 : tensor<4x!tt.ptr<f32>>";
  LoadedKernel k = loadKernel(kernel(body));
  CHECK_FALSE(k.kernel);
  CHECK(k.error.find("'arith.constant'") != std::string::npos);
  CHECK(k.error.find("tensor constants come to more than 1073741824 bytes") != std::string::npos);
}
