//===- DriverTest.cpp - The driver loader, device memory and native launches without a GPU ---===//
//
// Runs on any machine: loader failures against missing or wrong libraries, and everything else
// against the stand-in libcuda (FakeCuda.cpp), which keeps "device" memory on the host and
// records launches instead of running them.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "ttinterp/cuda/DeviceMemory.h"
#include "ttinterp/cuda/Driver.h"
#include "ttinterp/cuda/NativeKernel.h"
#include "ttinterp/memory/Session.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <dlfcn.h>
#include <numeric>
#include <thread>

using namespace ttinterp;
using namespace ttinterp::cuda;
using namespace ttinterp::cuda::test;

TEST_CASE("driver: error messages name the call, the error and its text") {
  CHECK(formatDriverError("cuMemAlloc(1048576 bytes)", 2, "CUDA_ERROR_OUT_OF_MEMORY",
                          "out of memory") ==
        "cuMemAlloc(1048576 bytes): CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  CHECK(formatDriverError("cuFoo", 12345, nullptr, nullptr) == "cuFoo: CUDA error 12345");
  CHECK(formatDriverError("cuFoo", 999, "CUDA_ERROR_UNKNOWN", nullptr) ==
        "cuFoo: CUDA_ERROR_UNKNOWN");
}

TEST_CASE("driver: a library that cannot be loaded") {
  const char *path = "/nonexistent/libcuda.so.1";
  Driver driver(path);
  std::string error;
  CHECK_FALSE(driver.initialize(error));
  if (!builtWithCudaHeaders()) {
    CHECK(error == "ttinterp was built without CUDA support (cuda.h was not found at build time)");
    return;
  }
  CHECK(error == fmt::format("{} could not be loaded ({}: cannot open shared object file: No such "
                             "file or directory): no NVIDIA driver on this machine",
                             path, path));
  // The outcome is remembered, not retried; every call reports it.
  std::string again;
  CHECK_FALSE(driver.initialize(again));
  CHECK(again == error);
  std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(16, again, 0, driver);
  CHECK_FALSE(buffer);
  CHECK(again == error);
  CHECK_FALSE(available(driver, again));
  CHECK(again == error);
}

TEST_CASE("driver: the process-wide libcuda.so.1, where there is no driver") {
  dlerror();
  void *probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (probe) {
    dlclose(probe);
    MESSAGE("libcuda.so.1 is installed here; the absent-driver message is not checked");
    return;
  }
  std::string why = dlerror();
  std::string error;
  CHECK_FALSE(available(error));
  if (builtWithCudaHeaders())
    CHECK(error ==
          "libcuda.so.1 could not be loaded (" + why + "): no NVIDIA driver on this machine");
  else
    CHECK(error == "ttinterp was built without CUDA support (cuda.h was not found at build time)");
}

TEST_CASE("driver: a library that is not a CUDA driver") {
  if (!builtWithCudaHeaders())
    return;
  Driver driver("libm.so.6");
  std::string error;
  CHECK_FALSE(driver.initialize(error));
  CHECK(error.rfind("libm.so.6 lacks cuInit (not a CUDA driver, or one older than the CUDA ", 0) ==
        0);
}

#ifdef TTINTERP_FAKE_LIBCUDA

namespace {

const char *const kFake = TTINTERP_FAKE_LIBCUDA;

// vector_add's cubin with its metadata, modified by `edit`.
std::unique_ptr<NativeKernel> loadVectorAdd(Driver &driver, std::string &error,
                                            void (*edit)(KernelMetadata &) = nullptr,
                                            const char *binary = "vector_add/vector_add.cubin") {
  KernelMetadata meta;
  REQUIRE(loadKernelMetadata(examplePath("vector_add/vector_add.json"), meta, error));
  if (edit)
    edit(meta);
  std::string text = readText(examplePath(binary));
  return NativeKernel::create(std::vector<char>(text.begin(), text.end()), binary, meta, error, 0,
                              driver);
}

uint64_t paramValue(const TtFakeLaunch &l, int i, size_t bytes) {
  uint64_t v = 0;
  std::memcpy(&v, l.params[i], bytes);
  return v;
}

} // namespace

TEST_CASE("fake driver: no device") {
  Fake fake;
  fake.setInitResult(100); // CUDA_ERROR_NO_DEVICE
  Driver driver(kFake);
  std::string error;
  CHECK_FALSE(available(driver, error));
  CHECK(error == "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected): no CUDA "
                 "device on this machine");
}

TEST_CASE("fake driver: a driver with zero devices") {
  Fake fake;
  fake.setDeviceCount(0);
  Driver driver(kFake);
  std::string error;
  CHECK_FALSE(available(driver, error));
  CHECK(error ==
        fmt::format("no CUDA device on this machine ({} loaded, driver version 12.4)", kFake));
  CHECK(driver.version() == 12040);
}

TEST_CASE("fake driver: device facts and a device that does not exist") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  REQUIRE(available(driver, error));
  CHECK(driver.hasLaunchKernelEx());
  CHECK(driver.hasParamInfo());
  std::string name;
  REQUIRE(driver.deviceName(0, name, error));
  CHECK(name == "ttinterp fake GPU");
  int major = 0, minor = 0;
  REQUIRE(driver.computeCapability(0, major, minor, error));
  CHECK(major == 9);
  CHECK(minor == 0);
  CHECK_FALSE(DeviceBuffer::allocate(16, error, 3, driver));
  CHECK(error == "cuda:3 does not exist (this machine has 1 CUDA device)");
}

TEST_CASE("fake driver: out of memory is reported with the call and the size") {
  Fake fake;
  fake.setMemoryLimit(1000);
  Driver driver(kFake);
  std::string error;
  CHECK_FALSE(DeviceBuffer::allocate(1048576, error, 0, driver));
  CHECK(error == "cuMemAlloc(1048576 bytes): CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  CHECK(fake.liveAllocations() == 0);
}

TEST_CASE("fake driver: device buffers upload, download, fill and free") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  {
    std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(100, error, 0, driver);
    REQUIRE_MESSAGE(buffer, error);
    CHECK(buffer->size() == 100);
    CHECK(buffer->address() != 0);
    CHECK(fake.liveAllocations() == 1);
    std::vector<uint8_t> in(100), out(100, 0);
    std::iota(in.begin(), in.end(), uint8_t(1));
    REQUIRE(buffer->upload(in.data(), in.size(), error));
    REQUIRE(buffer->download(out.data(), out.size(), error));
    CHECK(out == in);
    uint8_t four[4];
    REQUIRE(buffer->download(four, 4, error, 96));
    CHECK(four[0] == 97);
    CHECK(four[3] == 100);
    CHECK_FALSE(buffer->upload(in.data(), 8, error, 96));
    CHECK(error == "upload of 8 bytes at offset 96 does not fit the 100-byte device buffer");
    REQUIRE(buffer->fill(0xAB, error));
    REQUIRE(buffer->download(out.data(), out.size(), error));
    CHECK(out == std::vector<uint8_t>(100, 0xAB));

    DeviceBuffer moved = std::move(*buffer);
    CHECK(buffer->address() == 0);
    CHECK(moved.size() == 100);
    CHECK(fake.liveAllocations() == 1);

    std::optional<DeviceBuffer> empty = DeviceBuffer::allocate(0, error, 0, driver);
    REQUIRE(empty);
    CHECK(empty->address() == 0);
    CHECK(fake.liveAllocations() == 1);
  }
  CHECK(fake.liveAllocations() == 0);
}

TEST_CASE("fake driver: first use from several threads at once") {
  Fake fake;
  Driver driver(kFake);
  constexpr int kThreads = 8;
  std::vector<std::string> errors(kThreads);
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      // Each thread's first call races the others into initialize() and the context setup.
      std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(64, errors[t], 0, driver);
      if (!buffer)
        return;
      std::vector<uint8_t> in(64, uint8_t(t)), out(64);
      ok[t] = buffer->upload(in.data(), 64, errors[t]) &&
              buffer->download(out.data(), 64, errors[t]) && out == in;
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    CAPTURE(errors[t]);
    CHECK(ok[t] == 1);
  }
  CHECK(fake.liveAllocations() == 0);
}

TEST_CASE("fake driver: device memory as caller memory, and allocation ranges") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(100, error, 0, driver);
  REQUIRE(buffer);
  DeviceMemory memory(0, driver);
  CHECK(memory.name() == "cuda:0");

  std::optional<ByteRange> range = memory.allocationRange(buffer->address() + 40, error);
  REQUIRE_MESSAGE(range, error);
  CHECK(range->lo == buffer->address());
  CHECK(range->hi == buffer->address() + 100);

  int local = 0;
  uint64_t host = reinterpret_cast<uint64_t>(&local);
  CHECK_FALSE(memory.allocationRange(host, error));
  CHECK(error == fmt::format("0x{:x} is not CUDA device memory: cuPointerGetAttribute(0x{:x}, "
                             "device ordinal): CUDA_ERROR_INVALID_VALUE (invalid argument)",
                             host, host));

  const float values[2] = {1.5f, -2.0f};
  REQUIRE(memory.write(buffer->address() + 8, values, sizeof values, error));
  float back[2] = {};
  REQUIRE(memory.read(buffer->address() + 8, back, sizeof back, error));
  CHECK(back[0] == 1.5f);
  CHECK(back[1] == -2.0f);
  CHECK(memory.read(0, nullptr, 0, error)); // nothing to copy
  CHECK_FALSE(memory.read(buffer->address() + 96, back, 8, error));
  CHECK(error == fmt::format("cuMemcpyDtoH(0x{:x}, 8 bytes): CUDA_ERROR_INVALID_VALUE (invalid "
                             "argument)",
                             buffer->address() + 96));
}

TEST_CASE("fake driver: a session shadows device memory and writes back only what was stored") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(16 * sizeof(float), error, 0, driver);
  REQUIRE(buffer);
  std::vector<float> initial(16);
  std::iota(initial.begin(), initial.end(), 0.0f);
  REQUIRE(buffer->upload(initial.data(), 64, error));

  DeviceMemory memory(0, driver);
  PointerArgument arg;
  arg.name = "x";
  arg.buffer = "x";
  arg.view.address = buffer->address();
  arg.view.dtype = DType::F32;
  arg.view.shape = {16};
  arg.view.strides = {1};
  arg.memory = &memory;
  Session session;
  LaunchMemory launch;
  REQUIRE_MESSAGE(session.prepare({arg}, launch, error), error);
  // The shadow holds the device's values.
  float *element3 = reinterpret_cast<float *>(launch.translate(
      tagged::advance(launch.argumentPointer(0), 3 * sizeof(float)), sizeof(float)));
  REQUIRE(element3 != nullptr);
  CHECK(*element3 == 3.0f);
  // Change the device copy behind the shadow's back, then store one element through the shadow.
  const float changed = 100.0f;
  REQUIRE(buffer->upload(&changed, sizeof changed, error, 4 * sizeof(float)));
  float *element5 = reinterpret_cast<float *>(launch.translateForWrite(
      tagged::advance(launch.argumentPointer(0), 5 * sizeof(float)), sizeof(float)));
  REQUIRE(element5 != nullptr);
  *element5 = -5.0f;
  REQUIRE_MESSAGE(session.step(error), error);
  std::vector<float> out(16);
  REQUIRE(buffer->download(out.data(), 64, error));
  std::vector<float> expected = initial;
  expected[4] = 100.0f; // not written by the "kernel": the device's value stays
  expected[5] = -5.0f;
  CHECK(out == expected);
}

TEST_CASE("fake driver: vector_add's cubin launched as Triton launches it") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  std::unique_ptr<NativeKernel> kernel =
      NativeKernel::load(examplePath("vector_add/vector_add.cubin"),
                         examplePath("vector_add/vector_add.json"), error, 0, driver);
  REQUIRE_MESSAGE(kernel, error);
  CHECK_FALSE(kernel->isPtx());
  CHECK_FALSE(kernel->paramsKnown()); // this fake driver cannot tell (as before CUDA 12.4)
  CHECK(fake.liveModules() == 1);
  CHECK(fake.maxDynamicShared() == -1); // 0 bytes of shared memory: nothing to raise
  std::vector<KernelArg> args = {KernelArg::pointer(0x1000), KernelArg::pointer(0x2000),
                                 KernelArg::pointer(0x3000), KernelArg::integer(DType::I32, 5000)};
  REQUIRE_MESSAGE(kernel->launch({5, 1, 1}, args, error), error);
  TtFakeLaunch l = fake.launch();
  CHECK(l.launches == 1);
  CHECK(l.usedEx == 1);
  CHECK(l.grid[0] == 5);
  CHECK(l.grid[1] == 1);
  CHECK(l.grid[2] == 1);
  CHECK(l.block[0] == 128);
  CHECK(l.block[1] == 1);
  CHECK(l.shared == 0);
  CHECK(l.cluster[0] == 1);
  CHECK(l.cooperative == 0);
  CHECK(l.pdl == 0);
  // An empty grid launches nothing.
  REQUIRE(kernel->launch({0, 1, 1}, args, error));
  CHECK(fake.launch().launches == 1);
  kernel.reset();
  CHECK(fake.liveModules() == 0);
}

TEST_CASE("fake driver: parameter values and the driver's parameter check") {
  Fake fake;
  const size_t sizes[] = {8, 8, 8, 4, 8, 8};
  fake.setParamSizes(sizes, 6);
  Driver driver(kFake);
  std::string error;
  std::unique_ptr<NativeKernel> kernel = loadVectorAdd(driver, error);
  REQUIRE_MESSAGE(kernel, error);
  REQUIRE(kernel->paramsKnown());
  CHECK(kernel->declaredParams() == std::vector<size_t>{8, 8, 8, 4, 8, 8});
  std::vector<KernelArg> args = {
      KernelArg::pointer(0x7f0000001000), KernelArg::pointer(0x7f0000002000),
      KernelArg::pointer(0x7f0000003000), KernelArg::integer(DType::I32, 5000)};
  REQUIRE_MESSAGE(kernel->launch({5, 1, 1}, args, error), error);
  TtFakeLaunch l = fake.launch();
  REQUIRE(l.numParams == 6);
  CHECK(paramValue(l, 0, 8) == 0x7f0000001000);
  CHECK(paramValue(l, 1, 8) == 0x7f0000002000);
  CHECK(paramValue(l, 2, 8) == 0x7f0000003000);
  CHECK(paramValue(l, 3, 4) == 5000);
  CHECK(paramValue(l, 4, 8) == 0); // no global scratch: null
  CHECK(paramValue(l, 5, 8) == 0); // no profile scratch: null

  // One argument short: caught before anything runs.
  args.pop_back();
  CHECK_FALSE(kernel->launch({5, 1, 1}, args, error));
  CHECK(error == "kernel 'add_kernel' declares 6 parameters but the launch passes 5: 3 arguments "
                 "and the two hidden scratch pointers");
  args.push_back(KernelArg::integer(DType::I64, 5000));
  CHECK_FALSE(kernel->launch({5, 1, 1}, args, error));
  CHECK(error == "parameter 3 of kernel 'add_kernel' is 4 bytes, but argument 3 is i64 (8 bytes)");
  CHECK(fake.launch().launches == 1);
}

TEST_CASE("fake driver: scratch buffers sized by the grid and aligned") {
  Fake fake;
  const size_t sizes[] = {8, 8, 8, 4, 8, 8};
  fake.setParamSizes(sizes, 6);
  Driver driver(kFake);
  std::string error;
  std::unique_ptr<NativeKernel> kernel = loadVectorAdd(driver, error, [](KernelMetadata &m) {
    m.globalScratchSize = 256;
    m.globalScratchAlign = 1024;
    m.profileScratchSize = 64;
    m.profileScratchAlign = 8;
  });
  REQUIRE_MESSAGE(kernel, error);
  // The fake refuses anything above its limit: 2 x 3 programs x 256 bytes (+ slack for the
  // 1024-byte alignment) must fit, 7 x 256 would not.
  fake.setMemoryLimit(6 * 256 + 1023);
  std::vector<KernelArg> args = {KernelArg::pointer(1), KernelArg::pointer(2),
                                 KernelArg::pointer(3), KernelArg::integer(DType::I32, 1)};
  REQUIRE_MESSAGE(kernel->launch({2, 3, 1}, args, error), error);
  TtFakeLaunch l = fake.launch();
  uint64_t global = paramValue(l, 4, 8), profile = paramValue(l, 5, 8);
  CHECK(global != 0);
  CHECK(global % 1024 == 0);
  CHECK(profile != 0);
  CHECK(profile % 8 == 0);
  CHECK(fake.liveAllocations() == 0); // freed after the launch
  CHECK_FALSE(kernel->launch({7, 1, 1}, args, error));
  CHECK(error == "kernel 'add_kernel': global scratch of 1792 bytes: cuMemAlloc(2815 bytes): "
                 "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST_CASE("fake driver: more than 48 KiB of shared memory is opted into") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  std::unique_ptr<NativeKernel> kernel =
      loadVectorAdd(driver, error, [](KernelMetadata &m) { m.shared = 49152; });
  REQUIRE(kernel);
  CHECK(fake.maxDynamicShared() == -1); // exactly the default limit
  kernel = loadVectorAdd(driver, error, [](KernelMetadata &m) { m.shared = 100000; });
  REQUIRE(kernel);
  CHECK(fake.maxDynamicShared() == 100000);
  REQUIRE(kernel->launch({1, 1, 1},
                         {KernelArg::pointer(1), KernelArg::pointer(2), KernelArg::pointer(3),
                          KernelArg::integer(DType::I32, 1)},
                         error));
  CHECK(fake.launch().shared == 100000);
}

TEST_CASE("fake driver: CTA clusters for num_ctas > 1") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  std::unique_ptr<NativeKernel> kernel =
      loadVectorAdd(driver, error, [](KernelMetadata &m) { m.numCtas = 2; });
  REQUIRE(kernel);
  REQUIRE(kernel->launch({3, 2, 1},
                         {KernelArg::pointer(1), KernelArg::pointer(2), KernelArg::pointer(3),
                          KernelArg::integer(DType::I32, 1)},
                         error));
  TtFakeLaunch l = fake.launch();
  CHECK(l.grid[0] == 6);
  CHECK(l.grid[1] == 2);
  CHECK(l.cluster[0] == 2);
  CHECK(l.cluster[1] == 1);
  CHECK(l.clusterSpread == 1);
}

TEST_CASE("fake driver: launch and run failures are errors with the CUDA error") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  std::unique_ptr<NativeKernel> kernel = loadVectorAdd(driver, error);
  REQUIRE(kernel);
  std::vector<KernelArg> args = {KernelArg::pointer(1), KernelArg::pointer(2),
                                 KernelArg::pointer(3), KernelArg::integer(DType::I32, 1)};
  fake.setLaunchResult(701); // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
  CHECK_FALSE(kernel->launch({5, 1, 1}, args, error));
  CHECK(error == "kernel 'add_kernel' could not be launched: cuLaunchKernelEx(grid (5, 1, 1), "
                 "block (128, 1, 1), 0 bytes shared): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many "
                 "resources requested for launch)");
  fake.setLaunchResult(0);
  fake.setSyncResult(700); // CUDA_ERROR_ILLEGAL_ADDRESS, as an out-of-bounds store reports it
  CHECK_FALSE(kernel->launch({5, 1, 1}, args, error));
  CHECK(error == "kernel 'add_kernel' failed while running on grid (5, 1, 1): cuCtxSynchronize: "
                 "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered); the CUDA "
                 "context is now unusable: every later CUDA call in this process fails");
}

TEST_CASE("fake driver: codes the driver cannot name") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  REQUIRE(available(driver, error));
  // The fake's cuGetErrorName knows neither (as a stub libcuda knows none): the built-in table
  // names the first, the second stays a number.
  CHECK(driver.describe("cuInit", 34) ==
        "cuInit: CUDA_ERROR_STUB_LIBRARY (CUDA driver is a stub library)");
  CHECK(driver.describe("cuFoo", 9999) == "cuFoo: CUDA error 9999");
  CHECK(driver.describe("cuFoo", 719) ==
        "cuFoo: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure); the CUDA context is now "
        "unusable: every later CUDA call in this process fails");
}

TEST_CASE("fake driver: load failures") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  CHECK_FALSE(loadVectorAdd(driver, error, [](KernelMetadata &m) { m.name = "not_there"; }));
  CHECK(error == "vector_add/vector_add.cubin: kernel 'not_there' named by the metadata is not in "
                 "the image: cuModuleGetFunction(\"not_there\"): CUDA_ERROR_NOT_FOUND (named "
                 "symbol not found)");
  CHECK(fake.liveModules() == 0);

  fake.setCapability(8, 0);
  CHECK_FALSE(loadVectorAdd(driver, error));
  CHECK(error == "vector_add/vector_add.cubin: cuModuleLoadData: CUDA_ERROR_NO_BINARY_FOR_GPU (no "
                 "kernel image is available for execution on the device) (the kernel targets "
                 "sm_90; cuda:0 is sm_80)");

  CHECK_FALSE(NativeKernel::load(examplePath("vector_add/spec.json"),
                                 examplePath("vector_add/vector_add.json"), error, 0, driver));
  CHECK(error == examplePath("vector_add/spec.json") + ": neither a cubin, a fatbin nor PTX");
  CHECK_FALSE(NativeKernel::load(examplePath("vector_add/missing.cubin"),
                                 examplePath("vector_add/vector_add.json"), error, 0, driver));
  CHECK(error ==
        examplePath("vector_add/missing.cubin") + ": cannot open (No such file or directory)");
}

TEST_CASE("fake driver: PTX goes through the JIT, with its log on failure") {
  Fake fake;
  Driver driver(kFake);
  std::string error;
  std::unique_ptr<NativeKernel> kernel =
      loadVectorAdd(driver, error, nullptr, "vector_add/vector_add.ptx");
  REQUIRE_MESSAGE(kernel, error);
  CHECK(kernel->isPtx());
  REQUIRE(kernel->paramsKnown()); // read off the PTX itself
  CHECK(kernel->declaredParams() == std::vector<size_t>{8, 8, 8, 4, 8, 8});
  CHECK_FALSE(kernel->launch({1, 1, 1}, {KernelArg::pointer(1)}, error));
  CHECK(error == "kernel 'add_kernel' declares 6 parameters but the launch passes 3: 1 argument "
                 "and the two hidden scratch pointers");

  KernelMetadata meta;
  REQUIRE(loadKernelMetadata(examplePath("vector_add/vector_add.json"), meta, error));
  std::string ptx = readText(examplePath("vector_add/vector_add.ptx")) + "\n// ttfake_bad_ptx\n";
  CHECK_FALSE(NativeKernel::create(std::vector<char>(ptx.begin(), ptx.end()), "bad.ptx", meta,
                                   error, 0, driver));
  CHECK(error == "bad.ptx: cuModuleLoadDataEx (PTX JIT): CUDA_ERROR_INVALID_PTX (a PTX JIT "
                 "compilation failed); JIT log: ptxas application ptx input, line 3; error   : "
                 "Unknown symbol 'ttfake_bad_ptx' | ptxas fatal   : Ptx assembly aborted due to "
                 "errors");
  meta.name = "other_kernel";
  CHECK_FALSE(NativeKernel::create(std::vector<char>(ptx.begin(), ptx.end()), "k.ptx", meta, error,
                                   0, driver));
  CHECK(error == "k.ptx: the PTX has no .entry other_kernel");
}

TEST_CASE("fake driver: without cuLaunchKernelEx (an old driver)") {
  Fake fake(TTINTERP_FAKE_LIBCUDA_OLD);
  Driver driver(TTINTERP_FAKE_LIBCUDA_OLD);
  std::string error;
  REQUIRE(available(driver, error));
  CHECK_FALSE(driver.hasLaunchKernelEx());
  CHECK_FALSE(driver.hasParamInfo());
  std::unique_ptr<NativeKernel> kernel = loadVectorAdd(driver, error);
  REQUIRE_MESSAGE(kernel, error);
  std::vector<KernelArg> args = {KernelArg::pointer(1), KernelArg::pointer(2),
                                 KernelArg::pointer(3), KernelArg::integer(DType::I32, 1)};
  REQUIRE_MESSAGE(kernel->launch({5, 1, 1}, args, error), error);
  TtFakeLaunch l = fake.launch();
  CHECK(l.usedEx == 0);
  CHECK(l.grid[0] == 5);
  CHECK(l.block[0] == 128);

  kernel = loadVectorAdd(driver, error, [](KernelMetadata &m) { m.numCtas = 2; });
  REQUIRE(kernel);
  CHECK_FALSE(kernel->launch({3, 1, 1}, args, error));
  CHECK(error == fmt::format("kernel 'add_kernel' could not be launched: this launch (grid (6, 1, "
                             "1), block (128, 1, 1), 0 bytes shared, cluster (2, 1, 1)) needs "
                             "cuLaunchKernelEx, which {} (driver 11.7) lacks",
                             TTINTERP_FAKE_LIBCUDA_OLD));
}

#endif // TTINTERP_FAKE_LIBCUDA
