//===- EndToEndTest.cpp - ttinterp run over examples/ and hand-made specs ------------===//
//
// The expected outputs in examples/*/expected were computed with NumPy by
// scripts/gen_fixtures.py, never by ttinterp. Integer buffers must match exactly. Float
// tolerances (|got - want| <= atol + rtol * |want|) follow each kernel's arithmetic:
//   * vector_add, inplace_add, alias_5791: one IEEE f32 add or a copy, exact.
//   * softmax: exp, a 200-term sum and a division in f32 against an f64 reference:
//     rtol 1e-5, atol 1e-6 (the outputs are at most 1).
//   * layernorm: 300-term mean/variance and rsqrt in f32: rtol 1e-5, atol 1e-5.
//   * matmul, matmul_tf32: 90-term dot products of N(0,1) values (|c| up to ~40), f32
//     accumulation in a different order than the f64 reference: rtol 1e-5, atol 1e-4.
//
//===----------------------------------------------------------------------===//
#include "Npy.h"
#include "TestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

using namespace ttinterp;
using namespace ttinterp::testing;
namespace fs = std::filesystem;

namespace {

struct Tolerance {
  double rtol = 0, atol = 0;
};

NpyArray load(const std::string &path) {
  NpyArray a;
  std::string error;
  REQUIRE_MESSAGE(readNpy(path, a, error), error);
  return a;
}

double valueAt(const NpyArray &a, int64_t i) {
  const uint8_t *p = a.bytes.data() + i * byteSize(a.dtype);
  switch (a.dtype) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  default:
    FAIL("unexpected float dtype in a fixture");
    return 0;
  }
}

/// Compares every file of `expectedDir` with the file of the same name in `outDir`.
void compareFolder(const fs::path &expectedDir, const fs::path &outDir, Tolerance tol) {
  int files = 0;
  for (const auto &entry : fs::directory_iterator(expectedDir)) {
    std::string name = entry.path().filename().string();
    INFO("buffer file " << name);
    NpyArray want = load(entry.path().string());
    NpyArray got = load((outDir / name).string());
    REQUIRE(got.dtype == want.dtype);
    REQUIRE(got.shape == want.shape);
    if (!isFloat(want.dtype)) {
      CHECK(got.bytes == want.bytes);
    } else {
      int64_t bad = 0, firstBad = -1;
      for (int64_t i = 0; i < want.numElements(); ++i) {
        double w = valueAt(want, i), g = valueAt(got, i);
        if (!(std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w))) {
          if (firstBad < 0)
            firstBad = i;
          ++bad;
        }
      }
      CHECK_MESSAGE(bad == 0, bad << " elements out of tolerance, first at " << firstBad << ": "
                                  << valueAt(got, firstBad) << " vs " << valueAt(want, firstBad));
    }
    ++files;
  }
  CHECK(files > 0);
}

void runExample(const std::string &name, const std::string &spec, const std::string &expected,
                Tolerance tol, const std::string &extra = "") {
  TempDir dir;
  fs::path root = sourcePath("examples/" + name);
  CliResult r =
      runCli("run " + quote((root / spec).string()) + " --out " + quote(dir / "out") + extra);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  compareFolder(root / expected, dir.path() / "out", tol);
}

} // namespace

TEST_CASE("examples match their NumPy references") {
  const std::map<std::string, Tolerance> tolerances = {
      {"vector_add", {0, 0}},       {"inplace_add", {0, 0}},     {"alias_5791", {0, 0}},
      {"softmax", {1e-5, 1e-6}},    {"layernorm", {1e-5, 1e-5}}, {"matmul", {1e-5, 1e-4}},
      {"matmul_tf32", {1e-5, 1e-4}}};
  // Every example with a spec is run; a new one needs its tolerance worked out above.
  int examples = 0;
  for (const auto &entry : fs::directory_iterator(sourcePath("examples"))) {
    if (!fs::exists(entry.path() / "spec.json"))
      continue;
    std::string name = entry.path().filename().string();
    INFO("example " << name);
    auto tol = tolerances.find(name);
    REQUIRE_MESSAGE(tol != tolerances.end(), "no tolerance for example " << name);
    runExample(name, "spec.json", "expected", tol->second);
    ++examples;
  }
  CHECK(examples == int(tolerances.size()));
}

TEST_CASE("aliased inplace_add (x passed twice) doubles x") {
  runExample("inplace_add", "spec_aliased.json", "expected_aliased", {0, 0});
}

TEST_CASE("several threads give the same results") {
  runExample("vector_add", "spec.json", "expected", {0, 0}, " --threads 4");
  runExample("softmax", "spec.json", "expected", {1e-5, 1e-6}, " --threads 3");
}

TEST_CASE("alias_5791: the store through one alias survives the other") {
  TempDir dir;
  std::string report = dir / "report.json";
  CliResult r = runCli("run " + quote(sourcePath("examples/alias_5791/spec.json")) + " --out " +
                       quote(dir / "out") + " --report " + quote(report));
  REQUIRE(r.status == 0);
  // b is f32[8] filled with 7; the kernel stores 1 to b[0] through its first argument.
  CHECK(floats(dir / "out/b.npy") == std::vector<float>{1, 7, 7, 7, 7, 7, 7, 7});
  CHECK(r.out.find("b  f32[8]") != std::string::npos);

  nlohmann::json j = nlohmann::json::parse(readFile(report));
  CHECK(j["status"] == "ok");
  REQUIRE(j["launches"].size() == 1);
  const auto &l = j["launches"][0];
  CHECK(l["function"] == "aliasing_test");
  CHECK(l["kernel_cache"] == "miss");
  CHECK(l["cache"] == "miss");
  CHECK(l["plan_key"].get<std::string>().size() == 64);
  // Both arguments share one 32-byte shadow, and their views are identical.
  REQUIRE(l["regions"].size() == 1);
  CHECK(l["regions"][0]["buffers"] == nlohmann::json::array({"b"}));
  CHECK(l["regions"][0]["arguments"] == nlohmann::json::array({"buffer", "buffer2"}));
  CHECK(l["regions"][0]["bytes"] == 32);
  REQUIRE(l["pairs"].size() == 1);
  CHECK(l["pairs"][0]["class"] == "identical");
  // The kernel only stores, so nothing is copied in; only the stored float goes back.
  CHECK(l["regions"][0]["shadow"] == "shadow (written only, not copied in)");
  CHECK(l["bytes_in"] == 0);
  CHECK(l["bytes_out"] == 4);
  CHECK(j["session"]["bytes_out"] == 4);
}

TEST_CASE("an out-of-bounds store faults with status 1 and writes nothing back") {
  TempDir dir;
  std::string kernel = sourcePath("tests/tools/data/oob_store.ttir");
  // x: f32[8] = 0..7; out: f32[4] = -1. The kernel stores 2 to out[0..3] (pending), then
  // 1 to x[8]: one element past x.
  std::string spec = dir.write("spec.json", R"({"buffers": {
      "x": {"dtype": "f32", "shape": [8], "init": "arange"},
      "out": {"dtype": "f32", "shape": [4], "init": {"fill": -1}}},
    "launches": [{"kernel": ")" + kernel + R"(", "grid": [2],
                  "args": ["x", "out", {"i32": 8}]}]})");
  std::string report = dir / "report.json";
  CliResult r =
      runCli("run " + quote(spec) + " --out " + quote(dir / "out") + " --report " + quote(report));
  CHECK(r.status == 1);
  CHECK(r.err.rfind("ttinterp: error: out_of_bounds in oob_store at oob.py:7:4, program "
                    "(0, 0, 0): ",
                    0) == 0);
  CHECK(r.err.find("x_ptr") != std::string::npos);

  nlohmann::json j = nlohmann::json::parse(readFile(report));
  CHECK(j["status"] == "error");
  const auto &e = j["error"];
  CHECK(e["kind"] == "out_of_bounds");
  CHECK(e["location"] == "oob.py:7:4");
  CHECK(e["op"] == "tt.store");
  CHECK(e["launch"] == 0);
  CHECK(e["program"] == nlohmann::json::array({0, 0, 0}));
  CHECK(e["message"].get<std::string>().find("'x_ptr'") != std::string::npos);
  CHECK(e["pending_bytes"]["out"] == 16); // four pending f32 stores, dropped
  CHECK(e["pending_bytes"]["x"] == 0);

  // Abandoned: out keeps its initial value, x is untouched.
  CHECK(floats(dir / "out/out.npy") == std::vector<float>{-1, -1, -1, -1});
  CHECK(floats(dir / "out/x.npy") == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});

  // With region bounds the store is still outside every region: still a fault.
  CHECK(runCli("run " + quote(spec) + " --bounds region").status == 1);
}

TEST_CASE("alias_of buffers, views, sync and step across launches") {
  TempDir dir;
  std::string kernel = sourcePath("examples/inplace_add/inplace_add.ttir");
  // inplace_add: x[i] += y[i] for i < n.
  //   x = 0..7, y = 10 (x8), tail = x[4..8) (alias_of at byte 16).
  //   launch 0: tail += y[0..4)          -> x = 0 1 2 3 14 15 16 17
  //   launch 1: view x[2..6) += y[0..4)  -> x = 0 1 12 13 24 25 16 17
  //   launch 2: the same kernel and arguments as launch 0 after a sync and a step
  //             -> x = 0 1 12 13 34 35 26 27
  std::string spec = dir.write("spec.json", R"({"buffers": {
      "x": {"dtype": "f32", "shape": [8], "init": "arange"},
      "y": {"dtype": "f32", "shape": [8], "init": {"fill": 10}},
      "tail": {"alias_of": "x", "byte_offset": 16, "dtype": "f32", "shape": [4]}},
    "launches": [
      {"kernel": ")" + kernel + R"(", "grid": [1], "args": ["tail", "y", {"i32": 4}]},
      {"kernel": ")" + kernel + R"(", "grid": [1],
       "args": [{"view": "x", "offset": 2, "shape": [4]}, "y", {"i32": 4}]},
      {"sync": ["x"]},
      {"step": true},
      {"kernel": ")" + kernel + R"(", "function": "inplace_add_kernel", "grid": [1],
       "args": ["tail", "y", {"i32": 4}]}]})");
  std::string report = dir / "report.json";
  CliResult r =
      runCli("run " + quote(spec) + " --out " + quote(dir / "out") + " --report " + quote(report));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(floats(dir / "out/x.npy") == std::vector<float>{0, 1, 12, 13, 34, 35, 26, 27});
  CHECK(floats(dir / "out/tail.npy") == std::vector<float>{34, 35, 26, 27});
  CHECK(floats(dir / "out/y.npy") == std::vector<float>(8, 10));

  nlohmann::json j = nlohmann::json::parse(readFile(report));
  REQUIRE(j["launches"].size() == 3);
  const auto &l0 = j["launches"][0], &l1 = j["launches"][1], &l2 = j["launches"][2];
  // One kernel, lowered once.
  CHECK(l0["kernel_cache"] == "miss");
  CHECK(l1["kernel_cache"] == "hit");
  CHECK(l2["kernel_cache"] == "hit");
  CHECK(l0["kernel_hash"] == l2["kernel_hash"]);
  // The plan depends on how a launch's own arguments alias: in all three launches the two
  // pointer arguments are disjoint, each at offset 0 of its own region, so they share one
  // plan (what other live shadows hold is the session's business, not the plan's).
  CHECK(l1["plan_key"] == l0["plan_key"]);
  CHECK(l2["plan_key"] == l0["plan_key"]);
  CHECK(l0["cache"] == "miss");
  CHECK(l1["cache"] == "hit");
  CHECK(l2["cache"] == "hit");
  // Launch 0 copies in tail (16 B, read and written); y is only read, so it is read in
  // place and copied nowhere.
  CHECK(l0["bytes_in"] == 16);
  // Launch 1's view of x overlaps the live shadow of tail: one region holding both.
  bool merged = false;
  for (const auto &region : l1["regions"])
    if (region["arguments"] == nlohmann::json::array({"x_ptr"}))
      merged = region["buffers"].size() == 2;
  CHECK(merged);
  // The sync writes back x[2..8) (24 B), the step nothing more; launch 2's 16 B go back
  // at the end.
  REQUIRE(j["syncs"].size() == 3);
  CHECK(j["syncs"][0]["kind"] == "sync");
  CHECK(j["syncs"][0]["bytes_out"] == 24);
  CHECK(j["syncs"][1]["kind"] == "step");
  CHECK(j["syncs"][1]["bytes_out"] == 0);
  CHECK(j["syncs"][2]["kind"] == "final_step");
  CHECK(j["syncs"][2]["bytes_out"] == 16);
  CHECK(l1["bytes_out"] == 24);
  CHECK(j["session"]["bytes_out"] == 40);
}

TEST_CASE("a launch that updates a few elements of a large buffer saves only their chunk") {
  TempDir dir;
  std::string kernel = sourcePath("examples/inplace_add/inplace_add.ttir");
  // x (4 MiB, read and written, in the process's own memory) gets x[i] += 10 for i < 4,
  // written in place: one 4 KiB chunk is saved first (and counted as copied in).
  std::string spec = dir.write("spec.json", R"({"buffers": {
      "x": {"dtype": "f32", "shape": [1048576], "init": "arange"},
      "y": {"dtype": "f32", "shape": [4], "init": {"fill": 10}}},
    "launches": [{"kernel": ")" + kernel + R"(", "grid": [1], "args": ["x", "y", {"i32": 4}]}]})");
  std::string report = dir / "report.json";
  CliResult r =
      runCli("run " + quote(spec) + " --out " + quote(dir / "out") + " --report " + quote(report));
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("in place (saved as first written, put back on a fault)") != std::string::npos);
  CHECK(r.out.find("copied in 0 B before the run; written chunks are saved as the programs first "
                   "write them") != std::string::npos);
  CHECK(r.out.find("saved as first written: 4096 B") != std::string::npos);
  std::vector<float> x = floats(dir / "out/x.npy");
  REQUIRE(x.size() == 1048576);
  std::vector<float> expected(x.size());
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = float(i) + (i < 4 ? 10.0f : 0.0f);
  CHECK(x == expected);
  nlohmann::json j = nlohmann::json::parse(readFile(report));
  CHECK(j["launches"][0]["bytes_in"] == 4096);
  CHECK(j["launches"][0]["bytes_out"] == 16);
}

TEST_CASE("a zero grid runs no program") {
  TempDir dir;
  std::string kernel = sourcePath("tests/tools/data/oob_store.ttir");
  std::string spec = dir.write("spec.json", R"({"buffers": {
      "x": {"dtype": "f32", "shape": [8]}, "out": {"dtype": "f32", "shape": [4]}},
    "launches": [{"kernel": ")" + kernel + R"(", "grid": [0],
                  "args": ["x", "out", {"i32": 8}]}]})");
  CliResult r = runCli("run " + quote(spec));
  CHECK(r.status == 0);
  CHECK(r.out.find("end: wrote back 0 B") != std::string::npos);
}

TEST_CASE("--out-buffers writes only the buffers named; an unknown name is a spec error") {
  nlohmann::json spec = nlohmann::json::parse(R"({"buffers": {
      "x": {"dtype": "f32", "shape": [4], "init": "arange"},
      "y": {"dtype": "f32", "shape": [4], "init": {"fill": 10}},
      "out": {"dtype": "f32", "shape": [4]}},
    "launches": [{"kernel": "K", "function": "add_kernel", "grid": [1],
                  "args": ["x", "y", "out", {"i32": 4}]}]})");
  spec["launches"][0]["kernel"] = sourcePath("examples/vector_add/vector_add.ttir");
  auto run = runSpec(spec, "run", "--out-buffers out,x");
  REQUIRE(run->cli.status == 0);
  CHECK(run->buffer("out") == std::vector<float>{10, 11, 12, 13}); // arange + 10
  CHECK(run->buffer("x") == std::vector<float>{0, 1, 2, 3});
  CHECK_FALSE(run->hasOutput("y"));

  auto bad = runSpec(spec, "run", "--out-buffers out,z");
  CHECK(bad->cli.status == 2);
  CHECK(bad->cli.err.find("--out-buffers names 'z', which is not a buffer of") != std::string::npos);
  CHECK_FALSE(bad->hasOutput("out"));
  CliResult empty = runCli("run " + quote(run->dir / "spec.json") + " --out-buffers out");
  CHECK(empty.status == 2);
  CHECK(empty.err.find("'--out-buffers' needs '--out DIR'") != std::string::npos);
}
