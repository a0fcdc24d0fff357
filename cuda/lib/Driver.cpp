//===- Driver.cpp - Loading libcuda at run time and wrapping its calls ----===//
//
// cuda.h is used for types, enums and the macros that map API names to their versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2); no function of it is ever referenced at link time, only through
// pointers that dlsym returns.
//
//===----------------------------------------------------------------------===//
#include "ttinterp/cuda/Driver.h"

#include <fmt/format.h>

#include <cstdlib>
#include <dlfcn.h>

#if defined(TTINTERP_HAVE_CUDA_H) && __has_include(<cuda.h>)
#include <cuda.h>
#define TTINTERP_CUDA_ENABLED 1
#else
#define TTINTERP_CUDA_ENABLED 0
#endif

namespace ttinterp::cuda {

#if !TTINTERP_CUDA_ENABLED
namespace {
constexpr const char *kNoCudaSupport =
    "ttinterp was built without CUDA support (cuda.h was not found at build time)";
} // namespace
#endif

std::string formatDriverError(std::string_view call, int code, const char *name,
                              const char *description) {
  if (!name || !*name)
    return fmt::format("{}: CUDA error {}", call, code);
  if (!description || !*description)
    return fmt::format("{}: {}", call, name);
  return fmt::format("{}: {} ({})", call, name, description);
}

bool builtWithCudaHeaders() { return TTINTERP_CUDA_ENABLED; }

Driver &Driver::instance() {
  // Leaked on purpose: unloading the driver at exit would pull it from under device buffers
  // held by other static objects.
  // TTINTERP_LIBCUDA is a testing hook: it points the process-wide driver at a stand-in library
  // (or at nothing, to test the no-driver path) without touching the real driver's soname.
  static Driver *driver = [] {
    const char *library = std::getenv("TTINTERP_LIBCUDA");
    return new Driver(library && *library ? library : "libcuda.so.1");
  }();
  return *driver;
}

Driver::Driver(std::string library) : library_(std::move(library)) {}

bool Driver::initialize(std::string &error) {
  std::call_once(once_, [&] { ok_ = load(initError_); });
  if (!ok_)
    error = initError_;
  return ok_;
}

bool available(Driver &driver, std::string &why) {
  int count = 0;
  return driver.initialize(why) && driver.deviceCount(count, why);
}

bool available(std::string &why) { return available(Driver::instance(), why); }

#if TTINTERP_CUDA_ENABLED

#define TTI_STRINGIFY_(x) #x
// Expands its argument first, so the versioned name cuda.h maps a call to is what gets looked up.
#define TTI_STRINGIFY(x) TTI_STRINGIFY_(x)

// Entry points every run needs; a driver without one of them is rejected at load.
#define TTI_REQUIRED_ENTRIES(X)                                                                    \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceGetName)                                                                               \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemsetD8)                                                                                    \
  X(cuMemGetAddressRange)                                                                          \
  X(cuPointerGetAttribute)                                                                         \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleLoadDataEx)                                                                            \
  X(cuModuleGetFunction)                                                                           \
  X(cuModuleUnload)                                                                                \
  X(cuFuncSetAttribute)                                                                            \
  X(cuLaunchKernel)                                                                                \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)

// Newer entry points that only some launches or checks need.
#if CUDA_VERSION >= 11080
#define TTI_HAVE_LAUNCH_EX 1
#define TTI_OPTIONAL_LAUNCH_EX(X) X(cuLaunchKernelEx)
#else
#define TTI_HAVE_LAUNCH_EX 0
#define TTI_OPTIONAL_LAUNCH_EX(X)
#endif
#if CUDA_VERSION >= 12040
#define TTI_HAVE_PARAM_INFO 1
#define TTI_OPTIONAL_PARAM_INFO(X) X(cuFuncGetParamInfo)
#else
#define TTI_HAVE_PARAM_INFO 0
#define TTI_OPTIONAL_PARAM_INFO(X)
#endif
#define TTI_OPTIONAL_ENTRIES(X) TTI_OPTIONAL_LAUNCH_EX(X) TTI_OPTIONAL_PARAM_INFO(X)

struct Driver::Api {
#define TTI_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TTI_REQUIRED_ENTRIES(TTI_DECLARE)
  TTI_OPTIONAL_ENTRIES(TTI_DECLARE)
#undef TTI_DECLARE
};

namespace {

// Names and texts for codes the driver itself cannot name: a stub libcuda answers every call,
// cuGetErrorName included, with CUDA_ERROR_STUB_LIBRARY.
struct KnownError {
  int code;
  const char *name;
  const char *description;
};
constexpr KnownError kKnownErrors[] = {
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

// Errors after which the context is corrupt: the driver fails every later call in the process.
bool isSticky(int code) {
  switch (code) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
    return true;
  default:
    return false;
  }
}

std::string dims(const std::array<uint32_t, 3> &d) {
  return fmt::format("({}, {}, {})", d[0], d[1], d[2]);
}

// One line: the JIT's log lines joined.
std::string oneLine(const char *log) {
  std::string out;
  for (const char *p = log; *p; ++p) {
    if (*p == '\n') {
      if (!out.empty() && p[1] != '\0')
        out += " | ";
    } else if (*p != '\r') {
      out += *p;
    }
  }
  return out;
}

} // namespace

bool Driver::load(std::string &error) {
  dlerror();
  handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char *why = dlerror();
    error = fmt::format("{} could not be loaded ({}): no NVIDIA driver on this machine", library_,
                        why ? why : "unknown reason");
    return false;
  }
  api_ = std::make_unique<Api>();
  Api &api = *api_;
  const char *missing = nullptr;
#define TTI_RESOLVE_REQUIRED(fn)                                                                   \
  if (!missing) {                                                                                  \
    api.fn = reinterpret_cast<decltype(api.fn)>(dlsym(handle_, TTI_STRINGIFY(fn)));                \
    if (!api.fn)                                                                                   \
      missing = TTI_STRINGIFY(fn);                                                                 \
  }
#define TTI_RESOLVE_OPTIONAL(fn)                                                                   \
  api.fn = reinterpret_cast<decltype(api.fn)>(dlsym(handle_, TTI_STRINGIFY(fn)));
  TTI_REQUIRED_ENTRIES(TTI_RESOLVE_REQUIRED)
  TTI_OPTIONAL_ENTRIES(TTI_RESOLVE_OPTIONAL)
#undef TTI_RESOLVE_REQUIRED
#undef TTI_RESOLVE_OPTIONAL
  if (missing) {
    error = fmt::format("{} lacks {} (not a CUDA driver, or one older than the CUDA {}.{} "
                        "headers ttinterp was built with)",
                        library_, missing, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return false;
  }
#if TTI_HAVE_LAUNCH_EX
  hasLaunchEx_ = api.cuLaunchKernelEx != nullptr;
#endif
#if TTI_HAVE_PARAM_INFO
  hasParamInfo_ = api.cuFuncGetParamInfo != nullptr;
#endif
  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    error = describe("cuInit", r);
    if (r == CUDA_ERROR_NO_DEVICE)
      error += ": no CUDA device on this machine";
    return false;
  }
  int version = 0;
  r = api.cuDriverGetVersion(&version);
  if (r != CUDA_SUCCESS) {
    error = describe("cuDriverGetVersion", r);
    return false;
  }
  version_ = version;
  return true;
}

std::string Driver::describe(std::string_view call, int code) const {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api_ && api_->cuGetErrorName) {
    if (api_->cuGetErrorName(static_cast<CUresult>(code), &name) != CUDA_SUCCESS)
      name = nullptr;
    if (name && api_->cuGetErrorString(static_cast<CUresult>(code), &text) != CUDA_SUCCESS)
      text = nullptr;
  }
  if (!name) {
    for (const KnownError &known : kKnownErrors)
      if (known.code == code) {
        name = known.name;
        text = known.description;
      }
  }
  std::string message = formatDriverError(call, code, name, text);
  if (isSticky(code))
    message += "; the CUDA context is now unusable: every later CUDA call in this process fails";
  return message;
}

bool Driver::deviceCount(int &count, std::string &error) {
  if (!initialize(error))
    return false;
  count = 0;
  CUresult r = api_->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    error = describe("cuDeviceGetCount", r);
    return false;
  }
  if (count <= 0) {
    error = fmt::format("no CUDA device on this machine ({} loaded, driver version {}.{})",
                        library_, version_ / 1000, version_ % 1000 / 10);
    return false;
  }
  return true;
}

bool Driver::contextFor(int device, void *&ctx, std::string &error) {
  if (!initialize(error))
    return false;
  std::lock_guard<std::mutex> lock(contextsMutex_);
  if (device >= 0 && size_t(device) < contexts_.size() && contexts_[device]) {
    ctx = contexts_[device];
    return true;
  }
  int count = 0;
  CUresult r = api_->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    error = describe("cuDeviceGetCount", r);
    return false;
  }
  if (device < 0 || device >= count) {
    error = fmt::format("cuda:{} does not exist (this machine has {} CUDA device{})", device, count,
                        count == 1 ? "" : "s");
    return false;
  }
  CUdevice dev = 0;
  r = api_->cuDeviceGet(&dev, device);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuDeviceGet({})", device), r);
    return false;
  }
  CUcontext context = nullptr;
  r = api_->cuDevicePrimaryCtxRetain(&context, dev);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuDevicePrimaryCtxRetain(cuda:{})", device), r);
    return false;
  }
  if (contexts_.size() <= size_t(device))
    contexts_.resize(device + 1, nullptr);
  contexts_[device] = context;
  ctx = context;
  return true;
}

bool Driver::bind(int device, std::string &error) {
  void *ctx = nullptr;
  if (!contextFor(device, ctx, error))
    return false;
  CUresult r = api_->cuCtxSetCurrent(static_cast<CUcontext>(ctx));
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuCtxSetCurrent(cuda:{})", device), r);
    return false;
  }
  return true;
}

bool Driver::computeCapability(int device, int &major, int &minor, std::string &error) {
  if (!bind(device, error))
    return false;
  CUdevice dev = 0;
  CUresult r = api_->cuDeviceGet(&dev, device);
  if (r == CUDA_SUCCESS)
    r = api_->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (r == CUDA_SUCCESS)
    r = api_->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuDeviceGetAttribute(cuda:{}, compute capability)", device), r);
    return false;
  }
  return true;
}

bool Driver::deviceName(int device, std::string &name, std::string &error) {
  if (!bind(device, error))
    return false;
  CUdevice dev = 0;
  char buffer[256] = {};
  CUresult r = api_->cuDeviceGet(&dev, device);
  if (r == CUDA_SUCCESS)
    r = api_->cuDeviceGetName(buffer, sizeof buffer - 1, dev);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuDeviceGetName(cuda:{})", device), r);
    return false;
  }
  name = buffer;
  return true;
}

bool Driver::memAlloc(int device, size_t bytes, DevicePtr &out, std::string &error) {
  if (!bind(device, error))
    return false;
  CUdeviceptr p = 0;
  CUresult r = api_->cuMemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuMemAlloc({} bytes)", bytes), r);
    return false;
  }
  out = p;
  return true;
}

bool Driver::memFree(int device, DevicePtr ptr, std::string &error) {
  if (!bind(device, error))
    return false;
  CUresult r = api_->cuMemFree(static_cast<CUdeviceptr>(ptr));
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuMemFree(0x{:x})", ptr), r);
    return false;
  }
  return true;
}

bool Driver::copyToDevice(int device, DevicePtr dst, const void *src, size_t bytes,
                          std::string &error) {
  if (!bind(device, error))
    return false;
  CUresult r = api_->cuMemcpyHtoD(static_cast<CUdeviceptr>(dst), src, bytes);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuMemcpyHtoD(0x{:x}, {} bytes)", dst, bytes), r);
    return false;
  }
  return true;
}

bool Driver::copyToHost(int device, void *dst, DevicePtr src, size_t bytes, std::string &error) {
  if (!bind(device, error))
    return false;
  CUresult r = api_->cuMemcpyDtoH(dst, static_cast<CUdeviceptr>(src), bytes);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuMemcpyDtoH(0x{:x}, {} bytes)", src, bytes), r);
    return false;
  }
  return true;
}

bool Driver::memsetD8(int device, DevicePtr dst, uint8_t value, size_t bytes, std::string &error) {
  if (!bind(device, error))
    return false;
  CUresult r = api_->cuMemsetD8(static_cast<CUdeviceptr>(dst), value, bytes);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuMemsetD8(0x{:x}, {}, {} bytes)", dst, value, bytes), r);
    return false;
  }
  return true;
}

bool Driver::addressRange(int device, DevicePtr ptr, DevicePtr &base, size_t &size,
                          std::string &error) {
  if (!bind(device, error))
    return false;
  CUdeviceptr b = 0;
  size_t s = 0;
  CUresult r = api_->cuMemGetAddressRange(&b, &s, static_cast<CUdeviceptr>(ptr));
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuMemGetAddressRange(0x{:x})", ptr), r);
    return false;
  }
  base = b;
  size = s;
  return true;
}

bool Driver::pointerDevice(DevicePtr ptr, int &device, std::string &error) {
  if (!initialize(error))
    return false;
  int ordinal = -1;
  CUresult r = api_->cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                           static_cast<CUdeviceptr>(ptr));
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuPointerGetAttribute(0x{:x}, device ordinal)", ptr), r);
    return false;
  }
  device = ordinal;
  return true;
}

bool Driver::loadModule(int device, const void *image, bool isPtx, ModuleHandle &out,
                        std::string &error) {
  if (!bind(device, error))
    return false;
  CUmodule module = nullptr;
  if (!isPtx) {
    CUresult r = api_->cuModuleLoadData(&module, image);
    if (r != CUDA_SUCCESS) {
      error = describe("cuModuleLoadData", r);
      return false;
    }
    out = module;
    return true;
  }
  // The JIT explains a rejected PTX only through its log buffers.
  constexpr size_t kLogBytes = 16384;
  std::vector<char> errorLog(kLogBytes, '\0'), infoLog(kLogBytes, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(uintptr_t(kLogBytes - 1)),
                    infoLog.data(), reinterpret_cast<void *>(uintptr_t(kLogBytes - 1))};
  CUresult r = api_->cuModuleLoadDataEx(&module, image, 4, options, values);
  if (r != CUDA_SUCCESS) {
    error = describe("cuModuleLoadDataEx (PTX JIT)", r);
    errorLog.back() = '\0';
    std::string log = oneLine(errorLog.data());
    if (!log.empty())
      error += "; JIT log: " + log;
    return false;
  }
  out = module;
  return true;
}

bool Driver::getFunction(ModuleHandle module, const std::string &name, FunctionHandle &out,
                         std::string &error) {
  if (!initialize(error))
    return false;
  CUfunction fn = nullptr;
  CUresult r = api_->cuModuleGetFunction(&fn, static_cast<CUmodule>(module), name.c_str());
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuModuleGetFunction(\"{}\")", name), r);
    return false;
  }
  out = fn;
  return true;
}

bool Driver::unloadModule(int device, ModuleHandle module, std::string &error) {
  if (!bind(device, error))
    return false;
  CUresult r = api_->cuModuleUnload(static_cast<CUmodule>(module));
  if (r != CUDA_SUCCESS) {
    error = describe("cuModuleUnload", r);
    return false;
  }
  return true;
}

bool Driver::setMaxDynamicShared(FunctionHandle fn, uint32_t bytes, std::string &error) {
  if (!initialize(error))
    return false;
  CUresult r = api_->cuFuncSetAttribute(static_cast<CUfunction>(fn),
                                        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        static_cast<int>(bytes));
  if (r != CUDA_SUCCESS) {
    error = describe(
        fmt::format("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, {} bytes)", bytes), r);
    return false;
  }
  return true;
}

bool Driver::paramLayout(FunctionHandle fn, std::vector<DriverParam> &out, std::string &error) {
  error.clear();
  out.clear();
  if (!initialize(error))
    return false;
#if TTI_HAVE_PARAM_INFO
  if (!api_->cuFuncGetParamInfo)
    return false;
  // Far above any real kernel; only guards against a driver that never says "out of range".
  constexpr size_t kMaxParams = 4096;
  for (size_t i = 0; i < kMaxParams; ++i) {
    size_t offset = 0, size = 0;
    CUresult r = api_->cuFuncGetParamInfo(static_cast<CUfunction>(fn), i, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE)
      return true; // One past the last parameter.
    if (r != CUDA_SUCCESS) {
      out.clear();
      return false; // The driver cannot tell; not an error of the kernel.
    }
    out.push_back({offset, size});
  }
#endif
  out.clear();
  return false;
}

bool Driver::launch(int device, FunctionHandle fn, const LaunchConfig &config, void **params,
                    std::string &error) {
  if (!bind(device, error))
    return false;
  bool clustered = config.cluster != std::array<uint32_t, 3>{1, 1, 1};
  bool needsEx = clustered || config.cooperative || config.programmaticPdl;
  std::string what = fmt::format("grid {}, block {}, {} bytes shared", dims(config.grid),
                                 dims(config.block), config.sharedBytes);
#if TTI_HAVE_LAUNCH_EX
  if (api_->cuLaunchKernelEx) {
    CUlaunchAttribute attrs[4] = {};
    unsigned count = 0;
    if (clustered) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[count].value.clusterDim.x = config.cluster[0];
      attrs[count].value.clusterDim.y = config.cluster[1];
      attrs[count].value.clusterDim.z = config.cluster[2];
      ++count;
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
      attrs[count].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
      ++count;
    }
    if (config.cooperative) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
      attrs[count].value.cooperative = 1;
      ++count;
    }
    if (config.programmaticPdl) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attrs[count].value.programmaticStreamSerializationAllowed = 1;
      ++count;
    }
    CUlaunchConfig launch = {};
    launch.gridDimX = config.grid[0];
    launch.gridDimY = config.grid[1];
    launch.gridDimZ = config.grid[2];
    launch.blockDimX = config.block[0];
    launch.blockDimY = config.block[1];
    launch.blockDimZ = config.block[2];
    launch.sharedMemBytes = config.sharedBytes;
    launch.hStream = nullptr;
    launch.attrs = count ? attrs : nullptr;
    launch.numAttrs = count;
    CUresult r = api_->cuLaunchKernelEx(&launch, static_cast<CUfunction>(fn), params, nullptr);
    if (r != CUDA_SUCCESS) {
      error = describe(fmt::format("cuLaunchKernelEx({})", what), r);
      return false;
    }
    return true;
  }
#endif
  if (needsEx) {
    error = fmt::format("this launch ({}{}{}{}) needs cuLaunchKernelEx, which {} (driver {}.{}) "
                        "lacks",
                        what, clustered ? ", cluster " + dims(config.cluster) : "",
                        config.cooperative ? ", cooperative" : "",
                        config.programmaticPdl ? ", programmatic dependent launch" : "", library_,
                        version_ / 1000, version_ % 1000 / 10);
    return false;
  }
  CUresult r = api_->cuLaunchKernel(static_cast<CUfunction>(fn), config.grid[0], config.grid[1],
                                    config.grid[2], config.block[0], config.block[1],
                                    config.block[2], config.sharedBytes, nullptr, params, nullptr);
  if (r != CUDA_SUCCESS) {
    error = describe(fmt::format("cuLaunchKernel({})", what), r);
    return false;
  }
  return true;
}

bool Driver::synchronize(int device, std::string &error) {
  if (!bind(device, error))
    return false;
  CUresult r = api_->cuCtxSynchronize();
  if (r != CUDA_SUCCESS) {
    error = describe("cuCtxSynchronize", r);
    return false;
  }
  return true;
}

#else // !TTINTERP_CUDA_ENABLED

// Without cuda.h every call fails the way initialize() does, with kNoCudaSupport.
struct Driver::Api {};

bool Driver::load(std::string &error) {
  error = kNoCudaSupport;
  return false;
}

std::string Driver::describe(std::string_view call, int code) const {
  return formatDriverError(call, code, nullptr, nullptr);
}

bool Driver::deviceCount(int &count, std::string &error) {
  count = 0;
  return initialize(error);
}
bool Driver::contextFor(int, void *&, std::string &error) { return initialize(error); }
bool Driver::bind(int, std::string &error) { return initialize(error); }
bool Driver::computeCapability(int, int &, int &, std::string &error) { return initialize(error); }
bool Driver::deviceName(int, std::string &, std::string &error) { return initialize(error); }
bool Driver::memAlloc(int, size_t, DevicePtr &, std::string &error) { return initialize(error); }
bool Driver::memFree(int, DevicePtr, std::string &error) { return initialize(error); }
bool Driver::copyToDevice(int, DevicePtr, const void *, size_t, std::string &error) {
  return initialize(error);
}
bool Driver::copyToHost(int, void *, DevicePtr, size_t, std::string &error) {
  return initialize(error);
}
bool Driver::memsetD8(int, DevicePtr, uint8_t, size_t, std::string &error) {
  return initialize(error);
}
bool Driver::addressRange(int, DevicePtr, DevicePtr &, size_t &, std::string &error) {
  return initialize(error);
}
bool Driver::pointerDevice(DevicePtr, int &, std::string &error) { return initialize(error); }
bool Driver::loadModule(int, const void *, bool, ModuleHandle &, std::string &error) {
  return initialize(error);
}
bool Driver::getFunction(ModuleHandle, const std::string &, FunctionHandle &, std::string &error) {
  return initialize(error);
}
bool Driver::unloadModule(int, ModuleHandle, std::string &error) { return initialize(error); }
bool Driver::setMaxDynamicShared(FunctionHandle, uint32_t, std::string &error) {
  return initialize(error);
}
bool Driver::paramLayout(FunctionHandle, std::vector<DriverParam> &out, std::string &error) {
  out.clear();
  return initialize(error);
}
bool Driver::launch(int, FunctionHandle, const LaunchConfig &, void **, std::string &error) {
  return initialize(error);
}
bool Driver::synchronize(int, std::string &error) { return initialize(error); }

#endif // TTINTERP_CUDA_ENABLED

// Here, where Api is complete.
Driver::~Driver() {
  if (handle_)
    dlclose(handle_);
}

} // namespace ttinterp::cuda
