//===- PrintTest.cpp - tt.print writes what Triton's device print writes --===//
//
// The expected lines follow Triton's PrintOpToLLVM (NVIDIA): the format
// "pid (%u, %u, %u) idx (%<w>u, ...)<prefix>[(operand k) ]<value>" with
// w = ceil(log10(dim)), values through vprintf after promotion (integers below
// 32 bits sign- or zero-extended to 32, floats to double).
//
//===----------------------------------------------------------------------===//
#include "Harness.h"

#include <sstream>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {
/// Runs a kernel without arguments on `grid` and returns what it printed.
std::string printed(const std::string &body, int64_t programs = 1) {
  std::string ttir = "module {\n  tt.func public @k() {\n" + body + "\n    tt.return\n  }\n}\n";
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  Session session;
  LaunchMemory memory;
  std::string error;
  REQUIRE(session.prepare({}, memory, error));
  std::ostringstream out;
  interp::LaunchOptions options;
  options.grid = {programs, 1, 1};
  options.printStream = &out;
  REQUIRE_FALSE(k.kernel->run({}, memory, options));
  return out.str();
}
} // namespace

TEST_CASE("signed and unsigned integers, index padding to the dimension's digits") {
  std::string out = printed(R"(
    %range = tt.make_range {end = 12 : i32, start = 0 : i32} : tensor<12xi32>
    %zero = arith.constant dense<0> : tensor<12xi32>
    %neg = arith.subi %zero, %range : tensor<12xi32>
    tt.print " x: " {hex = false, isSigned = array<i32: 1>} : %neg : tensor<12xi32>
    tt.print " u: " {hex = false, isSigned = array<i32: 0>} : %neg : tensor<12xi32>)");
  std::istringstream lines(out);
  std::string line;
  std::vector<std::string> all;
  while (std::getline(lines, line))
    all.push_back(line);
  REQUIRE(all.size() == 24);
  // 12 elements: indices take ceil(log10(12)) = 2 columns.
  CHECK(all[0] == "pid (0, 0, 0) idx ( 0) x: 0");
  CHECK(all[3] == "pid (0, 0, 0) idx ( 3) x: -3");
  CHECK(all[11] == "pid (0, 0, 0) idx (11) x: -11");
  CHECK(all[12] == "pid (0, 0, 0) idx ( 0) u: 0");
  CHECK(all[13] == "pid (0, 0, 0) idx ( 1) u: 4294967295");
}

TEST_CASE("hex pads to the type's digits after the 32-bit promotion") {
  std::string out = printed(R"(
    %b = arith.constant dense<[-1, 10]> : tensor<2xi8>
    tt.print " s: " {hex = true, isSigned = array<i32: 1>} : %b : tensor<2xi8>
    tt.print " u: " {hex = true, isSigned = array<i32: 0>} : %b : tensor<2xi8>
    %w = arith.constant dense<[-11, 255]> : tensor<2xi32>
    tt.print " w: " {hex = true, isSigned = array<i32: 1>} : %w : tensor<2xi32>
    %l = arith.constant dense<[-1, 4096]> : tensor<2xi64>
    tt.print " l: " {hex = true, isSigned = array<i32: 1>} : %l : tensor<2xi64>)");
  // A signed i8 -1 is sign-extended to 0xffffffff before "%02x"; unsigned it is 0xff.
  CHECK(out == "pid (0, 0, 0) idx (0) s: 0xffffffff\n"
               "pid (0, 0, 0) idx (1) s: 0x0a\n"
               "pid (0, 0, 0) idx (0) u: 0xff\n"
               "pid (0, 0, 0) idx (1) u: 0x0a\n"
               "pid (0, 0, 0) idx (0) w: 0xfffffff5\n"
               "pid (0, 0, 0) idx (1) w: 0x000000ff\n"
               "pid (0, 0, 0) idx (0) l: 0xffffffffffffffff\n"
               "pid (0, 0, 0) idx (1) l: 0x0000000000001000\n");
}

TEST_CASE("floats print with %f, several operands are labelled, scalars have no index") {
  std::string out = printed(R"(
    %f = arith.constant dense<[1.5, -0.25]> : tensor<2xf32>
    %h = arith.constant dense<[0.1, 65504.0]> : tensor<2xf16>
    tt.print " v: " {hex = false, isSigned = array<i32: 0, 0>} : %f, %h : tensor<2xf32>, tensor<2xf16>
    %c = arith.constant 7 : i64
    tt.print " s: " {hex = false, isSigned = array<i32: 1>} : %c : i64
    %inf = arith.constant 0x7F800000 : f32
    tt.print " i: " {hex = false, isSigned = array<i32: 0>} : %inf : f32)");
  // f16 0.1 is 0.0999755859375, which %f shows as 0.099976.
  CHECK(out == "pid (0, 0, 0) idx (0) v: (operand 0) 1.500000\n"
               "pid (0, 0, 0) idx (1) v: (operand 0) -0.250000\n"
               "pid (0, 0, 0) idx (0) v: (operand 1) 0.099976\n"
               "pid (0, 0, 0) idx (1) v: (operand 1) 65504.000000\n"
               "pid (0, 0, 0) idx () s: 7\n"
               "pid (0, 0, 0) idx () i: inf\n");
}

TEST_CASE("2-D indices, a message without operands, and one line group per program") {
  std::string out = printed(R"(
    %pid = tt.get_program_id x : i32
    tt.print " hello" {hex = false, isSigned = array<i32>}
    %m = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi16>
    %p = tt.splat %pid : i32 -> tensor<2x3xi32>
    %e = arith.extsi %m : tensor<2x3xi16> to tensor<2x3xi32>
    %s = arith.addi %e, %p : tensor<2x3xi32>
    tt.print " m: " {hex = false, isSigned = array<i32: 1>} : %s : tensor<2x3xi32>)",
                            2);
  CHECK(out == "pid (0, 0, 0) hello\n"
               "pid (0, 0, 0) idx (0, 0) m: 1\n"
               "pid (0, 0, 0) idx (0, 1) m: 2\n"
               "pid (0, 0, 0) idx (0, 2) m: 3\n"
               "pid (0, 0, 0) idx (1, 0) m: 4\n"
               "pid (0, 0, 0) idx (1, 1) m: 5\n"
               "pid (0, 0, 0) idx (1, 2) m: 6\n"
               "pid (1, 0, 0) hello\n"
               "pid (1, 0, 0) idx (0, 0) m: 2\n"
               "pid (1, 0, 0) idx (0, 1) m: 3\n"
               "pid (1, 0, 0) idx (0, 2) m: 4\n"
               "pid (1, 0, 0) idx (1, 0) m: 5\n"
               "pid (1, 0, 0) idx (1, 1) m: 6\n"
               "pid (1, 0, 0) idx (1, 2) m: 7\n");
}

TEST_CASE("an exception inside an op is the program's fault, on one thread or several") {
  // A print stream that fails and throws (badbit is set in its exceptions): what a library
  // throws mid-launch must end the launch as a fault, and on a worker thread not the process.
  struct Failing : std::streambuf {
    int overflow(int) override { return traits_type::eof(); }
  } failing;
  std::ostream out(&failing);
  out.exceptions(std::ios::badbit);
  LoadedKernel k = loadKernel(R"(
module {
  tt.func public @k(%p: !tt.ptr<f32>) {
    %pid = tt.get_program_id x : i32
    %v = arith.sitofp %pid : i32 to f32
    %q = tt.addptr %p, %pid : !tt.ptr<f32>, i32
    tt.store %q, %v : !tt.ptr<f32>
    tt.print " pid: " {hex = false, isSigned = array<i32: 1>} : %pid : i32
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(k.kernel, k.error);
  for (unsigned threads : {1u, 2u}) {
    CAPTURE(threads);
    std::vector<float> mem(64, -1.0f);
    Session session;
    LaunchMemory memory;
    std::string error;
    REQUIRE(session.prepare(
        withKernelAccess(*k.kernel, {pointer("p", viewOf(mem, DType::F32))}, {ptrArg(0)}), memory,
        error));
    interp::LaunchOptions options;
    options.grid = {64, 1, 1};
    options.threads = threads;
    options.printStream = &out;
    std::optional<interp::Fault> fault = k.kernel->run({ptrArg(0)}, memory, options);
    REQUIRE(fault);
    CHECK(fault->kind == "internal_error");
    CHECK(fault->message.find("the interpreter could not go on") != std::string::npos);
    session.abandon();
    CHECK(mem == std::vector<float>(64, -1.0f)); // the launch's stores never reach the caller
  }
}
