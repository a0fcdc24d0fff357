//===- SessionsTest.cpp - Caches, sessions, donation and the memory model, end to end ---===//
//
// Each scenario replays a failure seen in lazy-tensor runtimes and kernel interpreters:
//  S0  a cached plan reused for a launch whose arguments alias differently or donate other
//      buffers; S1  a partial sync that does what only a full sync may (donation);
//  S2  a cache key that includes debug locations. Expected values are worked out by hand
//  from the kernels' definitions (vector_add: out = x + y; inplace_add: x += y).
//
//===----------------------------------------------------------------------===//
#include "Npy.h"
#include "TestSupport.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <regex>

using namespace ttinterp;
using namespace ttinterp::testing;
using Json = nlohmann::json;

namespace {

const std::string kAdd = sourcePath("examples/vector_add/vector_add.ttir");
const std::string kInplace = sourcePath("examples/inplace_add/inplace_add.ttir");
const std::string kShift = sourcePath("tests/data/kernels/shift_copy/shift_copy.ttir");
const std::string kPointerTable = sourcePath("tests/data/kernels/pointer_table/pointer_table.ttir");
const std::string kLockedSum = sourcePath("tests/data/kernels/spin_wait/locked_sum.ttir");

Json add(const Json &x, const Json &y, const Json &out, int n, Json donate = Json::array()) {
  return {{"kernel", kAdd}, {"grid", {(n + 1023) / 1024}}, {"args", {x, y, out, {{"i32", n}}}},
          {"donate", donate}};
}
Json inplace(const Json &x, const Json &y, int n) {
  return {{"kernel", kInplace}, {"grid", {(n + 255) / 256}}, {"args", {x, y, {{"i32", n}}}}};
}
Json f32(int n, Json init) { return {{"dtype", "f32"}, {"shape", {n}}, {"init", init}}; }

} // namespace

TEST_CASE("S0: a launch aliased differently never reuses the plan of distinct buffers") {
  // x = 0..7, y = 10: out = x + y; x = x + y (output aliased to an input); out = x + y.
  Json spec = {{"buffers", {{"x", f32(8, "arange")}, {"y", f32(8, {{"fill", 10}})},
                            {"out", f32(8, "zeros")}}},
               {"launches", {add("x", "y", "out", 8), add("x", "y", "x", 8), add("x", "y", "out", 8)}}};
  auto r = runSpec(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  const Json &l = r->report["launches"];
  CHECK(l[0]["plan_key"] == l[2]["plan_key"]);
  CHECK(l[1]["plan_key"] != l[0]["plan_key"]);
  CHECK(l[0]["cache"] == "miss");
  CHECK(l[1]["cache"] == "miss");
  CHECK(l[2]["cache"] == "hit");
  std::vector<float> x = r->buffer("x"), out = r->buffer("out");
  for (int i = 0; i < 8; ++i) {
    CHECK(x[i] == float(i + 10));
    CHECK(out[i] == float(i + 20));
  }

  SUBCASE("the donor set is part of the key") {
    // The same launches, the first and last donating `out`: their keys still match each
    // other, and differ from the same launch without a donor.
    Json donating = spec;
    donating["launches"][0]["donate"] = {"out"};
    donating["launches"][2]["donate"] = {"out"};
    auto d = runSpec(donating);
    REQUIRE_MESSAGE(d->cli.status == 0, d->cli.err);
    const Json &dl = d->report["launches"];
    CHECK(dl[0]["plan_key"] == dl[2]["plan_key"]);
    CHECK(dl[2]["cache"] == "hit");
    CHECK(dl[1]["plan_key"] == l[1]["plan_key"]); // no donor: same as before
    CHECK(dl[0]["plan_key"] != l[0]["plan_key"]);
    std::vector<float> dx = d->buffer("x");
    for (int i = 0; i < 8; ++i)
      CHECK(dx[i] == float(i + 10));
    CHECK_FALSE(d->hasOutput("out")); // donated: released at the final step
  }
}

TEST_CASE("S0: t1 += t0 in place, step, t2 = t1 + t0 gives t1 == 3 and t2 == 4") {
  Json spec = {{"buffers", {{"t0", f32(1, {{"fill", 1}})}, {"t1", f32(1, {{"fill", 2}})},
                            {"t2", f32(1, "zeros")}}},
               {"launches", {inplace("t1", "t0", 1), {{"step", true}}, add("t1", "t0", "t2", 1)}}};
  auto r = runSpec(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  CHECK(r->buffer("t1")[0] == 3.0f);
  CHECK(r->buffer("t2")[0] == 4.0f);
}

TEST_CASE("S1: a partial sync writes back one buffer and changes nothing else") {
  // t2 = t0 + t1 = 3; t1 += 1 -> 3; sync t1 alone; step: t2 == 3 and t1 == 3.
  Json spec = {{"buffers", {{"t0", f32(1, {{"fill", 1}})}, {"t1", f32(1, {{"fill", 2}})},
                            {"t2", f32(1, "zeros")}, {"one", f32(1, {{"fill", 1}})}}},
               {"launches", {add("t0", "t1", "t2", 1), inplace("t1", "one", 1),
                             {{"sync", {"t1"}}}, {{"step", true}}}}};
  auto r = runSpec(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  CHECK(r->buffer("t2")[0] == 3.0f);
  CHECK(r->buffer("t1")[0] == 3.0f);
  // The sync wrote t1's 4 bytes only; the step then wrote t2's 4.
  const Json &syncs = r->report["syncs"];
  CHECK(syncs[0]["kind"] == "sync");
  CHECK(syncs[0]["bytes_out"] == 4);
  CHECK(syncs[1]["bytes_out"] == 4);
}

TEST_CASE("S1: a donated scratch buffer survives a partial sync and fails after the step") {
  // scratch = x + y (donated); sync x; out = scratch + y = x + 2y (same epoch: allowed);
  // step releases scratch; using it again is a kernel fault naming it and its donor.
  Json spec = {{"buffers", {{"x", f32(4, "arange")}, {"y", f32(4, {{"fill", 5}})},
                            {"scratch", f32(4, "zeros")}, {"out", f32(4, "zeros")}}},
               {"launches", {add("x", "y", "scratch", 4, {"scratch"}), {{"sync", {"x"}}},
                             add("scratch", "y", "out", 4), {{"step", true}},
                             add("scratch", "y", "out", 4)}}};
  auto r = runSpec(spec);
  CHECK(r->cli.status == 1);
  CHECK(r->cli.err.find("donated_buffer") != std::string::npos);
  CHECK(r->cli.err.find("'scratch'") != std::string::npos);
  CHECK(r->cli.err.find("launches[0]") != std::string::npos);
  CHECK(r->report["error"]["kind"] == "donated_buffer");
  CHECK(r->report["error"]["launch"] == 4);
  std::vector<float> out = r->buffer("out");
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == float(i + 10));
  CHECK_FALSE(r->hasOutput("scratch"));
}

TEST_CASE("donating a buffer that overlaps another argument of its launch is a spec error") {
  Json spec = {{"buffers", {{"x", f32(8, "arange")}, {"y", f32(8, "zeros")},
                            {"sub", {{"alias_of", "x"}, {"byte_offset", 8}, {"dtype", "f32"},
                                     {"shape", {4}}}}}},
               {"launches", {add("x", "y", "y", 4, {"sub"})}}};
  spec["launches"][0]["args"][2] = "sub";
  spec["launches"][0]["args"][1] = "y";
  spec["launches"][0]["args"][0] = "x";
  auto r = runSpec(spec);
  CHECK(r->cli.status == 2);
  CHECK(r->cli.err.find("shares memory with argument") != std::string::npos);
}

TEST_CASE("S2: the same kernel with other locations and SSA names hashes equal and hits the plan cache") {
  std::string text = readFile(kAdd);
  // Other SSA names, other line numbers, another file name.
  std::string renamed = std::regex_replace(text, std::regex("%offsets"), "%o");
  renamed = std::regex_replace(renamed, std::regex("%mask"), "%m");
  renamed = std::regex_replace(renamed, std::regex(R"(vector_add\.py":(\d+))"), "edited.py\":9$1");
  REQUIRE(renamed != text);
  TempDir dir;
  std::string other = dir.write("other.ttir", renamed);
  Json spec = {{"buffers", {{"x", f32(8, "arange")}, {"y", f32(8, {{"fill", 1}})},
                            {"out", f32(8, "zeros")}}},
               {"launches", {add("x", "y", "out", 8), add("x", "y", "out", 8)}}};
  spec["launches"][1]["kernel"] = other;
  auto r = runSpec(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  const Json &l = r->report["launches"];
  CHECK(l[0]["kernel_hash"] == l[1]["kernel_hash"]);
  CHECK(l[1]["kernel_cache"] == "hit");
  CHECK(l[1]["cache"] == "hit");
  CHECK(runCli("hash " + quote(kAdd)).out == runCli("hash " + quote(other)).out);
}

TEST_CASE("shifted overlapping views: hazards reported, order-dependent results found by check") {
  // out = buf[1..257), in = buf[0..256), zeros: out[i] = in[i] + 1, 64 elements per program.
  // Program p writes buf[64p+64], which program p+1 reads: three read-after-write hazards of
  // 4 bytes each, at byte offsets 256, 512 and 768 of buf.
  Json spec = {{"buffers", {{"buf", f32(257, "zeros")}}},
               {"launches", {{{"kernel", kShift},
                              {"grid", {4}},
                              {"args", {{{"view", "buf"}, {"offset", 0}, {"shape", {256}}, {"strides", {1}}},
                                        {{"view", "buf"}, {"offset", 1}, {"shape", {256}}, {"strides", {1}}},
                                        {{"i32", 256}},
                                        {{"i32", 1}}}}}}}};
  auto r = runSpec(spec, "run", "--hazards");
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  const Json &h = r->report["launches"][0]["hazards"];
  REQUIRE(h.size() == 3);
  for (int k = 0; k < 3; ++k) {
    CHECK(h[k]["kind"] == "read-after-write");
    CHECK(h[k]["programs"][0][0] == k);
    CHECK(h[k]["programs"][1][0] == k + 1);
    CHECK(h[k]["buffer"] == "buf");
    CHECK(h[k]["byte_offset"] == 256 * (k + 1));
    CHECK(h[k]["bytes"] == 4);
  }
  CHECK(r->report["launches"][0]["hazard_bytes"] == 12);

  auto c = runSpec(spec, "check");
  CHECK(c->cli.status == 1);
  CHECK(c->cli.out.find("buffer 'buf' differs with the reversed program order") !=
        std::string::npos);
  CHECK(c->cli.err.find("hazards and order-dependent results") != std::string::npos);
}

TEST_CASE("interleaved views: no hazard, and check finds nothing") {
  // in = buf[0::2], out = buf[1::2] over 16 elements (8 pairs): out[i] = in[i] + 1.
  Json spec = {{"buffers", {{"buf", f32(16, "arange")}}},
               {"launches", {{{"kernel", kShift},
                              {"grid", {1}},
                              {"args", {{{"view", "buf"}, {"offset", 0}, {"shape", {8}}, {"strides", {2}}},
                                        {{"view", "buf"}, {"offset", 1}, {"shape", {8}}, {"strides", {2}}},
                                        {{"i32", 8}},
                                        {{"i32", 2}}}}}}}};
  auto r = runSpec(spec, "check");
  REQUIRE_MESSAGE(r->cli.status == 0, (r->cli.err + r->cli.out));
  std::vector<float> buf = r->buffer("buf");
  for (int i = 0; i < 8; ++i) {
    CHECK(buf[2 * i] == float(2 * i));
    CHECK(buf[2 * i + 1] == float(2 * i + 1)); // 2i + 1 = in[i] + 1
  }
  CHECK(r->report["launches"][0]["pairs"][0]["class"] == "disjoint");
}

TEST_CASE("a lock-guarded sum: check finds no hazard; unlocked relaxed, the hazards it has") {
  // Six programs add their 8 elements of x = 0..47 into acc behind a spin lock:
  // acc[j] = sum over p of (8p + j) = 120 + 6j in every program order.
  // The example spec (tests/data/kernels/spin_wait/spec_locked_sum.json), run on `kernel`.
  auto spec = [](const std::string &kernel) {
    Json s = Json::parse(readFile(sourcePath("tests/data/kernels/spin_wait/spec_locked_sum.json")));
    s["launches"][0]["kernel"] = kernel;
    return s;
  };
  auto acc = [](const SpecRun &r) {
    NpyArray a;
    std::string error;
    REQUIRE_MESSAGE(readNpy(r.dir / "out/acc.npy", DType::I32, a, error), error);
    std::vector<int32_t> v(a.bytes.size() / 4);
    std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
    return v;
  };
  auto locked = runSpec(spec(kLockedSum), "check");
  REQUIRE_MESSAGE(locked->cli.status == 0, (locked->cli.err + locked->cli.out));
  std::vector<int32_t> expected(8);
  for (int j = 0; j < 8; ++j)
    expected[size_t(j)] = 120 + 6 * j;
  CHECK(acc(*locked) == expected);
  CHECK(locked->report["launches"][0]["hazards"].empty());

  // The unlock relaxed: program 1's reads of the count (set atomically by program 0) and of
  // acc (stored by program 0) race with program 0's writes.
  std::string text = readFile(kLockedSum);
  const std::string unlock = "tt.atomic_rmw exch, acq_rel, gpu, %lock_ptr";
  size_t at = text.find(unlock);
  REQUIRE(at != std::string::npos);
  text.replace(at, unlock.size(), "tt.atomic_rmw exch, relaxed, gpu, %lock_ptr");
  TempDir dir;
  auto unlocked = runSpec(spec(dir.write("unlocked.ttir", text)), "check");
  CHECK(unlocked->cli.status == 1);
  CHECK(acc(*unlocked) == expected); // integer sums: the same in every order
  const Json &h = unlocked->report["launches"][0]["hazards"];
  REQUIRE(h.size() >= 2);
  for (int k = 0; k < 2; ++k) {
    CHECK(h[k]["kind"] == "read-after-write");
    CHECK(h[k]["buffer"] == (k == 0 ? "count" : "acc"));
    CHECK(h[k]["programs"][0][0] == 0);
    CHECK(h[k]["programs"][1][0] == 1);
  }
  CHECK(unlocked->cli.err.find("check found hazards") != std::string::npos);
}

TEST_CASE("two storages overlapping in memory share one shadow") {
  // sub lives inside base at byte 16 (elements 4..11). sub += 1 through one storage, then
  // a launch reading base sees it, and the final write-back keeps it.
  Json spec = {{"buffers", {{"base", f32(16, "arange")}, {"ones", f32(8, {{"fill", 1}})},
                            {"zero", f32(16, "zeros")}, {"copy", f32(16, "zeros")},
                            {"sub", {{"alias_of", "base"}, {"byte_offset", 16}, {"dtype", "f32"},
                                     {"shape", {8}}}}}},
               {"launches", {inplace("sub", "ones", 8), add("base", "zero", "copy", 16)}}};
  auto r = runSpec(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  std::vector<float> base = r->buffer("base"), copy = r->buffer("copy"), sub = r->buffer("sub");
  for (int i = 0; i < 16; ++i) {
    float want = float(i) + (i >= 4 && i < 12 ? 1.0f : 0.0f);
    CHECK(base[i] == want);
    CHECK(copy[i] == want);
  }
  for (int i = 0; i < 8; ++i)
    CHECK(sub[i] == float(i + 5));
}

TEST_CASE("a pointer table loaded from memory reaches the right buffers") {
  auto r = std::make_unique<SpecRun>();
  std::string spec = sourcePath("tests/data/kernels/pointer_table/spec.json");
  r->cli = runCli("run " + quote(spec) + " --out " + quote(r->dir / "out"));
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  std::vector<float> got = r->buffer("dst");
  std::vector<float> want =
      floats(sourcePath("tests/data/kernels/pointer_table/expected/dst.npy"));
  CHECK(got == want);
}

TEST_CASE("--in-place gives the shadow mode's results on every example") {
  for (const char *name : {"vector_add", "softmax", "matmul", "layernorm", "alias_5791"}) {
    CAPTURE(name);
    std::string spec = sourcePath(std::string("examples/") + name + "/spec.json");
    TempDir a, b;
    CliResult shadow = runCli("run " + quote(spec) + " --out " + quote(a / "o"));
    CliResult direct = runCli("run " + quote(spec) + " --in-place --out " + quote(b / "o"));
    REQUIRE(shadow.status == 0);
    REQUIRE(direct.status == 0);
    for (const auto &entry : std::filesystem::directory_iterator(a / "o"))
      CHECK(readFile(entry.path().string()) ==
            readFile(b / ("o/" + entry.path().filename().string())));
  }
}

TEST_CASE("a buffer inside a donated one is given up with it: --out and sync say so") {
  // xa is x's elements 2..5. Launch 0: xa += 10 (pending in x's shadow). Launch 1 donates x, so
  // the final step writes none of x's bytes back: xa's new values are dropped with x's.
  Json buffers = {{"x", f32(8, "arange")}, {"ten", f32(4, {{"fill", 10}})},
                  {"y", f32(8, {{"fill", 1}})}, {"out", f32(8, "zeros")},
                  {"xa", {{"alias_of", "x"}, {"byte_offset", 8}, {"dtype", "f32"}, {"shape", {4}}}}};
  Json spec = {{"buffers", buffers},
               {"launches", {inplace("xa", "ten", 4), add("x", "y", "out", 8, {"x"})}}};
  auto r = runSpec(spec);
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  // out = x + y with x's shadow seen through: 0 1 12 13 14 15 6 7, plus 1.
  std::vector<float> out = r->buffer("out");
  const float expected[8] = {1, 2, 13, 14, 15, 16, 7, 8};
  for (int i = 0; i < 8; ++i)
    CHECK(out[i] == expected[i]);
  CHECK_FALSE(r->hasOutput("x"));
  CHECK_FALSE(r->hasOutput("xa"));
  CHECK(r->cli.out.find("out: x.npy not written: the buffer was donated") != std::string::npos);
  CHECK(r->cli.out.find("out: xa.npy not written: it shares memory with donated buffer 'x'") !=
        std::string::npos);

  SUBCASE("a sync of the inner buffer after the step is a donated_buffer fault") {
    spec["launches"].push_back({{"step", true}});
    spec["launches"].push_back({{"sync", {"xa"}}});
    auto s = runSpec(spec);
    CHECK(s->cli.status == 1);
    CHECK(s->cli.err.find("donated_buffer") != std::string::npos);
    CHECK(s->cli.err.find("buffer 'xa' shares memory with donated buffer 'x'") != std::string::npos);
    CHECK(s->report["error"]["kind"] == "donated_buffer");
  }
  SUBCASE("a later launch through the inner buffer is a donated_buffer fault") {
    spec["launches"].push_back({{"step", true}});
    spec["launches"].push_back(inplace("xa", "ten", 4));
    auto s = runSpec(spec);
    CHECK(s->cli.status == 1);
    CHECK(s->report["error"]["kind"] == "donated_buffer");
  }
}

TEST_CASE("empty buffers as the only pointer arguments: a fault when touched, nothing when no program runs") {
  Json buffers = {{"x", f32(0, "zeros")}, {"y", f32(0, "zeros")}};
  SUBCASE("a kernel that loads and stores through them faults out of bounds") {
    Json spec = {{"buffers", buffers}, {"launches", {inplace("x", "y", 4)}}};
    auto r = runSpec(spec);
    CHECK(r->cli.status == 1);
    CHECK(r->report["error"]["kind"] == "out_of_bounds");
  }
  SUBCASE("grid [0] runs no program") {
    Json launch = inplace("x", "y", 4);
    launch["grid"] = {0};
    Json spec = {{"buffers", buffers}, {"launches", {launch}}};
    auto r = runSpec(spec);
    CHECK_MESSAGE(r->cli.status == 0, r->cli.err);
  }
  SUBCASE("a zero-size view of a real buffer") {
    Json spec = {{"buffers", {{"x", f32(8, "arange")}, {"y", f32(8, "zeros")}}},
                 {"launches", {inplace({{"view", "x"}, {"offset", 2}, {"shape", {0}}, {"strides", {1}}},
                                       "y", 4)}}};
    auto r = runSpec(spec);
    CHECK(r->cli.status == 1);
    CHECK(r->report["error"]["kind"] == "out_of_bounds");
    std::vector<float> x = r->buffer("x");
    for (int i = 0; i < 8; ++i)
      CHECK(x[i] == float(i)); // the fault wrote nothing back
  }
}

namespace {
const std::string kTables = sourcePath("tests/data/kernels/pointer_tables/");

/// The raw element bytes of an .npy file of dtype `d` (numpy's or ttinterp's --out).
std::vector<uint8_t> npyBytes(const std::string &path, DType d) {
  NpyArray a;
  std::string error;
  REQUIRE_MESSAGE(readNpy(path, d, a, error), error);
  return a.bytes;
}

/// Runs `ttinterp ARGS` on spec `name` of the pointer_tables fixture, with --out and --report.
std::unique_ptr<SpecRun> runTables(const std::string &name, const std::string &extra = "",
                                   const std::string &command = "run") {
  auto r = std::make_unique<SpecRun>();
  r->cli = runCli(command + " " + quote(kTables + name) + " --out " + quote(r->dir / "out") +
                  " --report " + quote(r->dir / "report.json") + " " + extra);
  std::string text = readFile(r->dir / "report.json");
  if (!text.empty())
    r->report = nlohmann::json::parse(text);
  return r;
}
} // namespace

TEST_CASE("the CLI runs Triton's grouped GEMM over matrices reached through address tables") {
  auto r = runTables("spec.json");
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  for (int g = 0; g < 3; ++g) {
    std::string c = "c" + std::to_string(g);
    CAPTURE(c);
    CHECK(npyBytes(r->dir / ("out/" + c + ".npy"), DType::F16) ==
          npyBytes(kTables + "expected/" + c + ".npy", DType::F16));
  }
  // Reachable buffers are listed in their regions, with the access made through the tables.
  CHECK(r->cli.out.find("reachable a0 (read-write)") != std::string::npos);
  const nlohmann::json &regions = r->report["launches"][0]["regions"];
  REQUIRE(regions.size() == 14);
  CHECK(regions[5]["reachable"] == nlohmann::json::array({"a0"}));
  CHECK(regions[5]["arguments"] == nlohmann::json::array());
  CHECK(regions[0]["reachable"] == nlohmann::json::array());
}

TEST_CASE("the CLI copies through a table and faults naming the reachable buffer it strayed from") {
  auto ok = runTables("spec_copy.json");
  REQUIRE_MESSAGE(ok->cli.status == 0, ok->cli.err);
  CHECK(ok->buffer("out") == floats(kTables + "expected_copy/out.npy"));
  CHECK(ok->cli.out.find("reachable s1 (read); read in place (no shadow)") != std::string::npos);

  for (const char *bounds : {"arg", "region"}) {
    CAPTURE(bounds);
    // Entry 1 points at s0[30]: reading 40 floats strays 10 past s0's end.
    auto stray = runTables("spec_stray.json", std::string("--bounds ") + bounds);
    CHECK(stray->cli.status == 1);
    CHECK(stray->cli.err.find("out_of_bounds") != std::string::npos);
    CHECK(stray->cli.err.find("element 40 of reachable buffer 's0'") != std::string::npos);
    // Program 0's copy was dropped with the launch: out keeps its fill.
    CHECK(stray->buffer("out") == std::vector<float>(120, -1.0f));
    CHECK(stray->report["error"]["kind"] == "out_of_bounds");
  }
  // Entry 2 points into a buffer the launch can neither see nor reach.
  auto outside = runTables("spec_outside.json");
  CHECK(outside->cli.status == 1);
  CHECK(outside->cli.err.find("not inside any argument's or reachable buffer's memory") !=
        std::string::npos);
  CHECK(outside->buffer("out") == std::vector<float>(120, -1.0f));
}

TEST_CASE("the CLI: a table store is seen through an aliasing argument; hazards name the table's "
          "target") {
  auto r = runTables("spec_scatter.json", "--hazards");
  REQUIRE_MESSAGE(r->cli.status == 0, r->cli.err);
  std::vector<float> x1(64), both(128);
  for (int i = 0; i < 64; ++i) {
    x1[size_t(i)] = float(i + 1);
    both[size_t(i)] = float(i);
    both[size_t(64 + i)] = float(i + 1);
  }
  CHECK(r->buffer("a") == x1);
  CHECK(r->buffer("out") == both);
  CHECK(r->cli.out.find("view=a (read-write), reachable a (write); shadow") != std::string::npos);
  CHECK(r->cli.out.find("of buffer 'a' (view, reachable a): program (0, 0, 0)") !=
        std::string::npos);
  const nlohmann::json &hazards = r->report["launches"][0]["hazards"];
  REQUIRE(!hazards.empty());
  CHECK(hazards[0]["reachable"] == nlohmann::json::array({"a"}));
  // check: the same spec, every program order; the table's bytes differ from run to run
  // (fresh allocations) and are not compared.
  auto c = runTables("spec_scatter.json", "", "check");
  CHECK(c.get()->cli.status == 1);
  CHECK(c->cli.out.find("buffer 'table' differs") == std::string::npos);
}
