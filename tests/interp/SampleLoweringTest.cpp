//===- SampleLoweringTest.cpp - Every committed TTIR sample through the CLI's lowering path ---===//
//
// The frontend tests parse and verify every sample; lowering (the access analysis, then the ops)
// only ran on the samples an interp test happened to launch. A use-after-free in the access
// analysis of tt.call (reduce_kernel.source.ttir: Triton's front-end IR, before inlining) hid in
// that gap: `ttinterp info` crashed on a committed file while no test, sanitized or not, lowered
// it. Here every sample goes through interp::KernelLibrary, as `ttinterp run` and Python do.
//
//===----------------------------------------------------------------------===//
#include "ttinterp/interp/KernelLibrary.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using namespace ttinterp;

namespace {

std::vector<std::string> samples() {
  std::vector<std::string> paths;
  for (const auto &entry : std::filesystem::recursive_directory_iterator(
           std::string(TTINTERP_SOURCE_DIR) + "/tests/data/ttir"))
    if (entry.path().extension() == ".ttir")
      paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

} // namespace

TEST_CASE("every committed TTIR sample lowers, or is refused with an error naming its cause") {
  std::vector<std::string> paths = samples();
  REQUIRE(paths.size() > 40);
  interp::KernelLibrary library;
  for (const std::string &path : paths) {
    CAPTURE(path);
    interp::KernelFailure failure;
    std::string error;
    std::optional<interp::KernelLibrary::Entry> entry = library.get(path, "", failure, error);
    if (!entry) {
      // Only ops or types the interpreter refuses; every sample parses (SamplesTest).
      CHECK(failure == interp::KernelFailure::Unsupported);
      CHECK(error.find("error: ") != std::string::npos);
    }
  }
}

TEST_CASE("reduce_kernel's front-end IR (tt.call into combine functions) proves its accesses") {
  // reduce_kernel (tests/data/ttir/kernels.py) loads x and stores sum, max and argmax.
  for (const char *version : {"3.5.1", "3.8.0", "3.9.0"})
    for (const char *file : {"reduce_kernel.source.ttir", "reduce_kernel.ttir"}) {
      std::string path = std::string(TTINTERP_SOURCE_DIR) + "/tests/data/ttir/" + version + "/" + file;
      CAPTURE(path);
      interp::KernelLibrary library;
      interp::KernelFailure failure;
      std::string error;
      std::optional<interp::KernelLibrary::Entry> entry = library.get(path, "", failure, error);
      REQUIRE_MESSAGE(entry, error);
      const std::vector<interp::Parameter> &params = entry->kernel->parameters();
      REQUIRE(params.size() == 4);
      CHECK(params[0].access == Access::Read);
      for (size_t p = 1; p < 4; ++p)
        CHECK(params[p].access == Access::Write);
    }
}
