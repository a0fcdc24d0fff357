//===- KernelMetadataTest.cpp - Triton metadata JSON and the hidden-parameter rule ---===//
#include "TestSupport.h"

#include "ttinterp/cuda/KernelMetadata.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <map>

using namespace ttinterp;
using namespace ttinterp::cuda;
using namespace ttinterp::cuda::test;

namespace {

// From examples/*/<name>.json as Triton 3.8.0 wrote them (read off the files by hand).
struct ExpectedMeta {
  const char *name;
  uint32_t shared;
};
const std::map<std::string, ExpectedMeta> kExamples = {
    {"alias_5791", {"aliasing_test", 0}},
    {"inplace_add", {"inplace_add_kernel", 0}},
    {"layernorm", {"layernorm_fwd_kernel", 16}},
    {"matmul", {"matmul_kernel", 16384}},
    {"matmul_tf32", {"matmul_tf32_kernel", 16384}},
    {"softmax", {"softmax_kernel", 16}},
    {"vector_add", {"add_kernel", 0}},
};

KernelMetadata parseOk(const std::string &text) {
  KernelMetadata m;
  std::string error;
  bool ok = parseKernelMetadata(text, "k.json", m, error);
  INFO(error);
  REQUIRE(ok);
  return m;
}

std::string parseError(const std::string &text) {
  KernelMetadata m;
  std::string error;
  CHECK_FALSE(parseKernelMetadata(text, "k.json", m, error));
  return error;
}

} // namespace

TEST_CASE("metadata nested past the depth limit is refused, not a stack overflow") {
  // The message for a wrong-typed field dump()s it, and dump() recursed once per level:
  // 200,000 levels overflowed the stack (ASan: SEGV in the serializer).
  CHECK(parseError(R"({"name": )" + std::string(200000, '[') + std::string(200000, ']') + "}") ==
        "k.json: the JSON nests arrays and objects more than 256 deep");
  // 256 levels (the root object and 255 arrays) are within the limit.
  CHECK(parseError(R"({"name": )" + std::string(255, '[') + std::string(255, ']') + "}")
            .find("k.json: field 'name' must be a string, got [[[") == 0);
}

TEST_CASE("metadata: every example's Triton 3.8 JSON") {
  std::vector<std::string> names = exampleNames();
  CHECK(names.size() == kExamples.size());
  for (const std::string &example : names) {
    CAPTURE(example);
    auto expected = kExamples.find(example);
    REQUIRE(expected != kExamples.end());
    KernelMetadata m;
    std::string error;
    REQUIRE_MESSAGE(loadKernelMetadata(examplePath(example + "/" + example + ".json"), m, error),
                    error);
    CHECK(m.name == expected->second.name);
    CHECK(m.numWarps == 4); // Every example was compiled with num_warps=4.
    CHECK(m.threadsPerBlock() == 128);
    CHECK(m.numCtas == 1);
    CHECK(m.shared == expected->second.shared);
    CHECK(m.globalScratchSize == 0);
    CHECK(m.globalScratchAlign == 1);
    CHECK(m.profileScratchSize == 0);
    CHECK(m.profileScratchAlign == 1);
    CHECK(m.backend == "cuda");
    CHECK(m.arch == "90");
    CHECK(m.tritonVersion == "3.8.0");
    CHECK_FALSE(m.launchCooperativeGrid);
    CHECK_FALSE(m.launchPdl);
    // 3.8 >= 3.5: both hidden pointers.
    CHECK(m.globalScratchParam);
    CHECK(m.profileScratchParam);
    CHECK(m.hiddenParamCount() == 2);
  }
}

TEST_CASE("metadata: the hidden-parameter rule matches the examples' real PTX") {
  // The PTX .entry lists the spec's arguments and then exactly the hidden pointers the rule
  // predicts: Triton's own compile checks the rule.
  for (const std::string &example : exampleNames()) {
    CAPTURE(example);
    KernelMetadata m;
    std::string error;
    REQUIRE(loadKernelMetadata(examplePath(example + "/" + example + ".json"), m, error));
    Spec spec;
    REQUIRE_MESSAGE(readSpec(examplePath(example + "/spec.json"), spec, error), error);
    REQUIRE(spec.launches.size() == 1);
    const SpecLaunch &launch = spec.launches[0];
    CHECK(launch.function == m.name);
    std::vector<size_t> sizes;
    REQUIRE_MESSAGE(parsePtxParams(readText(examplePath(example + "/" + example + ".ptx")), m.name,
                                   sizes, error),
                    error);
    REQUIRE(sizes.size() == launch.args.size() + m.hiddenParamCount());
    for (size_t i = 0; i < launch.args.size(); ++i) {
      CAPTURE(i);
      const SpecArg &arg = launch.args[i];
      CHECK(sizes[i] == (arg.buffer >= 0 ? 8 : paramSize(arg.scalar.type)));
    }
    CHECK(sizes[sizes.size() - 1] == 8);
    CHECK(sizes[sizes.size() - 2] == 8);
  }
}

TEST_CASE("metadata: only name, num_warps and shared are required") {
  KernelMetadata m = parseOk(R"({"name": "k", "num_warps": 8, "shared": 100})");
  CHECK(m.name == "k");
  CHECK(m.numWarps == 8);
  CHECK(m.threadsPerBlock() == 256);
  CHECK(m.shared == 100);
  CHECK(m.numCtas == 1);
  CHECK(m.globalScratchSize == 0);
  CHECK(m.globalScratchAlign == 1);
  CHECK(m.backend.empty());
  CHECK(m.tritonVersion.empty());
  // No version and no scratch keys: a pre-3.2 signature without hidden pointers.
  CHECK(m.hiddenParamCount() == 0);
  // JSON null stands for "not given" in optional fields (Triton writes "maxnreg": null).
  m = parseOk(R"({"name": "k", "num_warps": 1, "shared": 0, "num_ctas": null, "target": null})");
  CHECK(m.numCtas == 1);

  CHECK(parseError(R"({"num_warps": 4, "shared": 0})") == "k.json: missing required field 'name'");
  CHECK(parseError(R"({"name": "k", "shared": 0})") ==
        "k.json: missing required field 'num_warps'");
  CHECK(parseError(R"({"name": "k", "num_warps": 4})") ==
        "k.json: missing required field 'shared'");
  CHECK(parseError(R"({"name": "k", "num_warps": null, "shared": 0})") ==
        "k.json: missing required field 'num_warps'");
}

TEST_CASE("metadata: malformed fields are errors, not defaults") {
  CHECK(parseError(R"({"name": "k", "num_warps": "4", "shared": 0})") ==
        "k.json: field 'num_warps' must be a non-negative integer, got \"4\"");
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": -1})") ==
        "k.json: field 'shared' must be a non-negative integer, got -1");
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": 1.5})") ==
        "k.json: field 'shared' must be a non-negative integer, got 1.5");
  CHECK(parseError(R"({"name": "k", "num_warps": 0, "shared": 0})") ==
        "k.json: num_warps is 0; a CUDA block holds 1 to 32 warps");
  CHECK(parseError(R"({"name": "k", "num_warps": 64, "shared": 0})") ==
        "k.json: num_warps is 64; a CUDA block holds 1 to 32 warps");
  CHECK(parseError(R"({"name": 3, "num_warps": 4, "shared": 0})") ==
        "k.json: field 'name' must be a string, got 3");
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": 0, "global_scratch_align": 3})") ==
        "k.json: global_scratch_align is 3, not a power of two");
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": 0,
                       "target": {"backend": "hip", "arch": "gfx942", "warp_size": 64}})") ==
        "k.json: the kernel was compiled for backend 'hip', not 'cuda'");
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": 0,
                       "target": {"backend": "cuda", "arch": 90, "warp_size": 64}})") ==
        "k.json: target.warp_size is 64; NVIDIA GPUs have 32 threads per warp");
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": 0, "launch_pdl": 1})") ==
        "k.json: field 'launch_pdl' must be true or false, got 1");
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": 0, "cluster_dims": [2, 1]})") ==
        "k.json: cluster_dims must be three positive integers, got [2,1]");
  CHECK(parseError(R"({"name": "k", "num_warps": 4,)") == "k.json: not valid JSON");
  CHECK(parseError(R"([1, 2])") == "k.json: the metadata must be a JSON object");
}

TEST_CASE("metadata: target as an object or as a list, arch as a number or a string") {
  KernelMetadata m =
      parseOk(R"({"name": "k", "num_warps": 4, "shared": 0, "target": ["cuda", 80, 32]})");
  CHECK(m.backend == "cuda");
  CHECK(m.arch == "80");
  m = parseOk(R"({"name": "k", "num_warps": 4, "shared": 0,
                  "target": {"backend": "cuda", "arch": "90a", "warp_size": 32}})");
  CHECK(m.arch == "90a");
  m = parseOk(R"({"name": "k", "num_warps": 4, "shared": 0, "backend_name": "cuda"})");
  CHECK(m.backend == "cuda");
}

TEST_CASE("metadata: hidden parameters by Triton version, else by the keys present") {
  auto with = [](const std::string &extra) {
    return parseOk(R"({"name": "k", "num_warps": 4, "shared": 0)" + extra + "}");
  };
  KernelMetadata m = with(R"(, "triton_version": "3.1.0")");
  CHECK_FALSE(m.globalScratchParam);
  CHECK_FALSE(m.profileScratchParam);
  m = with(R"(, "triton_version": "3.2.0")");
  CHECK(m.globalScratchParam);
  CHECK_FALSE(m.profileScratchParam);
  m = with(R"(, "triton_version": "3.4.1", "global_scratch_size": 0)");
  CHECK(m.globalScratchParam);
  CHECK_FALSE(m.profileScratchParam);
  m = with(R"(, "triton_version": "3.5.0+git1234abcd")");
  CHECK(m.globalScratchParam);
  CHECK(m.profileScratchParam);
  m = with(R"(, "triton_version": "4.0.0")");
  CHECK(m.hiddenParamCount() == 2);
  // The version wins over the keys: 3.8 always passes both pointers.
  m = with(R"(, "triton_version": "3.8.0")");
  CHECK(m.hiddenParamCount() == 2);
  // Without a readable version, the keys decide.
  m = with(R"(, "global_scratch_size": 0, "global_scratch_align": 1)");
  CHECK(m.globalScratchParam);
  CHECK_FALSE(m.profileScratchParam);
  m = with(R"(, "triton_version": "dev", "global_scratch_size": 0, "profile_scratch_size": 0)");
  CHECK(m.hiddenParamCount() == 2);
  // A scratch size with no pointer to pass it through cannot be launched.
  CHECK(parseError(R"({"name": "k", "num_warps": 4, "shared": 0, "triton_version": "3.1.0",
                       "global_scratch_size": 64})") ==
        "k.json: global_scratch_size is 64 but Triton 3.1.0 passes no global-scratch pointer");
}

TEST_CASE("metadata: Triton version strings") {
  CHECK(parseTritonVersion("3.8.0") == std::make_pair(3, 8));
  CHECK(parseTritonVersion("3.10") == std::make_pair(3, 10));
  CHECK(parseTritonVersion("3.5.0+git1234") == std::make_pair(3, 5));
  CHECK(parseTritonVersion("3.4.0rc1") == std::make_pair(3, 4));
  CHECK_FALSE(parseTritonVersion(""));
  CHECK_FALSE(parseTritonVersion("3"));
  CHECK_FALSE(parseTritonVersion("v3.2"));
  CHECK_FALSE(parseTritonVersion("3."));
}

TEST_CASE("metadata: an unreadable file names the path") {
  KernelMetadata m;
  std::string error;
  CHECK_FALSE(loadKernelMetadata("/nonexistent/k.json", m, error));
  CHECK(error == "/nonexistent/k.json: cannot open (No such file or directory)");
}
