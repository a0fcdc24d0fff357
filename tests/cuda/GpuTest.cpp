//===- GpuTest.cpp - Native launches of the examples on a real GPU, against numpy ---===//
//
// Every case here needs a CUDA device; without one each prints the skip marker and ctest
// reports it as skipped. The expected values are examples/*/expected/*.npy, computed with numpy
// by scripts/gen_fixtures.py, never by ttinterp; the `check --native` cases instead run this
// build's ttinterp binary, which sets its interpreter against the same cubins.
//
// The out-of-bounds case leaves the CUDA context unusable for the rest of the process, so it is
// the last case of this file, and the files after this one (by name) never touch a real device.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "ttinterp/cuda/DeviceMemory.h"
#include "ttinterp/cuda/Driver.h"
#include "ttinterp/cuda/NativeKernel.h"
#include "ttinterp/memory/Session.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ttinterp;
using namespace ttinterp::cuda;
using namespace ttinterp::cuda::test;

namespace {

struct Tolerance {
  double rtol = 0, atol = 0;
};

bool fileExists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Compares a downloaded buffer with its .npy: f32 within the tolerance (NaN matches NaN),
// anything else byte for byte. Reports the first few mismatches.
void compare(const SpecBuffer &buffer, const std::vector<uint8_t> &actual, const Npy &expected,
             Tolerance tol) {
  CAPTURE(buffer.name);
  REQUIRE(expected.bytes.size() == actual.size());
  if (buffer.dtype != DType::F32) {
    CHECK(std::memcmp(actual.data(), expected.bytes.data(), actual.size()) == 0);
    return;
  }
  REQUIRE(expected.descr == "<f4");
  size_t n = actual.size() / 4, bad = 0;
  for (size_t i = 0; i < n; ++i) {
    float a, e;
    std::memcpy(&a, actual.data() + 4 * i, 4);
    std::memcpy(&e, expected.bytes.data() + 4 * i, 4);
    bool ok = (std::isnan(a) && std::isnan(e)) ||
              std::fabs(double(a) - double(e)) <= tol.atol + tol.rtol * std::fabs(double(e));
    if (!ok && ++bad <= 5)
      FAIL_CHECK(buffer.name << "[" << i << "] is " << a << ", numpy says " << e);
  }
  CHECK_MESSAGE(bad == 0, bad << " of " << n << " elements of " << buffer.name << " differ");
}

// Runs examples/<example>/<specFile> natively: buffers on the device initialised as the spec
// says, each launch with Triton's own cubin (or its PTX), then every buffer against
// <expectedDir>/<buffer>.npy.
void runExample(const std::string &example, Tolerance tol, const char *specFile = "spec.json",
                const char *expectedDir = "expected", const char *binaryExt = ".cubin") {
  if (!gpuOrSkip())
    return;
  std::string error;
  Spec spec;
  REQUIRE_MESSAGE(readSpec(examplePath(example + "/" + specFile), spec, error), error);
  std::vector<DeviceBuffer> buffers;
  for (const SpecBuffer &b : spec.buffers) {
    size_t bytes = size_t(b.elements) * byteSize(b.dtype);
    std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(bytes, error);
    REQUIRE_MESSAGE(buffer, error);
    std::vector<uint8_t> host(bytes, 0);
    if (b.init == SpecBuffer::Init::Fill) {
      KernelArg value = isFloat(b.dtype) ? KernelArg::real(b.dtype, b.fill)
                                         : KernelArg::integer(b.dtype, int64_t(b.fill));
      for (size_t i = 0; i < size_t(b.elements); ++i)
        std::memcpy(host.data() + i * byteSize(b.dtype), &value.bits, byteSize(b.dtype));
    } else if (b.init == SpecBuffer::Init::Npy) {
      Npy npy;
      REQUIRE_MESSAGE(readNpy(b.npyPath, npy, error), error);
      REQUIRE(npy.bytes.size() == bytes);
      host = npy.bytes;
    }
    REQUIRE_MESSAGE(buffer->upload(host.data(), bytes, error), error);
    buffers.push_back(std::move(*buffer));
  }
  std::string stem = examplePath(example + "/" + example);
  std::unique_ptr<NativeKernel> kernel =
      NativeKernel::load(stem + binaryExt, stem + ".json", error);
  REQUIRE_MESSAGE(kernel, error);
  for (const SpecLaunch &launch : spec.launches) {
    REQUIRE(launch.function == kernel->metadata().name);
    std::vector<KernelArg> args;
    for (const SpecArg &a : launch.args)
      args.push_back(a.buffer >= 0 ? KernelArg::pointer(buffers[size_t(a.buffer)].address())
                                   : a.scalar);
    REQUIRE_MESSAGE(kernel->launch(launch.grid, args, error), error);
  }
  size_t compared = 0;
  for (size_t i = 0; i < spec.buffers.size(); ++i) {
    std::string path =
        examplePath(example + "/" + expectedDir + "/" + spec.buffers[i].name + ".npy");
    if (!fileExists(path))
      continue;
    Npy expected;
    REQUIRE_MESSAGE(readNpy(path, expected, error), error);
    std::vector<uint8_t> actual(buffers[i].size());
    REQUIRE_MESSAGE(buffers[i].download(actual.data(), actual.size(), error), error);
    compare(spec.buffers[i], actual, expected, tol);
    ++compared;
  }
  CHECK(compared > 0);
}

} // namespace

TEST_CASE("gpu: the driver and device 0") {
  if (!gpuOrSkip())
    return;
  Driver &driver = Driver::instance();
  std::string error, name;
  REQUIRE_MESSAGE(driver.deviceName(0, name, error), error);
  int major = 0, minor = 0;
  REQUIRE_MESSAGE(driver.computeCapability(0, major, minor, error), error);
  MESSAGE("cuda:0 is " << name << " (sm_" << major << minor << "), driver " << driver.version()
                       << ", cuLaunchKernelEx " << driver.hasLaunchKernelEx()
                       << ", cuFuncGetParamInfo " << driver.hasParamInfo());
  CHECK(!name.empty());
  CHECK(driver.version() >= 11000);
}

TEST_CASE("gpu: device buffers, device memory and allocation ranges") {
  if (!gpuOrSkip())
    return;
  std::string error;
  std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(1000, error);
  REQUIRE_MESSAGE(buffer, error);
  std::vector<uint8_t> in(1000), out(1000);
  std::iota(in.begin(), in.end(), uint8_t(0));
  REQUIRE_MESSAGE(buffer->upload(in.data(), in.size(), error), error);
  REQUIRE_MESSAGE(buffer->download(out.data(), out.size(), error), error);
  CHECK(out == in);
  REQUIRE_MESSAGE(buffer->fill(7, error), error);
  REQUIRE(buffer->download(out.data(), out.size(), error));
  CHECK(out == std::vector<uint8_t>(1000, 7));

  DeviceMemory memory;
  CHECK(memory.name() == "cuda:0");
  std::optional<ByteRange> range = memory.allocationRange(buffer->address() + 123, error);
  REQUIRE_MESSAGE(range, error);
  CHECK(range->lo == buffer->address());
  CHECK(range->size() >= 1000); // the driver may round the allocation up
  int local = 0;
  CHECK_FALSE(memory.allocationRange(reinterpret_cast<uint64_t>(&local), error));
  MESSAGE("a host pointer: " << error);

  const uint32_t word = 0xCAFEF00D;
  REQUIRE(memory.write(buffer->address() + 16, &word, 4, error));
  uint32_t back = 0;
  REQUIRE(memory.read(buffer->address() + 16, &back, 4, error));
  CHECK(back == word);
}

TEST_CASE("gpu: a session over device memory writes back only what was stored") {
  if (!gpuOrSkip())
    return;
  std::string error;
  std::optional<DeviceBuffer> buffer = DeviceBuffer::allocate(64, error);
  REQUIRE_MESSAGE(buffer, error);
  std::vector<float> initial(16);
  std::iota(initial.begin(), initial.end(), 0.0f);
  REQUIRE(buffer->upload(initial.data(), 64, error));
  DeviceMemory memory;
  PointerArgument arg;
  arg.name = arg.buffer = "x";
  arg.view.address = buffer->address();
  arg.view.dtype = DType::F32;
  arg.view.shape = {16};
  arg.view.strides = {1};
  arg.memory = &memory;
  Session session;
  LaunchMemory launch;
  REQUIRE_MESSAGE(session.prepare({arg}, launch, error), error);
  const float changed = 100.0f;
  REQUIRE(buffer->upload(&changed, 4, error, 4 * sizeof(float)));
  auto *element5 = reinterpret_cast<float *>(launch.translateForWrite(
      tagged::advance(launch.argumentPointer(0), 5 * sizeof(float)), sizeof(float)));
  REQUIRE(element5 != nullptr);
  *element5 = -5.0f;
  REQUIRE_MESSAGE(session.step(error), error);
  std::vector<float> out(16);
  REQUIRE(buffer->download(out.data(), 64, error));
  std::vector<float> expected = initial;
  expected[4] = 100.0f;
  expected[5] = -5.0f;
  CHECK(out == expected);
}

// Tolerances from examples/README.md.
TEST_CASE("gpu: alias_5791 natively") { runExample("alias_5791", {}); }
TEST_CASE("gpu: inplace_add natively") { runExample("inplace_add", {}); }
TEST_CASE("gpu: inplace_add with x passed twice natively") {
  runExample("inplace_add", {}, "spec_aliased.json", "expected_aliased");
}
TEST_CASE("gpu: layernorm natively") { runExample("layernorm", {1e-5, 1e-5}); }
TEST_CASE("gpu: matmul natively") { runExample("matmul", {0, 1e-4}); }
TEST_CASE("gpu: matmul_tf32 natively") { runExample("matmul_tf32", {0, 0.1}); }
TEST_CASE("gpu: softmax natively") { runExample("softmax", {1e-5, 1e-7}); }
TEST_CASE("gpu: vector_add natively") { runExample("vector_add", {}); }
TEST_CASE("gpu: vector_add from its PTX through the JIT") {
  runExample("vector_add", {}, "spec.json", "expected", ".ptx");
}

namespace {

/// What one run of the ttinterp command line did.
struct Cli {
  int status = -1; ///< -1 when it did not exit normally.
  std::string out, err;
};

/// Runs the ttinterp binary of this build tree (the check --native cases compare its
/// interpreter with the GPU) with `args`, each single-quoted for the shell.
Cli runTtinterp(const std::vector<std::string> &args) {
  std::string binary = std::string(TTINTERP_BINARY_DIR) + "/tools/ttinterp";
  REQUIRE_MESSAGE(fileExists(binary), "these cases run " << binary << ", which is not there");
  auto quote = [](const std::string &s) {
    std::string q = "'";
    for (char c : s)
      q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string stem = "/tmp/ttinterp-gpu-cli-" + std::to_string(::getpid());
  std::string command = quote(binary);
  for (const std::string &a : args)
    command += " " + quote(a);
  command += " >" + quote(stem + ".out") + " 2>" + quote(stem + ".err");
  int raw = std::system(command.c_str());
  Cli r;
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = readText(stem + ".out");
  r.err = readText(stem + ".err");
  std::remove((stem + ".out").c_str());
  std::remove((stem + ".err").c_str());
  return r;
}

/// `ttinterp check SPEC --native` on an example: the interpreter against the example's cubin, from
/// the same initial data. The tolerances are twice examples/README.md's (each side is within
/// those of numpy, so within twice of each other); the exact kernels use the default ulp bounds.
void checkNativeExample(const std::string &example, std::vector<std::string> tolerance = {},
                        const char *specFile = "spec.json") {
  if (!gpuOrSkip())
    return;
  std::vector<std::string> args = {"check", examplePath(example + "/" + specFile), "--native"};
  args.insert(args.end(), tolerance.begin(), tolerance.end());
  Cli r = runTtinterp(args);
  MESSAGE(r.out);
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("check: the interpreter and the native run agree\n") != std::string::npos);
}

} // namespace

TEST_CASE("gpu: check --native alias_5791") { checkNativeExample("alias_5791"); }
TEST_CASE("gpu: check --native inplace_add") { checkNativeExample("inplace_add"); }
TEST_CASE("gpu: check --native inplace_add with x passed twice") {
  checkNativeExample("inplace_add", {}, "spec_aliased.json");
}
TEST_CASE("gpu: check --native layernorm") {
  checkNativeExample("layernorm", {"--rtol", "2e-5", "--atol", "2e-5"});
}
TEST_CASE("gpu: check --native matmul") { checkNativeExample("matmul", {"--atol", "2e-4"}); }
TEST_CASE("gpu: check --native matmul_tf32") {
  checkNativeExample("matmul_tf32", {"--atol", "0.2"});
}
TEST_CASE("gpu: check --native softmax") {
  checkNativeExample("softmax", {"--rtol", "2e-5", "--atol", "2e-7"});
}
TEST_CASE("gpu: check --native vector_add") { checkNativeExample("vector_add"); }

TEST_CASE("gpu: check --native on an out-of-bounds kernel reports a CUDA error, not a hang") {
  if (!gpuOrSkip())
    return;
  // vector_add with n = 2^30 over 1024-element buffers, as the last case below but through the
  // CLI (a process of its own, so this one's context stays usable): the interpreter faults at
  // element 1024, the GPU with an illegal address.
  std::string spec = "/tmp/ttinterp-gpu-oob-" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(spec);
    out << R"({"buffers": {"x": {"dtype": "f32", "shape": [1024]},
                           "y": {"dtype": "f32", "shape": [1024]},
                           "out": {"dtype": "f32", "shape": [1024]}},
               "launches": [{"kernel": ")"
        << examplePath("vector_add/vector_add.ttir")
        << R"(", "grid": [1048576], "args": ["x", "y", "out", {"i32": 1073741824}]}]})";
  }
  Cli r = runTtinterp({"check", spec, "--native"});
  std::remove(spec.c_str());
  MESSAGE(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("ttinterp: error: out_of_bounds in add_kernel") != std::string::npos);
  CHECK(r.err.find("cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  CHECK(r.err.find("check --native: both runs failed") != std::string::npos);
}

// Keep last (see the file comment).
TEST_CASE("gpu: an out-of-bounds native kernel is a CUDA error, not a hang") {
  if (!gpuOrSkip())
    return;
  std::string error;
  std::vector<DeviceBuffer> buffers;
  for (int i = 0; i < 3; ++i) {
    std::optional<DeviceBuffer> b = DeviceBuffer::allocate(1024 * sizeof(float), error);
    REQUIRE_MESSAGE(b, error);
    REQUIRE(b->fill(0, error));
    buffers.push_back(std::move(*b));
  }
  std::string stem = examplePath("vector_add/vector_add");
  std::unique_ptr<NativeKernel> kernel = NativeKernel::load(stem + ".cubin", stem + ".json", error);
  REQUIRE_MESSAGE(kernel, error);
  // n = 2^30 over 1024-element buffers: the loads run 4 GiB past the allocations.
  const int64_t n = int64_t(1) << 30;
  std::vector<KernelArg> args = {
      KernelArg::pointer(buffers[0].address()), KernelArg::pointer(buffers[1].address()),
      KernelArg::pointer(buffers[2].address()), KernelArg::integer(DType::I32, n)};
  CHECK_FALSE(kernel->launch({uint32_t(n / 1024), 1, 1}, args, error));
  MESSAGE(error);
  CHECK(error.rfind("kernel 'add_kernel' failed while running on grid (1048576, 1, 1): "
                    "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS",
                    0) == 0);
}
