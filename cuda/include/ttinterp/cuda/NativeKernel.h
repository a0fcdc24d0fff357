//===- NativeKernel.h - Launching Triton's own cubin or PTX on the GPU -*- C++ -*-===//
//
// Runs a kernel exactly as Triton compiled it, launched the way Triton's launcher does, so its
// results can be set against the interpreter's:
//   grid      (gx * numCtas, gy, gz), clusters of (numCtas, 1, 1) when numCtas > 1
//   block     (32 * num_warps, 1, 1)
//   shared    `shared` bytes of dynamic shared memory (the function's limit is raised first when
//             above the 48 KiB default)
//   params    the tt.func arguments in order, then the hidden scratch pointers
//             (KernelMetadata.h), each scratch allocated as grid * numCtas * size bytes at its
//             alignment, zero-filled, and freed after the launch
// Every launch is synchronous: it returns once the kernel finished, and a fault inside the
// kernel (an illegal address, a trap) comes back as the launch's error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/cuda/Driver.h"
#include "ttinterp/cuda/KernelMetadata.h"
#include "ttinterp/cuda/KernelParams.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ttinterp::cuda {

/// What one launch of a kernel asks of the driver, worked out from the metadata alone.
struct LaunchPlan {
  LaunchConfig config;
  uint64_t programs = 0; ///< Product of the grid; 0 means nothing runs.
  uint64_t globalScratchBytes = 0;
  uint64_t globalScratchAlign = 1;
  uint64_t profileScratchBytes = 0;
  uint64_t profileScratchAlign = 1;
};

/// Plans a launch of `meta` over `grid` (program counts along x, y, z). Fails when the grid
/// exceeds CUDA's limits (x * numCtas < 2^31, y and z <= 65535) or the scratch size overflows.
bool planLaunch(const KernelMetadata &meta, const std::array<uint32_t, 3> &grid, LaunchPlan &out,
                std::string &error);

class NativeKernel {
public:
  /// Loads the cubin (or fatbin, or PTX for the JIT: told apart by content) at `binaryPath` and
  /// the metadata at `metadataPath` onto `device`, and looks up the entry the metadata names.
  static std::unique_ptr<NativeKernel> load(const std::string &binaryPath,
                                            const std::string &metadataPath, std::string &error,
                                            int device = 0, Driver &driver = Driver::instance());
  /// As load, with the image in memory and the metadata already parsed; `imageName` stands for
  /// the image in messages.
  static std::unique_ptr<NativeKernel> create(std::vector<char> image, std::string imageName,
                                              KernelMetadata metadata, std::string &error,
                                              int device = 0, Driver &driver = Driver::instance());
  /// Unloads the module.
  ~NativeKernel();
  NativeKernel(const NativeKernel &) = delete;
  NativeKernel &operator=(const NativeKernel &) = delete;

  const KernelMetadata &metadata() const { return meta_; }
  bool isPtx() const { return isPtx_; }
  /// Parameter sizes the kernel declares (from its PTX, or the driver for a cubin); empty with
  /// paramsKnown() false when neither can tell, and then the launch is not checked.
  const std::vector<size_t> &declaredParams() const { return declared_; }
  bool paramsKnown() const { return paramsKnown_; }

  /// Runs the kernel over `grid` with the tt.func arguments `args` and waits for it. The hidden
  /// scratch pointers are added here; `args` must not contain them.
  bool launch(const std::array<uint32_t, 3> &grid, const std::vector<KernelArg> &args,
              std::string &error);

private:
  NativeKernel() = default;

  Driver *driver_ = nullptr;
  int device_ = 0;
  KernelMetadata meta_;
  std::string imageName_;
  bool isPtx_ = false;
  ModuleHandle module_ = nullptr;
  FunctionHandle function_ = nullptr;
  std::vector<size_t> declared_;
  bool paramsKnown_ = false;
};

} // namespace ttinterp::cuda
