//===- CudaSpecTest.cpp - Device buffers and native launches in specs, without a GPU ---===//
//
// The CLI is pointed at a driver through TTINTERP_LIBCUDA: a file that does not exist (no
// driver), or tests/cuda's stand-in libcuda, which keeps "device" memory on the host and records
// launches without running them. So device-resident specs run the interpreter over real
// DeviceMemory traffic here, while a native launch is checked up to the point where the GPU
// would compute; for check --native the stand-in also runs vector_add's add_kernel itself
// (TTFAKE_RUN_KERNELS), optionally off by some ulp in one element (TTFAKE_PERTURB). Expected
// values are worked out by hand from the kernels (alias_5791: b[0] = 1 through one alias of two;
// vector_add: out = x + y).
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

/// `ttinterp check --native` on `spec` (with --out and --report) plus `extra`.
std::unique_ptr<SpecRun> checkNative(const Json &spec, const std::string &extra = "") {
  return runSpec(spec, "check", "--native " + extra);
}

/// The line check --native prints for `buffer` after the run summaries (empty when none).
std::string comparisonLine(const std::string &out, const std::string &buffer) {
  size_t start = out.find("check: the interpreter vs the native run:\n");
  if (start == std::string::npos)
    return "";
  std::istringstream in(out.substr(start));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  " + buffer + " ", 0) == 0)
      return line;
  return "";
}

} // namespace

TEST_CASE("cuda spec: without a driver, asking for CUDA is bad input naming libcuda.so.1") {
  TempDir dir;
  ScopedEnv env("TTINTERP_LIBCUDA", dir / "no-such-libcuda.so");
  Json spec = {{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}};
  auto r = runSpec(spec);
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
  auto n = runSpec(host);
  CHECK(n->cli.status == 2);
  CHECK(n->cli.err.find("launches[0].native asks for CUDA") != std::string::npos);
  CHECK(n->cli.err.find("libcuda.so.1") != std::string::npos);
}

TEST_CASE("check --native: without a driver it is bad input naming libcuda.so.1") {
  TempDir dir;
  ScopedEnv env("TTINTERP_LIBCUDA", dir / "no-such-libcuda.so");
  auto r = checkNative({{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}});
  CHECK(r->cli.status == 2);
  CHECK(r->cli.err.rfind("ttinterp: error: check --native runs kernels on the GPU, which needs "
                         "the NVIDIA driver (libcuda.so.1) and a CUDA device: ",
                         0) == 0);
  CHECK(r->cli.out.empty()); // nothing ran, not even the interpreter
  CHECK(r->report["error"]["kind"] == "cuda");
}

TEST_CASE("check --native: tolerance options are checked") {
  auto status = [](const std::string &args, const std::string &message) {
    CliResult r = runCli("check spec.json " + args);
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
  };
  status("--ulp 3", "option '--ulp' needs --native");
  status("--rtol=0.1", "option '--rtol' needs --native");
  status("--native --ulp=-1", "option '--ulp' expects a whole number");
  status("--native --rtol=-1", "option '--rtol' expects a finite number >= 0, got '-1'");
  status("--native --atol=inf", "option '--atol' expects a finite number >= 0, got 'inf'");
  status("--native --atol=1e-3x", "option '--atol' expects a finite number >= 0, got '1e-3x'");
}

TEST_CASE("cuda spec: --in-place with a device buffer is a spec error before the driver loads") {
  TempDir dir;
  ScopedEnv env("TTINTERP_LIBCUDA", dir / "no-such-libcuda.so");
  Json spec = {{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}};
  auto r = runSpec(spec, "run", "--in-place");
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
  auto r = runSpec(spec);
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
  auto r = runSpec(spec);
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
  auto r = runSpec(spec);
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
  auto r = runSpec(spec);
  CHECK(r->cli.status == 2);
  CHECK(r->cli.err.find("spec.json: launches[1].native: cannot read '" + bin / "vector_add.json" +
                        "'") != std::string::npos);
  CHECK(r->report["launches"].empty());

  spec["launches"][1]["metadata"] = bin / "other.json";
  r = runSpec(spec);
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

// check --native against the stand-in running add_kernel (TTFAKE_RUN_KERNELS): x = arange and
// y = 2 give out[i] = i + 2, so out[3] = 5 (0x40A00000). TTFAKE_PERTURB="3:K" adds K to its
// bits: K = 1 gives 5 + 2^-21 (printed 5.0000005), K = 2^19 gives 5 + 2^19 * 2^-21 = 5.25.

TEST_CASE("check --native: the stand-in's vector_add agrees with the interpreter on the example") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  ScopedEnv run("TTFAKE_RUN_KERNELS", "1");
  // Host buffers and no "native" field: the cubin is found beside the .ttir.
  CliResult r = runCli("check " + quote(sourcePath("examples/vector_add/spec.json")) + " --native");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("check: launches[0] (vector_add.ttir) runs natively from vector_add.cubin on "
                   "cuda:0\n") != std::string::npos);
  for (const char *buffer : {"x", "y", "out"}) {
    std::string line = comparisonLine(r.out, buffer);
    CHECK_MESSAGE(line.size() > 9, buffer);
    CHECK(line.substr(line.size() - 9) == "identical");
  }
  CHECK(r.out.find("check: the interpreter and the native run agree\n") != std::string::npos);
  CHECK(r.err.empty());
}

TEST_CASE("check --native: a kernel that computes nothing natively differs from element 0 on") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  // Without TTFAKE_RUN_KERNELS the stand-in leaves out at zeros, while the interpreter computes
  // out[i] = i + 2: all 1000 elements differ, the first ten are listed. A positive float is its
  // own bit pattern's worth of ulp from +0: 2 (0x40000000) 1073741824, and the largest, 1001 =
  // 1.955078125 * 2^9 (exponent 136 = 0x88, mantissa 0.955078125 * 2^23 = 0x7A4000), 0x447A4000
  // = 1148862464.
  auto r = checkNative({{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}});
  CHECK(r->cli.status == 1);
  CHECK(
      comparisonLine(r->cli.out, "out")
          .find("DIFFER: 1000 of 1000 elements differ beyond the tolerance (within 8 ulp; largest "
                "difference 1148862464 ulp); interpreter vs native:") != std::string::npos);
  CHECK(r->cli.out.find("\n    [0]: 2 vs 0 (1073741824 ulp)\n    [1]: 3 vs 0 (") !=
        std::string::npos);
  CHECK(r->cli.out.find("\n    [9]: 11 vs 0 (") != std::string::npos);
  CHECK(r->cli.out.find("[10]:") == std::string::npos);
  CHECK(r->cli.out.find("\n    ... 990 more\n") != std::string::npos);
  CHECK(comparisonLine(r->cli.out, "x").find("identical") != std::string::npos);
  CHECK(r->cli.err == "ttinterp: error: check --native found 1 buffer where the interpreter and "
                      "the native run differ\n");
}

TEST_CASE("check --native: one element 1 ulp off is within the default f32 tolerance") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  ScopedEnv run("TTFAKE_RUN_KERNELS", "1");
  ScopedEnv perturb("TTFAKE_PERTURB", "3:1");
  Json spec = {{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}};
  auto r = checkNative(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  CHECK(comparisonLine(r->cli.out, "out")
            .find("match: 1 of 1000 elements differ within the tolerance (within 8 ulp; largest "
                  "difference 1 ulp)") != std::string::npos);
  CHECK(r->report["status"] == "ok"); // the interpreted run's report

  // With no ulp allowed, the same element is a difference, listed with both values.
  r = checkNative(spec, "--ulp 0");
  CHECK(r->cli.status == 1);
  CHECK(r->cli.out.find("1 of 1000 elements differ beyond the tolerance (within 0 ulp; largest "
                        "difference 1 ulp); interpreter vs native:\n    [3]: 5 vs 5.0000005 "
                        "(1 ulp)\n") != std::string::npos);
}

TEST_CASE("check --native: one element far off is listed with its index and both values") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  ScopedEnv run("TTFAKE_RUN_KERNELS", "1");
  ScopedEnv perturb("TTFAKE_PERTURB", "3:524288");
  Json spec = {{"buffers", addBuffers()}, {"launches", {addLaunch("x", "y", "out")}}};
  auto r = checkNative(spec);
  CHECK(r->cli.status == 1);
  CHECK(r->cli.out.find("1 of 1000 elements differ beyond the tolerance (within 8 ulp; largest "
                        "difference 524288 ulp); interpreter vs native:\n    [3]: 5 vs 5.25 "
                        "(524288 ulp)\n") != std::string::npos);
  CHECK(r->cli.out.find("... ") == std::string::npos);
  CHECK(r->cli.err.find("check --native found 1 buffer where") != std::string::npos);
  // --out holds both runs: the interpreter's in DIR, the GPU's in DIR/native.
  CHECK(r->buffer("out")[3] == 5.0f);
  CHECK(floats(r->dir / "out/native/out.npy")[3] == 5.25f);
  CHECK(floats(r->dir / "out/native/out.npy")[4] == 6.0f);

  // |5 - 5.25| = 0.25 against rtol * 5.25 and atol.
  CHECK(checkNative(spec, "--rtol 0.05")->cli.status == 0);  // 0.2625
  CHECK(checkNative(spec, "--rtol 0.04")->cli.status == 1);  // 0.21
  CHECK(checkNative(spec, "--atol=0.25")->cli.status == 0);  // equal to the difference
  auto within = checkNative(spec, "--atol 0.2 --rtol 0.01"); // 0.2525
  REQUIRE_MESSAGE(within->cli.status == 0, within->cli.out);
  CHECK(
      comparisonLine(within->cli.out, "out")
          .find("(within 8 ulp or |a - b| <= 0.2 + 0.01 * max(|a|, |b|); largest difference 524288 "
                "ulp)") != std::string::npos);
}

TEST_CASE("check --native: bytes an alias shares are judged once, under the alias") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  ScopedEnv run("TTFAKE_RUN_KERNELS", "1");
  ScopedEnv perturb("TTFAKE_PERTURB", "5:524288");
  // tail = out[4..8) (bytes 16..32). out[5] = 5 + 2 = 7 (0x40E00000) becomes 0x40E80000 = 7.25
  // natively: tail's element 1, and out leaves it to tail.
  Json buffers = addBuffers();
  buffers["tail"] = {{"alias_of", "out"}, {"byte_offset", 16}, {"dtype", "f32"}, {"shape", {4}}};
  auto r = checkNative({{"buffers", buffers}, {"launches", {addLaunch("x", "y", "out")}}});
  CHECK(r->cli.status == 1);
  CHECK(comparisonLine(r->cli.out, "out").find("identical") != std::string::npos);
  CHECK(r->cli.out.find("1 of 4 elements differ beyond the tolerance (within 8 ulp; largest "
                        "difference 524288 ulp); interpreter vs native:\n    [1]: 7 vs 7.25 "
                        "(524288 ulp)\n") != std::string::npos);
  CHECK(r->cli.err.find("check --native found 1 buffer where") != std::string::npos);
}

TEST_CASE("check --native: a launch's own native field names the binary") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  ScopedEnv run("TTFAKE_RUN_KERNELS", "1");
  TempDir bin;
  std::string cubin = bin / "other.cubin";
  std::filesystem::copy_file(kAddCubin, cubin);
  std::filesystem::copy_file(sourcePath("examples/vector_add/vector_add.json"), bin / "other.json");
  auto r = checkNative({{"buffers", addBuffers()}, {"launches", {nativeAdd(cubin)}}});
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  CHECK(r->cli.out.find("check: launches[0] (" + kAdd + ") runs natively from " + cubin +
                        " on cuda:0\n") != std::string::npos);
  CHECK(r->buffer("out")[999] == 1001.0f);
}

TEST_CASE("check --native: a spec without any native binary is bad input") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  TempDir kernels;
  std::string ttir = kernels / "add.ttir"; // no add.cubin beside it
  std::filesystem::copy_file(kAdd, ttir);
  Json launch = addLaunch("x", "y", "out");
  launch["kernel"] = ttir;
  auto r = checkNative({{"buffers", addBuffers()}, {"launches", {launch}}});
  CHECK(r->cli.status == 2);
  CHECK(r->cli.err.find("spec.json: no launch has a native binary: give launches a \"native\" "
                        "field, or put <kernel>.cubin and its <kernel>.json beside the kernel's "
                        ".ttir") != std::string::npos);
  CHECK(r->cli.out.empty());
  CHECK(r->report["error"]["kind"] == "spec");
}

TEST_CASE(
    "check --native: an out-of-bounds kernel is a fault in both runs, a CUDA error natively") {
  ScopedEnv env("TTINTERP_LIBCUDA", TTINTERP_FAKE_LIBCUDA);
  ScopedEnv run("TTFAKE_RUN_KERNELS", "1");
  // n = 2048 over 1000-element buffers: program 0's masked loads reach element 1000.
  Json launch = addLaunch("x", "y", "out");
  launch["grid"] = {2};
  launch["args"][3] = {{"i32", 2048}};
  auto r = checkNative({{"buffers", addBuffers()}, {"launches", {launch}}});
  CHECK(r->cli.status == 1);
  CHECK(r->cli.err.find("ttinterp: error: out_of_bounds in add_kernel") != std::string::npos);
  CHECK(r->cli.err.find("ttinterp: error: cuda in add_kernel (native '" + kAddCubin +
                        "'): kernel 'add_kernel' failed while running on grid (2, 1, 1): "
                        "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  CHECK(r->cli.err.find("ttinterp: error: check --native: both runs failed, so there is nothing "
                        "to compare\n") != std::string::npos);
  CHECK(r->report["error"]["kind"] == "out_of_bounds");
}

#endif
