//===- TestSupport.h - Helpers of the cuda/ tests: examples, .npy, fake driver -*- C++ -*-===//
//
// Kept inside the test folder so the cuda tests depend on nothing but ttinterp_cuda: a small
// reader for the subset of spec.json the examples use, a .npy reader for little-endian arrays,
// access to the stand-in libcuda, and the GPU skip rule.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FakeCuda.h"

#include "ttinterp/cuda/Driver.h"
#include "ttinterp/cuda/KernelParams.h"
#include "ttinterp/memory/DType.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ttinterp::cuda::test {

/// <checkout>/examples/<relative>; the checkout is $TTINTERP_SOURCE_DIR when set, else the
/// source folder the tests were built from.
std::string examplePath(const std::string &relative);
/// The example folders under examples/ that hold a <name>.json next to their cubin, sorted.
std::vector<std::string> exampleNames();
/// The whole file; fails the test when it cannot be read.
std::string readText(const std::string &path);

/// A .npy array: descr (e.g. "<f4"), shape, raw little-endian C-order bytes.
struct Npy {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};
bool readNpy(const std::string &path, Npy &out, std::string &error);

/// The subset of spec.json the examples use: buffers initialised from zeros, a fill value or a
/// .npy file; launches whose arguments are buffer names or {"<dtype>": value} scalars.
struct SpecBuffer {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t elements = 1;
  enum class Init { Zeros, Fill, Npy } init = Init::Zeros;
  double fill = 0;
  std::string npyPath; ///< Resolved against the spec's folder.
};
struct SpecArg {
  int buffer = -1; ///< Index into buffers, or -1 for a scalar.
  KernelArg scalar;
};
struct SpecLaunch {
  std::string function;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::vector<SpecArg> args;
};
struct Spec {
  std::vector<SpecBuffer> buffers;
  std::vector<SpecLaunch> launches;
};
bool readSpec(const std::string &path, Spec &out, std::string &error);

/// Native CUDA runs are possible here. Otherwise prints the skip marker with the reason, which
/// tests/cuda/SkipGpuTests.cmake turns into a ctest "Skipped", and returns false.
bool gpuOrSkip();

#ifdef TTINTERP_FAKE_LIBCUDA
/// The stand-in libcuda's controls, from the library a Driver on TTINTERP_FAKE_LIBCUDA loads.
struct Fake {
  explicit Fake(const char *path = TTINTERP_FAKE_LIBCUDA);
  ~Fake();
  TtFakeReset reset = nullptr;
  TtFakeSetInt setInitResult = nullptr, setDeviceCount = nullptr, setLaunchResult = nullptr,
               setSyncResult = nullptr;
  TtFakeSetSize setMemoryLimit = nullptr;
  TtFakeSetParamSizes setParamSizes = nullptr;
  TtFakeLastLaunch lastLaunch = nullptr;
  TtFakeGetInt maxDynamicShared = nullptr, liveModules = nullptr;
  TtFakeGetSize liveAllocations = nullptr;
  TtFakeSetCapability setCapability = nullptr;
  TtFakeLaunch launch() const;

private:
  void *handle_ = nullptr;
};
#endif

} // namespace ttinterp::cuda::test
