//===- FakeCuda.cpp - A stand-in libcuda: host memory, recorded launches ---===//
//
// Defined against cuda.h's own prototypes (the macros map cuMemAlloc to cuMemAlloc_v2 here as in
// ttinterp), so a signature that drifts from the header fails to compile. Built twice: the
// default exports everything ttinterp looks for; with TTFAKE_OLD_DRIVER it lacks the optional
// cuLaunchKernelEx and cuFuncGetParamInfo, like a pre-11.8 driver.
//
// Launches are only recorded, unless TTFAKE_RUN_KERNELS is set (FakeCuda.h): then the one kernel
// the fake knows, examples/vector_add's add_kernel, runs on the fake device memory, so the CLI's
// check --native has native results to set against the interpreter's.
//
//===----------------------------------------------------------------------===//
#include "FakeCuda.h"

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct FakeFunction {
  std::string name;
};
struct FakeModule {
  std::string image;
  std::vector<std::unique_ptr<FakeFunction>> functions; ///< Freed with the module.
};

struct State {
  std::mutex mutex;
  int initResult = CUDA_SUCCESS;
  int deviceCount = 1;
  size_t memoryLimit = size_t(1) << 30;
  int launchResult = CUDA_SUCCESS;
  int syncResult = CUDA_SUCCESS;
  int major = 9, minor = 0;
  bool paramSizesKnown = false;
  std::vector<size_t> paramSizes;
  std::map<CUdeviceptr, size_t> allocations;
  int modules = 0;
  int maxDynamicShared = -1;
  TtFakeLaunch last = {};
  /// What the next cuCtxSynchronize reports for an executed kernel's bad access.
  int pendingFault = CUDA_SUCCESS;
};

State &state() {
  static State s;
  return s;
}

int context = 0;

// The allocation holding [p, p + bytes), or end().
std::map<CUdeviceptr, size_t>::iterator findAllocation(State &s, CUdeviceptr p, size_t bytes) {
  auto it = s.allocations.upper_bound(p);
  if (it == s.allocations.begin())
    return s.allocations.end();
  --it;
  if (p - it->first > it->second || bytes > it->second - (p - it->first))
    return s.allocations.end();
  return it;
}

// Bytes of an ELF64 image, from its header: the section table is its last part.
size_t elfSize(const unsigned char *image) {
  uint64_t shoff, phoff;
  uint16_t phentsize, phnum, shentsize, shnum;
  std::memcpy(&phoff, image + 0x20, 8);
  std::memcpy(&shoff, image + 0x28, 8);
  std::memcpy(&phentsize, image + 0x36, 2);
  std::memcpy(&phnum, image + 0x38, 2);
  std::memcpy(&shentsize, image + 0x3A, 2);
  std::memcpy(&shnum, image + 0x3C, 2);
  return std::max<size_t>(shoff + size_t(shnum) * shentsize, phoff + size_t(phnum) * phentsize);
}

struct ErrorText {
  CUresult code;
  const char *name;
  const char *text;
};
/// The code as the int the C ABI passes: ttinterp asks the driver to name any code a call
/// returned, including ones outside CUresult's enumerators (DriverTest's 9999), and reading such
/// a value as the enum is what clang's UBSan reports (-fsanitize=enum); the bits are read instead.
int codeBits(const CUresult &code) {
  int bits;
  std::memcpy(&bits, &code, sizeof bits);
  return bits;
}

const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

CUresult record(const unsigned grid[3], const unsigned block[3], unsigned shared, void **params,
                bool ex) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  TtFakeLaunch &l = s.last;
  int launches = l.launches + 1;
  l = TtFakeLaunch{};
  l.launches = launches;
  l.usedEx = ex;
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = grid[i];
    l.block[i] = block[i];
    l.cluster[i] = 1;
  }
  l.shared = shared;
  if (s.paramSizesKnown) {
    l.numParams = int(std::min<size_t>(s.paramSizes.size(), 32));
    for (int i = 0; i < l.numParams; ++i)
      std::memcpy(l.params[i], params[i], std::min<size_t>(s.paramSizes[i], 16));
  }
  return CUresult(s.launchResult);
}

// With TTFAKE_RUN_KERNELS set, runs add_kernel(x, y, out, n): out[i] = x[i] + y[i] in f32 for
// i < n, as if the grid covered n; then TTFAKE_PERTURB="E:K" adds K to the bits of out[E] (a K-ulp
// error for a finite value, away from zero when K > 0), the stand-in for a GPU that rounds
// differently. Accesses outside every allocation store nothing and make the next
// cuCtxSynchronize report CUDA_ERROR_ILLEGAL_ADDRESS, as a GPU faults. Other kernels do nothing.
void execute(CUfunction fn, void **params) {
  if (!std::getenv("TTFAKE_RUN_KERNELS") ||
      reinterpret_cast<const FakeFunction *>(fn)->name != "add_kernel")
    return;
  CUdeviceptr x, y, out;
  int32_t n;
  std::memcpy(&x, params[0], sizeof x);
  std::memcpy(&y, params[1], sizeof y);
  std::memcpy(&out, params[2], sizeof out);
  std::memcpy(&n, params[3], sizeof n);
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  size_t bytes = size_t(std::max(n, 0)) * sizeof(float);
  for (CUdeviceptr p : {x, y, out})
    if (findAllocation(s, p, bytes) == s.allocations.end()) {
      s.pendingFault = CUDA_ERROR_ILLEGAL_ADDRESS;
      return;
    }
  const float *a = reinterpret_cast<const float *>(x), *b = reinterpret_cast<const float *>(y);
  float *c = reinterpret_cast<float *>(out);
  for (int32_t i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
  if (const char *perturb = std::getenv("TTFAKE_PERTURB")) {
    char *colon = nullptr;
    long element = std::strtol(perturb, &colon, 10);
    if (*colon == ':' && element >= 0 && element < n) {
      uint32_t bits;
      std::memcpy(&bits, &c[element], 4);
      bits += uint32_t(std::strtol(colon + 1, nullptr, 10));
      std::memcpy(&c[element], &bits, 4);
    }
  }
}

} // namespace

extern "C" {

// ---- Control interface (FakeCuda.h) ----

void ttfake_reset(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.initResult = CUDA_SUCCESS;
  s.deviceCount = 1;
  s.memoryLimit = size_t(1) << 30;
  s.launchResult = CUDA_SUCCESS;
  s.syncResult = CUDA_SUCCESS;
  s.major = 9;
  s.minor = 0;
  s.paramSizesKnown = false;
  s.paramSizes.clear();
  s.maxDynamicShared = -1;
  s.last = TtFakeLaunch{};
  s.pendingFault = CUDA_SUCCESS;
}
void ttfake_set_init_result(int r) { state().initResult = r; }
void ttfake_set_device_count(int n) { state().deviceCount = n; }
void ttfake_set_memory_limit(size_t bytes) { state().memoryLimit = bytes; }
void ttfake_set_launch_result(int r) { state().launchResult = r; }
void ttfake_set_sync_result(int r) { state().syncResult = r; }
void ttfake_set_capability(int major, int minor) {
  state().major = major;
  state().minor = minor;
}
void ttfake_set_param_sizes(const size_t *sizes, int count) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.paramSizesKnown = count >= 0;
  s.paramSizes.assign(sizes, sizes + std::max(count, 0));
}
void ttfake_last_launch(TtFakeLaunch *out) {
  std::lock_guard<std::mutex> lock(state().mutex);
  *out = state().last;
}
int ttfake_max_dynamic_shared(void) { return state().maxDynamicShared; }
size_t ttfake_live_allocations(void) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().allocations.size();
}
int ttfake_live_modules(void) { return state().modules; }

// ---- Driver API ----

CUresult CUDAAPI cuInit(unsigned int) { return CUresult(state().initResult); }

CUresult CUDAAPI cuDriverGetVersion(int *version) {
#ifdef TTFAKE_OLD_DRIVER
  *version = 11070;
#else
  *version = 12040;
#endif
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  *count = state().deviceCount;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal < 0 || ordinal >= state().deviceCount)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice) {
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = state().major;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = state().minor;
  else
    *value = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice) {
  std::strncpy(name, "ttinterp fake GPU", size_t(length));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  *ctx = reinterpret_cast<CUcontext>(&context);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }

CUresult CUDAAPI cuCtxSynchronize(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  int fault = s.pendingFault;
  s.pendingFault = CUDA_SUCCESS;
  return CUresult(fault != CUDA_SUCCESS ? fault : s.syncResult);
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (bytes > s.memoryLimit)
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  s.allocations[*ptr] = bytes;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr ptr) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.allocations.find(ptr);
  if (it == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void *>(ptr));
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (findAllocation(s, dst, bytes) == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (findAllocation(s, src, bytes) == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (findAllocation(s, dst, count) == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void *>(dst), value, count);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr ptr) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = findAllocation(s, ptr, 1);
  if (it == s.allocations.end())
    return CUDA_ERROR_NOT_FOUND;
  *base = it->first;
  *size = it->second;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (attribute != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL ||
      findAllocation(s, ptr, 1) == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  *static_cast<int *>(data) = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  State &s = state();
  const unsigned char *bytes = static_cast<const unsigned char *>(image);
  auto *m = new FakeModule();
  const unsigned char elfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (std::memcmp(bytes, elfMagic, 4) == 0) {
    // A cubin for sm_90 runs on nothing else.
    if (s.major != 9 || s.minor != 0) {
      delete m;
      return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    m->image.assign(reinterpret_cast<const char *>(bytes), elfSize(bytes));
  } else {
    m->image = static_cast<const char *>(image);
  }
  ++s.modules;
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **values) {
  const char *text = static_cast<const char *>(image);
  if (std::strstr(text, "ttfake_bad_ptx")) {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER) {
        size_t size = 0;
        for (unsigned j = 0; j < numOptions; ++j)
          if (options[j] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            size = reinterpret_cast<uintptr_t>(values[j]);
        std::strncpy(static_cast<char *>(values[i]),
                     "ptxas application ptx input, line 3; error   : Unknown symbol "
                     "'ttfake_bad_ptx'\nptxas fatal   : Ptx assembly aborted due to errors\n",
                     size);
      }
    return CUDA_ERROR_INVALID_PTX;
  }
  return cuModuleLoadData(module, image);
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name) {
  auto *m = reinterpret_cast<FakeModule *>(module);
  // The name followed by NUL (a cubin's string table) or '(' (a PTX .entry).
  for (char end : {'\0', '('}) {
    std::string key = std::string(name) + end;
    if (m->image.find(key) != std::string::npos) {
      m->functions.push_back(std::make_unique<FakeFunction>(FakeFunction{name}));
      *fn = reinterpret_cast<CUfunction>(m->functions.back().get());
      return CUDA_SUCCESS;
    }
  }
  return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  delete reinterpret_cast<FakeModule *>(module);
  --state().modules;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute attribute, int value) {
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    state().maxDynamicShared = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,
                                unsigned int bx, unsigned int by, unsigned int bz,
                                unsigned int shared, CUstream, void **params, void **) {
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  CUresult r = record(grid, block, shared, params, false);
  if (r == CUDA_SUCCESS)
    execute(fn, params);
  return r;
}

#ifndef TTFAKE_OLD_DRIVER
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction fn, void **params,
                                  void **) {
  unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  CUresult r = record(grid, block, config->sharedMemBytes, params, true);
  if (r == CUDA_SUCCESS)
    execute(fn, params);
  std::lock_guard<std::mutex> lock(state().mutex);
  TtFakeLaunch &l = state().last;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute &a = config->attrs[i];
    if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      l.cluster[0] = a.value.clusterDim.x;
      l.cluster[1] = a.value.clusterDim.y;
      l.cluster[2] = a.value.clusterDim.z;
    } else if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE) {
      l.clusterSpread =
          a.value.clusterSchedulingPolicyPreference == CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
    } else if (a.id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
      l.cooperative = a.value.cooperative;
    } else if (a.id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) {
      l.pdl = a.value.programmaticStreamSerializationAllowed;
    }
  }
  return r;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction, size_t index, size_t *offset, size_t *size) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.paramSizesKnown)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (index >= s.paramSizes.size())
    return CUDA_ERROR_INVALID_VALUE;
  size_t at = 0;
  for (size_t i = 0; i <= index; ++i) {
    at = (at + s.paramSizes[i] - 1) / s.paramSizes[i] * s.paramSizes[i];
    if (i < index)
      at += s.paramSizes[i];
  }
  *offset = at;
  if (size)
    *size = s.paramSizes[index];
  return CUDA_SUCCESS;
}
#endif

CUresult CUDAAPI cuGetErrorName(CUresult code, const char **name) {
  for (const ErrorText &e : kErrors)
    if (e.code == codeBits(code)) {
      *name = e.name;
      return CUDA_SUCCESS;
    }
  *name = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult code, const char **text) {
  for (const ErrorText &e : kErrors)
    if (e.code == codeBits(code)) {
      *text = e.text;
      return CUDA_SUCCESS;
    }
  *text = nullptr;
  return CUDA_ERROR_INVALID_VALUE;
}

} // extern "C"
