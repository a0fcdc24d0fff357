//===- Driver.h - The CUDA Driver API, loaded with dlopen at run time -*- C++ -*-===//
//
// ttinterp never links against libcuda: machines without an NVIDIA driver (CI, laptops) must
// build and run everything else. A Driver dlopens the library on first use, resolves the entry
// points under the versioned names cuda.h maps them to (cuMemAlloc is cuMemAlloc_v2, ...), calls
// cuInit once, and retains each device's primary context (the one the CUDA runtime and PyTorch
// use, so device pointers from them are valid here).
//
// This header is free of cuda.h: handles travel as opaque pointers and device addresses as
// uint64_t. Every failing call returns false with one line naming the call, its arguments, and the
// driver's error name and text, e.g.
//   cuMemAlloc(1048576 bytes): CUDA_ERROR_OUT_OF_MEMORY (out of memory)
// Nothing throws. All members are safe to call from several threads; the context is made current
// on the calling thread by every call that needs one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ttinterp::cuda {

/// A device address (CUdeviceptr).
using DevicePtr = uint64_t;
/// Opaque CUmodule and CUfunction.
using ModuleHandle = void *;
using FunctionHandle = void *;

/// One launch as the driver sees it (grid already multiplied by the cluster size).
struct LaunchConfig {
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t sharedBytes = 0;
  /// Thread-block cluster; anything but (1, 1, 1) needs cuLaunchKernelEx.
  std::array<uint32_t, 3> cluster = {1, 1, 1};
  bool cooperative = false;     ///< CU_LAUNCH_ATTRIBUTE_COOPERATIVE (needs cuLaunchKernelEx).
  bool programmaticPdl = false; ///< Programmatic stream serialization (needs cuLaunchKernelEx).
};

/// One kernel parameter as the driver lays it out (cuFuncGetParamInfo).
struct DriverParam {
  size_t offset = 0;
  size_t size = 0;
};

/// "call: NAME (description)"; without a name, "call: CUDA error CODE". Pure, for messages and
/// tests.
std::string formatDriverError(std::string_view call, int code, const char *name,
                              const char *description);

/// True when ttinterp was compiled with cuda.h (otherwise every Driver call fails with
/// "ttinterp was built without CUDA support").
bool builtWithCudaHeaders();

class Driver {
public:
  /// The process-wide driver, loaded from "libcuda.so.1" (or from $TTINTERP_LIBCUDA when set, a
  /// testing hook) on first use. Never unloaded, so device buffers in static objects stay valid
  /// until exit.
  static Driver &instance();

  /// A driver loaded from `library` (a soname or a path). Tests point this at a stand-in.
  explicit Driver(std::string library);
  ~Driver();
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  const std::string &library() const { return library_; }

  /// Loads the library, resolves the entry points and calls cuInit, once; later calls return the
  /// first outcome (and its message) without retrying.
  bool initialize(std::string &error);
  /// The driver's CUDA version (12040 for 12.4); 0 before a successful initialize.
  int version() const { return version_; }
  /// Number of devices; fails (saying so) when there is none.
  bool deviceCount(int &count, std::string &error);
  /// Makes `device`'s primary context current on this thread, retaining it on first use.
  bool bind(int device, std::string &error);
  /// Compute capability, e.g. 9.0 for an H100.
  bool computeCapability(int device, int &major, int &minor, std::string &error);
  /// The marketing name, e.g. "NVIDIA H200".
  bool deviceName(int device, std::string &name, std::string &error);
  /// Whether the optional entry points were found.
  bool hasLaunchKernelEx() const { return hasLaunchEx_; }
  bool hasParamInfo() const { return hasParamInfo_; }

  /// cuMemAlloc; `bytes` must be non-zero.
  bool memAlloc(int device, size_t bytes, DevicePtr &out, std::string &error);
  bool memFree(int device, DevicePtr ptr, std::string &error);
  bool copyToDevice(int device, DevicePtr dst, const void *src, size_t bytes, std::string &error);
  bool copyToHost(int device, void *dst, DevicePtr src, size_t bytes, std::string &error);
  bool memsetD8(int device, DevicePtr dst, uint8_t value, size_t bytes, std::string &error);
  /// The allocation holding `ptr` (cuMemGetAddressRange): its base and size.
  bool addressRange(int device, DevicePtr ptr, DevicePtr &base, size_t &size, std::string &error);
  /// The device ordinal whose memory `ptr` is (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL).
  bool pointerDevice(DevicePtr ptr, int &device, std::string &error);

  /// cuModuleLoadData for a cubin or fatbin; for PTX (NUL-terminated text) cuModuleLoadDataEx,
  /// with the JIT's error log appended to the message on failure.
  bool loadModule(int device, const void *image, bool isPtx, ModuleHandle &out, std::string &error);
  bool getFunction(ModuleHandle module, const std::string &name, FunctionHandle &out,
                   std::string &error);
  bool unloadModule(int device, ModuleHandle module, std::string &error);
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
  bool setMaxDynamicShared(FunctionHandle fn, uint32_t bytes, std::string &error);
  /// The parameters `fn` declares, from cuFuncGetParamInfo. Returns false with an empty `error`
  /// when the driver cannot tell (older than 12.4).
  bool paramLayout(FunctionHandle fn, std::vector<DriverParam> &out, std::string &error);
  /// cuLaunchKernelEx when resolved, else cuLaunchKernel (which cannot express clusters,
  /// cooperative or PDL launches: those fail). Asynchronous: errors inside the kernel surface in
  /// synchronize.
  bool launch(int device, FunctionHandle fn, const LaunchConfig &config, void **params,
              std::string &error);
  /// cuCtxSynchronize. An error here after a launch is the kernel's (an illegal address, a trap).
  bool synchronize(int device, std::string &error);

  /// The message for a failed call: formatDriverError with the driver's name and text for `code`
  /// (falling back to a built-in table when the driver cannot name it). Adds a note when the
  /// error leaves the context unusable (every later call in this process fails).
  std::string describe(std::string_view call, int code) const;

  struct Api; ///< Resolved entry points (defined in Driver.cpp, where cuda.h is visible).

private:
  bool load(std::string &error);
  bool contextFor(int device, void *&ctx, std::string &error);

  std::string library_;
  void *handle_ = nullptr;
  std::unique_ptr<Api> api_;
  std::once_flag once_;
  bool ok_ = false;
  std::string initError_;
  int version_ = 0;
  bool hasLaunchEx_ = false;
  bool hasParamInfo_ = false;
  std::mutex contextsMutex_;
  std::vector<void *> contexts_; ///< Retained primary contexts, by device ordinal.
};

/// Whether native CUDA runs are possible: the process-wide driver loads and device 0 exists.
/// `why` says what is missing otherwise, e.g. "libcuda.so.1 could not be loaded (...): no NVIDIA
/// driver on this machine".
bool available(std::string &why);
/// As available(why), for a given driver.
bool available(Driver &driver, std::string &why);

} // namespace ttinterp::cuda
