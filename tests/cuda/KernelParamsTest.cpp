//===- KernelParamsTest.cpp - Parameter marshalling, PTX signatures and launch plans ---===//
#include "TestSupport.h"

#include "ttinterp/cuda/KernelParams.h"
#include "ttinterp/cuda/NativeKernel.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace ttinterp;
using namespace ttinterp::cuda;
using namespace ttinterp::cuda::test;

namespace {

uint64_t readLE(const uint8_t *p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

} // namespace

TEST_CASE("params: C ABI size of every parameter type") {
  CHECK(paramSize(DType::Ptr) == 8);
  CHECK(paramSize(DType::I1) == 1); // .u8 in PTX
  CHECK(paramSize(DType::I8) == 1);
  CHECK(paramSize(DType::I16) == 2);
  CHECK(paramSize(DType::I32) == 4);
  CHECK(paramSize(DType::I64) == 8);
  CHECK(paramSize(DType::F16) == 2);
  CHECK(paramSize(DType::BF16) == 2);
  CHECK(paramSize(DType::F32) == 4);
  CHECK(paramSize(DType::F64) == 8);
  CHECK(paramSize(DType::F8E4M3FN) == 0);
  CHECK(paramSize(DType::F8E5M2) == 0);
}

TEST_CASE("params: layout of mixed scalars, then the hidden pointers") {
  std::vector<KernelArg> args = {
      KernelArg::pointer(0x7f0012345600), // @0
      KernelArg::integer(DType::I1, 7),   // @8, 1 byte
      KernelArg::integer(DType::I32, -5), // aligned to @12
      KernelArg::integer(DType::I8, 300), // @16
      KernelArg::integer(DType::I16, -2), // aligned to @18
      KernelArg::real(DType::F64, 0.5),   // aligned to @24
      KernelArg::real(DType::F16, 1.0),   // @32
      KernelArg::integer(DType::I64, -1), // aligned to @40
      KernelArg::real(DType::F32, 0.1),   // @48
      KernelArg::real(DType::BF16, 1.0),  // @52
  };
  HiddenParams hidden;
  hidden.globalScratch = true;
  hidden.globalScratchPtr = 0xdead0000;
  hidden.profileScratch = true; // value 0: nothing allocated
  ParamPack pack;
  std::string error;
  REQUIRE(marshalParams(args, hidden, pack, error));
  const std::vector<ParamSlot> &s = pack.slots();
  REQUIRE(s.size() == 12);
  const size_t offsets[] = {0, 8, 12, 16, 18, 24, 32, 40, 48, 52, 56, 64};
  const size_t sizes[] = {8, 1, 4, 1, 2, 8, 2, 8, 4, 2, 8, 8};
  for (size_t i = 0; i < s.size(); ++i) {
    CAPTURE(i);
    CHECK(s[i].offset == offsets[i]);
    CHECK(s[i].size == sizes[i]);
    CHECK(s[i].hidden == (i >= 10));
  }
  CHECK(pack.size() == 72);
  const uint8_t *d = pack.data();
  CHECK(readLE(d + 0, 8) == 0x7f0012345600);
  CHECK(readLE(d + 8, 1) == 1);                   // i1 is 0 or 1
  CHECK(readLE(d + 9, 3) == 0);                   // padding is zero
  CHECK(readLE(d + 12, 4) == 0xFFFFFFFB);         // -5 in two's complement
  CHECK(readLE(d + 16, 1) == 44);                 // 300 mod 256
  CHECK(readLE(d + 18, 2) == 0xFFFE);             // -2
  CHECK(readLE(d + 24, 8) == 0x3FE0000000000000); // 0.5
  CHECK(readLE(d + 32, 2) == 0x3C00);             // f16 1.0
  CHECK(readLE(d + 40, 8) == ~uint64_t(0));
  CHECK(readLE(d + 48, 4) == 0x3DCCCCCD); // f32 0.1
  CHECK(readLE(d + 52, 2) == 0x3F80);     // bf16 1.0
  CHECK(readLE(d + 56, 8) == 0xdead0000);
  CHECK(readLE(d + 64, 8) == 0);
  std::vector<void *> pointers = pack.pointers();
  REQUIRE(pointers.size() == 12);
  for (size_t i = 0; i < pointers.size(); ++i)
    CHECK(static_cast<const uint8_t *>(pointers[i]) == d + offsets[i]);
}

TEST_CASE("params: hidden pointers only as the rule says") {
  std::vector<KernelArg> args = {KernelArg::pointer(0x1000), KernelArg::integer(DType::I32, 4)};
  ParamPack pack;
  std::string error;
  REQUIRE(marshalParams(args, HiddenParams{}, pack, error));
  CHECK(pack.slots().size() == 2);
  CHECK(pack.size() == 12);

  HiddenParams globalOnly; // Triton 3.2 to 3.4
  globalOnly.globalScratch = true;
  REQUIRE(marshalParams(args, globalOnly, pack, error));
  REQUIRE(pack.slots().size() == 3);
  CHECK(pack.slots()[2].offset == 16); // the i32 ends at 12; a pointer aligns to 8
  CHECK(pack.slots()[2].hidden);
  CHECK(pack.size() == 24);

  REQUIRE(marshalParams({}, HiddenParams{}, pack, error));
  CHECK(pack.slots().empty());
  CHECK(pack.size() == 0);
  CHECK(pack.pointers().empty());
}

TEST_CASE("params: fp8 values cannot be parameters") {
  ParamPack pack;
  std::string error;
  CHECK_FALSE(marshalParams({KernelArg::pointer(1), KernelArg::integer(DType::I32, 1),
                             KernelArg::raw(DType::F8E4M3FN, 0x38)},
                            HiddenParams{}, pack, error));
  CHECK(error == "argument 2 has type f8E4M3FN, which cannot be a kernel parameter");
}

TEST_CASE("params: integers keep their low bits, i1 is 0 or 1") {
  CHECK(KernelArg::integer(DType::I1, 0).bits == 0);
  CHECK(KernelArg::integer(DType::I1, -3).bits == 1);
  CHECK(KernelArg::integer(DType::I8, -1).bits == 0xFF);
  CHECK(KernelArg::integer(DType::I16, 65537).bits == 1);
  CHECK(KernelArg::integer(DType::I32, int64_t(1) << 32).bits == 0);
  CHECK(KernelArg::integer(DType::I32, -5).bits == 0xFFFFFFFB);
  CHECK(KernelArg::integer(DType::I64, INT64_MIN).bits == 0x8000000000000000);
  CHECK(KernelArg::raw(DType::I16, 0x12345).bits == 0x2345);
  CHECK(KernelArg::real(DType::F32, 1e-5).bits == 0x3727C5AC); // numpy.float32(1e-5)
}

TEST_CASE("params: double to f16, rounded to nearest even") {
  CHECK(roundToF16(1.0) == 0x3C00);
  CHECK(roundToF16(-2.0) == 0xC000);
  CHECK(roundToF16(0.1) == 0x2E66);
  CHECK(roundToF16(1.0 / 3) == 0x3555);
  CHECK(roundToF16(65504) == 0x7BFF); // the largest half
  CHECK(roundToF16(65519) == 0x7BFF); // below the midpoint to 65536
  CHECK(roundToF16(65520) == 0x7C00); // the midpoint rounds to even: infinity
  CHECK(roundToF16(1e10) == 0x7C00);
  CHECK(roundToF16(-1e10) == 0xFC00);
  CHECK(roundToF16(std::ldexp(1.0, -14)) == 0x0400);       // smallest normal
  CHECK(roundToF16(std::ldexp(1.0, -24)) == 0x0001);       // smallest subnormal
  CHECK(roundToF16(std::ldexp(1.0, -25)) == 0x0000);       // half of it: ties to even (0)
  CHECK(roundToF16(std::ldexp(3.0, -25)) == 0x0002);       // 1.5 units: ties to even (2)
  CHECK(roundToF16(std::ldexp(1023.5, -24)) == 0x0400);    // rounds up into the normals
  CHECK(roundToF16(1.0 + std::ldexp(1.0, -11)) == 0x3C00); // tie, even mantissa stays
  CHECK(roundToF16(1.0 + std::ldexp(3.0, -11)) == 0x3C02); // tie, odd mantissa rounds up
  CHECK(roundToF16(-0.0) == 0x8000);
  CHECK(roundToF16(std::numeric_limits<double>::infinity()) == 0x7C00);
  CHECK(roundToF16(std::nan("")) == 0x7E00);
  CHECK(KernelArg::real(DType::F16, 2.5).bits == 0x4100);
}

TEST_CASE("params: double to bf16, rounded once from the double") {
  CHECK(roundToBF16(1.0) == 0x3F80);
  CHECK(roundToBF16(-1.0) == 0xBF80);
  CHECK(roundToBF16(M_PI) == 0x4049);    // f32 0x40490FDB: the low half is below the midpoint
  CHECK(roundToBF16(1.0 / 3) == 0x3EAB); // f32 0x3EAAAAAB: above the midpoint
  CHECK(roundToBF16(3.4e38) == 0x7F80);  // past the midpoint above the largest bf16
  CHECK(roundToBF16(3.38e38) == 0x7F7E);
  // Just above the midpoint between 1 and 1 + 2^-7. Rounding to f32 first would land exactly on
  // the midpoint and then round to even (1.0): the direct rounding goes up.
  CHECK(roundToBF16(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)) == 0x3F81);
  CHECK(roundToBF16(std::ldexp(1.0, -133)) == 0x0001); // smallest subnormal
  CHECK(roundToBF16(std::nan("")) == 0x7FC0);
}

TEST_CASE("params: PTX entry signatures") {
  std::vector<size_t> sizes;
  std::string error;
  REQUIRE(parsePtxParams(readText(examplePath("vector_add/vector_add.ptx")), "add_kernel", sizes,
                         error));
  CHECK(sizes == std::vector<size_t>{8, 8, 8, 4, 8, 8});

  const char *ptx = R"(
.version 8.8
.target sm_90a
.visible .entry k2(.param .u32 a) { ret; }
.visible .entry k( // a comment, with a comma
    .param .u64 .ptr .global .align 16 k_param_0,
    .param .u8 k_param_1, /* i1 */
    .param .b16 k_param_2,
    .param .f32 k_param_3,
    .param .align 8 .b8 k_param_4[24],
    .param .s64 k_param_5
)
{ ret; }
.entry empty()
{ ret; }
)";
  REQUIRE(parsePtxParams(ptx, "k", sizes, error));
  CHECK(sizes == std::vector<size_t>{8, 1, 2, 4, 24, 8});
  REQUIRE(parsePtxParams(ptx, "k2", sizes, error));
  CHECK(sizes == std::vector<size_t>{4});
  REQUIRE(parsePtxParams(ptx, "empty", sizes, error));
  CHECK(sizes.empty());
  CHECK_FALSE(parsePtxParams(ptx, "nope", sizes, error));
  CHECK(error == "the PTX has no .entry nope");
  CHECK_FALSE(parsePtxParams(".entry bad(.param .pred p) {}", "bad", sizes, error));
  CHECK(error == "parameter 0 of .entry bad has no type this reader knows: '.param .pred p'");
}

TEST_CASE("params: a launch is checked against the declared parameters") {
  std::vector<KernelArg> args = {KernelArg::pointer(1), KernelArg::pointer(2),
                                 KernelArg::pointer(3), KernelArg::integer(DType::I32, 5000)};
  HiddenParams hidden;
  hidden.globalScratch = hidden.profileScratch = true;
  ParamPack pack;
  std::string error;
  REQUIRE(marshalParams(args, hidden, pack, error));
  CHECK(checkParams(pack, {8, 8, 8, 4, 8, 8}, "add_kernel", error));
  CHECK_FALSE(checkParams(pack, {8, 8, 8, 4, 8}, "add_kernel", error));
  CHECK(error == "kernel 'add_kernel' declares 5 parameters but the launch passes 6: 4 arguments "
                 "and the two hidden scratch pointers");
  CHECK_FALSE(checkParams(pack, {8, 8, 8, 8, 8, 8}, "add_kernel", error));
  CHECK(error == "parameter 3 of kernel 'add_kernel' is 8 bytes, but argument 3 is i32 (4 bytes)");
  CHECK_FALSE(checkParams(pack, {8, 8, 8, 4, 4, 8}, "add_kernel", error));
  CHECK(error == "parameter 4 of kernel 'add_kernel' is 4 bytes, but the hidden global-scratch "
                 "pointer is ptr (8 bytes)");
}

TEST_CASE("launch plan: block, grid, clusters and scratch sizes from the metadata") {
  KernelMetadata m;
  m.name = "k";
  m.numWarps = 4;
  m.shared = 16384;
  LaunchPlan plan;
  std::string error;
  REQUIRE(planLaunch(m, {5, 1, 1}, plan, error));
  CHECK(plan.programs == 5);
  CHECK(plan.config.grid == std::array<uint32_t, 3>{5, 1, 1});
  CHECK(plan.config.block == std::array<uint32_t, 3>{128, 1, 1});
  CHECK(plan.config.sharedBytes == 16384);
  CHECK(plan.config.cluster == std::array<uint32_t, 3>{1, 1, 1});
  CHECK(plan.globalScratchBytes == 0);
  CHECK(plan.profileScratchBytes == 0);

  // Two CTAs per program: the grid's x doubles and the pair forms a cluster.
  m.numCtas = 2;
  m.numWarps = 8;
  m.globalScratchSize = 256;
  m.globalScratchAlign = 128;
  m.profileScratchSize = 40;
  REQUIRE(planLaunch(m, {3, 2, 1}, plan, error));
  CHECK(plan.programs == 6);
  CHECK(plan.config.grid == std::array<uint32_t, 3>{6, 2, 1});
  CHECK(plan.config.block == std::array<uint32_t, 3>{256, 1, 1});
  CHECK(plan.config.cluster == std::array<uint32_t, 3>{2, 1, 1});
  CHECK(plan.globalScratchBytes == 6 * 2 * 256);
  CHECK(plan.globalScratchAlign == 128);
  CHECK(plan.profileScratchBytes == 6 * 2 * 40);

  m.numCtas = 1;
  m.launchCooperativeGrid = true;
  REQUIRE(planLaunch(m, {0, 4, 1}, plan, error));
  CHECK(plan.programs == 0);
  CHECK(plan.config.cooperative);

  CHECK_FALSE(planLaunch(m, {1, 70000, 1}, plan, error));
  CHECK(error == "grid (1, 70000, 1) is (1, 70000, 1) blocks, beyond CUDA's limits (x < 2^31, y "
                 "and z <= 65535)");
  m.numCtas = 2;
  CHECK_FALSE(planLaunch(m, {0x40000000, 1, 1}, plan, error));
}
