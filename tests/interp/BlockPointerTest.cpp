//===- BlockPointerTest.cpp - Block pointers and tensor descriptors on hand TTIR and a fixture ===//
//
// Hand-written kernels read and write a 6x5 row-major f32 matrix m[i][j] =
// 10 * (i + 1) + j (no zeros, so padding is told apart from data); every
// expected block below is worked out by hand from the ops' definitions. The
// block_ptr fixture (a real Triton 3.5 compile) runs both of its spec forms and
// is compared with numpy's results.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <utility>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// `@k(%out: !tt.ptr<f32>, %m: !tt.ptr<f32>)`: BODY computes %r : tensor<$Nxf32>,
/// which is stored to out[0..N). Constants for the 6x5 matrix are predefined.
std::string outKernel(int n, const std::string &body, const std::string &functions = "") {
  return subst(R"(
module {
  tt.func public @k(%out: !tt.ptr<f32>, %m: !tt.ptr<f32>) {
    %range = tt.make_range {end = $N : i32, start = 0 : i32} : tensor<$Nxi32>
    %obase = tt.splat %out : !tt.ptr<f32> -> tensor<$Nx!tt.ptr<f32>>
    %optrs = tt.addptr %obase, %range : tensor<$Nx!tt.ptr<f32>>, tensor<$Nxi32>
    %c6 = arith.constant 6 : i64
    %c5 = arith.constant 5 : i64
    %c1 = arith.constant 1 : i64
    %s6 = arith.constant 6 : i32
    %s5 = arith.constant 5 : i32
    %im2 = arith.constant -2 : i32
    %im1 = arith.constant -1 : i32
    %i0 = arith.constant 0 : i32
    %i1 = arith.constant 1 : i32
    %i2 = arith.constant 2 : i32
    %i3 = arith.constant 3 : i32
    %i5 = arith.constant 5 : i32
$BODY
    tt.store %optrs, %r : tensor<$Nx!tt.ptr<f32>>
    tt.return
  }
$FUNCTIONS
}
)",
               {{"$N", std::to_string(n)}, {"$BODY", body}, {"$FUNCTIONS", functions}});
}

std::vector<float> matrix() {
  std::vector<float> m(30);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j)
      m[i * 5 + j] = float(10 * (i + 1) + j);
  return m;
}

/// Runs an outKernel on the matrix; returns out (or the fault through `fault`).
std::vector<float> runOut(const std::string &ttir, int n,
                          std::optional<interp::Fault> *fault = nullptr) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> out(n, -1.0f), m = matrix();
  LaunchResult r = launch(
      *k.kernel, {pointer("out", viewOf(out, DType::F32)), pointer("m", viewOf(m, DType::F32))},
      {ptrArg(0), ptrArg(1)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  if (fault)
    *fault = r.fault;
  else
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}

/// Compares element by element; NaN in `expected` asks for NaN.
void checkEqual(const std::vector<float> &got, const std::vector<float> &expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(expected[i]))
      CHECK(std::isnan(got[i]));
    else
      CHECK(got[i] == expected[i]);
  }
}

const float NaN = std::numeric_limits<float>::quiet_NaN();

// The 4x4 block at (3, 2) of the 6x5 matrix with both dimensions checked: rows
// 3..5 and columns 2..4 are inside, row 6 and column 5 read the padding.
const std::vector<float> kBlockAt32 = {42, 43, 44, 0, 52, 53, 54, 0, 62, 63, 64, 0, 0, 0, 0, 0};

const char *kLoadAt32 = R"(
    %bp = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i3, %i2] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    %v = tt.load %bp {boundaryCheck = array<i32: 0, 1>, padding = $PAD : i32} : !tt.ptr<tensor<4x4xf32>>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";

} // namespace

TEST_CASE("block-pointer load with boundaryCheck pads the lanes outside the tensor") {
  checkEqual(runOut(outKernel(16, subst(kLoadAt32, {{"$PAD", "1"}})), 16), kBlockAt32);
  // padding = nan: the same lanes read NaN.
  std::vector<float> nan = kBlockAt32;
  for (int lane : {3, 7, 11, 12, 13, 14, 15})
    nan[lane] = NaN;
  checkEqual(runOut(outKernel(16, subst(kLoadAt32, {{"$PAD", "2"}})), 16), nan);
}

TEST_CASE("tt.advance moves a block pointer, also backwards and through scf.for") {
  // From (5, 0), two steps of (-1, +1) reach (3, 2).
  std::string body = R"(
    %bp = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i5, %i0] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    %end = scf.for %iv = %i0 to %i2 step %i1 iter_args(%p = %bp) -> (!tt.ptr<tensor<4x4xf32>>) : i32 {
      %q = tt.advance %p, [%im1, %i1] : <tensor<4x4xf32>>
      scf.yield %q : !tt.ptr<tensor<4x4xf32>>
    }
    %v = tt.load %end {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<4x4xf32>>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";
  checkEqual(runOut(outKernel(16, body), 16), kBlockAt32);
}

TEST_CASE("block pointers flow through arith.select and tt.call") {
  // select(true, (1, 0), (0, 0)) then a callee advancing by (2, 2): (3, 2).
  std::string body = R"(
    %a = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i1, %i0] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    %b = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i0, %i0] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    %true = arith.constant true
    %s = arith.select %true, %a, %b : !tt.ptr<tensor<4x4xf32>>
    %p = tt.call @step(%s) : (!tt.ptr<tensor<4x4xf32>>) -> !tt.ptr<tensor<4x4xf32>>
    %v = tt.load %p {boundaryCheck = array<i32: 0, 1>} : !tt.ptr<tensor<4x4xf32>>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";
  std::string callee = R"(
  tt.func private @step(%p: !tt.ptr<tensor<4x4xf32>>) -> !tt.ptr<tensor<4x4xf32>> {
    %c2 = arith.constant 2 : i32
    %q = tt.advance %p, [%c2, %c2] : <tensor<4x4xf32>>
    tt.return %q : !tt.ptr<tensor<4x4xf32>>
  })";
  checkEqual(runOut(outKernel(16, body, callee), 16), kBlockAt32);
}

TEST_CASE("dimensions left out of boundaryCheck go straight to memory") {
  // 2x4 block at (0, 2), only rows checked: column 5 is past the logical shape
  // but inside the buffer, so it reads the next row's first element, as the GPU does.
  std::string body = R"(
    %bp = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i0, %i2] {order = array<i32: 1, 0>} : <tensor<2x4xf32>>
    %v = tt.load %bp {boundaryCheck = array<i32: 0>} : !tt.ptr<tensor<2x4xf32>>
    %r = tt.reshape %v : tensor<2x4xf32> -> tensor<8xf32>)";
  checkEqual(runOut(outKernel(8, body), 8), {12, 13, 14, 20, 22, 23, 24, 30});
}

TEST_CASE("a block-pointer load past its argument without boundaryCheck faults") {
  // Columns checked, rows not: lanes 0..11 are rows 3..5 (column 5 masked);
  // lane 12 is tensor element (6, 2), element 32 of a 30-element buffer.
  std::string body = R"(
    %bp = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i3, %i2] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    %v = tt.load %bp {boundaryCheck = array<i32: 1>} : !tt.ptr<tensor<4x4xf32>>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";
  std::optional<interp::Fault> fault;
  runOut(outKernel(16, body), 16, &fault);
  REQUIRE(fault);
  CHECK(fault->kind == "out_of_bounds");
  CHECK(fault->op == "tt.load");
  CHECK(fault->element == 12);
  CHECK(fault->message.find("tensor element (6, 2)") != std::string::npos);
  CHECK(fault->message.find("element 32 of argument 'm'") != std::string::npos);
}

TEST_CASE("order is a layout hint: strides alone place the elements") {
  // The transposed view of m (shape [5, 6], strides [1, 5]) at (2, 3): element
  // (a, b) is m[3 + b][2 + a]; inside when a < 3 and b < 3. Both orders agree.
  std::string body = R"(
    %bp = tt.make_tensor_ptr %m, [%c5, %c6], [%c1, %c5], [%i2, %i3] {order = array<i32: $ORDER>} : <tensor<4x4xf32>>
    %v = tt.load %bp {boundaryCheck = array<i32: 0, 1>, padding = 1 : i32} : !tt.ptr<tensor<4x4xf32>>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";
  const std::vector<float> expected = {42, 52, 62, 0, 43, 53, 63, 0, 44, 54, 64, 0, 0, 0, 0, 0};
  checkEqual(runOut(outKernel(16, subst(body, {{"$ORDER", "0, 1"}})), 16), expected);
  checkEqual(runOut(outKernel(16, subst(body, {{"$ORDER", "1, 0"}})), 16), expected);
}

TEST_CASE("a 3-D block pointer walks its block in row-major order") {
  // A 2x3x4 i32 tensor t[k] = k (strides 12, 4, 1), 2x2x2 blocks, all dims checked.
  std::string ttir = R"(
module {
  tt.func public @k(%out: !tt.ptr<i32>, %t: !tt.ptr<i32>) {
    %c2 = arith.constant 2 : i64
    %c3 = arith.constant 3 : i64
    %c4 = arith.constant 4 : i64
    %c12 = arith.constant 12 : i64
    %c1 = arith.constant 1 : i64
    %o0 = arith.constant $O0 : i32
    %o1 = arith.constant $O1 : i32
    %o2 = arith.constant $O2 : i32
    %bp = tt.make_tensor_ptr %t, [%c2, %c3, %c4], [%c12, %c4, %c1], [%o0, %o1, %o2] {order = array<i32: 2, 1, 0>} : <tensor<2x2x2xi32>>
    %v = tt.load %bp {boundaryCheck = array<i32: 0, 1, 2>, padding = 1 : i32} : !tt.ptr<tensor<2x2x2xi32>>
    %r = tt.reshape %v : tensor<2x2x2xi32> -> tensor<8xi32>
    %range = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %obase = tt.splat %out : !tt.ptr<i32> -> tensor<8x!tt.ptr<i32>>
    %optrs = tt.addptr %obase, %range : tensor<8x!tt.ptr<i32>>, tensor<8xi32>
    tt.store %optrs, %r : tensor<8x!tt.ptr<i32>>
    tt.return
  }
}
)";
  auto run = [&](int o0, int o1, int o2) {
    LoadedKernel k = loadKernel(subst(
        ttir,
        {{"$O0", std::to_string(o0)}, {"$O1", std::to_string(o1)}, {"$O2", std::to_string(o2)}}));
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<int32_t> out(8, -1), t(24);
    for (int i = 0; i < 24; ++i)
      t[i] = i;
    LaunchResult r = launch(
        *k.kernel, {pointer("out", viewOf(out, DType::I32)), pointer("t", viewOf(t, DType::I32))},
        {ptrArg(0), ptrArg(1)}, {1, 1, 1});
    REQUIRE_FALSE(r.fault);
    return out;
  };
  // At (0, 1, 2): element (a, b, c) is 12a + 4(1 + b) + 2 + c, all inside.
  CHECK(run(0, 1, 2) == std::vector<int32_t>{6, 7, 10, 11, 18, 19, 22, 23});
  // At (1, 1, 3): only a = 0 and c = 0 are inside: (1, 1, 3) = 19 and (1, 2, 3) = 23.
  CHECK(run(1, 1, 3) == std::vector<int32_t>{19, 0, 23, 0, 0, 0, 0, 0});
}

namespace {
/// `@k(%m: !tt.ptr<f32>)` storing a 4x4 block of 100 + lane; BODY uses %src.
std::string storeKernel(const std::string &body) {
  return subst(R"(
module {
  tt.func public @k(%m: !tt.ptr<f32>) {
    %c6 = arith.constant 6 : i64
    %c5 = arith.constant 5 : i64
    %c1 = arith.constant 1 : i64
    %s6 = arith.constant 6 : i32
    %s5 = arith.constant 5 : i32
    %im2 = arith.constant -2 : i32
    %im1 = arith.constant -1 : i32
    %i2 = arith.constant 2 : i32
    %i3 = arith.constant 3 : i32
    %lane = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
    %lanef = arith.sitofp %lane : tensor<16xi32> to tensor<16xf32>
    %hundred = arith.constant dense<100.0> : tensor<16xf32>
    %flat = arith.addf %lanef, %hundred : tensor<16xf32>
    %src = tt.reshape %flat : tensor<16xf32> -> tensor<4x4xf32>
$BODY
    tt.return
  }
}
)",
               {{"$BODY", body}});
}

/// Runs a storeKernel on a 30-element buffer of -1s.
LaunchResult runStore(const std::string &ttir, std::vector<float> &m) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  m.assign(30, -1.0f);
  LaunchResult r = launch(*k.kernel, {pointer("m", viewOf(m, DType::F32))}, {ptrArg(0)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  return r;
}

/// A 30-element buffer of -1s with the given elements set.
std::vector<float> minusOnesWith(const std::map<int, float> &set) {
  std::vector<float> m(30, -1.0f);
  for (const auto &[i, v] : set)
    m[i] = v;
  return m;
}

// Block (a, b) at (3, 2) holds 100 + 4a + b; inside: a < 3, b < 3.
const std::map<int, float> kStoredAt32 = {{17, 100}, {18, 101}, {19, 102}, {22, 104}, {23, 105},
                                          {24, 106}, {27, 108}, {28, 109}, {29, 110}};
} // namespace

TEST_CASE("block-pointer store with boundaryCheck writes only the lanes inside") {
  std::vector<float> m;
  LaunchResult r = runStore(storeKernel(R"(
    %bp = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i3, %i2] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    tt.store %bp, %src {boundaryCheck = array<i32: 0, 1>} : !tt.ptr<tensor<4x4xf32>>)"),
                            m);
  REQUIRE_FALSE(r.fault);
  checkEqual(m, minusOnesWith(kStoredAt32));
  CHECK(r.stats.bytesOut == 9 * 4);
}

TEST_CASE(
    "a block-pointer store past its argument without boundaryCheck faults and writes nothing") {
  // Lane 11 = tensor element (5, 5) = element 30 of the 30-element buffer; lanes
  // before it (columns 5 wrap into the next row) are inside the buffer.
  std::vector<float> m;
  LaunchResult r = runStore(storeKernel(R"(
    %bp = tt.make_tensor_ptr %m, [%c6, %c5], [%c5, %c1], [%i3, %i2] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    tt.store %bp, %src : !tt.ptr<tensor<4x4xf32>>)"),
                            m);
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->op == "tt.store");
  CHECK(r.fault->element == 11);
  CHECK(r.fault->message.find("tensor element (5, 5)") != std::string::npos);
  checkEqual(m, minusOnesWith({}));
}

//===----------------------------------------------------------------------===//
// Tensor descriptors
//===----------------------------------------------------------------------===//

namespace {
// Both spellings of the descriptor type: Triton <= 3.7 and 3.8+.
const std::vector<std::pair<std::string, std::string>> kOldSpelling = {{"$DESC", "tensor<4x4xf32>"},
                                                                       {"$ROW", "tensor<1x4xf32>"}};
const std::vector<std::pair<std::string, std::string>> kNewSpelling = {{"$DESC", "4x4xf32"},
                                                                       {"$ROW", "1x4xf32"}};
} // namespace

TEST_CASE("descriptor load masks every dimension, as TMA does") {
  std::string body = R"(
    %d = tt.make_tensor_descriptor %m, [%s6, %s5], [%c5, %c1] $ATTR : <f32>, <$DESC>
    %v = tt.descriptor_load %d[$I, $J] : !tt.tensordesc<$DESC> -> tensor<4x4xf32>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";
  for (const auto &spelling : {kOldSpelling, kNewSpelling}) {
    INFO(spelling[0].second);
    std::string at32 = subst(subst(body, {{"$I", "%i3"}, {"$J", "%i2"}, {"$ATTR", ""}}), spelling);
    checkEqual(runOut(outKernel(16, at32), 16), kBlockAt32);
    // At (-1, -2): element (a, b) is m[a - 1][b - 2], inside when a >= 1 and b >= 2.
    std::string before =
        subst(subst(body, {{"$I", "%im1"}, {"$J", "%im2"}, {"$ATTR", ""}}), spelling);
    checkEqual(runOut(outKernel(16, before), 16),
               {0, 0, 0, 0, 0, 0, 10, 11, 0, 0, 20, 21, 0, 0, 30, 31});
  }
  // padding = nan on the descriptor: out-of-range lanes read NaN.
  std::vector<float> nan = kBlockAt32;
  for (int lane : {3, 7, 11, 12, 13, 14, 15})
    nan[lane] = NaN;
  std::string padded = subst(
      subst(body, {{"$I", "%i3"}, {"$J", "%i2"}, {"$ATTR", "{padding = 2 : i32}"}}), kOldSpelling);
  checkEqual(runOut(outKernel(16, padded), 16), nan);
}

TEST_CASE("descriptor load may drop the block's leading unit dimension") {
  // Block 1x4 at (2, 3) loaded as tensor<4xf32>: m[2][3], m[2][4], then columns 5, 6 read 0.
  std::string body = R"(
    %d = tt.make_tensor_descriptor %m, [%s6, %s5], [%c5, %c1] : <f32>, <tensor<1x4xf32>>
    %r = tt.descriptor_load %d[%i2, %i3] : !tt.tensordesc<tensor<1x4xf32>> -> tensor<4xf32>)";
  checkEqual(runOut(outKernel(4, body), 4), {33, 34, 0, 0});
}

TEST_CASE("a descriptor whose shape exceeds its argument faults by provenance") {
  // Shape [8, 5] over 30 elements: at (5, 0), lanes 0..3 are row 5; lane 4 is
  // tensor element (6, 0) = element 30, inside the descriptor but past the buffer.
  std::string body = R"(
    %s8 = arith.constant 8 : i32
    %d = tt.make_tensor_descriptor %m, [%s8, %s5], [%c5, %c1] : <f32>, <tensor<4x4xf32>>
    %v = tt.descriptor_load %d[%i5, %i0] : !tt.tensordesc<tensor<4x4xf32>> -> tensor<4x4xf32>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";
  std::optional<interp::Fault> fault;
  runOut(outKernel(16, body), 16, &fault);
  REQUIRE(fault);
  CHECK(fault->kind == "out_of_bounds");
  CHECK(fault->op == "tt.descriptor_load");
  CHECK(fault->element == 4);
  CHECK(fault->message.find("tensor element (6, 0)") != std::string::npos);
}

TEST_CASE("descriptor store drops out-of-range elements, at both ends") {
  for (const auto &spelling : {kOldSpelling, kNewSpelling}) {
    INFO(spelling[0].second);
    std::vector<float> m;
    LaunchResult r = runStore(storeKernel(subst(R"(
    %d = tt.make_tensor_descriptor %m, [%s6, %s5], [%c5, %c1] : <f32>, <$DESC>
    tt.descriptor_store %d[%i3, %i2], %src : !tt.tensordesc<$DESC>, tensor<4x4xf32>
    tt.descriptor_store %d[%im1, %im2], %src : !tt.tensordesc<$DESC>, tensor<4x4xf32>)",
                                                spelling)),
                              m);
    REQUIRE_FALSE(r.fault);
    // At (-1, -2) lane (a, b) lands on m[a - 1][b - 2] for a >= 1, b >= 2:
    // m[0][0..1] = 106, 107; m[1][0..1] = 110, 111; m[2][0..1] = 114, 115.
    std::map<int, float> expected = kStoredAt32;
    expected.insert({{0, 106}, {1, 107}, {5, 110}, {6, 111}, {10, 114}, {11, 115}});
    checkEqual(m, minusOnesWith(expected));
  }
}

TEST_CASE("descriptor gather reads rows x_offsets[i] from column y_offset") {
  // Rows 5, 0, 7, -1 from column 2: rows 7 and -1 and column 5 are outside.
  std::string body = R"(
    %d = tt.make_tensor_descriptor %m, [%s6, %s5], [%c5, %c1] : <f32>, <$ROW>
    %x = arith.constant dense<[5, 0, 7, -1]> : tensor<4x$X>
    %v = tt.descriptor_gather %d[%x, %i2] : (!tt.tensordesc<$ROW>, tensor<4x$X>, i32) -> tensor<4x4xf32>
    %r = tt.reshape %v : tensor<4x4xf32> -> tensor<16xf32>)";
  const std::vector<float> expected = {62, 63, 64, 0, 12, 13, 14, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (const char *x : {"i32", "i16"})
    for (const auto &spelling : {kOldSpelling, kNewSpelling}) {
      INFO(x << " " << spelling[1].second);
      checkEqual(runOut(outKernel(16, subst(subst(body, {{"$X", x}}), spelling)), 16), expected);
    }
}

TEST_CASE("descriptor scatter writes rows x_offsets[i] and drops what is outside") {
  // Rows 4, 0, 9, -2 from column 3: only columns 3 and 4 of rows 4 and 0 are inside.
  std::vector<float> m;
  LaunchResult r = runStore(storeKernel(R"(
    %d = tt.make_tensor_descriptor %m, [%s6, %s5], [%c5, %c1] : <f32>, <tensor<1x4xf32>>
    %x = arith.constant dense<[4, 0, 9, -2]> : tensor<4xi32>
    tt.descriptor_scatter %d[%x, %i3], %src : !tt.tensordesc<tensor<1x4xf32>>, tensor<4xi32>, i32, tensor<4x4xf32>)"),
                            m);
  REQUIRE_FALSE(r.fault);
  checkEqual(m, minusOnesWith({{23, 100}, {24, 101}, {3, 104}, {4, 105}}));
  CHECK(r.stats.bytesOut == 16);
}

namespace {
/// descriptor_reduce KIND of a 2x4 block at (0, 0) into a 2x3 matrix (column 3 is outside).
std::string reduceKernel(const std::string &type, const std::string &kind, const std::string &src) {
  return subst(R"(
module {
  tt.func public @k(%m: !tt.ptr<$T>) {
    %c3 = arith.constant 3 : i64
    %c1 = arith.constant 1 : i64
    %s2 = arith.constant 2 : i32
    %s3 = arith.constant 3 : i32
    %i0 = arith.constant 0 : i32
    %src = arith.constant dense<$SRC> : tensor<2x4x$T>
    %d = tt.make_tensor_descriptor %m, [%s2, %s3], [%c3, %c1] : <$T>, <tensor<2x4x$T>>
    tt.descriptor_reduce $KIND, %d[%i0, %i0], %src : !tt.tensordesc<tensor<2x4x$T>>, tensor<2x4x$T>
    tt.return
  }
}
)",
               {{"$T", type}, {"$KIND", kind}, {"$SRC", src}});
}

template <class T>
std::vector<T> runReduce(const std::string &ttir, std::vector<T> m, DType dtype,
                         int64_t programs = 1, unsigned threads = 1) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  LaunchResult r =
      launch(*k.kernel, {pointer("m", viewOf(m, dtype))}, {ptrArg(0)}, {programs, 1, 1}, threads);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return m;
}
} // namespace

TEST_CASE("descriptor reductions combine in place and drop out-of-range elements") {
  // (old, v) pairs: (5, 3) (-3, 3) (7, 9) (0, 1) (10, -5) (2, 2); the 99s are in column 3.
  const std::vector<int32_t> m = {5, -3, 7, 0, 10, 2};
  const std::string src = "[[3, 3, 9, 99], [1, -5, 2, 99]]";
  const std::vector<std::pair<std::string, std::vector<int32_t>>> cases = {
      {"add", {8, 0, 16, 1, 5, 4}}, {"min", {3, -3, 7, 0, -5, 2}}, // signed
      {"max", {5, 3, 9, 1, 10, 2}}, {"inc", {0, 0, 8, 1, 11, 0}}, // old >= v (unsigned) ? 0 : old +
                                                                  // 1
      {"dec", {3, 3, 6, 1, 9, 1}}, // old == 0 || old > v (unsigned) ? v : old - 1
      {"and", {1, 1, 1, 0, 10, 2}}, {"or", {7, -1, 15, 1, -5, 2}}, {"xor", {6, -2, 14, 1, -15, 0}},
  };
  for (const auto &entry : cases) {
    const auto &kind = entry.first; // named: INFO cannot capture a structured binding (clang 14)
    const auto &expected = entry.second;
    INFO(kind);
    CHECK(runReduce(reduceKernel("i32", kind, src), m, DType::I32) == expected);
  }
  CHECK(runReduce(reduceKernel("f32", "add", "[[0.5, 2.0, -4.0, 7.0], [0.75, 1.0, -8.0, 7.0]]"),
                  std::vector<float>{1.5f, -2, 4, 0.25f, 8, 1},
                  DType::F32) == std::vector<float>{2, 0, 0, 1, 9, -7});
}

TEST_CASE("descriptor reductions from concurrent programs all land") {
  // 64 programs on 4 threads each add 1 to every element.
  std::vector<int32_t> got = runReduce(reduceKernel("i32", "add", "[[1, 1, 1, 1], [1, 1, 1, 1]]"),
                                       std::vector<int32_t>(6, 0), DType::I32, 64, 4);
  CHECK(got == std::vector<int32_t>(6, 64));
}

TEST_CASE("reductions a type cannot do are lowering errors") {
  LoadedKernel k =
      loadKernel(reduceKernel("f32", "xor", "[[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]"));
  CHECK_FALSE(k.kernel);
  CHECK(k.error.find("reduction 'xor' is not defined for element type f32") != std::string::npos);
}

TEST_CASE("a descriptor parameter needs the shape and strides Triton passes after it") {
  for (const char *params : {"%d: !tt.tensordesc<tensor<4x4xf32>>",
                             "%d: !tt.tensordesc<4x4xf32>, %s0: i32, %s1: i32, %t0: i64",
                             "%d: !tt.tensordesc<4x4xf32>, %s0: i32, %s1: i64, %t0: i64, %t1: i64"}) {
    INFO(params);
    LoadedKernel k = loadKernel(subst(R"(
module {
  tt.func public @k($PARAMS) {
    tt.return
  }
}
)",
                                      {{"$PARAMS", params}}));
    CHECK_FALSE(k.kernel);
    CHECK(k.error.find("parameter 'arg0' is a tensor descriptor of rank 2, but it is not followed "
                       "by its shape (2 x i32) and strides (2 x i64)") != std::string::npos);
  }
}

TEST_CASE("a block pointer parameter is rejected, not misread") {
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%b: !tt.ptr<tensor<4x4xf32>>) {
    tt.return
  }
}
)");
  CHECK_FALSE(k.kernel);
  CHECK(k.error.find("parameter 'arg0' is a block pointer") != std::string::npos);
}

TEST_CASE("a host descriptor and a pointer into one buffer share one shadow") {
  // The descriptor stores 2 into elements 0..7; the pointer then reads them back and stores
  // them plus one into elements 8..15. Both name the same 16 floats.
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%d: !tt.tensordesc<8xf32>, %d.shape.0: i32, %d.stride.0: i64,
                    %p: !tt.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %two = arith.constant dense<2.0> : tensor<8xf32>
    tt.descriptor_store %d[%c0], %two : !tt.tensordesc<8xf32>, tensor<8xf32>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %pa = tt.addptr %ps, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %v = tt.load %pa : tensor<8x!tt.ptr<f32>>
    %one = arith.constant dense<1.0> : tensor<8xf32>
    %w = arith.addf %v, %one : tensor<8xf32>
    %c8 = arith.constant dense<8> : tensor<8xi32>
    %r8 = arith.addi %r, %c8 : tensor<8xi32>
    %pb = tt.addptr %ps, %r8 : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    tt.store %pb, %w : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  const std::vector<interp::Parameter> &params = k.kernel->parameters();
  REQUIRE(params.size() == 4);
  CHECK(params[0].isPointer);
  CHECK(params[0].descriptorRank == 1);
  CHECK(params[0].blockShape == std::vector<int64_t>{8});
  CHECK(params[0].dtype == DType::F32);
  CHECK(params[0].access == (Access::Read | Access::Write));
  CHECK(params[3].access == (Access::Read | Access::Write));
  std::vector<float> x(16, -1.0f);
  View all = viewOf(x, DType::F32);
  View head = all;
  head.shape = {8};
  std::vector<PointerArgument> ptrs = {pointer("d", head), pointer("p", all)};
  std::vector<interp::ArgumentValue> args = {ptrArg(0), intArg(8), intArg(1), ptrArg(1)};
  LaunchResult r = launch(*k.kernel, ptrs, args, {1, 1, 1});
  REQUIRE_FALSE(r.fault);
  REQUIRE(r.error.empty());
  std::vector<float> want(16, 2.0f);
  std::fill(want.begin() + 8, want.end(), 3.0f);
  CHECK(x == want);
}

//===----------------------------------------------------------------------===//
// The block_ptr fixture: a real Triton 3.5 compile, both spec forms
//===----------------------------------------------------------------------===//

namespace {
/// Reads a little-endian C-order f32 .npy file (all the fixture holds).
std::vector<float> readF32Npy(const std::string &path, std::vector<int64_t> &shape) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() >= 10);
  REQUIRE(std::string(bytes.data() + 1, 5) == "NUMPY");
  size_t headerLength = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
  size_t dataStart = 10 + headerLength;
  if (bytes[6] >= 2) { // version 2+: 32-bit header length
    headerLength =
        headerLength | size_t(uint8_t(bytes[10])) << 16 | size_t(uint8_t(bytes[11])) << 24;
    dataStart = 12 + headerLength;
  }
  REQUIRE(bytes.size() >= dataStart);
  std::string header(bytes.data(), dataStart);
  REQUIRE(header.find("'descr': '<f4'") != std::string::npos);
  REQUIRE(header.find("'fortran_order': False") != std::string::npos);
  shape.clear();
  size_t open = header.find('(', header.find("'shape'"));
  size_t close = header.find(')', open);
  std::string dims = header.substr(open + 1, close - open - 1);
  int64_t numel = 1;
  for (size_t at = 0; at < dims.size();) {
    size_t comma = dims.find(',', at);
    std::string dim = dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (dim.find_first_of("0123456789") != std::string::npos) {
      shape.push_back(std::stoll(dim));
      numel *= shape.back();
    }
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  REQUIRE(bytes.size() == dataStart + size_t(numel) * 4);
  std::vector<float> data(numel);
  std::memcpy(data.data(), bytes.data() + dataStart, size_t(numel) * 4);
  return data;
}

/// Runs the single launch of a fixture spec (f32 buffers; pointer and i32
/// arguments) and compares every buffer with the expected folder's .npy.
void runFixtureSpec(const std::string &dir, const std::string &specName,
                    const std::string &expectedDir, unsigned threads) {
  std::ifstream specFile(dir + "/" + specName);
  REQUIRE(specFile);
  nlohmann::json spec = nlohmann::json::parse(specFile);
  std::map<std::string, std::vector<float>> buffers;
  for (const auto &[name, desc] : spec["buffers"].items()) {
    REQUIRE(desc["dtype"] == "f32");
    int64_t numel = 1;
    for (int64_t d : desc["shape"].get<std::vector<int64_t>>())
      numel *= d;
    const nlohmann::json &init = desc["init"];
    if (init.contains("npy")) {
      std::vector<int64_t> shape;
      buffers[name] = readF32Npy(dir + "/" + init["npy"].get<std::string>(), shape);
      REQUIRE(int64_t(buffers[name].size()) == numel);
    } else {
      buffers[name].assign(numel, init["fill"].get<float>());
    }
  }
  REQUIRE(spec["launches"].size() == 1);
  const nlohmann::json &launchSpec = spec["launches"][0];
  LoadedKernel k = loadKernel(dir + "/" + launchSpec["kernel"].get<std::string>(), true,
                              launchSpec["function"].get<std::string>());
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<PointerArgument> pointers;
  std::vector<interp::ArgumentValue> args;
  for (const nlohmann::json &arg : launchSpec["args"]) {
    if (arg.is_string()) {
      std::string name = arg.get<std::string>();
      args.push_back(ptrArg(uint32_t(pointers.size())));
      pointers.push_back(pointer(name, viewOf(buffers.at(name), DType::F32)));
    } else {
      REQUIRE(arg.contains("i32"));
      args.push_back(intArg(arg["i32"].get<int64_t>()));
    }
  }
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::vector<int64_t> g = launchSpec["grid"].get<std::vector<int64_t>>();
  std::copy(g.begin(), g.end(), grid.begin());
  LaunchResult r = launch(*k.kernel, pointers, args, grid, threads);
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  for (const auto &entry : buffers) {
    const auto &name = entry.first; // named: INFO cannot capture a structured binding (clang 14)
    const auto &data = entry.second;
    INFO(specName << ": buffer " << name);
    std::vector<int64_t> shape;
    std::vector<float> expected = readF32Npy(dir + "/" + expectedDir + "/" + name + ".npy", shape);
    REQUIRE(expected.size() == data.size());
    size_t mismatches = 0;
    for (size_t i = 0; i < data.size(); ++i)
      mismatches += data[i] != expected[i];
    CHECK(mismatches == 0);
  }
}
} // namespace

TEST_CASE("the block_ptr fixture matches numpy in its block-pointer and rewritten forms") {
  std::string dir = source("tests/data/kernels/block_ptr");
  for (unsigned threads : {1u, 3u}) {
    INFO("threads " << threads);
    runFixtureSpec(dir, "spec.json", "expected", threads);
    runFixtureSpec(dir, "spec_rewritten.json", "expected_rewritten", threads);
  }
}

TEST_CASE("host descriptor parameters as Triton 3.5, 3.8 and 3.9 spell them") {
  // tests/data/ttir/<version>/host_desc_kernel.ttir: out block = 2 x in block, 16 x 32 blocks.
  // 3.5 writes !tt.tensordesc<tensor<16x32xf32>> and names the shape and strides %in_desc_0..;
  // 3.8+ writes !tt.tensordesc<16x32xf32> and %in_desc.shape.0... A 40-row tensor over grid 3:
  // the last block's rows 40..47 read zeros and their stores are dropped.
  for (const char *version : {"3.5.1", "3.8.0", "3.9.0"}) {
    INFO(version);
    LoadedKernel k = loadKernel(source("tests/data/ttir/") + version + "/host_desc_kernel.ttir", true);
    REQUIRE_MESSAGE(k.kernel, k.error);
    REQUIRE(k.kernel->parameters().size() == 11);
    CHECK(k.kernel->parameters()[0].descriptorRank == 2);
    CHECK(k.kernel->parameters()[0].access == Access::Read);
    CHECK(k.kernel->parameters()[5].descriptorRank == 2);
    std::vector<float> in(40 * 32), out(40 * 32, -1.0f);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = float(i) - 600.0f;
    auto matrix = [](std::vector<float> &v) {
      View view = viewOf(v, DType::F32);
      view.shape = {40, 32};
      view.strides = {32, 1};
      return view;
    };
    std::vector<PointerArgument> ptrs = {pointer("in", matrix(in)), pointer("out", matrix(out))};
    std::vector<interp::ArgumentValue> args = {ptrArg(0), intArg(40), intArg(32), intArg(32),
                                               intArg(1), ptrArg(1), intArg(40), intArg(32),
                                               intArg(32), intArg(1), intArg(40)};
    LaunchResult r = launch(*k.kernel, ptrs, args, {3, 1, 1});
    REQUIRE_FALSE(r.fault);
    REQUIRE(r.error.empty());
    for (size_t i = 0; i < out.size(); ++i)
      REQUIRE(out[i] == 2.0f * (float(i) - 600.0f));
  }
}
