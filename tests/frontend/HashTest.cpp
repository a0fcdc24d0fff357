//===- HashTest.cpp - structural hash: blind to locations and names, not to semantics ===//

#include "TestUtil.h"

#include <cctype>

using namespace fe_test;
using namespace ttinterp::frontend;

namespace {

/// Adds 100 to the line of every file location and moves the file elsewhere.
std::string moveLocations(const std::string &text) {
  static const std::regex fileLoc("loc\\(\"[^\"]*\\.py\":([0-9]+):([0-9]+)\\)");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), fileLoc);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out += text.substr(last, it->position() - last);
    out += "loc(\"/elsewhere/renamed_kernels.py\":" + std::to_string(std::stoi((*it)[1]) + 100) +
           ":" + std::to_string(std::stoi((*it)[2]) + 3) + ")";
    last = it->position() + it->length();
  }
  return out + text.substr(last);
}

/// Renames every SSA value: %x -> %renamed_x, %0 -> %renamed_0 (uses and definitions alike).
std::string renameValues(const std::string &text) {
  static const std::regex value("%([A-Za-z0-9_$.]+)");
  return std::regex_replace(text, value, "%renamed_$1");
}

/// Points every op at the same location and drops argument name locations.
std::string flattenLocations(const std::string &text) {
  static const std::regex named("loc\\(\"[A-Za-z0-9_]+\"\\(#loc[0-9]*\\)\\)");
  static const std::regex alias("loc\\(#loc[0-9]+\\)");
  return std::regex_replace(std::regex_replace(text, named, "loc(unknown)"), alias, "loc(#loc)");
}

bool isLowerHex64(const std::string &s) {
  if (s.size() != 64)
    return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)) && !(c >= 'a' && c <= 'f'))
      return false;
  return true;
}

// A small kernel whose every line below is the target of a one-token mutation.
const char *kBase = R"(#loc = loc("k.py":1:0)
module {
  tt.func public @k(%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("x_ptr"(#loc)), %n: i32 loc("n"(#loc))) attributes {noinline = false} {
    %c4_i32 = arith.constant 4 : i32 loc(#loc1)
    %pid = tt.get_program_id x : i32 loc(#loc1)
    %start = arith.muli %pid, %c4_i32 : i32 loc(#loc2)
    %r = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32> loc(#loc2)
    %s = tt.splat %start : i32 -> tensor<16xi32> loc(#loc2)
    %offs = arith.addi %s, %r : tensor<16xi32> loc(#loc2)
    %ns = tt.splat %n : i32 -> tensor<16xi32> loc(#loc3)
    %mask = arith.cmpi slt, %offs, %ns : tensor<16xi32> loc(#loc3)
    %p = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<16x!tt.ptr<f32>> loc(#loc4)
    %pa = tt.addptr %p, %offs : tensor<16x!tt.ptr<f32>>, tensor<16xi32> loc(#loc4)
    %v = tt.load %pa, %mask evictionPolicy = evict_first : tensor<16x!tt.ptr<f32>> loc(#loc4)
    %w = arith.addf %v, %v : tensor<16xf32> loc(#loc5)
    %d = arith.subf %w, %v : tensor<16xf32> loc(#loc5)
    %t = arith.sitofp %pid : i32 to f32 loc(#loc5)
    %m = tt.reshape %d : tensor<16xf32> -> tensor<4x4xf32> loc(#loc6)
    %dot = tt.dot %m, %m, %m : tensor<4x4xf32> * tensor<4x4xf32> -> tensor<4x4xf32> loc(#loc6)
    %red = "tt.reduce"(%dot) <{axis = 1 : i32}> ({
    ^bb0(%a: f32 loc(unknown), %b: f32 loc(unknown)):
      %sum = arith.addf %a, %b : f32 loc(#loc7)
      tt.reduce.return %sum : f32 loc(#loc7)
    }) : (tensor<4x4xf32>) -> tensor<4xf32> loc(#loc7)
    %q = tt.reshape %red : tensor<4xf32> -> tensor<4xf32> loc(#loc7)
    %pq = tt.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32> loc(#loc8)
    %pp = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<4x!tt.ptr<f32>> loc(#loc8)
    %po = tt.addptr %pp, %pq : tensor<4x!tt.ptr<f32>>, tensor<4xi32> loc(#loc8)
    tt.store %po, %q : tensor<4x!tt.ptr<f32>> loc(#loc8)
    tt.store %pa, %d, %mask : tensor<16x!tt.ptr<f32>> loc(#loc9)
    tt.return loc(#loc9)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("k.py":2:10)
#loc2 = loc("k.py":3:10)
#loc3 = loc("k.py":4:10)
#loc4 = loc("k.py":5:10)
#loc5 = loc("k.py":6:10)
#loc6 = loc("k.py":7:10)
#loc7 = loc("k.py":8:10)
#loc8 = loc("k.py":9:10)
#loc9 = loc("k.py":10:4)
)";

} // namespace

TEST_CASE("hash is lowercase hex SHA-256 and the same in two fresh contexts") {
  for (const char *file : {"add_kernel.ttir", "matmul_kernel.ttir", "call_kernel.ttir"}) {
    std::string text = readFile(samplePath("3.8.0", file));
    std::string first = hashOf(text);
    std::string second = hashOf(text);
    CHECK(isLowerHex64(first));
    CHECK(first == second);
  }
  CHECK(hashOf(kBase) == hashOf(kBase));
}

TEST_CASE("different kernels hash differently") {
  std::set<std::string> hashes;
  std::vector<std::string> files;
  for (const std::string &file : allSamples())
    if (file.find("3.8.0") != std::string::npos && file.find(".source.") == std::string::npos)
      files.push_back(file);
  REQUIRE(files.size() >= 14);
  for (const std::string &file : files)
    hashes.insert(hashOf(readFile(file)));
  CHECK(hashes.size() == files.size());
}

TEST_CASE("locations, file names and SSA names do not change the hash") {
  for (const char *file : {"add_kernel.ttir", "matmul_kernel.ttir", "reduce_kernel.ttir",
                           "control_kernel.ttir", "call_kernel.ttir"}) {
    CAPTURE(file);
    std::string text = readFile(samplePath("3.8.0", file));
    std::string base = hashOf(text);
    std::string moved = moveLocations(text);
    REQUIRE(moved != text);
    CHECK(hashOf(moved) == base);
    std::string renamed = renameValues(text);
    REQUIRE(renamed != text);
    CHECK(hashOf(renamed) == base);
    std::string flat = flattenLocations(text);
    REQUIRE(flat != text);
    CHECK(hashOf(flat) == base);
    CHECK(hashOf(renameValues(moveLocations(flat))) == base);
  }
  // 3.3-style dumps: %argN names and file locations on arguments.
  std::string old = readFile(samplePath("3.3.1", "matmul_kernel.ttir"));
  CHECK(hashOf(renameValues(moveLocations(old))) == hashOf(old));
}

TEST_CASE("hand-written variants that only differ in names, locations or spelling hash equal") {
  std::string base = hashOf(kBase);
  std::string noLocs;
  std::istringstream lines(kBase);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("#loc", 0) != 0) // drop the alias definitions
      noLocs +=
          std::regex_replace(
              line, std::regex(" loc\\((unknown|#loc[0-9]*|\"[^\"]*\"\\(#loc[0-9]*\\))\\)"), "") +
          "\n";
  REQUIRE(noLocs.find("loc(") == std::string::npos);
  CHECK(hashOf(noLocs) == base);
  // Attribute order inside a dictionary and the optional `!tt.` spelling are not semantic.
  std::string reordered =
      replaceOnce(kBase, "{end = 16 : i32, start = 0 : i32}", "{start = 0 : i32, end = 16 : i32}");
  CHECK(hashOf(reordered) == base);
  std::string callsite = replaceOnce(kBase, "%sum = arith.addf %a, %b : f32 loc(#loc7)",
                                     "%sum = arith.addf %a, %b : f32 "
                                     "loc(callsite(\"lib.py\":3:4 at \"k.py\":8:10))");
  CHECK(hashOf(callsite) == base);

  // Stripped `<tensor<...>>` and full `!tt.ptr<tensor<...>>` spellings of a block pointer.
  std::string blocks = readFile(samplePath("3.5.1", "block_ptr_kernel.source.ttir"));
  std::string full = std::regex_replace(blocks, std::regex(": <tensor<64x32xf16>>"),
                                        ": !tt.ptr<tensor<64x32xf16>>");
  REQUIRE(full != blocks);
  CHECK(hashOf(full) == hashOf(blocks));
}

TEST_CASE("one-token semantic changes change the hash") {
  std::string base = hashOf(kBase);
  struct Mutation {
    const char *what, *from, *to;
  } mutations[] = {
      {"op", "%w = arith.addf %v, %v", "%w = arith.mulf %v, %v"},
      {"cmpi predicate", "arith.cmpi slt", "arith.cmpi sle"},
      {"constant", "arith.constant 4 : i32", "arith.constant 5 : i32"},
      {"result type", "arith.sitofp %pid : i32 to f32", "arith.sitofp %pid : i32 to f64"},
      {"inputPrecision", "tt.dot %m, %m, %m :", "tt.dot %m, %m, %m, inputPrecision = tf32 :"},
      {"reduce axis", "<{axis = 1 : i32}>", "<{axis = 0 : i32}>"},
      {"operand order", "arith.subf %w, %v", "arith.subf %v, %w"},
      {"operand choice", "tt.store %pa, %d, %mask", "tt.store %pa, %w, %mask"},
      {"eviction policy", "evictionPolicy = evict_first", "evictionPolicy = evict_last"},
      {"program id axis", "tt.get_program_id x", "tt.get_program_id y"},
      {"make_range bound", "{end = 16 : i32, start = 0 : i32}",
       "{end = 17 : i32, start = 1 : i32}"},
      {"argument hint", "tt.divisibility = 16 : i32", "tt.divisibility = 8 : i32"},
      {"function name", "@k(", "@k2("},
      {"visibility", "tt.func public @k", "tt.func private @k"},
      {"reshape flag", "tt.reshape %d :", "tt.reshape %d allow_reorder :"},
  };
  std::set<std::string> seen{base};
  for (const Mutation &m : mutations) {
    CAPTURE(m.what);
    std::string text = replaceOnce(kBase, m.from, m.to);
    Parsed p = parse(text);
    REQUIRE_MESSAGE(p.module, p.error);
    auto fn = *p.module->getOps<mlir::FunctionOpInterface>().begin();
    std::string h = structuralHash(fn);
    CHECK(h != base);
    CHECK(seen.insert(h).second); // every mutation differs from the others, too
  }
  // The same kind of change in a real sample: tf32 -> ieee on one dot.
  std::string matmul = readFile(samplePath("3.8.0", "matmul_kernel.ttir"));
  CHECK(hashOf(replaceOnce(matmul, ", inputPrecision = tf32 :", " :")) != hashOf(matmul));
  CHECK(hashOf(replaceOnce(matmul, ", inputPrecision = tf32 :", ", inputPrecision = tf32x3 :")) !=
        hashOf(matmul));
}

TEST_CASE("a kernel's hash covers the functions it calls") {
  std::string text = readFile(samplePath("3.8.0", "call_kernel.ttir"));
  // The helper computes factor * 2.0 + bias; change the helper's multiply only.
  size_t helper = text.find("tt.func private");
  REQUIRE(helper != std::string::npos);
  size_t mul = text.find("arith.mulf", helper);
  REQUIRE(mul != std::string::npos);
  std::string changed = text;
  changed.replace(mul, std::string("arith.mulf").size(), "arith.divf");
  CHECK(hashOf(changed) != hashOf(text));

  // Recursion does not loop forever.
  const char *recursive = R"(module {
  tt.func private @f(%x: i32) -> i32 {
    %y = tt.call @f(%x) : (i32) -> i32
    tt.return %y : i32
  }
  tt.func public @k(%x: i32) {
    %y = tt.call @f(%x) : (i32) -> i32
    tt.return
  }
}
)";
  std::string h = hashOf(recursive);
  CHECK(isLowerHex64(h));
  CHECK(h == hashOf(recursive));
}

TEST_CASE("large constants are hashed in full") {
  // 256 distinct elements; only the last one differs between the two kernels.
  auto kernel = [](int last) {
    std::string values;
    for (int i = 0; i < 255; ++i)
      values += std::to_string(i) + ", ";
    values += std::to_string(last);
    return "module {\n  tt.func public @k() {\n    %c = arith.constant dense<[" + values +
           "]> : tensor<256xi32>\n    tt.return\n  }\n}\n";
  };
  CHECK(hashOf(kernel(255)) != hashOf(kernel(256)));
  CHECK(hashOf(kernel(255)) == hashOf(kernel(255)));
}
