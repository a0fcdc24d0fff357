//===- HighRankTest.cpp - tt.trans and tt.broadcast at ranks above 8 ------===//
//
// Triton 3.9's tl.sort reshapes 2^k lanes into a rank-k tensor of 2s (issue 15, item 1);
// these kernels do the same with 1024 lanes (rank 10). Expected values come from index
// arithmetic on the bits of each lane, written out in the tests.
//
//===----------------------------------------------------------------------===//
#include "StoreKernel.h"

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
std::string cube(int rank, const std::string &element = "i32") {
  std::string t = "tensor<";
  for (int d = 0; d < rank; ++d)
    t += "2x";
  return t + element + ">";
}
} // namespace

TEST_CASE("tt.trans reversing the 10 dimensions of a 1024-lane cube reverses each lane's bits") {
  // Source lane s = sum_d bit_d * 2^(9 - d) in row-major order. Reversing the order makes
  // result dimension d source dimension 9 - d, so result lane i holds bitreverse10(i).
  std::string body = "    %h = tt.reshape %range : tensor<1024xi32> -> " + cube(10) +
                     "\n    %t = tt.trans %h {order = array<i32: 9, 8, 7, 6, 5, 4, 3, 2, 1, 0>} : " +
                     cube(10) + " -> " + cube(10) + "\n    %r = tt.reshape %t : " + cube(10) +
                     " -> tensor<1024xi32>";
  std::vector<int32_t> out = runStoreKernel<int32_t>(storeKernel("i32", body, 1024), DType::I32, 1024);
  for (int32_t i = 0; i < 1024; ++i) {
    int32_t reversed = 0;
    for (int b = 0; b < 10; ++b)
      reversed |= ((i >> b) & 1) << (9 - b);
    CAPTURE(i);
    CHECK(out[size_t(i)] == reversed);
  }
}

TEST_CASE("tt.trans swapping two dimensions of a rank-12 cube swaps two bits") {
  // order swaps dimensions 0 and 11 (bits 11 and 0 of the lane); the rest merge into
  // one contiguous run of 10 bits.
  std::string order = "11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0";
  std::string body = "    %h = tt.reshape %range : tensor<4096xi32> -> " + cube(12) +
                     "\n    %t = tt.trans %h {order = array<i32: " + order + ">} : " + cube(12) +
                     " -> " + cube(12) + "\n    %r = tt.reshape %t : " + cube(12) +
                     " -> tensor<4096xi32>";
  std::vector<int32_t> out = runStoreKernel<int32_t>(storeKernel("i32", body, 4096), DType::I32, 4096);
  for (int32_t i = 0; i < 4096; ++i) {
    int32_t high = (i >> 11) & 1, low = i & 1;
    CAPTURE(i);
    CHECK(out[size_t(i)] == ((i & 0x7FE) | (low << 11) | high));
  }
}

TEST_CASE("tt.broadcast of a rank-10 tensor with every other dimension of size 1") {
  // The source holds 0..31 in dimensions 1, 3, 5, 7, 9 (size 2 each); result lane i with
  // bits d0..d9 (d0 the most significant) reads source lane d1 d3 d5 d7 d9 in binary.
  std::string small = "tensor<1x2x1x2x1x2x1x2x1x2xi32>";
  std::string body =
      "    %s = tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>\n"
      "    %h = tt.reshape %s : tensor<32xi32> -> " + small +
      "\n    %b = tt.broadcast %h : " + small + " -> " + cube(10) +
      "\n    %r = tt.reshape %b : " + cube(10) + " -> tensor<1024xi32>";
  std::vector<int32_t> out = runStoreKernel<int32_t>(storeKernel("i32", body, 1024), DType::I32, 1024);
  for (int32_t i = 0; i < 1024; ++i) {
    int32_t expected = 0;
    for (int d = 1; d < 10; d += 2) // dimension d is bit 9 - d of the lane
      expected = expected * 2 + ((i >> (9 - d)) & 1);
    CAPTURE(i);
    CHECK(out[size_t(i)] == expected);
  }
}

TEST_CASE("tt.trans that moves only dimensions of size 1 is a copy") {
  std::string body = "    %h = tt.reshape %range : tensor<8xi32> -> tensor<1x8x1xi32>\n"
                     "    %t = tt.trans %h {order = array<i32: 2, 1, 0>} : tensor<1x8x1xi32> -> "
                     "tensor<1x8x1xi32>\n"
                     "    %r = tt.reshape %t : tensor<1x8x1xi32> -> tensor<8xi32>";
  CHECK(runStoreKernel<int32_t>(storeKernel("i32", body), DType::I32) ==
        std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("tt.broadcast of one row to a tile repeats it in every row, any row count") {
  // [1, 8] -> [7, 8]: result lane i is source lane i % 8. And [1, 1, 4] -> [5, 3, 4], which
  // merges into one row repeated 15 times: lane i is i % 4. Row counts that are not powers
  // of two leave a partial last copy.
  std::string rows7 = "    %s = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>\n"
                      "    %h = tt.reshape %s : tensor<8xi32> -> tensor<1x8xi32>\n"
                      "    %b = tt.broadcast %h : tensor<1x8xi32> -> tensor<7x8xi32>\n"
                      "    %r = tt.reshape %b : tensor<7x8xi32> -> tensor<56xi32>";
  std::vector<int32_t> out = runStoreKernel<int32_t>(storeKernel("i32", rows7, 56), DType::I32, 56);
  for (int32_t i = 0; i < 56; ++i) {
    CAPTURE(i);
    CHECK(out[size_t(i)] == i % 8);
  }
  std::string rank3 = "    %s = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>\n"
                      "    %h = tt.reshape %s : tensor<4xi32> -> tensor<1x1x4xi32>\n"
                      "    %b = tt.broadcast %h : tensor<1x1x4xi32> -> tensor<5x3x4xi32>\n"
                      "    %r = tt.reshape %b : tensor<5x3x4xi32> -> tensor<60xi32>";
  out = runStoreKernel<int32_t>(storeKernel("i32", rank3, 60), DType::I32, 60);
  for (int32_t i = 0; i < 60; ++i) {
    CAPTURE(i);
    CHECK(out[size_t(i)] == i % 4);
  }
}
