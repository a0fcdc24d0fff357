//===- SpecTest.cpp - Spec parsing and validation: every error names its JSON path ----===//
#include "Spec.h"

#include <doctest/doctest.h>

#include <limits>

#include <cmath>
#include <string>

using namespace ttinterp;
using namespace ttinterp::driver;

namespace {

/// The error parsing `json` gives (the test fails if it parses).
std::string specError(const std::string &json) {
  std::string error;
  std::optional<Spec> spec = parseSpec(json, "spec.json", "/base", error);
  CHECK_MESSAGE(!spec, "expected an error for: " << json);
  return error;
}

Spec parsed(const std::string &json) {
  std::string error;
  std::optional<Spec> spec = parseSpec(json, "spec.json", "/base", error);
  REQUIRE_MESSAGE(spec, error);
  return *spec;
}

/// A spec with buffer x (f32[8]) and one launch whose args are `args`.
std::string withArgs(const std::string &args, const std::string &extraBuffers = "") {
  return R"({"buffers": {"x": {"dtype": "f32", "shape": [8]})" + extraBuffers +
         R"(}, "launches": [{"kernel": "k.ttir", "grid": [1], "args": [)" + args + "]}]}";
}

interp::Parameter pointer(const char *name, DType d) {
  interp::Parameter p;
  p.name = name;
  p.isPointer = true;
  p.dtype = d;
  return p;
}

interp::Parameter scalar(const char *name, DType d) {
  interp::Parameter p;
  p.name = name;
  p.dtype = d;
  return p;
}

/// The error binding the single launch of `json` to `params` gives.
std::string bindError(const std::string &json, const std::vector<interp::Parameter> &params) {
  Spec spec = parsed(json);
  std::string error;
  CHECK_FALSE(bindArguments(spec, spec.launches[0], "k", params, error));
  return error;
}

} // namespace

TEST_CASE("the example spec of docs/spec.md parses into the expected structure") {
  Spec spec = parsed(R"({ "buffers": {
    "x":   {"dtype": "f32", "shape": [1000], "init": "arange"},
    "y":   {"dtype": "f32", "shape": [1000], "init": {"npy": "y.npy"}},
    "out": {"dtype": "f32", "shape": [1000], "init": "zeros"},
    "t":   {"dtype": "i32", "shape": [4],    "init": {"fill": 7}},
    "sub": {"alias_of": "x", "byte_offset": 16, "dtype": "f32", "shape": [10]} },
  "launches": [
    {"kernel": "add.ttir", "function": "add_kernel", "grid": [4],
     "args": ["x", "y", "out", {"i32": 1000}], "donate": []},
    {"kernel": "add.ttir", "grid": [4, 1, 1],
     "args": [{"view": "x", "offset": 1, "shape": [999], "strides": [1]}, "y", "x", {"i32": 999}]},
    {"sync": ["out"]},
    {"step": true} ] })");
  REQUIRE(spec.buffers.size() == 5);
  CHECK(spec.buffers[0].name == "x");
  CHECK(spec.buffers[0].init == InitKind::Arange);
  CHECK(spec.buffers[0].byteSize == 4000);
  CHECK(spec.buffers[1].init == InitKind::Npy);
  CHECK(spec.buffers[1].npyPath == "/base/y.npy");
  CHECK(spec.buffers[3].dtype == DType::I32);
  CHECK(spec.buffers[3].fill.integer == 7);
  const BufferSpec &sub = spec.buffers[4];
  CHECK(sub.aliasOf == std::optional<size_t>(0));
  CHECK(sub.root == 0);
  CHECK(sub.rootOffset == 16);
  CHECK(sub.byteSize == 40);

  REQUIRE(spec.launches.size() == 4);
  const LaunchSpec &l0 = spec.launches[0];
  CHECK(l0.kind == StepKind::Launch);
  CHECK(l0.kernelPath == "/base/add.ttir");
  CHECK(l0.function == "add_kernel");
  CHECK(l0.grid == std::array<int64_t, 3>{4, 1, 1});
  REQUIRE(l0.args.size() == 4);
  CHECK(l0.args[0].kind == ArgKind::Buffer);
  CHECK(l0.args[0].shape == std::vector<int64_t>{1000});
  CHECK(l0.args[0].strides == std::vector<int64_t>{1});
  CHECK(l0.args[3].kind == ArgKind::Scalar);
  CHECK(l0.args[3].scalar.dtype == DType::I32);
  CHECK(l0.args[3].scalar.integer == 1000);
  const LaunchSpec &l1 = spec.launches[1];
  CHECK(l1.function.empty());
  CHECK(l1.args[0].kind == ArgKind::View);
  CHECK(l1.args[0].offset == 1);
  CHECK(l1.args[0].shape == std::vector<int64_t>{999});
  CHECK(spec.launches[2].kind == StepKind::Sync);
  CHECK(spec.launches[2].sync == std::vector<size_t>{2});
  CHECK(spec.launches[3].kind == StepKind::Step);
}

TEST_CASE("malformed JSON is reported with its byte position, line and column") {
  // Line 1 is bytes 0-19 plus its newline; the stray '}' is byte 29 (0-based): line 2,
  // column 9.
  std::string error = specError("{\"buffers\": {\"x\": 1,\n \"y\": 2,}}");
  CHECK(error.find("spec.json: invalid JSON at byte 29 (line 2, column 9)") == 0);
}

TEST_CASE("a number too large for a double is invalid JSON, not a crash") {
  CHECK(specError(R"({"launches": [], "buffers": {"x": {"dtype": "f32", "shape": [1e400]}}})")
            .find("spec.json: invalid JSON: number overflow") == 0);
}

TEST_CASE("arguments naming unknown buffers are rejected with the argument's path") {
  CHECK(specError(withArgs(R"("x", "q")")) == "spec.json: launches[0].args[1]: unknown buffer 'q'");
  CHECK(specError(withArgs(R"({"view": "nope", "shape": [1]})")) ==
        "spec.json: launches[0].args[0].view: unknown buffer 'nope'");
}

TEST_CASE("argument count and types are checked against the kernel's parameters") {
  std::vector<interp::Parameter> params = {pointer("x_ptr", DType::F32), scalar("n", DType::I32)};
  SUBCASE("count") {
    CHECK(bindError(withArgs(R"("x")"), params) ==
          "spec.json: launches[0].args: k takes 2 arguments (x_ptr: *f32, n: i32), got 1");
  }
  SUBCASE("scalar type") {
    CHECK(bindError(withArgs(R"("x", {"i64": 3})"), params) ==
          "spec.json: launches[0].args[1]: scalar type i64 does not match parameter 'n' of "
          "type i32");
  }
  SUBCASE("pointee dtype") {
    CHECK(bindError(withArgs(R"("h", {"i32": 3})", R"(, "h": {"dtype": "f16", "shape": [2]})"),
                    params) == "spec.json: launches[0].args[0]: buffer 'h' has dtype f16 but "
                               "parameter 'x_ptr' points to f32");
  }
  SUBCASE("scalar for a pointer, buffer for a scalar") {
    CHECK(bindError(withArgs(R"({"f32": 1}, {"i32": 3})"), params)
              .find("launches[0].args[0]: parameter 'x_ptr' is a pointer to f32") !=
          std::string::npos);
    CHECK(bindError(withArgs(R"("x", "x")"), params)
              .find("launches[0].args[1]: parameter 'n' is a scalar i32") != std::string::npos);
  }
  SUBCASE("matching arguments bind") {
    Spec spec = parsed(withArgs(R"("x", {"i32": 3})"));
    std::string error;
    CHECK(bindArguments(spec, spec.launches[0], "k", params, error));
  }
}

TEST_CASE("shapes must be non-negative integers") {
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [2, -3]}}, "launches": []})") ==
        "spec.json: buffers.x.shape[1]: expected a non-negative size, got -3");
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [2.5]}}, "launches": []})")
            .find("buffers.x.shape[0]: expected a non-negative size") != std::string::npos);
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32"}}, "launches": []})") ==
        "spec.json: buffers.x: missing required key 'shape'");
  CHECK(specError(R"({"buffers": {"x": {"dtype": "u32", "shape": [1]}}, "launches": []})")
            .find("buffers.x.dtype: unknown dtype 'u32'") != std::string::npos);
}

TEST_CASE("grids have one to three non-negative integer sizes") {
  auto grid = [](const std::string &g) {
    return R"({"launches": [{"kernel": "k.ttir", "grid": )" + g + R"(, "args": []}]})";
  };
  CHECK(specError(grid("[4, -1]")).find("spec.json: launches[0].grid[1]: expected a grid size") ==
        0);
  CHECK(specError(grid("[1, 1, 1, 1]")) ==
        "spec.json: launches[0].grid: expected 1 to 3 grid sizes, got 4 sizes");
  CHECK(specError(grid("[]")) ==
        "spec.json: launches[0].grid: expected 1 to 3 grid sizes, got 0 sizes");
  CHECK(specError(grid("[1.5]")).find("launches[0].grid[0]") != std::string::npos);
  // A zero grid launches no programs, as in Triton; missing dimensions are 1.
  CHECK(parsed(grid("[0, 2]")).launches[0].grid == std::array<int64_t, 3>{0, 2, 1});
}

TEST_CASE("alias_of buffers must fit inside their parent and form no cycle") {
  SUBCASE("out of range") {
    // 10 f32 = 40 bytes at offset 16 need bytes [16, 56) of x's 32.
    CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [8]},
        "sub": {"alias_of": "x", "byte_offset": 16, "dtype": "f32", "shape": [10]}},
        "launches": []})") ==
          "spec.json: buffers.sub: alias of 'x' covers bytes [16, 56) but 'x' has 32 bytes");
  }
  SUBCASE("cycle") {
    CHECK(specError(R"({"buffers": {
        "a": {"alias_of": "b", "dtype": "i8", "shape": [1]},
        "b": {"alias_of": "a", "dtype": "i8", "shape": [1]}}, "launches": []})") ==
          "spec.json: buffers.a.alias_of: alias cycle: a -> b -> a");
    CHECK(specError(R"({"buffers": {"a": {"alias_of": "a", "dtype": "i8", "shape": [1]}},
        "launches": []})")
              .find("buffers.a.alias_of") != std::string::npos);
  }
  SUBCASE("unknown parent, init on an alias, byte_offset without alias") {
    CHECK(specError(R"({"buffers": {"a": {"alias_of": "z", "dtype": "i8", "shape": [1]}},
        "launches": []})") == "spec.json: buffers.a.alias_of: unknown buffer 'z'");
    CHECK(specError(R"({"buffers": {"x": {"dtype": "i8", "shape": [4]},
        "a": {"alias_of": "x", "dtype": "i8", "shape": [1], "init": "zeros"}},
        "launches": []})")
              .find("buffers.a.init: an alias_of buffer") == 11);
    CHECK(specError(R"({"buffers": {"x": {"dtype": "i8", "shape": [4], "byte_offset": 1}},
        "launches": []})")
              .find("buffers.x.byte_offset") != std::string::npos);
  }
  SUBCASE("chains resolve to the root storage") {
    Spec spec = parsed(R"({"buffers": {"x": {"dtype": "i8", "shape": [64]},
        "a": {"alias_of": "x", "byte_offset": 8, "dtype": "i32", "shape": [8]},
        "b": {"alias_of": "a", "byte_offset": 4, "dtype": "i16", "shape": [2]}},
        "launches": []})");
    CHECK(spec.buffers[2].root == 0);
    CHECK(spec.buffers[2].rootOffset == 12);
  }
}

TEST_CASE("views must lie inside their buffer") {
  // x has 8 elements: 0..7.
  CHECK(specError(withArgs(R"({"view": "x", "offset": 5, "shape": [4]})")) ==
        "spec.json: launches[0].args[0]: view reaches elements [5, 8] but buffer 'x' has "
        "elements [0, 7]");
  CHECK(specError(withArgs(R"({"view": "x", "offset": 2, "shape": [4], "strides": [-1]})")) ==
        "spec.json: launches[0].args[0]: view reaches elements [-1, 2] but buffer 'x' has "
        "elements [0, 7]");
  CHECK(specError(withArgs(R"({"view": "x", "shape": [2, 2], "strides": [1]})")) ==
        "spec.json: launches[0].args[0].strides: 1 strides for a shape of rank 2");
  // Reversed, broadcast and 2-D views that stay inside are fine.
  Spec spec = parsed(withArgs(R"({"view": "x", "offset": 7, "shape": [8], "strides": [-1]},
      {"view": "x", "offset": 3, "shape": [100], "strides": [0]},
      {"view": "x", "shape": [2, 4]})"));
  CHECK(spec.launches[0].args[2].strides == std::vector<int64_t>{4, 1});
}

TEST_CASE("unknown keys are errors everywhere") {
  CHECK(specError(R"({"launches": [], "extra": 1})") ==
        "spec.json: extra: unknown key 'extra' (expected one of: buffers, launches)");
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [1], "inti": "zeros"}},
      "launches": []})")
            .find("spec.json: buffers.x.inti: unknown key 'inti'") == 0);
  CHECK(specError(R"({"launches": [{"kernel": "k.ttir", "grid": [1], "args": [], "grd": 1}]})")
            .find("spec.json: launches[0].grd: unknown key 'grd'") == 0);
  CHECK(specError(withArgs(R"({"view": "x", "shape": [1], "stride": [1]})"))
            .find("launches[0].args[0].stride: unknown key") != std::string::npos);
  CHECK(specError(R"({"buffers": {}, "launches": [{"sync": [], "step": true}]})")
            .find("launches[0].step: unknown key") != std::string::npos);
}

TEST_CASE("a name holding control characters is escaped: errors stay on one line") {
  // Found by fuzz_spec: the key "la<newline>ches" was echoed raw, splitting the message.
  CHECK(specError("{\"la\\nches\": []}") ==
        "spec.json: [\"la\\nches\"]: unknown key 'la\\nches' (expected one of: buffers, launches)");
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f\t32", "shape": [1]}}, "launches": []})")
            .find("unknown dtype 'f\\t32'") != std::string::npos);
}

TEST_CASE("inits are checked against the buffer's dtype") {
  auto init = [](const std::string &dtype, const std::string &init) {
    return R"({"buffers": {"x": {"dtype": ")" + dtype + R"(", "shape": [2], "init": )" + init +
           "}}, \"launches\": []}";
  };
  CHECK(specError(init("f32", R"("ones")")).find("buffers.x.init: unknown init \"ones\"") == 11);
  CHECK(specError(init("i8", R"({"fill": 256})")) ==
        "spec.json: buffers.x.init.fill: value 256 is out of range for i8 (-128 to 255)");
  CHECK(specError(init("i8", R"({"fill": 1.5})")).find("expected an integer for i8") !=
        std::string::npos);
  CHECK(specError(init("f16", R"({"fill": 1e6})")) ==
        "spec.json: buffers.x.init.fill: value 1000000.0 is out of range for f16 (largest "
        "finite 65504)");
  CHECK(specError(init("f32", R"({"npy": 3})")).find("buffers.x.init.npy: expected a file path") !=
        std::string::npos);
  CHECK(specError(init("f32", R"({"uniform": [1, 0]})")).find("buffers.x.init.uniform") !=
        std::string::npos);
  CHECK(specError(init("i32", R"({"uniform": [0, 1.5]})")).find("expected integers lo < hi") !=
        std::string::npos);
  CHECK(specError(init("f32", R"({"fill": 1, "seed": 2})")).find("buffers.x.init.seed") !=
        std::string::npos);
  // Values that are representable are accepted, including specials for floats.
  Spec spec = parsed(init("f16", R"({"fill": "-inf"})"));
  CHECK(spec.buffers[0].fill.real == -HUGE_VAL);
  CHECK(parsed(init("i8", R"({"fill": 255})")).buffers[0].fill.integer == -1);
  CHECK(parsed(init("i1", R"({"fill": true})")).buffers[0].fill.integer == 1);
}

TEST_CASE("scalars must be representable in their dtype") {
  CHECK(specError(withArgs(R"({"i32": 4294967296})")) ==
        "spec.json: launches[0].args[0].i32: value 4294967296 is out of range for i32 "
        "(-2147483648 to 4294967295)");
  CHECK(specError(withArgs(R"({"i16": -32769})")).find("out of range for i16") !=
        std::string::npos);
  CHECK(specError(withArgs(R"({"i32": "7"})")).find("expected an integer for i32") !=
        std::string::npos);
  CHECK(specError(withArgs(R"({"q32": 7})")).find("launches[0].args[0]: expected") == 11);
  CHECK(specError(withArgs(R"(7)")).find("launches[0].args[0]: expected a buffer name") == 11);
  Spec spec = parsed(withArgs(R"({"i1": false}, {"i64": -9223372036854775808},
      {"f32": 0.1}, {"i8": 200})"));
  const auto &args = spec.launches[0].args;
  CHECK(args[0].scalar.integer == 0);
  CHECK(args[1].scalar.integer == INT64_MIN);
  // f32 scalars arrive rounded to f32.
  CHECK(args[2].scalar.real == double(0.1f));
  CHECK(args[3].scalar.integer == -56); // 200 as an 8-bit pattern, read signed
}

TEST_CASE("donate, sync and step entries are validated") {
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [1]},
      "y": {"dtype": "f32", "shape": [1]}}, "launches": [
      {"kernel": "k.ttir", "grid": [1], "args": ["x"], "donate": ["y"]}]})") ==
        "spec.json: launches[0].donate[0]: buffer 'y' is not an argument or reachable buffer of "
        "this launch");
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [1]}}, "launches": [
      {"kernel": "k.ttir", "grid": [1], "args": ["x"], "donate": ["x", "x"]}]})") ==
        "spec.json: launches[0].donate[1]: buffer 'x' is listed twice");
  CHECK(specError(R"({"launches": [{"sync": ["nope"]}]})") ==
        "spec.json: launches[0].sync[0]: unknown buffer 'nope'");
  CHECK(specError(R"({"launches": [{"step": false}]})") ==
        "spec.json: launches[0].step: expected true, got false");
  Spec spec = parsed(R"({"buffers": {"x": {"dtype": "f32", "shape": [1]}}, "launches": [
      {"kernel": "k.ttir", "grid": [1], "args": [{"view": "x", "shape": [1]}], "donate": ["x"]}]})");
  CHECK(spec.launches[0].donate == std::vector<size_t>{0});
}

TEST_CASE("buffer names must be usable as file names") {
  CHECK(specError(R"({"buffers": {"a/b": {"dtype": "f32", "shape": [1]}}, "launches": []})")
            .find("spec.json: buffers[\"a/b\"]: invalid buffer name \"a/b\"") == 0);
}

TEST_CASE("a missing launches array is an error but buffers may be omitted") {
  CHECK(specError(R"({"buffers": {}})") == "spec.json: missing required key 'launches'");
  CHECK(specError(R"([1, 2])") == "spec.json: expected an object, got an array");
  CHECK(parsed(R"({"launches": []})").buffers.empty());
}

TEST_CASE("contiguousStrides gives C order") {
  CHECK(contiguousStrides({2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
  CHECK(contiguousStrides({}).empty());
}

TEST_CASE("deeply nested JSON is a spec error, not a stack overflow") {
  // 90,000 nested arrays: nlohmann parses them, but copying or printing the value recurses once
  // per level; the nesting limit refuses the text before any value is built.
  std::string deep = R"({"a": )" + std::string(90000, '[') + std::string(90000, ']') + R"(, "b": 1})";
  CHECK(specError(deep) ==
        "spec.json: the JSON nests arrays and objects more than 256 deep; a spec needs a few levels");
  // Deep but within the limit is judged by the spec's own rules (an unknown key here).
  std::string fine = R"({"a": )" + std::string(200, '[') + std::string(200, ']') + R"(, "launches": []})";
  CHECK(specError(fine).find("unknown key 'a'") != std::string::npos);
}

TEST_CASE("an empty view with sizes near 2^63 after its zero is checked without overflow") {
  // [0, M, M, M, M] with M = 2^63 - 1: contiguous strides [M, M, M, M, 1] (saturated), so
  // three dimensions each span about 2^126 elements; summing them overflowed __int128
  // (UBSan). An empty view reaches no element: only its offset is checked.
  const std::string sizes = "[0, 9223372036854775807, 9223372036854775807, "
                            "9223372036854775807, 9223372036854775807]";
  Spec spec = parsed(withArgs(R"({"view": "x", "offset": 8, "shape": )" + sizes + "}"));
  CHECK(spec.launches[0].args[0].offset == 8);
  CHECK(spec.launches[0].args[0].shape.size() == 5);
  CHECK(specError(withArgs(R"({"view": "x", "offset": 9, "shape": )" + sizes + "}")) ==
        "spec.json: launches[0].args[0]: offset 9 is outside buffer 'x' (8 elements)");
}

TEST_CASE("contiguous strides of a zero-element shape whose other sizes overflow int64") {
  // [0, 2^62, 4]: the outer stride 2^62 * 4 does not fit; it saturates (no signed overflow) and
  // reaches no element anyway.
  std::vector<int64_t> s = contiguousStrides({0, int64_t(1) << 62, 4});
  CHECK(s[2] == 1);
  CHECK(s[1] == 4);
  CHECK(s[0] == std::numeric_limits<int64_t>::max());
  CHECK(contiguousStrides({2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
}

TEST_CASE("addresses inits and reachable lists: every misuse is one line naming its path") {
  // t holds the addresses of x[0] and y[2]; y comes after t in the file.
  const std::string good = R"({"buffers": {"x": {"dtype": "f32", "shape": [4]},
      "t": {"dtype": "i64", "shape": [2], "init": {"addresses": [{"buffer": "x"},
                                                               {"buffer": "y", "offset": 2}]}},
      "y": {"dtype": "f16", "shape": [3]}},
    "launches": [{"kernel": "k.ttir", "grid": [1], "args": ["t"], "reachable": ["x", "y"],
                  "donate": ["y"]}]})";
  Spec spec = parsed(good);
  const BufferSpec &t = spec.buffers[1];
  REQUIRE(t.init == InitKind::Addresses);
  REQUIRE(t.addresses.size() == 2);
  CHECK(t.addresses[0].buffer == 0);
  CHECK(t.addresses[0].offset == 0);
  CHECK(t.addresses[1].buffer == 2);
  CHECK(t.addresses[1].offset == 2);
  CHECK(spec.launches[0].reachable == std::vector<size_t>{0, 2});
  CHECK(spec.launches[0].donate == std::vector<size_t>{2});

  auto table = [](const std::string &dtype, const std::string &shape, const std::string &init,
                  const std::string &launch = R"("args": [])") {
    return R"({"buffers": {"x": {"dtype": "f32", "shape": [4]},
        "t": {"dtype": ")" + dtype + R"(", "shape": )" + shape + R"(, "init": )" + init + R"(}},
      "launches": [{"kernel": "k.ttir", "grid": [1], )" + launch + "}]}";
  };
  CHECK(specError(table("i64", "[1]", R"({"addresses": [{"buffer": "nope"}]})")) ==
        "spec.json: buffers.t.init.addresses[0].buffer: unknown buffer 'nope'");
  CHECK(specError(table("i32", "[1]", R"({"addresses": [{"buffer": "x"}]})")) ==
        "spec.json: buffers.t.init.addresses: an addresses init fills an i64 buffer (addresses are "
        "64-bit integers); buffer 't' has dtype i32");
  CHECK(specError(table("f64", "[1]", R"({"addresses": [{"buffer": "x"}]})"))
            .find("buffer 't' has dtype f64") != std::string::npos);
  CHECK(specError(table("i64", "[2]", R"({"addresses": [{"buffer": "x"}]})")) ==
        "spec.json: buffers.t.init.addresses: 1 addresses for buffer 't' of 2 elements (one per "
        "element)");
  CHECK(specError(table("i64", "[1]", R"({"addresses": [{"buffer": "x", "offset": 4}]})")) ==
        "spec.json: buffers.t.init.addresses[0].offset: offset 4 is outside buffer 'x' (4 "
        "elements of f32)");
  CHECK(specError(table("i64", "[1]", R"({"addresses": [{"buffer": "x", "offset": -1}]})")) ==
        "spec.json: buffers.t.init.addresses[0].offset: expected a non-negative element offset, "
        "got -1");
  CHECK(specError(table("i64", "[1]", R"({"addresses": [{"buffer": "x", "stride": 1}]})"))
            .find("buffers.t.init.addresses[0].stride: unknown key 'stride'") != std::string::npos);
  CHECK(specError(table("i64", "[1]", R"({"addresses": "x"})"))
            .find("buffers.t.init.addresses: expected an array") != std::string::npos);
  // A table on the device would need device addresses; one pointing at a device buffer
  // would hold addresses the host cannot dereference.
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [4], "device": "cuda"},
      "t": {"dtype": "i64", "shape": [1], "init": {"addresses": [{"buffer": "x"}]}}},
      "launches": []})") ==
        "spec.json: buffers.t.init.addresses[0].buffer: buffer 'x' is a device buffer; an "
        "addresses table holds host addresses, so it and its targets must be host buffers");
  CHECK(specError(R"({"buffers": {"x": {"dtype": "f32", "shape": [4]},
      "t": {"dtype": "i64", "shape": [1], "device": "cuda",
            "init": {"addresses": [{"buffer": "x"}]}}}, "launches": []})")
            .find("buffers.t.init.addresses: buffer 't' is a device buffer") != std::string::npos);
  // The empty buffer's start is its only address.
  parsed(R"({"buffers": {"e": {"dtype": "f32", "shape": [0]},
      "t": {"dtype": "i64", "shape": [1], "init": {"addresses": [{"buffer": "e"}]}}},
      "launches": []})");
  // A table may hold its own address.
  parsed(table("i64", "[1]", R"({"addresses": [{"buffer": "t"}]})"));

  CHECK(specError(table("i64", "[1]", R"("zeros")", R"("args": [], "reachable": ["q"])")) ==
        "spec.json: launches[0].reachable[0]: unknown buffer 'q'");
  CHECK(specError(table("i64", "[1]", R"("zeros")", R"("args": [], "reachable": ["x", "x"])")) ==
        "spec.json: launches[0].reachable[1]: buffer 'x' is listed twice");
  CHECK(specError(table("i64", "[1]", R"("zeros")", R"("args": [], "reachable": "x")")) ==
        "spec.json: launches[0].reachable: expected an array of buffer names, got the string "
        "\"x\"");
  CHECK(specError(table("i64", "[1]", R"("zeros")",
                        R"("args": [], "reachable": ["x"], "native": "k.cubin")")) ==
        "spec.json: launches[0].reachable: a native launch reaches device memory directly; "
        "reachable is for interpreted launches");
  // Also an argument: allowed, it changes nothing.
  Spec both = parsed(table("i64", "[1]", R"("zeros")", R"("args": ["x"], "reachable": ["x"])"));
  CHECK(both.launches[0].reachable == std::vector<size_t>{0});
}
