//===- IndexAndMathOpsTest.cpp - clampf, histogram, gather and small math ops -===//
//
// Expected values worked out by hand from each op's definition and from the
// sm_90 lowering rules quoted next to them.
//
//===----------------------------------------------------------------------===//
#include "StoreKernel.h"

#include <cmath>
#include <limits>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// clampf of 8 f32 lanes between bounds %lo and %hi defined by `bounds`.
std::string clampKernel(const std::string &x, const std::string &bounds, const std::string &mode) {
  return storeKernel("f32", "    %x = arith.constant dense<" + x + "> : tensor<8xf32>\n" + bounds +
                                "\n    %r = tt.clampf %x, %lo, %hi, propagateNan = " + mode +
                                " : tensor<8xf32>");
}
const char *kX = "[-7.0, 3.0, 7.0, 0x7FC00000, 0xFFC00000, -3.0, 0.5, 0xFF800000]";
} // namespace

TEST_CASE("clampf without the clip pattern: minnum(maxnum(x, lo), hi), or NaN-propagating") {
  std::string bounds = "    %lo = arith.constant dense<0.0> : tensor<8xf32>\n"
                       "    %hi = arith.constant dense<6.0> : tensor<8xf32>";
  // none: a NaN x is dropped by maxnum, giving lo.
  std::vector<float> none = runStoreKernel<float>(clampKernel(kX, bounds, "none"), DType::F32);
  CHECK(none == std::vector<float>{0, 3, 6, 0, 0, 0, 0.5f, 0});
  std::vector<float> all = runStoreKernel<float>(clampKernel(kX, bounds, "all"), DType::F32);
  CHECK(all[0] == 0);
  CHECK(all[2] == 6);
  CHECK(std::isnan(all[3]));
  CHECK(std::isnan(all[4]));
  CHECK(all[7] == 0);
}

TEST_CASE("clampf(x, -c, c) lowers to fmin.xorsign.abs on sm_90: a NaN x keeps its sign") {
  // Constant bounds -6 and 6: |NaN| is dropped by min, leaving |c| = 6 with the sign of
  // x xor the sign of c: +6 for a positive NaN, -6 for a negative one (the generic form
  // would give lo = -6 for both).
  std::string constants = "    %lo = arith.constant dense<-6.0> : tensor<8xf32>\n"
                          "    %hi = arith.constant dense<6.0> : tensor<8xf32>";
  std::vector<float> none = runStoreKernel<float>(clampKernel(kX, constants, "none"), DType::F32);
  CHECK(none == std::vector<float>{-6, 3, 6, 6, -6, -3, 0.5f, -6});
  std::vector<float> all = runStoreKernel<float>(clampKernel(kX, constants, "all"), DType::F32);
  CHECK(all[0] == -6);
  CHECK(std::isnan(all[3]));
  CHECK(std::isnan(all[4]));
  CHECK(all[7] == -6);
  // The bound spelled as negf of the other one (also under splats) is the same pattern.
  std::string negf = "    %c = arith.constant 2.0 : f32\n"
                     "    %n = arith.negf %c : f32\n"
                     "    %lo = tt.splat %n : f32 -> tensor<8xf32>\n"
                     "    %hi = tt.splat %c : f32 -> tensor<8xf32>";
  std::vector<float> viaNeg = runStoreKernel<float>(clampKernel(kX, negf, "none"), DType::F32);
  CHECK(viaNeg == std::vector<float>{-2, 2, 2, 2, -2, -2, 0.5f, -2});
}

TEST_CASE("histogram counts values from 0 to bins - 1 and drops the rest and masked lanes") {
  // Values 0, 1, 1, 3, -1, 4, 7, 2 into 4 bins: -1, 4 and 7 fall outside.
  std::string body = R"(
    %v = arith.constant dense<[0, 1, 1, 3, -1, 4, 7, 2]> : tensor<8xi32>
    %r = tt.histogram %v : tensor<8xi32> -> tensor<4xi32>)";
  CHECK(runStoreKernel<int32_t>(storeKernel("i32", body, 4), DType::I32, 4) ==
        std::vector<int32_t>{1, 2, 1, 1});
  // Masking off lanes 2 (a 1) and 7 (the 2).
  body = R"(
    %v = arith.constant dense<[0, 1, 1, 3, -1, 4, 7, 2]> : tensor<8xi32>
    %m = arith.constant dense<[true, true, false, true, true, true, true, false]> : tensor<8xi1>
    %r = tt.histogram %v, %m : tensor<8xi32> -> tensor<4xi32>)";
  CHECK(runStoreKernel<int32_t>(storeKernel("i32", body, 4), DType::I32, 4) ==
        std::vector<int32_t>{1, 1, 0, 1});
}

TEST_CASE("gather along the minor and the major axis") {
  // axis 1: row r of the result picks src[r][idx[r][k]].
  std::string body = R"(
    %src = arith.constant dense<[[10, 11, 12, 13], [20, 21, 22, 23]]> : tensor<2x4xi32>
    %idx = arith.constant dense<[[3, 0, 0], [1, 2, 3]]> : tensor<2x3xi32>
    %g = tt.gather %src[%idx] {axis = 1 : i32} : (tensor<2x4xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
    %r = tt.reshape %g : tensor<2x3xi32> -> tensor<6xi32>)";
  CHECK(runStoreKernel<int32_t>(storeKernel("i32", body, 6), DType::I32, 6) ==
        std::vector<int32_t>{13, 10, 10, 21, 22, 23});
  // axis 0 with more index rows than source rows: result[k][c] = src[idx[k][c]][c].
  body = R"(
    %src = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
    %idx = arith.constant dense<[[2, 0], [0, 1], [1, 2], [2, 2]]> : tensor<4x2xi32>
    %g = tt.gather %src[%idx] {axis = 0 : i32} : (tensor<3x2xf32>, tensor<4x2xi32>) -> tensor<4x2xf32>
    %r = tt.reshape %g : tensor<4x2xf32> -> tensor<8xf32>)";
  CHECK(runStoreKernel<float>(storeKernel("f32", body), DType::F32) ==
        std::vector<float>{5, 2, 1, 4, 3, 6, 5, 6});
}

TEST_CASE("a gather index outside the source is a fault naming the element") {
  std::string body = R"(
    %src = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
    %idx = arith.constant dense<[0, 1, 2, 3, 4, 0, 0, 0]> : tensor<8xi32>
    %r = tt.gather %src[%idx] {axis = 0 : i32} : (tensor<4xi32>, tensor<8xi32>) -> tensor<8xi32> loc(#at))";
  LoadedKernel k = loadKernel(storeKernel("i32", body));
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<int32_t> out(8);
  LaunchResult r =
      launch(*k.kernel, {pointer("out", viewOf(out, DType::I32))}, {ptrArg(0)}, {1, 1, 1});
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->element == 4);
  CHECK(r.fault->location == "k.py:3:4");
  CHECK(r.fault->message.find("gather index 4 is outside [0, 4)") != std::string::npos);
}

// math.erfc is registered too, but MLIR 19's math dialect (our parser) does not have it.
TEST_CASE("bit counts and extended multiplies") {
  std::string counts = R"(
    %x = arith.constant dense<[1, 0, 8, -1, 256, 6, 2147483647, -2147483648]> : tensor<8xi32>
    %r = OP %x : tensor<8xi32>)";
  auto run = [&](const std::string &op) {
    std::string body = counts;
    body.replace(body.find("OP"), 2, op);
    return runStoreKernel<int32_t>(storeKernel("i32", body), DType::I32);
  };
  CHECK(run("math.ctlz") == std::vector<int32_t>{31, 32, 28, 0, 23, 29, 1, 0});
  CHECK(run("math.cttz") == std::vector<int32_t>{0, 32, 3, 0, 8, 1, 0, 31});
  CHECK(run("math.ctpop") == std::vector<int32_t>{1, 0, 1, 32, 1, 2, 31, 1});
  // (-1)(-1) = 1: low 1, high 0. MIN * 2 = -2^32: low 0, high -1. Unsigned
  // 0xFFFFFFFF^2 = 0xFFFFFFFE_00000001: low 1, high 0xFFFFFFFE.
  std::vector<int32_t> ext = runStoreKernel<int32_t>(storeKernel("i32", R"(
    %a = arith.constant dense<[-1, -2147483648, 3, 0, 0, 0, 0, 0]> : tensor<8xi32>
    %b = arith.constant dense<[-1, 2, -5, 0, 0, 0, 0, 0]> : tensor<8xi32>
    %lo, %hi = arith.mulsi_extended %a, %b : tensor<8xi32>
    %ulo, %uhi = arith.mului_extended %a, %a : tensor<8xi32>
    %j = tt.join %lo, %hi : tensor<8xi32> -> tensor<8x2xi32>
    %r0 = tt.reshape %j : tensor<8x2xi32> -> tensor<16xi32>
    %half = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %uj = tt.join %ulo, %uhi : tensor<8xi32> -> tensor<8x2xi32>
    %u = tt.reshape %uj : tensor<8x2xi32> -> tensor<16xi32>
    %r = tt.cat %r0, %u : tensor<16xi32> -> tensor<32xi32>)",
                                                                 32),
                                                     DType::I32, 32);
  CHECK(ext[0] == 1);
  CHECK(ext[1] == 0);
  CHECK(ext[2] == 0);
  CHECK(ext[3] == -1);
  CHECK(ext[4] == -15); // 3 * -5 = -15: high is the sign fill
  CHECK(ext[5] == -1);
  CHECK(ext[16] == 1); // unsigned 0xFFFFFFFF * 0xFFFFFFFF
  CHECK(ext[17] == -2);
  CHECK(ext[18] == 0); // 2^31 * 2^31 = 2^62: low 0, high 2^30
  CHECK(ext[19] == 1 << 30);
}

TEST_CASE("a dense constant of pointers is a lowering error naming the op, not a crash") {
  // Found by fuzz_ttir (fuzz/regressions/ttir/dense-constant-of-pointer-elements.ttir): MLIR
  // parses the attribute, but its elements have no number's storage to read.
  std::string error = loweringError(
      storeKernel("i64", "    %p = arith.constant dense<16> : tensor<8x!tt.ptr<f32>>\n"
                         "    %r = tt.ptr_to_int %p : tensor<8x!tt.ptr<f32>> -> tensor<8xi64>"));
  CHECK(error.find("'arith.constant': dense constants of element type !tt.ptr<f32> are not "
                   "supported") != std::string::npos);
  // A splat feeding only pointer arithmetic takes the scalar path: refused the same way.
  error = loweringError(
      storeKernel("f32", "    %p = arith.constant dense<16> : tensor<8x!tt.ptr<f32>>\n"
                         "    %q = tt.addptr %p, %range : tensor<8x!tt.ptr<f32>>, tensor<8xi32>\n"
                         "    %r = tt.load %q : tensor<8x!tt.ptr<f32>>"));
  CHECK(error.find("dense constants of element type !tt.ptr<f32>") != std::string::npos);
}

TEST_CASE("a constant with a 0 in its shape has no bytes to copy into the frame") {
  // Found by fuzz_ttir (fuzz/regressions/ttir/zero-element-dense-constant.ttir): the frame's
  // set-up copied every constant's bytes, here from an empty vector's null data() (UBSan:
  // null passed to memcpy). Such a tensor, and ops on it, are empty; the rest runs.
  std::vector<float> out = runStoreKernel<float>(
      storeKernel("f32", "    %z = arith.constant dense<0.000000e+00> : tensor<0xf32>\n"
                         "    %zz = arith.addf %z, %z : tensor<0xf32>\n"
                         "    %e = arith.constant dense<0> : tensor<4x0xi32>\n"
                         "    %r = arith.constant dense<2.500000e+00> : tensor<8xf32>"),
      DType::F32);
  CHECK(out == std::vector<float>(8, 2.5f));
}

TEST_CASE("a reshape to its own type is its operand: later ops never take its bytes") {
  // %r names %x's bytes (no copy). %y = x + 1 is x's last read by name, so an op that may
  // write over its operand would take x's bytes if the layout forgot %r still reads them:
  // then r + y would be 2y = 6i + 2 instead of 3i + 3i + 1.
  std::vector<int32_t> sum = runStoreKernel<int32_t>(storeKernel("i32", R"(
    %c3 = arith.constant dense<3> : tensor<8xi32>
    %c1 = arith.constant dense<1> : tensor<8xi32>
    %x = arith.muli %range, %c3 : tensor<8xi32>
    %rx = tt.reshape %x allow_reorder : tensor<8xi32> -> tensor<8xi32>
    %y = arith.addi %x, %c1 : tensor<8xi32>
    %r = arith.addi %rx, %y : tensor<8xi32>)"),
                                                     DType::I32);
  CHECK(sum == std::vector<int32_t>{1, 7, 13, 19, 25, 31, 37, 43});
  // Yielded by a loop (handed over at the yield): 5 iterations of v + i, from the range:
  // range + 0 + 1 + 2 + 3 + 4.
  std::vector<int32_t> looped = runStoreKernel<int32_t>(storeKernel("i32", R"(
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c5 = arith.constant 5 : i32
    %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%v = %range) -> (tensor<8xi32>) : i32 {
      %is = tt.splat %i : i32 -> tensor<8xi32>
      %w = arith.addi %v, %is : tensor<8xi32>
      %rw = tt.reshape %w allow_reorder : tensor<8xi32> -> tensor<8xi32>
      %twice = arith.addi %w, %w : tensor<8xi32>
      scf.yield %rw : tensor<8xi32>
    })"),
                                                        DType::I32);
  CHECK(looped == std::vector<int32_t>{10, 11, 12, 13, 14, 15, 16, 17});
}
