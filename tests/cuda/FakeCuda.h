//===- FakeCuda.h - Control interface of the stand-in libcuda used by the tests -*- C++ -*-===//
//
// FakeCuda.cpp builds a shared library that exports the Driver API entry points ttinterp
// resolves, with host memory standing in for device memory and launches only recorded. Tests
// load it through a Driver pointed at its path and steer it with these functions (looked up with
// dlsym on the same library), so every path of the loader and of NativeKernel runs without a GPU.
//
// Two environment variables, read at each launch, reach the fake inside a ttinterp child process:
// TTFAKE_RUN_KERNELS (any value) makes a launch of add_kernel (examples/vector_add: x, y, out, n)
// store out[i] = x[i] + y[i] for i < n, or, when those ranges leave the allocations, store nothing
// and fail the next cuCtxSynchronize with CUDA_ERROR_ILLEGAL_ADDRESS; TTFAKE_PERTURB="E:K" then
// adds K to the bit pattern of out[E] (K ulp for a finite value).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

extern "C" {

/// The last launch, as the fake driver received it.
struct TtFakeLaunch {
  int launches; ///< Launches since the last reset.
  int usedEx;   ///< 1 when it came through cuLaunchKernelEx.
  unsigned grid[3];
  unsigned block[3];
  unsigned shared;
  unsigned cluster[3]; ///< (1, 1, 1) without a cluster attribute.
  int clusterSpread;   ///< The spread scheduling policy attribute was set.
  int cooperative;
  int pdl;
  int numParams; ///< As configured with ttfake_set_param_sizes; 0 when not configured.
  unsigned char params[32][16];
};

typedef void (*TtFakeReset)(void);
typedef void (*TtFakeSetInt)(int);
typedef void (*TtFakeSetSize)(size_t);
typedef void (*TtFakeSetParamSizes)(const size_t *sizes, int count);
typedef void (*TtFakeLastLaunch)(struct TtFakeLaunch *out);
typedef int (*TtFakeGetInt)(void);
typedef size_t (*TtFakeGetSize)(void);
typedef void (*TtFakeSetCapability)(int major, int minor);
}
