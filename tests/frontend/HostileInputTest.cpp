//===- HostileInputTest.cpp - TTIR that crashed MLIR 19's parser is rejected -===//
//
// One test per crash found by fuzzing (issue 14, items 4 and 5): deep nesting overflowed
// the parser's stack, and some misplaced SSA names made it corrupt its heap. The text goes
// straight to the loader (parseTTIR), which must answer with one located error line.
// Positions are counted by hand in the texts (columns start at 1). The forms that look
// alike but are valid (forward references between blocks, printed and generic forms of
// every sample) must still load.

#include "TestUtil.h"

#include <pthread.h>

using namespace fe_test;
using namespace ttinterp::frontend;

namespace {

std::string repeat(const std::string &s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

/// The one-line error parseTTIR gives for `text` (as "bad.ttir"); the test fails if it
/// loads.
std::string errorOf(const std::string &text) {
  Parsed p = parse(text, "bad.ttir");
  CHECK_MESSAGE(!p.module, "expected an error");
  CHECK(p.error.find('\n') == std::string::npos);
  return p.error;
}

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

/// A kernel whose function carries attribute `a = VALUE`.
std::string withAttribute(const std::string &value) {
  return "module {\n  tt.func public @k() attributes {a = " + value +
         "} {\n    tt.return\n  }\n}\n";
}

/// `depth` scf.if regions nested in a kernel; the innermost stores 7 through %p.
std::string nestedIfs(size_t depth) {
  return "module {\n  tt.func public @k(%p: !tt.ptr<i32>, %c: i1) {\n"
         "    %v = arith.constant 7 : i32\n" +
         repeat("scf.if %c {\n", depth) + "tt.store %p, %v : !tt.ptr<i32>\n" +
         repeat("}\n", depth) + "    tt.return\n  }\n}\n";
}

/// Runs `body` on a thread with a `bytes` stack, as a caller with a small stack would.
template <typename F> void onStackOf(size_t bytes, F body) {
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, bytes) == 0);
  pthread_t thread;
  auto run = [](void *arg) -> void * {
    (*static_cast<F *>(arg))();
    return nullptr;
  };
  REQUIRE(pthread_create(&thread, &attr, run, &body) == 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

// GCC says ASan is on with __SANITIZE_ADDRESS__, clang 14 only through __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TTINTERP_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(TTINTERP_TEST_ASAN)
// Sanitized frames are several times larger.
constexpr size_t kSmallStack = 8u << 20;
#else
constexpr size_t kSmallStack = 1u << 20;
#endif

} // namespace

//===----------------------------------------------------------------------===//
// Item 4: nesting that overflowed the parser's stack
//===----------------------------------------------------------------------===//

TEST_CASE("5,000 nested scf.if regions are rejected by the nesting limit") {
  std::string error = errorOf(nestedIfs(5000));
  CAPTURE(error);
  // Line 3 + k holds the k-th `scf.if %c {`, whose brace (column 11) is level 2 + k
  // (module and function braces first): level 257, the first too deep, is on line 258.
  CHECK(startsWith(error, "bad.ttir:258:11: error: nesting deeper than 256 levels"));
}

TEST_CASE("a function attribute nested 10,000 brackets deep is rejected") {
  std::string error = errorOf(withAttribute(repeat("[", 10000) + repeat("]", 10000)));
  CAPTURE(error);
  // `[` number k sits at column 38 + k on line 2 at level 2 + k (inside `module {` and
  // the attribute dictionary's brace): level 257 is k = 255, column 293.
  CHECK(startsWith(error, "bad.ttir:2:293: error: nesting deeper than 256 levels"));
}

TEST_CASE("a tensor type nested 30,000 deep is rejected") {
  std::string text = "module {\n  tt.func public @k(%x: " + repeat("tensor<2x", 30000) + "i32" +
                     repeat(">", 30000) + ") {\n    tt.return\n  }\n}\n";
  std::string error = errorOf(text);
  CAPTURE(error);
  // Levels: `module {`, `@k(`, then the k-th `<` at level 2 + k, column 31 + 9 (k - 1)
  // (`tensor<2x` is 9 characters from column 25): level 257 is k = 255, column 2317.
  CHECK(startsWith(error, "bad.ttir:2:2317: error: nesting deeper than 256 levels"));
}

TEST_CASE("a dense literal nested 30,000 deep is rejected") {
  std::string text = "module {\n  tt.func public @k() {\n    %c = arith.constant dense<" +
                     repeat("[", 30000) + "1" + repeat("]", 30000) +
                     "> : tensor<1xi32>\n    tt.return\n  }\n}\n";
  std::string error = errorOf(text);
  CAPTURE(error);
  // Two braces, then `dense<` (column 30) is level 3 and the k-th `[` (column 30 + k) is
  // level 3 + k: level 257 is k = 254, column 284.
  CHECK(startsWith(error, "bad.ttir:3:284: error: nesting deeper than 256 levels"));
}

TEST_CASE("a chain of attribute aliases counts its expanded depth") {
  // MLIR does not recurse through an alias while parsing, but printing the attribute does:
  // each alias wraps the previous one in one more bracket, so `#a<k>` is k + 1 deep.
  std::string text = "#a0 = [1]\n";
  for (int k = 1; k < 1100; ++k)
    text += "#a" + std::to_string(k) + " = [#a" + std::to_string(k - 1) + "]\n";
  std::string error = errorOf(text + withAttribute("#a1099"));
  CAPTURE(error);
  // #a1023 = [#a1022] (line 1024) is 1024 deep; #a1024 = [#a1023] (line 1025) is the first
  // to pass the limit, at its use of #a1023 (column 11).
  CHECK(startsWith(error, "bad.ttir:1025:11: error: nesting deeper than 1024 levels once "
                          "alias '#a1023' is expanded"));
}

TEST_CASE("an alias whose value starts on the next line still counts its depth") {
  // As above, with a line break after each `=`: #a<k> is defined on lines 2k + 1, 2k + 2.
  std::string text = "#a0 =\n  [1]\n";
  for (int k = 1; k < 1100; ++k)
    text += "#a" + std::to_string(k) + " =\n  [#a" + std::to_string(k - 1) + "]\n";
  std::string error = errorOf(text + withAttribute("#a1099"));
  CAPTURE(error);
  // #a1024's value `[#a1023]` is on line 2 * 1024 + 2, #a1023 at column 4.
  CHECK(startsWith(error, "bad.ttir:2050:4: error: nesting deeper than 1024 levels once "
                          "alias '#a1023' is expanded"));
}

TEST_CASE("a location alias defined after its use counts its expanded depth") {
  // Triton prints #loc definitions after the module. #l<k> = loc("n"(#l<k-1>)) is counted
  // 2k + 1 deep (`loc(` and the name's parenthesis per link), so #l511 is 1023 deep: used
  // inside `module {`, `tt.func {` and `loc(` it makes 1026.
  std::string text = "module {\n  tt.func public @k() {\n    tt.return loc(#l511)\n  }\n}\n"
                     "#l0 = loc(\"a.py\":1:1)\n";
  for (int k = 1; k < 512; ++k)
    text += "#l" + std::to_string(k) + " = loc(\"n\"(#l" + std::to_string(k - 1) + "))\n";
  std::string error = errorOf(text);
  CAPTURE(error);
  CHECK(startsWith(error, "bad.ttir:3:19: error: nesting deeper than 1024 levels once alias "
                          "'#l511' is expanded"));
  // One link less (#l510, 1021 deep; 1024 at the use) loads.
  std::string shorter = replaceOnce(text, "loc(#l511)", "loc(#l510)");
  Parsed p = parse(shorter);
  CHECK_MESSAGE(p.module, p.error);
}

TEST_CASE("a long affine expression is rejected before MLIR recurses through it") {
  std::string sum = "affine_map<(d0) -> (d0" + repeat(" + d0", 200000) + ")>";
  std::string error = errorOf(withAttribute(sum));
  CAPTURE(error);
  // The map starts at column 39 and its first `d0` ends at column 60; the j-th ` + d0`
  // puts its `+` at column 62 + 5 (j - 1): the 257th at 1342.
  CHECK(startsWith(error, "bad.ttir:2:1342: error: affine expression with more than 256"));

  // Unary minus: the j-th `-` is at column 58 + j.
  std::string negations = "affine_map<(d0) -> (" + repeat("-", 200000) + "d0)>";
  error = errorOf(withAttribute(negations));
  CHECK(startsWith(error, "bad.ttir:2:315: error: affine expression with more than 256"));
}

TEST_CASE("nesting just under the limit loads and runs on a 1 MiB stack") {
  // 252 regions + module + function = 254 braces, under the limit: the check lets it
  // through, and parse + verify fit in a small stack, so the limit is safe for callers on
  // threads with 1 MiB stacks (sanitized builds: 8 MiB).
  std::string text = nestedIfs(252);
  std::string attribute = withAttribute(repeat("[", 250) + repeat("]", 250));
  bool loaded = false;
  bool attributeLoaded = false;
  onStackOf(kSmallStack, [&] {
    loaded = static_cast<bool>(parse(text).module);
    attributeLoaded = static_cast<bool>(parse(attribute).module);
  });
  CHECK(loaded);
  CHECK(attributeLoaded);
}

//===----------------------------------------------------------------------===//
// Item 5: SSA names that MLIR 19 binds across regions
//===----------------------------------------------------------------------===//

TEST_CASE("a top-level op using a value defined in a function whose parse then fails") {
  // MLIR binds the top-level %0 to the function's %0, then frees the function body when
  // the (unterminated) function fails to parse: heap corruption.
  std::string error = errorOf("%1 = arith.addi %0, %0 : i32\n"
                              "tt.func public @k(%x: i32) {\n"
                              "  %0 = arith.addi %x, %x : i32\n");
  CAPTURE(error);
  CHECK(error == "bad.ttir:1:17: error: '%0' is used here but defined at 3:3, in a region "
                 "that does not enclose this use");
}

TEST_CASE("a top-level op using a value defined in a complete function") {
  std::string error = errorOf("%1 = arith.addi %0, %0 : i32\n"
                              "tt.func public @k(%x: i32) {\n"
                              "  %0 = arith.addi %x, %x : i32\n"
                              "  tt.return\n"
                              "}\n");
  CHECK(startsWith(error, "bad.ttir:1:17: error: '%0' is used here but defined at 3:3"));
}

TEST_CASE("scf.if whose condition is defined inside its own region") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    %r = scf.if %b -> (i32) {
      %b = arith.cmpi eq, %x, %x : i32
      scf.yield %x : i32
    } else {
      scf.yield %x : i32
    }
    tt.return
  }
}
)");
  CHECK(error == "bad.ttir:3:17: error: '%b' is used here but defined at 4:7, in a region "
                 "that does not enclose this use");
}

TEST_CASE("scf.while whose initial value is defined inside its after region") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    %r = scf.while (%i = %j) : (i32) -> i32 {
      %c = arith.cmpi slt, %i, %x : i32
      scf.condition(%c) %i : i32
    } do {
    ^bb0(%a: i32):
      %j = arith.addi %a, %x : i32
      scf.yield %j : i32
    }
    tt.return
  }
}
)");
  CHECK(error == "bad.ttir:3:26: error: '%j' is used here but defined at 8:7, in a region "
                 "that does not enclose this use");
}

TEST_CASE("scf.for whose initial value is its own region argument") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %acc) -> (i32) : i32 {
      scf.yield %acc : i32
    }
    tt.return
  }
}
)");
  // The region argument %acc (column 52) is defined when the region opens, so the
  // initial value %acc (column 59) is a forward reference to it.
  CHECK(startsWith(error, "bad.ttir:5:59: error: '%acc' is used here but defined at 5:52"));
}

TEST_CASE("a value used in one region and defined in its sibling") {
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32, %c: i1) {
    scf.if %c {
      %u = arith.addi %v, %v : i32
    } else {
      %v = arith.addi %x, %x : i32
    }
    tt.return
  }
}
)");
  CHECK(startsWith(error, "bad.ttir:4:23: error: '%v' is used here but defined at 6:7"));
}

TEST_CASE("a value used in one function and defined in the next, which is cut short") {
  // MLIR binds @k's %v to @g's, then frees @g's body under @k's use.
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32) {
    %u = arith.addi %v, %v : i32
    tt.return
  }
  tt.func public @g(%x: i32) {
    %v = arith.addi %x, %x : i32
)");
  CHECK(startsWith(error, "bad.ttir:3:21: error: '%v' is used here but defined at 7:5"));
}

TEST_CASE("a block's forward reference bound inside a later op's region, cut short") {
  // MLIR binds %v in ^bb1 to the %v defined inside the scf.if of ^bb2, then frees that
  // region (the scf.if does not parse) under ^bb1's use.
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32, %c: i1) {
    cf.br ^bb2
  ^bb1:
    %u = arith.addi %v, %v : i32
    tt.return
  ^bb2:
    scf.if %c {
      %v = arith.addi %x, %x : i32
)");
  CHECK(startsWith(error, "bad.ttir:5:21: error: '%v' is used here but defined at 9:7"));
}

TEST_CASE("a block argument binding an outer forward reference, then a truncated label") {
  // Found by mutating a sample: MLIR defines each block argument as soon as it has parsed
  // it, binding the module-level %a to the reduce region's argument; the label then fails
  // to parse and the region is freed under the module-level op.
  std::string error = errorOf(R"(module {
  %6 = arith.muli %a, %a : i32
  tt.func public @k(%x: tensor<4xi32>) {
    %2 = "tt.reduce"(%x) <{axis = 0 : i32}> ({
    ^bb0(%a: i32, %b: i32 loc(callsite(
)");
  CHECK(error == "bad.ttir:2:19: error: '%a' is used here but defined at 5:10, in a region "
                 "that does not enclose this use");
}

TEST_CASE("a block label with arguments but no colon binds them all the same") {
  // MLIR has bound %v to the label's argument before it finds the ':' missing.
  std::string error = errorOf(R"(module {
  tt.func public @k(%x: i32, %c: i1) {
    scf.if %c {
      %u = arith.addi %v, %v : i32
    }
    scf.execute_region {
    ^bb0(%v: i32)
      scf.yield
    }
    tt.return
  }
}
)");
  CHECK(startsWith(error, "bad.ttir:4:23: error: '%v' is used here but defined at 7:10"));
}

TEST_CASE("an op's result used inside its own region is MLIR's error, not a crash") {
  // The check lets this through (the result is defined in the enclosing region, after
  // the op); MLIR binds the use to it and reports it, with a note.
  Parsed p = parse(R"(module {
  tt.func public @k(%x: i32, %c: i1) {
    %r = scf.if %c -> (i32) {
      %u = arith.addi %r, %r : i32
      scf.yield %u : i32
    } else {
      scf.yield %x : i32
    }
    tt.return
  }
}
)",
                   "bad.ttir");
  CHECK(!p.module);
  CHECK(startsWith(p.error, "bad.ttir:4:12: error: operand #0 does not dominate this use"));
}

TEST_CASE("forward references between blocks of one region still load") {
  // ^bb2 dominates ^bb1, so ^bb1 (and a region nested in it) may use ^bb2's values.
  Parsed p = parse(R"(module {
  tt.func public @k(%x: i32, %c: i1) {
    cf.br ^bb2(%x : i32)
  ^bb1:
    %u = arith.addi %v, %w#1 : i32
    scf.if %c {
      %n = arith.addi %v, %u : i32
    }
    tt.return
  ^bb2(%a: i32):
    %v = arith.addi %a, %x : i32
    %w:2 = scf.if %c -> (i32, i32) {
      scf.yield %v, %v : i32, i32
    } else {
      scf.yield %x, %x : i32, i32
    }
    cf.br ^bb1
  }
}
)");
  CHECK_MESSAGE(p.module, p.error);
}

TEST_CASE("region and block arguments may reuse names across regions and functions") {
  Parsed p = parse(R"(module {
  tt.func private @empty(%a: i32 {tt.divisibility = 16 : i32}) attributes {noinline = true} {
    tt.return
  }
  tt.func public @k(%a: i32, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (i32) : i32 {
      %t = arith.addi %acc, %i : i32
      scf.yield %t : i32
    }
    %w = scf.while (%i = %s) : (i32) -> i32 {
      %lt = arith.cmpi slt, %i, %n : i32
      scf.condition(%lt) %i : i32
    } do {
    ^bb0(%i: i32):
      %t = arith.addi %i, %c1 : i32
      scf.yield %t : i32
    }
    tt.call @empty(%w) : (i32) -> ()
    tt.return
  }
}
)");
  CHECK_MESSAGE(p.module, p.error);
}

//===----------------------------------------------------------------------===//
// Chains of tt.call: the structural hash and the lowering recurse once per level
//===----------------------------------------------------------------------===//

/// A module where @k calls @f0, and each @fI calls @fI+1 up to @f{depth-1}. Function
/// @fI opens on line 2 + 4 I, its call is on line 3 + 4 I at column 10.
std::string callChain(size_t depth) {
  std::string text = "module {\n";
  for (size_t i = 0; i < depth; ++i) {
    text += "  tt.func private @f" + std::to_string(i) + "(%x: i32) -> i32 {\n";
    if (i + 1 < depth)
      text += "    %r = tt.call @f" + std::to_string(i + 1) + "(%x) : (i32) -> i32\n"
              "    tt.return %r : i32\n";
    else
      text += "    %r = arith.addi %x, %x : i32\n    tt.return %r : i32\n";
    text += "  }\n";
  }
  return text + "  tt.func public @k(%p: !tt.ptr<i32>) {\n"
                "    %c = arith.constant 1 : i32\n"
                "    %r = tt.call @f0(%c) : (i32) -> i32\n"
                "    tt.store %p, %r : !tt.ptr<i32>\n"
                "    tt.return\n  }\n}\n";
}

/// The error line for a call chain `depth` deep (a verification error, so a note with the
/// op's own location follows it).
std::string callChainError(size_t depth) {
  Parsed p = parse(callChain(depth), "bad.ttir");
  CHECK_MESSAGE(!p.module, "expected an error");
  return p.error.substr(0, p.error.find('\n'));
}

TEST_CASE("a chain of 3,000 functions calling one another is rejected at its 257th level") {
  // Without the limit, hashing or lowering this chain overflowed the stack. Depths are
  // counted from the leaf: @f2999 is 1 deep, @fI is 3000 - I deep, so @f2743 is the first
  // deeper than 256 and its call (line 3 + 4 * 2743 = 10975) is reported.
  std::string error = callChainError(3000);
  CHECK(startsWith(error, "bad.ttir:10975:10: error: calls nest deeper than 256 functions"));
}

TEST_CASE("a chain of 255 functions under @k loads and hashes on a 1 MiB stack") {
  // @f0 is 255 deep, @k 256: exactly the limit.
  std::string text = callChain(255);
  std::string hash, error;
  onStackOf(kSmallStack, [&] {
    Parsed p = parse(text);
    if (auto fn = p.module ? findFunction(*p.module, "k", error) : nullptr)
      hash = structuralHash(fn);
    else
      error += p.error;
  });
  CHECK_MESSAGE(hash.size() == 64, error);
  error = callChainError(256);
  CHECK(error.find("calls nest deeper than 256 functions") != std::string::npos);
}

TEST_CASE("a function calling itself is not a chain: recursion loads") {
  Parsed p = parse(R"(module {
  tt.func private @f(%x: i32) -> i32 {
    %r = tt.call @f(%x) : (i32) -> i32
    tt.return %r : i32
  }
  tt.func public @k(%p: !tt.ptr<i32>) {
    %c = arith.constant 1 : i32
    %r = tt.call @f(%c) : (i32) -> i32
    tt.store %p, %r : !tt.ptr<i32>
    tt.return
  }
}
)");
  CHECK_MESSAGE(p.module, p.error);
}

TEST_CASE("checkTTIRText accepts every sample and example as it is on disk") {
  std::vector<std::string> files;
  fs::path root(TTINTERP_SOURCE_DIR);
  for (const fs::path &dir : {root / "tests" / "data", root / "examples"})
    for (const auto &entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().extension() == ".ttir")
        files.push_back(entry.path().string());
  CHECK(files.size() >= 100);
  for (const std::string &file : files) {
    CAPTURE(file);
    std::string error;
    CHECK_MESSAGE(checkTTIRText(readFile(file), file, error), error);
  }
}
