//===- CudaSpecTest.cpp - Device buffers and native launches in specs, without a GPU ---===//
//
// The CLI is pointed at a driver through TTINTERP_LIBCUDA: a file that does not exist (no
// driver), or tests/cuda's stand-in libcuda, which keeps "device" memory on the host and records
// launches without running them. So device-resident specs run the interpreter over real
// DeviceMemory traffic here, while a native launch is checked up to the point where the GPU
// would compute. Expected values are worked out by hand from the kernels (alias_5791: b[0] = 1
// through one alias of two; vector_add: out = x + y).
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "Npy.h"
#include "Spec.h"
#include "TestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <optional>
#include <sstream>

using namespace ttinterp;
using namespace ttinterp::testing;
using Json = nlohmann::json;

namespace {

const std::string kAlias = sourcePath("examples/alias_5791/alias_5791.ttir");
const std::string kAdd = sourcePath("examples/vector_add/vector_add.ttir");
const std::string kAddCubin = sourcePath("examples/vector_add/vector_add.cubin");

/// Sets an environment variable for the lifetime of the object (child processes inherit it).
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  std::optional<std::string> old_;
};

struct SpecRun {
  TempDir dir;
  CliResult cli;
  Json report;
  std::vector<float> buffer(const std::string &name) const {
    return floats(dir / ("out/" + name + ".npy"));
  }
};

/// Writes `spec` and runs `ttinterp run` on it with --out and --report.
std::unique_ptr<SpecRun> run(const Json &spec, const std::string &extra = "") {
  auto r = std::make_unique<SpecRun>();
  std::string path = r->dir.write("spec.json", spec.dump(2));
  r->cli = runCli("run " + quote(path) + " --out " + quote(r->dir / "out") + " --report " +
                  quote(r->dir / "report.json") + " " + extra);
  std::string text = readFile(r->dir / "report.json");
  if (!text.empty())
    r->report = Json::parse(text);
  return r;
}

Json aliasSpec() {
  return Json::parse(R"({"buffers": {"b": {"dtype": "f32", "shape": [8], "init": {"fill": 7},
                                           "device": "cuda"}},
                         "launches": [{"kernel": "", "grid": [1], "args": ["b", "b"]}]})");
}

/// x = arange, y = 2 (both on the device unless `hostY`), out on the device.
Json addBuffers(bool hostY = false) {
  Json b = Json::parse(R"({"x": {"dtype": "f32", "shape": [1000], "init": "arange",
                                 "device": "cuda"},
                          "y": {"dtype": "f32", "shape": [1000], "init": {"fill": 2},
                                "device": "cuda"},
                          "out": {"dtype": "f32", "shape": [1000], "device": "cuda"}})");
  if (hostY)
    b["y"].erase("device");
  return b;
}

Json addLaunch(const char *x, const char *y, const char *out) {
  return {{"kernel", kAdd}, {"grid", {1}}, {"args", {x, y, out, {{"i32", 1000}}}}};
}

Json nativeAdd(const std::string &binary) {
  Json l = addLaunch("x", "y", "out");
  l["native"] = binary;
  return l;
}

} // namespace

TEST_CASE("cuda spec: without a driver, asking for CUDA is bad input naming libcuda.so.1") {
  TempDir dir;
  ScopedEnv env("TTINTERP_LIBCUDA", dir / "no-such-libcuda.so");
  Json spec = {{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}};
  auto r = run(spec);
  CHECK(r->cli.status == 2);
  // nlohmann::json writes keys sorted, so 'out' is the spec's first buffer.
  CHECK(r->cli.err.find("buffers.out.device asks for CUDA") != std::string::npos);
  CHECK(r->cli.err.find("libcuda.so.1") != std::string::npos);
  CHECK(std::count(r->cli.err.begin(), r->cli.err.end(), '\n') == 1);
  CHECK(r->cli.out.empty()); // nothing ran
  CHECK(r->report["error"]["kind"] == "cuda");
  CHECK(r->report["launches"].empty());

  // A native launch alone asks for CUDA too, and nothing is interpreted before the error.
  Json host = {{"buffers", {{"n", {{"dtype", "f32"}, {"shape", {4}}}}}},
               {"launches",
                {{{"kernel", kAdd},
                  {"native", kAddCubin},
                  {"grid", {1}},
                  {"args", {{{"i32", 1}}, {{"i32", 1}}, {{"i32", 1}}, {{"i32", 1}}}}}}}};
  auto n = run(host);
  CHECK(n->cli.status == 2);
  CHECK(n->cli.err.find("launches[0].native asks for CUDA") != std::string::npos);
  CHECK(n->cli.err.find("libcuda.so.1") != std::string::npos);
}

TEST_CASE("cuda spec: --in-place with a device buffer is a spec error before the driver loads") {
  TempDir dir;
  ScopedEnv env("TTINTERP_LIBCUDA", dir / "no-such-libcuda.so");
  Json spec = {{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}};
  auto r = run(spec, "--in-place");
  CHECK(r->cli.status == 2);
  CHECK(r->cli.err.find("spec.json: buffers.out.device: --in-place needs host buffers, but "
                        "buffer 'out' is on the CUDA device") != std::string::npos);
  CHECK(r->report["error"]["kind"] == "spec");
}

TEST_CASE("cuda spec: device and native fields are validated with their JSON paths") {
  auto error = [](const std::string &text) {
    std::string e;
    CHECK_FALSE(driver::parseSpec(text, "s.json", "/k", e));
    return e;
  };
  CHECK(error(R"({"buffers": {"x": {"dtype": "f32", "shape": [2], "device": "gpu"}},
                  "launches": []})") ==
        "s.json: buffers.x.device: unknown device 'gpu' (expected \"cuda\" or \"host\")");
  CHECK(error(R"({"buffers": {"x": {"dtype": "f32", "shape": [2], "device": "cuda"},
                              "v": {"alias_of": "x", "dtype": "f32", "shape": [1],
                                    "device": "cuda"}}, "launches": []})") ==
        "s.json: buffers.v.device: an alias_of buffer lives where its parent does and takes no "
        "device");
  CHECK(error(R"({"buffers": {"x": {"dtype": "f32", "shape": [2]}},
                  "launches": [{"kernel": "k.ttir", "native": "k.cubin", "grid": [1],
                                "args": [{"i32": 1}, "x"]}]})") ==
        "s.json: launches[0].args[1]: a native launch runs on the GPU, so buffer 'x' must be a "
        "device buffer (\"device\": \"cuda\")");
  CHECK(error(R"({"launches": [{"kernel": "k.ttir", "metadata": "k.json", "grid": [1],
                                "args": []}]})") ==
        "s.json: launches[0].metadata: metadata is only valid together with native");
  CHECK(error(R"({"buffers": {"x": {"dtype": "f32", "shape": [2], "device": "cuda"}},
                  "launches": [{"kernel": "k.ttir", "native": "k.cubin", "grid": [1],
                                "args": ["x"], "donate": ["x"]}]})") ==
        "s.json: launches[0].donate: a native launch cannot donate buffers");

  // An alias inherits its root's device; the metadata defaults to the binary's stem.
  std::string e;
  auto spec = driver::parseSpec(
      R"({"buffers": {"x": {"dtype": "f32", "shape": [4], "device": "cuda"},
                      "v": {"alias_of": "x", "byte_offset": 4, "dtype": "f32", "shape": [2]},
                      "h": {"dtype": "f32", "shape": [4], "device": "host"}},
          "launches": [{"kernel": "k.ttir", "native": "bin/k.cubin", "grid": [1], "args": ["v"]},
                       {"kernel": "k.ttir", "native": "k.ptx", "metadata": "m.json",
                        "grid": [1], "args": ["x"]}]})",
      "s.json", "/k", e);
  REQUIRE_MESSAGE(spec, e);
  CHECK(spec->buffers[0].device);
  CHECK(spec->buffers[1].device);
  CHECK_FALSE(spec->buffers[2].device);
  CHECK(spec->launches[0].nativePath == "/k/bin/k.cubin");
  CHECK(spec->launches[0].metadataPath == "/k/bin/k.json");
  CHECK(spec->launches[1].metadataPath == "/k/m.json");
  CHECK(spec->firstCudaUse() == "buffers.x.device");
}

#ifdef TTINTERP_FAKE_LIBCUDA

TEST_CASE("cuda spec: alias_5791 on a device buffer gives b = [1, 7, 7, 7, 7, 7, 7, 7]") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  Json spec = aliasSpec();
  spec["launches"][0]["kernel"] = kAlias;
  auto r = run(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  CHECK(r->buffer("b") == std::vector<float>{1, 7, 7, 7, 7, 7, 7, 7});
  // The kernel only stores: nothing comes off the device, and only the one stored element
  // goes back.
  CHECK(r->report["launches"][0]["bytes_in"] == 0);
  CHECK(r->report["session"]["bytes_out"] == 4);
  CHECK(r->cli.out.find("copied in 0 B") != std::string::npos);
  CHECK(r->cli.out.find("end: wrote back 4 B") != std::string::npos);
}

TEST_CASE("cuda spec: vector_add over device and host buffers, with a sync of a device buffer") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  Json spec = {{"buffers", addBuffers(/*hostY=*/true)},
               {"launches", {addLaunch("x", "y", "out"), {{"sync", {"out"}}}}}};
  auto r = run(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  std::vector<float> out = r->buffer("out");
  REQUIRE(out.size() == 1000);
  CHECK(out[0] == 2);
  CHECK(out[1] == 3);
  CHECK(out[999] == 1001);
  CHECK(r->buffer("x")[999] == 999); // inputs unchanged
  CHECK(r->report["syncs"][0]["bytes_out"] == 4000);
  CHECK(r->report["syncs"][1]["bytes_out"] == 0); // the final step finds nothing pending
}

TEST_CASE("cuda spec: a native launch writes back pending bytes first and runs on the driver") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  // Interpreted out = x + y, native (the stand-in computes nothing), interpreted x = out + y:
  // the last launch must read out's interpreted values from the device, not a stale shadow.
  Json spec = {
      {"buffers", addBuffers()},
      {"launches", {addLaunch("x", "y", "out"), nativeAdd(kAddCubin), addLaunch("out", "y", "x")}}};
  auto r = run(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  CHECK(r->report["launches"][1]["native"] == kAddCubin);
  CHECK(r->report["syncs"][0]["kind"] == "native_step");
  CHECK(r->report["syncs"][0]["bytes_out"] == 4000);
  // out and y are read, so copied in afresh (4000 B each); x is only written.
  CHECK(r->report["launches"][2]["bytes_in"] == 8000);
  std::vector<float> x = r->buffer("x");
  CHECK(x[0] == 4);
  CHECK(x[999] == 1003);
}

TEST_CASE("cuda spec: native launch files are checked before anything runs") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  TempDir bin;
  // A cubin without its .json beside it.
  std::string cubin = bin / "vector_add.cubin";
  std::filesystem::copy_file(kAddCubin, cubin);
  Json spec = {{"buffers", addBuffers()},
               {"launches", {addLaunch("x", "y", "out"), nativeAdd(cubin)}}};
  auto r = run(spec);
  CHECK(r->cli.status == 2);
  CHECK(r->cli.err.find("spec.json: launches[1].native: cannot read '" + bin / "vector_add.json" +
                        "'") != std::string::npos);
  CHECK(r->report["launches"].empty());

  spec["launches"][1]["metadata"] = bin / "other.json";
  r = run(spec);
  CHECK(r->cli.status == 2);
  CHECK(r->cli.err.find("launches[1].metadata: cannot read") != std::string::npos);
}

TEST_CASE("cuda spec: a fault on the GPU is a kernel fault of kind cuda") {
  // In process, so the stand-in can be told to fail: the process-wide driver reads
  // TTINTERP_LIBCUDA on first use, and dlopen hands back the same library to steer.
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  void *fake = ::dlopen(TTINTERP_FAKE_LIBCUDA, RTLD_NOW);
  REQUIRE(fake);
  auto setSync = reinterpret_cast<void (*)(int)>(::dlsym(fake, "ttfake_set_sync_result"));
  REQUIRE(bool(setSync));
  setSync(700); // CUDA_ERROR_ILLEGAL_ADDRESS, as cuCtxSynchronize reports a bad store
  TempDir dir;
  Json spec = {{"buffers", addBuffers()}, {"launches", {nativeAdd(kAddCubin)}}};
  std::string path = dir.write("spec.json", spec.dump());
  driver::RunOptions options;
  options.reportPath = dir / "report.json";
  std::ostringstream out, err;
  int code = driver::runSpec(path, options, out, err);
  setSync(0);
  ::dlclose(fake);
  CHECK(code == 1);
  CHECK(err.str().find("ttinterp: error: cuda in add_kernel (native '" + kAddCubin + "'): ") == 0);
  CHECK(err.str().find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  Json report = Json::parse(readFile(dir / "report.json"));
  CHECK(report["error"]["kind"] == "cuda");
  CHECK(report["error"]["launch"] == 0);
}

#endif
