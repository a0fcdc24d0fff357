//===- PointerTablesTest.cpp - Buffers reached through pointer tables (LaunchRequest::reachable) ===//
//
// Real Triton compiles (tests/data/kernels/pointer_tables) run through interp::Launcher over
// std::vectors: matrices reached through int64 tables of their addresses, stores through a table
// seen by loads through an aliasing argument, faults naming the reachable buffer an access strayed
// from, transactional faults and hazards. Expected values are computed here by plain loops.
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include "ttinterp/interp/Launch.h"

#include <cstdint>
#include <numeric>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

const std::string kDir = "tests/data/kernels/pointer_tables/";

template <class T> uint64_t addressOf(const std::vector<T> &v) {
  return reinterpret_cast<uint64_t>(v.data());
}

/// A whole std::vector as a reachable buffer (or argument) named `name`.
template <class T> PointerArgument whole(const std::string &name, std::vector<T> &v, DType d) {
  return pointer(name, viewOf(v, d));
}

/// Half-precision bits of a small integer (exact in f16).
uint16_t halfOf(int v) {
  if (v == 0)
    return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned m = unsigned(v < 0 ? -v : v);
  int e = 31 - __builtin_clz(m);
  // 10 mantissa bits: the integers used here have at most 11 significant bits.
  return uint16_t(sign | ((e + 15) << 10) | ((m << (10 - e)) & 0x3FF));
}

struct TableLaunch {
  Session session;
  interp::Launcher launcher{session};
  interp::LaunchRequest request;
  interp::LaunchResult result;

  explicit TableLaunch(const interp::Kernel &kernel) { request.kernel = &kernel; }
  void pointerArg(PointerArgument p) {
    interp::ArgumentValue v;
    v.pointerIndex = uint32_t(request.pointers.size());
    request.values.push_back(v);
    request.pointers.push_back(std::move(p));
  }
  void intArg(int64_t x) { request.values.push_back(test::intArg(x)); }
  interp::LaunchResult &run(std::array<int64_t, 3> grid, bool hazards = false) {
    request.kernelHash = "test";
    request.run.grid = grid;
    request.plan.hazards = hazards;
    result = launcher.launch(request);
    if (result.status == interp::LaunchResult::Status::Ran) {
      std::string error;
      REQUIRE_MESSAGE(session.step(error), error);
    }
    return result;
  }
};

} // namespace

TEST_CASE("the access of reachable buffers is what the kernel does through untraced pointers") {
  auto copy = loadKernel(source(kDir + "table_copy.ttir"), true);
  auto scatter = loadKernel(source(kDir + "table_scatter.ttir"), true);
  auto gemm = loadKernel(source(kDir + "grouped_matmul.ttir"), true);
  REQUIRE_MESSAGE(copy.kernel, copy.error);
  REQUIRE_MESSAGE(scatter.kernel, scatter.error);
  REQUIRE_MESSAGE(gemm.kernel, gemm.error);
  CHECK(copy.kernel->reachableAccess() == Access::Read);     // loads through the table entry
  CHECK(scatter.kernel->reachableAccess() == Access::Write); // stores through it
  CHECK(gemm.kernel->reachableAccess() == Access::ReadWrite); // loads A, B; stores C
  auto plain = loadKernel(source("examples/vector_add/vector_add.ttir"), true);
  REQUIRE(plain.kernel);
  CHECK(plain.kernel->reachableAccess() == Access::None);
}

TEST_CASE("Triton tutorial 08's grouped GEMM reads and writes matrices through pointer tables") {
  auto k = loadKernel(source(kDir + "grouped_matmul.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  // (M, N, K) per group: multiples of the 16 x 16 x 16 blocks, as the tutorial requires.
  const int groups[3][3] = {{32, 16, 32}, {16, 48, 16}, {48, 32, 64}};
  std::vector<std::vector<uint16_t>> a(3), b(3), c(3);
  std::vector<std::vector<int>> ai(3), bi(3);
  std::vector<int64_t> aPtrs(3), bPtrs(3), cPtrs(3);
  std::vector<int32_t> sizes, lds;
  for (int g = 0; g < 3; ++g) {
    int m = groups[g][0], n = groups[g][1], kk = groups[g][2];
    for (int i = 0; i < m * kk; ++i)
      ai[g].push_back((i * i + 3 * i + g) % 7 - 3);
    for (int i = 0; i < kk * n; ++i)
      bi[g].push_back((i * 5 + i / 3 + 2 * g) % 7 - 3);
    for (int v : ai[g])
      a[g].push_back(halfOf(v));
    for (int v : bi[g])
      b[g].push_back(halfOf(v));
    c[g].assign(size_t(m * n), 0xFFFF); // NaN: every element must be written
    aPtrs[g] = int64_t(addressOf(a[g]));
    bPtrs[g] = int64_t(addressOf(b[g]));
    cPtrs[g] = int64_t(addressOf(c[g]));
    sizes.insert(sizes.end(), {m, n, kk});
    lds.insert(lds.end(), {kk, n, n});
  }
  TableLaunch l(*k.kernel);
  l.pointerArg(whole("group_a_ptrs", aPtrs, DType::I64));
  l.pointerArg(whole("group_b_ptrs", bPtrs, DType::I64));
  l.pointerArg(whole("group_c_ptrs", cPtrs, DType::I64));
  l.pointerArg(whole("group_gemm_sizes", sizes, DType::I32));
  l.pointerArg(whole("g_lds", lds, DType::I32));
  l.intArg(3);
  for (int g = 0; g < 3; ++g) {
    l.request.reachable.push_back(whole("a" + std::to_string(g), a[g], DType::F16));
    l.request.reachable.push_back(whole("b" + std::to_string(g), b[g], DType::F16));
    l.request.reachable.push_back(whole("c" + std::to_string(g), c[g], DType::F16));
  }
  interp::LaunchResult &r = l.run({4, 1, 1});
  REQUIRE_MESSAGE(r.status == interp::LaunchResult::Status::Ran,
                  (r.fault ? r.fault->message : r.error));
  // Five arguments and nine reachable buffers, each its own region; reachable ones are
  // reported as such, with the access the kernel makes through its tables.
  CHECK(r.regions.size() == 14);
  CHECK(r.access.size() == 14);
  CHECK(r.access[5] == Access::ReadWrite);
  CHECK(r.regions[5].reachable == std::vector<std::string>{"a0"});
  CHECK(r.regions[5].arguments.empty());
  CHECK(r.pairs.size() == 10); // pairs of parameters only
  for (int g = 0; g < 3; ++g) {
    int m = groups[g][0], n = groups[g][1], kk = groups[g][2];
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        int sum = 0;
        for (int x = 0; x < kk; ++x)
          sum += ai[g][size_t(i * kk + x)] * bi[g][size_t(x * n + j)];
        CAPTURE(g);
        CAPTURE(i);
        CAPTURE(j);
        REQUIRE(c[g][size_t(i * n + j)] == halfOf(sum));
      }
  }
}

TEST_CASE("a store through a table entry is seen by a load through an aliasing argument") {
  auto k = loadKernel(source(kDir + "table_scatter.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  // table_scatter(table, x, view, out, n): program p stores x + p through table[p], then
  // copies view[0:n] to out[p*n:]. Both entries point at `a`, which is also `view`.
  std::vector<float> a(64, -1.0f), x(64), out(128, 0.0f);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<int64_t> table = {int64_t(addressOf(a)), int64_t(addressOf(a))};
  TableLaunch l(*k.kernel);
  l.pointerArg(whole("table", table, DType::I64));
  l.pointerArg(whole("x", x, DType::F32));
  l.pointerArg(whole("view", a, DType::F32));
  l.pointerArg(whole("out", out, DType::F32));
  l.intArg(64);
  l.request.reachable.push_back(whole("a", a, DType::F32));
  interp::LaunchResult &r = l.run({2, 1, 1}, /*hazards=*/true);
  REQUIRE_MESSAGE(r.status == interp::LaunchResult::Status::Ran,
                  (r.fault ? r.fault->message : r.error));
  // One region, one shadow: the argument and the reachable buffer share it.
  REQUIRE(r.regionOfPointer.size() == 5);
  CHECK(r.regionOfPointer[2] == r.regionOfPointer[4]);
  const interp::RegionReport &region = r.regions[r.regionOfPointer[4]];
  CHECK(region.arguments == std::vector<std::string>{"view"});
  CHECK(region.reachable == std::vector<std::string>{"a"});
  CHECK(region.shadow == "shadow");
  for (int i = 0; i < 64; ++i) {
    CHECK(out[size_t(i)] == float(i));     // program 0 read back its own store
    CHECK(out[size_t(64 + i)] == float(i + 1)); // program 1 read back x + 1
    CHECK(a[size_t(i)] == float(i + 1));   // the last store wins, in program order
  }
  // Both programs store into `a` through the table, and program 1 reads what program 0
  // wrote: hazards through the reachable buffer, named as such.
  REQUIRE(!r.hazards.empty());
  bool wroteTwice = false;
  for (const interp::HazardReport &h : r.hazards)
    if (h.kind == "write-after-write") {
      wroteTwice = true;
      CHECK(h.reachable == std::vector<std::string>{"a"});
      CHECK(h.arguments == std::vector<std::string>{"view"});
    }
  CHECK(wroteTwice);
}

TEST_CASE("an access that strays out of a table entry's buffer faults naming that buffer") {
  auto k = loadKernel(source(kDir + "table_copy.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  // s0 and s1 are one allocation back to back, so the stray bytes land in s1: the fault
  // is still s0's (provenance comes from the address the entry held).
  std::vector<float> both(80);
  std::iota(both.begin(), both.end(), 0.0f);
  std::vector<float> out(80, -1.0f);
  View s0 = viewOf(both, DType::F32), s1 = viewOf(both, DType::F32);
  s0.shape = {40};
  s1.shape = {40};
  s1.address += 40 * sizeof(float);
  std::vector<int64_t> table = {int64_t(s1.address), int64_t(s0.address + 30 * sizeof(float))};
  std::vector<float> before = both, outBefore = out;
  TableLaunch l(*k.kernel);
  l.pointerArg(whole("table", table, DType::I64));
  l.pointerArg(whole("out", out, DType::F32));
  l.intArg(40);
  l.request.reachable.push_back(pointer("s0", s0));
  l.request.reachable.push_back(pointer("s1", s1));
  interp::LaunchResult &r = l.run({2, 1, 1});
  REQUIRE(r.status == interp::LaunchResult::Status::Faulted);
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->program == std::array<int64_t, 3>{1, 0, 0});
  CHECK(r.fault->message.find("reachable buffer 's0'") != std::string::npos);
  CHECK(r.fault->message.find("element 40") != std::string::npos);
  // Transactional: program 0's copy never reached `out`, and nothing else changed.
  CHECK(out == outBefore);
  CHECK(both == before);

}

TEST_CASE("a table entry outside every buffer of the launch faults; nothing is written back") {
  auto k = loadKernel(source(kDir + "table_copy.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> s0(40, 1.0f), hidden(40, 2.0f), out(80, -1.0f);
  std::vector<int64_t> table = {int64_t(addressOf(s0)), int64_t(addressOf(hidden))};
  TableLaunch l(*k.kernel);
  l.pointerArg(whole("table", table, DType::I64));
  l.pointerArg(whole("out", out, DType::F32));
  l.intArg(40);
  l.request.reachable.push_back(whole("s0", s0, DType::F32));
  interp::LaunchResult &r = l.run({2, 1, 1});
  REQUIRE(r.status == interp::LaunchResult::Status::Faulted);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->program == std::array<int64_t, 3>{1, 0, 0});
  CHECK(r.fault->message.find("not inside any argument's or reachable buffer's memory") !=
        std::string::npos);
  CHECK(out == std::vector<float>(80, -1.0f));
  CHECK(s0 == std::vector<float>(40, 1.0f));
}

TEST_CASE("a faulting launch leaves reachable buffers it wrote unchanged") {
  auto k = loadKernel(source(kDir + "table_scatter.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  // Program 0 stores into `a` through the table; program 1's entry points 40 floats into
  // `b` (64 floats), so its 64-float store strays: the launch faults and `a` keeps its bytes.
  std::vector<float> a(64, -1.0f), b(64, -2.0f), x(64), view(64, 0.0f), out(128, 0.0f);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<int64_t> table = {int64_t(addressOf(a)), int64_t(addressOf(b) + 40 * sizeof(float))};
  TableLaunch l(*k.kernel);
  l.pointerArg(whole("table", table, DType::I64));
  l.pointerArg(whole("x", x, DType::F32));
  l.pointerArg(whole("view", view, DType::F32));
  l.pointerArg(whole("out", out, DType::F32));
  l.intArg(64);
  l.request.reachable.push_back(whole("a", a, DType::F32));
  l.request.reachable.push_back(whole("b", b, DType::F32));
  l.request.buffers = {{"a", &HostMemory::instance(), {addressOf(a), addressOf(a) + 256}},
                       {"b", &HostMemory::instance(), {addressOf(b), addressOf(b) + 256}}};
  interp::LaunchResult &r = l.run({2, 1, 1});
  REQUIRE(r.status == interp::LaunchResult::Status::Faulted);
  CHECK(r.fault->message.find("reachable buffer 'b'") != std::string::npos);
  CHECK(a == std::vector<float>(64, -1.0f));
  CHECK(b == std::vector<float>(64, -2.0f));
  CHECK(out == std::vector<float>(128, 0.0f));
  // What the fault dropped: program 0's 256 bytes of `a`, nothing of `b`.
  REQUIRE(r.droppedBytes.size() == 2);
  CHECK(r.droppedBytes[0] == std::pair<std::string, uint64_t>{"a", 256});
  CHECK(r.droppedBytes[1] == std::pair<std::string, uint64_t>{"b", 0});
}

TEST_CASE("a reachable buffer released by a donation is refused") {
  auto k = loadKernel(source(kDir + "table_copy.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<float> s0(40, 1.0f), out(40, 0.0f);
  std::vector<int64_t> table = {int64_t(addressOf(s0))};
  TableLaunch l(*k.kernel);
  l.pointerArg(whole("table", table, DType::I64));
  l.pointerArg(whole("out", out, DType::F32));
  l.intArg(40);
  l.request.reachable.push_back(whole("s0", s0, DType::F32));
  l.request.donors = {2};
  l.request.donations = {{&HostMemory::instance(), {addressOf(s0), addressOf(s0) + 160}, "s0",
                          "launches[0]"}};
  REQUIRE(l.run({1, 1, 1}).status == interp::LaunchResult::Status::Ran);
  CHECK(out == std::vector<float>(40, 1.0f));
  l.request.donors.clear();
  l.request.donations.clear();
  interp::LaunchResult &again = l.run({1, 1, 1});
  REQUIRE(again.status == interp::LaunchResult::Status::Faulted);
  CHECK(again.fault->kind == "donated_buffer");
  CHECK(again.fault->message.find("reachable buffer 's0'") != std::string::npos);
}
