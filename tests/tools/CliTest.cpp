//===- CliTest.cpp - The ttinterp binary: usage, exit statuses and messages ----------===//
#include "TestSupport.h"

#include <doctest/doctest.h>

#include <string>

using namespace ttinterp::testing;

namespace {

const std::string kVectorAdd = sourcePath("examples/vector_add/vector_add.ttir");

/// True when `text` contains `part`, with a readable failure message.
#define CHECK_CONTAINS(text, part)                                                                 \
  CHECK_MESSAGE((text).find(part) != std::string::npos,                                            \
                "'" << (text) << "' lacks '" << (part) << "'")

/// Bad input of any kind: status 2, one "ttinterp: error:" line first, nothing on stdout
/// that looks like a crash.
void checkBadInput(const CliResult &r, const std::string &message) {
  CHECK(r.status == 2);
  CHECK(r.err.rfind("ttinterp: error: ", 0) == 0);
  CHECK_CONTAINS(r.err, message);
}

/// A minimal TTIR kernel: stores through its pointer, takes an i32.
const char *kTinyKernel = R"(#loc = loc("tiny.py":1:0)
module {
  tt.func public @tiny(%p: !tt.ptr<f32> loc("p"(#loc)), %n: i32 loc("n"(#loc))) {
    %c = arith.constant 1.000000e+00 : f32
    tt.store %p, %c : !tt.ptr<f32>
    tt.return
  }
}
)";

} // namespace

TEST_CASE("help and version exit 0") {
  CliResult help = runCli("--help");
  CHECK(help.status == 0);
  CHECK_CONTAINS(help.out, "usage: ttinterp <command>");
  for (const char *command : {"run", "hash", "info"}) {
    CliResult r = runCli(std::string(command) + " --help");
    CHECK(r.status == 0);
    CHECK_CONTAINS(r.out, std::string("usage: ttinterp ") + command);
  }
  CliResult version = runCli("--version");
  CHECK(version.status == 0);
  CHECK(version.out.rfind("ttinterp ", 0) == 0);
}

TEST_CASE("usage errors exit 2 with one error line") {
  checkBadInput(runCli(""), "missing command");
  checkBadInput(runCli("frobnicate"), "unknown command 'frobnicate'");
  checkBadInput(runCli("run"), "missing SPEC.json operand");
  checkBadInput(runCli("run a.json b.json"), "unexpected argument 'b.json'");
  checkBadInput(runCli("run a.json --bogus 1"), "unknown option '--bogus'");
  checkBadInput(runCli("run a.json --threads"), "option '--threads' needs a value");
  checkBadInput(runCli("run a.json --threads=x"), "option '--threads' expects a whole number");
  checkBadInput(runCli("run a.json --bounds=wide"), "expects 'arg' or 'region'");
  checkBadInput(runCli("hash"), "missing KERNEL.ttir operand");
}

TEST_CASE("hash and info on an example exit 0") {
  CliResult hash = runCli("hash " + quote(kVectorAdd));
  CHECK(hash.status == 0);
  REQUIRE(hash.out.size() == 65); // 64 hex digits and a newline
  CHECK(hash.out.find_first_not_of("0123456789abcdef") == 64);
  CHECK(runCli("hash " + quote(kVectorAdd) + " --function add_kernel").out == hash.out);

  CliResult info = runCli("info " + quote(kVectorAdd));
  CHECK(info.status == 0);
  CHECK_CONTAINS(info.out, "add_kernel (public)");
  CHECK_CONTAINS(info.out, "x_ptr");
  CHECK_CONTAINS(info.out, "!tt.ptr<f32>");
  CHECK_CONTAINS(info.out, "i32");
  // vector_add loads x and y and stores out.
  CHECK_CONTAINS(info.out, "add_kernel: x_ptr read, y_ptr read, out_ptr write");

  checkBadInput(runCli("hash " + quote(kVectorAdd) + " --function nope"),
                "no function named 'nope'");
}

TEST_CASE("info on reduce_kernel with its library calls names every access") {
  // tests/data/ttir/kernels.py: reduce_kernel loads x and stores the other three.
  for (const char *version : {"3.5.1", "3.8.0", "3.9.0"}) {
    CAPTURE(version);
    CliResult info = runCli("info " + quote(sourcePath(std::string("tests/data/ttir/") + version +
                                                       "/reduce_kernel.source.ttir")));
    CHECK(info.status == 0);
    CHECK(info.err.empty());
    CHECK_CONTAINS(info.out, "reduce_kernel: x_ptr read, sum_ptr write, max_ptr write, "
                             "argmax_ptr write");
  }
}

TEST_CASE("hash ignores locations and SSA names") {
  TempDir dir;
  std::string a = dir.write("a.ttir", R"(#loc = loc("k.py":1:0)
module {
  tt.func public @k(%x_ptr: !tt.ptr<i32> loc("x_ptr"(#loc)), %n: i32 loc("n"(#loc))) {
    %pid = tt.get_program_id x : i32 loc(#loc1)
    %sum = arith.addi %pid, %n : i32 loc(#loc2)
    tt.store %x_ptr, %sum : !tt.ptr<i32> loc(#loc3)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("k.py":2:10)
#loc2 = loc("k.py":3:10)
#loc3 = loc("k.py":4:4)
)");
  std::string b = dir.write("b.ttir", R"(module {
  tt.func public @k(%arg0: !tt.ptr<i32>, %arg1: i32) {
    %0 = tt.get_program_id x : i32 loc("other.py":20:1)
    %1 = arith.addi %0, %arg1 : i32 loc("other.py":21:1)
    tt.store %arg0, %1 : !tt.ptr<i32>
    tt.return
  }
}
)");
  // Same structure, different op (subi): must hash differently.
  std::string c = dir.write("c.ttir", R"(module {
  tt.func public @k(%arg0: !tt.ptr<i32>, %arg1: i32) {
    %0 = tt.get_program_id x : i32
    %1 = arith.subi %0, %arg1 : i32
    tt.store %arg0, %1 : !tt.ptr<i32>
    tt.return
  }
}
)");
  CliResult ra = runCli("hash " + quote(a)), rb = runCli("hash " + quote(b)),
            rc = runCli("hash " + quote(c));
  REQUIRE(ra.status == 0);
  REQUIRE(rb.status == 0);
  REQUIRE(rc.status == 0);
  CHECK(ra.out == rb.out);
  CHECK(ra.out != rc.out);
}

TEST_CASE("malformed TTIR is reported with its position and exits 2") {
  TempDir dir;
  std::string bad = dir.write("bad.ttir", "module {\n  tt.func public @k(%a: i32) {\n"
                                          "    %0 = arith.addi %a, %b : i32\n"
                                          "    tt.return\n  }\n}\n");
  checkBadInput(runCli("hash " + quote(bad)), "bad.ttir:3:");
  checkBadInput(runCli("info " + quote(bad)), "bad.ttir:3:");
  checkBadInput(runCli("info " + quote(dir / "missing.ttir")), "cannot read TTIR file");

  // Through a spec: the note says which launch loaded it.
  std::string spec =
      dir.write("spec.json", R"({"launches": [{"kernel": "bad.ttir", "grid": [1], "args": []}]})");
  CliResult r = runCli("run " + quote(spec));
  checkBadInput(r, "bad.ttir:3:");
  CHECK_CONTAINS(r.err, "note: in launches[0]");
}

TEST_CASE("spec errors exit 2 and name the JSON path") {
  TempDir dir;
  dir.write("tiny.ttir", kTinyKernel);
  auto run = [&](const std::string &json, const std::string &extra = "") {
    return runCli("run " + quote(dir.write("spec.json", json)) + extra);
  };
  SUBCASE("unreadable spec") {
    checkBadInput(runCli("run " + quote(dir / "none.json")), "cannot read spec");
  }
  SUBCASE("malformed JSON") {
    checkBadInput(run("{\"launches\": [}"), "invalid JSON at byte 14 (line 1, column 15)");
  }
  SUBCASE("JSON nested 90,000 levels deep") {
    checkBadInput(
        run(R"({"a": )" + std::string(90000, '[') + std::string(90000, ']') + R"(, "b": 1})"),
        "spec.json: the JSON nests arrays and objects more than 256 deep");
  }
  SUBCASE("unknown buffer, with a report") {
    std::string report = dir / "report.json";
    CliResult r = run(R"({"launches": [{"kernel": "tiny.ttir", "grid": [1],
                          "args": ["q", {"i32": 1}]}]})",
                      " --report " + quote(report));
    checkBadInput(r, "spec.json: launches[0].args[0]: unknown buffer 'q'");
    std::string json = readFile(report);
    CHECK_CONTAINS(json, R"("status": "error")");
    CHECK_CONTAINS(json, R"("kind": "spec")");
  }
  SUBCASE("argument count") {
    checkBadInput(run(R"({"buffers": {"x": {"dtype": "f32", "shape": [1]}},
                          "launches": [{"kernel": "tiny.ttir", "grid": [1], "args": ["x"]}]})"),
                  "launches[0].args: tiny takes 2 arguments (p: *f32, n: i32), got 1");
  }
  SUBCASE("scalar type") {
    checkBadInput(run(R"({"buffers": {"x": {"dtype": "f32", "shape": [1]}},
                          "launches": [{"kernel": "tiny.ttir", "grid": [1],
                                        "args": ["x", {"f32": 1}]}]})"),
                  "launches[0].args[1]: scalar type f32 does not match parameter 'n' of type "
                  "i32");
  }
  SUBCASE("pointer dtype") {
    checkBadInput(run(R"({"buffers": {"x": {"dtype": "i32", "shape": [1]}},
                          "launches": [{"kernel": "tiny.ttir", "grid": [1],
                                        "args": ["x", {"i32": 1}]}]})"),
                  "buffer 'x' has dtype i32 but parameter 'p' points to f32");
  }
  SUBCASE("missing function") {
    checkBadInput(run(R"({"launches": [{"kernel": "tiny.ttir", "function": "nope",
                                        "grid": [1], "args": []}]})"),
                  "launches[0].function: tiny.ttir: no function named 'nope'");
  }
  SUBCASE("npy of the wrong shape") {
    std::string npy = dir / "x.npy";
    // A valid .npy holding f32[2] (header padded to 128 bytes, as numpy writes it).
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    header.resize(128 - 10 - 1, ' ');
    header += '\n';
    std::string file = std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header +
                       std::string(8, '\0');
    dir.write("x.npy", file);
    checkBadInput(
        run(R"({"buffers": {"x": {"dtype": "f32", "shape": [3], "init": {"npy": "x.npy"}}},
                          "launches": []})"),
        "buffers.x.init.npy: '");
  }
  SUBCASE("nothing runs when a later launch is bad") {
    CliResult r = run(R"({"buffers": {"x": {"dtype": "f32", "shape": [1]}}, "launches": [
        {"kernel": "tiny.ttir", "grid": [1], "args": ["x", {"i32": 1}]},
        {"kernel": "tiny.ttir", "grid": [1], "args": ["x"]}]})");
    checkBadInput(r, "launches[1].args");
    CHECK(r.out.empty());
  }
}

TEST_CASE("an op the interpreter cannot run is bad input naming the op") {
  TempDir dir;
  dir.write("asm.ttir", R"(module {
  tt.func public @asm(%p: !tt.ptr<i32>) {
    %r = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
    %s = tt.elementwise_inline_asm "mov.b32 $0, $1;" {constraints = "=r,r", packed_element = 1 : i32, pure = true} %r : tensor<4xi32> -> tensor<4xi32>
    %ps = tt.splat %p : !tt.ptr<i32> -> tensor<4x!tt.ptr<i32>>
    %pp = tt.addptr %ps, %r : tensor<4x!tt.ptr<i32>>, tensor<4xi32>
    tt.store %pp, %s : tensor<4x!tt.ptr<i32>>
    tt.return
  }
}
)");
  std::string spec = dir.write("spec.json", R"({"buffers": {"x": {"dtype": "i32", "shape": [4]}},
      "launches": [{"kernel": "asm.ttir", "grid": [1], "args": ["x"]}]})");
  std::string report = dir / "r.json";
  CliResult r = runCli("run " + quote(spec) + " --report " + quote(report));
  checkBadInput(r, "asm.ttir:4:");
  CHECK_CONTAINS(r.err, "tt.elementwise_inline_asm");
  CHECK_CONTAINS(readFile(report), R"("kind": "unsupported")");
}

TEST_CASE("a tensor descriptor argument stands for the descriptor, its shape and its strides") {
  // The tensor_desc fixture's TMA matmul: C = A @ B over three descriptors, A a window of a
  // larger buffer (rows 8.., columns 8.. of 80 x 112). Integer-valued inputs: exact.
  TempDir dir;
  std::string kernel = sourcePath("tests/data/kernels/tensor_desc/tma_matmul.ttir");
  std::string inputs = sourcePath("tests/data/kernels/tensor_desc/inputs/");
  auto spec = [&](const std::string &aArg, const std::string &extra = "") {
    return R"({"buffers": {
      "abig": {"dtype": "f16", "shape": [80, 112], "init": {"npy": ")" +
           inputs + R"(abig.npy"}},
      "b": {"dtype": "f16", "shape": [104, 56], "init": {"npy": ")" +
           inputs + R"(b.npy"}},
      "c": {"dtype": "f32", "shape": [70, 56], "init": {"fill": -1}},
      "ci": {"dtype": "i32", "shape": [70, 56]}},
      "launches": [{"kernel": ")" +
           kernel + R"(", "grid": [4], "args": [)" + aArg +
           R"(, {"tensordesc": "b"}, {"tensordesc": "c"}, {"i32": 70}, {"i32": 56}, {"i32": 104})" +
           extra + "]}]}";
  };
  std::string window = R"({"tensordesc": "abig", "offset": 904, "shape": [70, 104], "strides": [112, 1]})";
  SUBCASE("runs, and --out holds numpy's product") {
    CliResult r = runCli("run " + quote(dir.write("spec.json", spec(window))) + " --out " +
                         quote(dir / "out"));
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK_CONTAINS(r.out, "a_desc=tensordesc abig{offset 904, shape [70, 104], strides [112, 1]}");
    CHECK(floats(dir / "out/c.npy") ==
          floats(sourcePath("tests/data/kernels/tensor_desc/expected_view/c.npy")));
  }
  SUBCASE("the argument count is Python's: one per descriptor") {
    checkBadInput(runCli("run " + quote(dir.write("spec.json", spec(window, R"(, {"i32": 1})")))),
                  "tma_matmul_kernel takes 6 arguments (a_desc: tensordesc<64x32xf16>, b_desc: "
                  "tensordesc<32x32xf16>, c_desc: tensordesc<64x32xf32>, M: i32, N: i32, K: i32), "
                  "got 7");
  }
  SUBCASE("a buffer where a descriptor belongs") {
    checkBadInput(runCli("run " + quote(dir.write("spec.json", spec(R"("abig")")))),
                  "launches[0].args[0]: parameter 'a_desc' is a tensor descriptor; expected "
                  "{\"tensordesc\": \"abig\", ...}, got a pointer");
  }
  SUBCASE("a descriptor of the wrong rank") {
    checkBadInput(runCli("run " + quote(dir.write(
                                      "spec.json", spec(R"({"tensordesc": "abig", "shape": [8960]})")))),
                  "parameter 'a_desc' is a tensor descriptor of rank 2, but the descriptor has "
                  "shape [8960]");
  }
  SUBCASE("a descriptor of the wrong dtype") {
    checkBadInput(runCli("run " + quote(dir.write("spec.json",
                                                  spec(R"({"tensordesc": "ci"})")))),
                  "buffer 'ci' has dtype i32 but parameter 'a_desc' describes f16");
  }
  SUBCASE("NaN padding on an integer buffer") {
    checkBadInput(runCli("run " + quote(dir.write(
                                      "spec.json",
                                      spec(R"({"tensordesc": "ci", "padding": "nan"})")))),
                  "launches[0].args[0].padding: NaN padding needs a float buffer; 'ci' has dtype "
                  "i32");
  }
  SUBCASE("a descriptor reaching past its buffer") {
    checkBadInput(runCli("run " + quote(dir.write(
                                      "spec.json",
                                      spec(R"({"tensordesc": "abig", "offset": 904, "shape": [80, 104], "strides": [112, 1]})")))),
                  "launches[0].args[0]: view reaches elements [904, 9855] but buffer 'abig' has "
                  "elements [0, 8959]");
  }
}
