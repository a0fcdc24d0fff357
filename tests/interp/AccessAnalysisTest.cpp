//===- AccessAnalysisTest.cpp - Which pointer parameters kernels read and write ===//
//
// Hand-written kernels and the bundled fixtures: each expected Access is read off
// the kernel's text (a tt.load reads, a tt.store writes, an atomic does both, a
// pointer of untraceable provenance makes every pointer parameter read-write).
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <map>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// Each parameter's access by name; scalars must be None and not pointers.
std::map<std::string, Access> accesses(const LoadedKernel &k) {
  std::map<std::string, Access> out;
  for (const interp::Parameter &p : k.kernel->parameters()) {
    if (!p.isPointer)
      CHECK(p.access == Access::None);
    out[p.name] = p.access;
  }
  return out;
}

std::map<std::string, Access> analyze(const std::string &ttir) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return accesses(k);
}

std::map<std::string, Access> analyzeFile(const std::string &path) {
  LoadedKernel k = loadKernel(source(path), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  return accesses(k);
}

} // namespace

TEST_CASE("loads read, stores write, both read-write, no use none") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%in: !tt.ptr<f32> loc("in"(#l)), %out: !tt.ptr<f32> loc("out"(#l)),
                    %both: !tt.ptr<f32> loc("both"(#l)), %unused: !tt.ptr<f32> loc("unused"(#l)),
                    %blk: !tt.ptr<f32> loc("blk"(#l)), %n: i32 loc("n"(#l))) {
    %v = tt.load %in : !tt.ptr<f32>
    tt.store %out, %v : !tt.ptr<f32>
    %w = tt.load %both : !tt.ptr<f32>
    %w2 = arith.addf %w, %v : f32
    tt.store %both, %w2 : !tt.ptr<f32>
    %r = tt.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
    %ns = tt.splat %n : i32 -> tensor<8xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<8xi32>
    %b = tt.splat %blk : !tt.ptr<f32> -> tensor<8x!tt.ptr<f32>>
    %p = tt.addptr %b, %r : tensor<8x!tt.ptr<f32>>, tensor<8xi32>
    %x = tt.load %p, %m : tensor<8x!tt.ptr<f32>>
    tt.return
  }
}
)");
  REQUIRE(a.size() == 6);
  CHECK(a["in"] == Access::Read);
  CHECK(a["out"] == Access::Write);
  CHECK(a["both"] == Access::ReadWrite);
  CHECK(a["unused"] == Access::None);
  CHECK(a["blk"] == Access::Read); // a block of pointers made by splat/addptr
  CHECK(a["n"] == Access::None);
}

TEST_CASE("atomic_rmw and atomic_cas read and write their pointer") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%cnt: !tt.ptr<i32> loc("cnt"(#l)), %src: !tt.ptr<i32> loc("src"(#l)),
                    %ctr: !tt.ptr<i32> loc("ctr"(#l))) {
    %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %sb = tt.splat %src : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
    %sp = tt.addptr %sb, %r : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    %k = tt.load %sp : tensor<4x!tt.ptr<i32>>
    %cb = tt.splat %cnt : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
    %cp = tt.addptr %cb, %k : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    %old = tt.atomic_rmw add, relaxed, gpu, %cp, %r : (tensor<4x!tt.ptr<i32>>, tensor<4xi32>) -> tensor<4xi32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %prev = tt.atomic_cas acq_rel, gpu, %ctr, %c0, %c1 : (!tt.ptr<i32>, i32, i32) -> i32
    tt.return
  }
}
)");
  // cnt is indexed by loaded values, yet its provenance is cnt's alone: the loaded
  // offsets are integers, not pointers.
  CHECK(a["cnt"] == Access::ReadWrite);
  CHECK(a["src"] == Access::Read);
  CHECK(a["ctr"] == Access::ReadWrite);
}

TEST_CASE("a pointer carried by scf.for iter_args") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%a: !tt.ptr<f32> loc("a"(#l)), %b: !tt.ptr<f32> loc("b"(#l)),
                    %c: !tt.ptr<f32> loc("c"(#l))) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %x = tt.load %b : !tt.ptr<f32>
    %p = scf.for %i = %c0 to %c4 step %c1 iter_args(%q = %a) -> (!tt.ptr<f32>) : i32 {
      %q2 = tt.addptr %q, %c1 : !tt.ptr<f32>, i32
      tt.store %q2, %x : !tt.ptr<f32>
      scf.yield %q2 : !tt.ptr<f32>
    }
    tt.store %p, %x : !tt.ptr<f32>
    tt.return
  }
}
)");
  CHECK(a["a"] == Access::Write); // stored through the iter_arg and the loop's result
  CHECK(a["b"] == Access::Read);
  CHECK(a["c"] == Access::None);
}

TEST_CASE("a loop result stored through, a loop-carried pointer loaded through") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%a: !tt.ptr<f32> loc("a"(#l)), %b: !tt.ptr<f32> loc("b"(#l))) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %z = arith.constant 0.0 : f32
    %p, %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%q = %b, %acc = %z) -> (!tt.ptr<f32>, f32) : i32 {
      %v = tt.load %q : !tt.ptr<f32>
      %acc2 = arith.addf %acc, %v : f32
      %q2 = tt.addptr %q, %c1 : !tt.ptr<f32>, i32
      scf.yield %q2, %acc2 : !tt.ptr<f32>, f32
    }
    tt.store %a, %s : !tt.ptr<f32>
    tt.return
  }
}
)");
  // The sum carried next to b's pointer is a value, not a pointer: storing it to a
  // gives b nothing.
  CHECK(a["a"] == Access::Write);
  CHECK(a["b"] == Access::Read);
}

TEST_CASE("pointers carried by one loop share their accesses (a sound over-approximation)") {
  // The analysis lets every result and region argument of an op derive from all
  // of its operands and yields, so two pointers carried by one scf.for are not
  // told apart: a (stored) and d (loaded) are both read-write. Always safe; it only
  // costs a copy-in of a and a shadow of d.
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%a: !tt.ptr<f32> loc("a"(#l)), %b: !tt.ptr<f32> loc("b"(#l)),
                    %d: !tt.ptr<f32> loc("d"(#l))) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %x = tt.load %b : !tt.ptr<f32>
    %p:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%q = %a, %t = %d) -> (!tt.ptr<f32>, !tt.ptr<f32>) : i32 {
      tt.store %q, %x : !tt.ptr<f32>
      %y = tt.load %t : !tt.ptr<f32>
      scf.yield %q, %t : !tt.ptr<f32>, !tt.ptr<f32>
    }
    tt.return
  }
}
)");
  CHECK(a["a"] == Access::ReadWrite);
  CHECK(a["b"] == Access::Read);
  CHECK(a["d"] == Access::ReadWrite);
}

TEST_CASE("pointers chosen by scf.if results and arith.select") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%a: !tt.ptr<f32> loc("a"(#l)), %b: !tt.ptr<f32> loc("b"(#l)),
                    %c: !tt.ptr<f32> loc("c"(#l)), %d: !tt.ptr<f32> loc("d"(#l)),
                    %e: !tt.ptr<f32> loc("e"(#l)), %n: i32 loc("n"(#l))) {
    %c0 = arith.constant 0 : i32
    %neg = arith.cmpi slt, %n, %c0 : i32
    %v = tt.load %e : !tt.ptr<f32>
    %p = scf.if %neg -> (!tt.ptr<f32>) {
      scf.yield %a : !tt.ptr<f32>
    } else {
      scf.yield %b : !tt.ptr<f32>
    }
    tt.store %p, %v : !tt.ptr<f32>
    %s = arith.select %neg, %c, %d : !tt.ptr<f32>
    %w = tt.load %s : !tt.ptr<f32>
    tt.return
  }
}
)");
  // Either branch may be the one stored through; either operand may be the one loaded.
  CHECK(a["a"] == Access::Write);
  CHECK(a["b"] == Access::Write);
  CHECK(a["c"] == Access::Read);
  CHECK(a["d"] == Access::Read);
  CHECK(a["e"] == Access::Read);
}

TEST_CASE("pointers passed to a callee that stores, and returned by one") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func private @put(%p: !tt.ptr<f32>, %v: f32) {
    tt.store %p, %v : !tt.ptr<f32>
    tt.return
  }
  tt.func private @next(%p: !tt.ptr<f32>) -> !tt.ptr<f32> {
    %c1 = arith.constant 1 : i32
    %q = tt.addptr %p, %c1 : !tt.ptr<f32>, i32
    tt.return %q : !tt.ptr<f32>
  }
  tt.func private @outer(%p: !tt.ptr<f32>, %v: f32) {
    tt.call @put(%p, %v) : (!tt.ptr<f32>, f32) -> ()
    tt.return
  }
  tt.func public @k(%a: !tt.ptr<f32> loc("a"(#l)), %b: !tt.ptr<f32> loc("b"(#l)),
                    %c: !tt.ptr<f32> loc("c"(#l)), %d: !tt.ptr<f32> loc("d"(#l)),
                    %e: !tt.ptr<f32> loc("e"(#l))) {
    %v = tt.load %b : !tt.ptr<f32>
    tt.call @put(%a, %v) : (!tt.ptr<f32>, f32) -> ()
    %q = tt.call @next(%c) : (!tt.ptr<f32>) -> !tt.ptr<f32>
    %w = tt.load %q : !tt.ptr<f32>
    tt.call @outer(%e, %w) : (!tt.ptr<f32>, f32) -> ()
    tt.return
  }
}
)");
  CHECK(a["a"] == Access::Write); // stored by @put
  CHECK(a["b"] == Access::Read);
  CHECK(a["c"] == Access::Read); // loaded through @next's result
  CHECK(a["d"] == Access::None);
  CHECK(a["e"] == Access::Write); // stored by @put, two calls down
}

TEST_CASE("a callee's argument is merged from the call's operand while the map grows") {
  // Each call gives its callee's argument its first provenance entry, so the calls cross
  // several of the provenance map's growth points: the merge must not hold the operand's
  // entry across the insertion (ASan reported a heap-use-after-free there).
  std::string callees, calls;
  for (int i = 0; i < 200; ++i) {
    std::vector<std::pair<std::string, std::string>> index = {{"$I", std::to_string(i)}};
    callees += subst(R"(  tt.func private @put_$I(%p: !tt.ptr<f32>) {
    %v = arith.constant 1.0 : f32
    tt.store %p, %v : !tt.ptr<f32>
    tt.return
  }
)",
                     index);
    calls += subst("    tt.call @put_$I(%x) : (!tt.ptr<f32>) -> ()\n", index);
  }
  auto a = analyze("#l = loc(\"k.py\":1:1)\nmodule {\n" + callees +
                   "  tt.func public @k(%x: !tt.ptr<f32> loc(\"x\"(#l)), "
                   "%y: !tt.ptr<f32> loc(\"y\"(#l))) {\n" +
                   calls + "    tt.return\n  }\n}\n");
  CHECK(a["x"] == Access::Write);
  CHECK(a["y"] == Access::None);
}

TEST_CASE("block pointers: make_tensor_ptr then tt.load reads, tt.store writes") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%m: !tt.ptr<f32> loc("m"(#l)), %o: !tt.ptr<f32> loc("o"(#l)),
                    %t: !tt.ptr<f32> loc("t"(#l))) {
    %c4 = arith.constant 4 : i64
    %c1 = arith.constant 1 : i64
    %i0 = arith.constant 0 : i32
    %s4 = arith.constant 4 : i32
    %bp = tt.make_tensor_ptr %m, [%c4, %c4], [%c4, %c1], [%i0, %i0] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    %v = tt.load %bp : !tt.ptr<tensor<4x4xf32>>
    %op = tt.make_tensor_ptr %o, [%c4, %c4], [%c4, %c1], [%i0, %i0] {order = array<i32: 1, 0>} : <tensor<4x4xf32>>
    %op2 = tt.advance %op, [%i0, %i0] : <tensor<4x4xf32>>
    tt.store %op2, %v : !tt.ptr<tensor<4x4xf32>>
    %d = tt.make_tensor_descriptor %t, [%s4, %s4], [%c4, %c1] : <f32>, <tensor<4x4xf32>>
    %w = tt.descriptor_load %d[%i0, %i0] : !tt.tensordesc<tensor<4x4xf32>> -> tensor<4x4xf32>
    tt.return
  }
}
)");
  CHECK(a["m"] == Access::Read);
  CHECK(a["o"] == Access::Write);
  CHECK(a["t"] == Access::Read);
}

TEST_CASE("a pointer loaded from memory makes every pointer parameter read-write") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%table: !tt.ptr<!tt.ptr<f32>> loc("table"(#l)), %a: !tt.ptr<f32> loc("a"(#l)),
                    %b: !tt.ptr<f32> loc("b"(#l)), %n: i32 loc("n"(#l))) {
    %p = tt.load %table : !tt.ptr<!tt.ptr<f32>>
    %v = tt.load %a : !tt.ptr<f32>
    tt.store %p, %v : !tt.ptr<f32>
    tt.return
  }
}
)");
  // The loaded pointer may be any of them (and b, which the kernel never names,
  // may be what the table holds).
  CHECK(a["table"] == Access::ReadWrite);
  CHECK(a["a"] == Access::ReadWrite);
  CHECK(a["b"] == Access::ReadWrite);
  CHECK(a["n"] == Access::None);
}

TEST_CASE("a pointer made by tt.int_to_ptr makes every pointer parameter read-write") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%addr: !tt.ptr<i64> loc("addr"(#l)), %a: !tt.ptr<f32> loc("a"(#l)),
                    %b: !tt.ptr<f32> loc("b"(#l))) {
    %x = tt.load %addr : !tt.ptr<i64>
    %p = tt.int_to_ptr %x : i64 -> !tt.ptr<f32>
    %v = tt.load %p : !tt.ptr<f32>
    tt.return
  }
}
)");
  CHECK(a["addr"] == Access::ReadWrite);
  CHECK(a["a"] == Access::ReadWrite);
  CHECK(a["b"] == Access::ReadWrite);
}

TEST_CASE("an untraceable pointer that is never dereferenced changes nothing") {
  auto a = analyze(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%addr: !tt.ptr<i64> loc("addr"(#l)), %a: !tt.ptr<f32> loc("a"(#l)),
                    %b: !tt.ptr<f32> loc("b"(#l))) {
    %x = tt.load %addr : !tt.ptr<i64>
    %p = tt.int_to_ptr %x : i64 -> !tt.ptr<f32>
    %i = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
    %j = tt.ptr_to_int %a : !tt.ptr<f32> -> i64
    %s = arith.addi %i, %j : i64
    tt.store %addr, %s : !tt.ptr<i64>
    tt.return
  }
}
)");
  CHECK(a["addr"] == Access::ReadWrite);
  CHECK(a["a"] == Access::None);
  CHECK(a["b"] == Access::None);
}

TEST_CASE("fixtures: vector_add reads x and y and writes out") {
  auto a = analyzeFile("examples/vector_add/vector_add.ttir");
  REQUIRE(a.size() == 4);
  CHECK(a["x_ptr"] == Access::Read);
  CHECK(a["y_ptr"] == Access::Read);
  CHECK(a["out_ptr"] == Access::Write);
  CHECK(a["n"] == Access::None);
}

TEST_CASE("fixtures: vector_add through the harness copies nothing in") {
  LoadedKernel k = loadKernel(source("examples/vector_add/vector_add.ttir"), true);
  REQUIRE_MESSAGE(k.kernel, k.error);
  const int n = 1500; // 2 programs of 1024; the second is partly masked
  std::vector<float> x(2048), y(2048), out(2048, -1.0f);
  for (int i = 0; i < 2048; ++i) {
    x[i] = float(i);
    y[i] = float(2 * i);
  }
  std::vector<PointerArgument> ptrs{pointer("x", viewOf(x, DType::F32)),
                                    pointer("y", viewOf(y, DType::F32)),
                                    pointer("out", viewOf(out, DType::F32))};
  std::vector<interp::ArgumentValue> args{ptrArg(0), ptrArg(1), ptrArg(2), intArg(n)};
  std::vector<PointerArgument> given = withKernelAccess(*k.kernel, ptrs, args);
  CHECK(given[0].access == Access::Read);
  CHECK(given[1].access == Access::Read);
  CHECK(given[2].access == Access::Write);
  LaunchResult r = launch(*k.kernel, ptrs, args, {2, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  // x and y are read in place, out is written only: nothing is copied in.
  CHECK(r.stats.bytesIn == 0);
  CHECK(r.stats.bytesOut == uint64_t(n) * 4);
  for (int i = 0; i < 2048; ++i)
    CHECK(out[i] == (i < n ? float(3 * i) : -1.0f));
}

TEST_CASE("fixtures: inplace_add reads and writes x, reads y") {
  auto a = analyzeFile("examples/inplace_add/inplace_add.ttir");
  CHECK(a["x_ptr"] == Access::ReadWrite);
  CHECK(a["y_ptr"] == Access::Read);
  CHECK(a["n"] == Access::None);
}

TEST_CASE("fixtures: pointer_table dereferences loaded pointers, so everything is read-write") {
  auto a = analyzeFile("tests/data/kernels/pointer_table/pointer_table.ttir");
  CHECK(a["table_ptr"] == Access::ReadWrite);
  CHECK(a["src_ptr"] == Access::ReadWrite);
  CHECK(a["dst_ptr"] == Access::ReadWrite);
  CHECK(a["n"] == Access::None);
}

TEST_CASE("fixtures: atomics") {
  auto a = analyzeFile("tests/data/kernels/atomics/atomics.ttir");
  // Plain loads.
  CHECK(a["keys_ptr"] == Access::Read);
  CHECK(a["ivals_ptr"] == Access::Read);
  CHECK(a["fvals_ptr"] == Access::Read);
  // tt.atomic_rmw / tt.atomic_cas targets.
  for (const char *name : {"cnt_ptr", "isum_ptr", "fsum_ptr", "bmax_ptr", "bmin_ptr", "acc_ptr",
                           "xbuf_ptr", "ctr_ptr"}) {
    INFO(name);
    CHECK(a[name] == Access::ReadWrite);
  }
  // Plain stores (old_ptr also through a scalar addptr).
  CHECK(a["old_ptr"] == Access::Write);
  CHECK(a["xold_ptr"] == Access::Write);
  CHECK(a["tries_ptr"] == Access::Write);
  CHECK(a["n"] == Access::None);
}

TEST_CASE("a pointer made by tt.bitcast from an integer makes every pointer parameter read-write") {
  // b[1] = *(a + d) with d = b - a: the bitcast pointer has no provenance and lands
  // in b. Were a only read and b only written, b's shadow would not be copied in and
  // the load would read whatever the fresh shadow held instead of b[0].
  LoadedKernel k = loadKernel(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%a: !tt.ptr<i32> loc("a"(#l)), %b: !tt.ptr<i32> loc("b"(#l)),
                    %d: i64 loc("d"(#l))) {
    %ia = tt.ptr_to_int %a : !tt.ptr<i32> -> i64
    %ib = arith.addi %ia, %d : i64
    %p = tt.bitcast %ib : i64 -> !tt.ptr<i32>
    %v = tt.load %p : !tt.ptr<i32>
    %c1 = arith.constant 1 : i32
    %q = tt.addptr %b, %c1 : !tt.ptr<i32>, i32
    tt.store %q, %v : !tt.ptr<i32>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  auto a = accesses(k);
  CHECK(a["a"] == Access::ReadWrite);
  CHECK(a["b"] == Access::ReadWrite);
  std::vector<int32_t> x(4, 5), y(4, 77);
  int64_t d = int64_t(reinterpret_cast<uint64_t>(y.data()) - reinterpret_cast<uint64_t>(x.data()));
  LaunchResult r =
      launch(*k.kernel, {pointer("a", viewOf(x, DType::I32)), pointer("b", viewOf(y, DType::I32))},
             {ptrArg(0), ptrArg(1), intArg(d)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  CHECK(y == std::vector<int32_t>{77, 77, 77, 77});
  CHECK(x == std::vector<int32_t>{5, 5, 5, 5});
  CHECK(r.stats.bytesOut == 4);
}

TEST_CASE("a pointer tt.bitcast to another pointer type keeps its argument") {
  // b[1] = bits of ((f32*)a)[i]: the bitcast pointer is still a's pointer, so a
  // stays read-only and i = 4 (one past a's 4 elements, b[0]'s address) is
  // out of bounds of a rather than a read of b.
  LoadedKernel k = loadKernel(R"(
#l = loc("k.py":1:1)
module {
  tt.func public @k(%a: !tt.ptr<i32> loc("a"(#l)), %b: !tt.ptr<i32> loc("b"(#l)), %i: i32 loc("i"(#l))) {
    %p = tt.bitcast %a : !tt.ptr<i32> -> !tt.ptr<f32>
    %q = tt.addptr %p, %i : !tt.ptr<f32>, i32
    %v = tt.load %q : !tt.ptr<f32>
    %w = tt.bitcast %v : f32 -> i32
    %c1 = arith.constant 1 : i32
    %b1 = tt.addptr %b, %c1 : !tt.ptr<i32>, i32
    tt.store %b1, %w : !tt.ptr<i32>
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  auto a = accesses(k);
  CHECK(a["a"] == Access::Read);
  CHECK(a["b"] == Access::Write);
  // a = buf[0..4), b = buf[4..8): adjacent, two regions.
  std::vector<int32_t> buf{0, 1, 2, 3, 40, 41, 42, 43};
  View va = viewOf(buf, DType::I32), vb = viewOf(buf, DType::I32);
  va.shape = {4};
  vb.shape = {4};
  vb.address += 16;
  LaunchResult r = launch(*k.kernel, {pointer("a", va), pointer("b", vb)},
                          {ptrArg(0), ptrArg(1), intArg(3)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.fault);
  // b[1] = a[3] = 3, bit for bit through f32.
  CHECK(buf == std::vector<int32_t>{0, 1, 2, 3, 40, 3, 42, 43});
  r = launch(*k.kernel, {pointer("a", va), pointer("b", vb)}, {ptrArg(0), ptrArg(1), intArg(4)},
             {1, 1, 1});
  REQUIRE(r.fault);
  CHECK(r.fault->kind == "out_of_bounds");
  CHECK(r.fault->message.find("element 4 of argument 'a'") != std::string::npos);
  CHECK(buf == std::vector<int32_t>{0, 1, 2, 3, 40, 3, 42, 43}); // nothing written
}
