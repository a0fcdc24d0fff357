//===- ErrorsTest.cpp - malformed TTIR is rejected at its .ttir position ---===//
//
// Line and column numbers below are counted by hand in the texts (line 1 is `module {`;
// columns start at 1). A verifier error points at the op name; an "expected ..." syntax
// error points just past the last token that was still valid (MLIR's convention), and an
// unknown generic op just past its quoted name.

#include "TestUtil.h"

#include <cstdio>
#include <unistd.h>

using namespace fe_test;
using namespace ttinterp::frontend;

namespace {

/// Parses `text` as "bad.ttir" and returns the error (the test fails if it parses).
std::string errorOf(const std::string &text) {
  Parsed p = parse(text, "bad.ttir");
  CHECK_MESSAGE(!p.module, "expected an error for:\n" << text);
  CHECK(!p.error.empty());
  return p.error;
}

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("syntax error: missing operand") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    %0 = arith.addi %x, : i32
    tt.return
  }
}
)");
  CAPTURE(error);
  // `,` is column 23, so the position just past it is 3:24.
  CHECK(startsWith(error, "bad.ttir:3:24: error: "));
  CHECK(contains(error, "expected SSA operand"));
  // One message, on one line (no source excerpt, no caret line).
  CHECK(error.find('\n') == std::string::npos);
}

TEST_CASE("verifier error: addptr operand shapes differ; note gives the kernel source line") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%p: !tt.ptr<f32>, %o: tensor<8xi32>) {
    %s = tt.splat %p : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>>
    %a = tt.addptr %s, %o : tensor<4x!tt.ptr<f32>>, tensor<8xi32> loc("kernel.py":7:3)
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:4:10: error: 'tt.addptr' op"));
  CHECK(contains(error, "same shape"));
  CHECK(contains(error, "\nbad.ttir:4:10: note: kernel source location: kernel.py:7:3"));
}

TEST_CASE("type mismatch: stored value is not the pointee type") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%p: !tt.ptr<f32>, %v: i32) {
    tt.store %p, %v : !tt.ptr<f32>
    tt.return
  }
}
)");
  CAPTURE(error);
  // The value's type is inferred from the pointer (f32) and clashes with its definition (i32).
  CHECK(startsWith(error, "bad.ttir:3:18: error: "));
  CHECK(contains(error, "'%v'"));
  CHECK(contains(error, "f32"));
  CHECK(contains(error, "i32"));
}

TEST_CASE("unknown tt op") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    tt.frobnicate %x : i32
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:5: error: "));
  CHECK(contains(error, "tt.frobnicate"));
}

TEST_CASE("unknown dialect") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    %0 = foo.bar %x : i32
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: "));
  CHECK(contains(error, "foo"));
}

TEST_CASE("unknown op in generic form of an unknown dialect") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    "foo.bar"(%x) : (i32) -> ()
    tt.return
  }
}
)");
  CAPTURE(error);
  // `"foo.bar"` spans columns 5 to 13.
  CHECK(startsWith(error, "bad.ttir:3:14: error: "));
  CHECK(contains(error, "unknown dialect"));
}

TEST_CASE("reduce axis out of range") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: tensor<4x8xf32>) {
    %r = "tt.reduce"(%x) <{axis = 2 : i32}> ({
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tt.reduce.return %s : f32
    }) : (tensor<4x8xf32>) -> tensor<4xf32>
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: 'tt.reduce' op"));
  CHECK(contains(error, "axis 2"));
}

TEST_CASE("reduce region with the wrong arity") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: tensor<4x8xf32>) {
    %r = "tt.reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a: f32):
      tt.reduce.return %a : f32
    }) : (tensor<4x8xf32>) -> tensor<4xf32>
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: 'tt.reduce' op"));
  CHECK(contains(error, "2 arguments"));
}

TEST_CASE("dot with mismatched inner dimensions") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%a: tensor<16x32xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
    %d = tt.dot %a, %b, %c : tensor<16x32xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: 'tt.dot' op"));
  CHECK(contains(error, "inner dimensions"));
}

TEST_CASE("expand_dims with the wrong result shape") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%a: tensor<16xi32>) {
    %e = tt.expand_dims %a {axis = 1 : i32} : tensor<16xi32> -> tensor<1x16xi32>
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: 'tt.expand_dims' op"));
  CHECK(contains(error, "[16, 1]"));
}

TEST_CASE("make_range whose size is not end - start") {
  std::string error = errorOf(R"(module {
  tt.func public @k() {
    %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<64xi32>
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: 'tt.make_range' op"));
}

TEST_CASE("broadcast of a dimension that is not 1") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%a: tensor<2x1xi32>) {
    %b = tt.broadcast %a : tensor<2x1xi32> -> tensor<4x8xi32>
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: 'tt.broadcast' op"));
}

TEST_CASE("call of a function that does not exist") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    %y = tt.call @nope(%x) : (i32) -> i32
    tt.return
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:10: error: 'tt.call' op"));
  CHECK(contains(error, "nope"));
}

TEST_CASE("return that does not match the function type") {
  std::string error = errorOf(R"(module {
  tt.func private @f(%x: i32) -> f32 {
    tt.return %x : i32
  }
}
)");
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:5: error: 'tt.return' op"));
}

TEST_CASE("a file is named by its path; an unreadable file says so") {
  fs::path path = fs::temp_directory_path() / "ttinterp_frontend_bad_syntax.ttir";
  {
    std::ofstream out(path);
    out << "module {\n  tt.func public @k() {\n    tt.return\n  }\n"; // no closing brace
  }
  Parsed p = load(path.string());
  CHECK(!p.module);
  CAPTURE(p.error);
  // The last valid token is the `}` at 4:3.
  CHECK(startsWith(p.error, path.string() + ":4:4: error: "));
  fs::remove(path);

  Parsed missing = load("/nonexistent/ttinterp/kernel.ttir");
  CHECK(!missing.module);
  CAPTURE(missing.error);
  CHECK(
      startsWith(missing.error, "/nonexistent/ttinterp/kernel.ttir: error: cannot read TTIR file"));
}

TEST_CASE("errors are returned, not printed to stderr") {
  std::fflush(stderr);
  int saved = dup(STDERR_FILENO);
  REQUIRE(saved >= 0);
  std::FILE *capture = std::tmpfile();
  REQUIRE(capture);
  dup2(fileno(capture), STDERR_FILENO);
  Parsed p = parse("module {\n  tt.frobnicate\n}\n", "quiet.ttir");
  Parsed q =
      parse("module {\n  tt.func public @k(%a: tensor<2xi32>) {\n"
            "    %b = tt.broadcast %a : tensor<2xi32> -> tensor<4xi32>\n    tt.return\n  }\n}\n",
            "quiet.ttir");
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::fseek(capture, 0, SEEK_END);
  long written = std::ftell(capture);
  std::fclose(capture);
  CHECK(!p.module);
  CHECK(!q.module);
  CHECK(written == 0);
}

TEST_CASE("a valid module after an invalid one in the same context parses") {
  auto ctx = makeContext();
  std::string error;
  auto bad = parseTTIR(*ctx, "module {\n  tt.frobnicate\n}\n", "a.ttir", error);
  CHECK(!bad);
  CHECK(!error.empty());
  auto good = parseTTIR(*ctx, "module {\n  tt.func public @k() {\n    tt.return\n  }\n}\n",
                        "b.ttir", error);
  CHECK(good);
  CHECK(error.empty());
}
