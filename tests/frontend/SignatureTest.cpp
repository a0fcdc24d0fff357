//===- SignatureTest.cpp - kernel signatures against kernels.py ------------===//
//
// Expected names, types and divisibility come from tests/data/ttir/kernels.py (SPECS):
// e.g. add_kernel(x_ptr: *fp32, y_ptr: *fp32, out_ptr: *fp32, n_elements: i32,
// BLOCK: constexpr) with tt.divisibility 16 on arguments 0, 1, 2. Constexprs do not
// appear in TTIR.

#include "TestUtil.h"

using namespace fe_test;
using namespace ttinterp::frontend;

TEST_CASE("add_kernel signature (Triton 3.8: names from name locations)") {
  Parsed p = load(samplePath("3.8.0", "add_kernel.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  std::string error;
  auto fn = findFunction(*p.module, "", error);
  REQUIRE_MESSAGE(fn, error);
  Signature sig = signatureOf(fn);
  CHECK(sig.name == "add_kernel");
  CHECK(sig.isPublic);
  CHECK(sig.results.empty());
  REQUIRE(sig.args.size() == 4);
  const char *names[] = {"x_ptr", "y_ptr", "out_ptr", "n_elements"};
  for (unsigned i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(sig.args[i].index == i);
    CHECK(sig.args[i].name == names[i]);
    CHECK(sig.args[i].nameFromSource);
  }
  for (unsigned i = 0; i < 3; ++i) {
    CHECK(sig.args[i].type == "!tt.ptr<f32>");
    CHECK(sig.args[i].isPointer);
    CHECK(sig.args[i].pointeeType == "f32");
    CHECK(sig.args[i].divisibility == 16);
    CHECK(sig.args[i].attributes.at("tt.divisibility") == "16 : i32");
  }
  CHECK(sig.args[3].type == "i32");
  CHECK(!sig.args[3].isPointer);
  CHECK(!sig.args[3].divisibility);
  CHECK(sig.args[3].attributes.empty());
}

TEST_CASE("add_kernel signature (Triton 3.3: no name locations, argN names)") {
  Parsed p = load(samplePath("3.3.1", "add_kernel.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  std::vector<Signature> sigs = signatures(*p.module);
  REQUIRE(sigs.size() == 1);
  const Signature &sig = sigs[0];
  REQUIRE(sig.args.size() == 4);
  for (unsigned i = 0; i < 4; ++i) {
    CHECK(sig.args[i].name == "arg" + std::to_string(i));
    CHECK(!sig.args[i].nameFromSource);
  }
  CHECK(sig.args[0].divisibility == 16);
  CHECK(sig.args[2].divisibility == 16);
  CHECK(!sig.args[3].divisibility);
}

TEST_CASE("matmul_kernel signature: 9 runtime arguments, hints on 0, 1, 2 and 6") {
  for (const char *version : {"3.5.1", "3.8.0", "3.9.0"}) {
    CAPTURE(version);
    Parsed p = load(samplePath(version, "matmul_kernel.ttir"));
    REQUIRE_MESSAGE(p.module, p.error);
    std::string error;
    Signature sig = signatureOf(findFunction(*p.module, "matmul_kernel", error));
    const char *names[] = {"a_ptr", "b_ptr",     "c_ptr",     "M",        "N",
                           "K",     "stride_am", "stride_bk", "stride_cm"};
    REQUIRE(sig.args.size() == 9);
    for (unsigned i = 0; i < 9; ++i) {
      CAPTURE(i);
      CHECK(sig.args[i].name == names[i]);
      CHECK(sig.args[i].type == (i < 3 ? "!tt.ptr<f32>" : "i32"));
      bool hinted = i == 0 || i == 1 || i == 2 || i == 6;
      CHECK(sig.args[i].divisibility == (hinted ? std::optional<int64_t>(16) : std::nullopt));
    }
  }
}

TEST_CASE("other argument types: fp32 scalars, unsigned and 8-bit pointers") {
  Parsed math = load(samplePath("3.8.0", "math_kernel.ttir"));
  REQUIRE_MESSAGE(math.module, math.error);
  std::string error;
  Signature sig = signatureOf(findFunction(*math.module, "", error));
  REQUIRE(sig.args.size() == 6);
  CHECK(sig.args[2].name == "u_ptr");
  CHECK(sig.args[2].type == "!tt.ptr<i32>"); // *u32: TTIR integers are signless
  CHECK(sig.args[4].name == "lo");
  CHECK(sig.args[4].type == "f32");

  Parsed fp8 = load(samplePath("3.8.0", "fp8_kernel.ttir"));
  REQUIRE_MESSAGE(fp8.module, fp8.error);
  sig = signatureOf(findFunction(*fp8.module, "", error));
  REQUIRE(sig.args.size() == 4);
  CHECK(sig.args[2].type == "!tt.ptr<f16>");
  CHECK(sig.args[3].pointeeType == "i8");
}

TEST_CASE("findFunction: single public kernel, by name, and errors") {
  Parsed p = load(samplePath("3.8.0", "call_kernel.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  std::vector<Signature> sigs = signatures(*p.module);
  REQUIRE(sigs.size() == 2);
  std::string error;
  auto kernel = findFunction(*p.module, "", error);
  REQUIRE(kernel);
  CHECK(kernel.getName() == "call_kernel");
  // The noinline helper is private, takes the fp32 `factor` and returns f32.
  const Signature &helper = sigs[0].name == "call_kernel" ? sigs[1] : sigs[0];
  CHECK(!helper.isPublic);
  REQUIRE(helper.args.size() == 1);
  CHECK(helper.args[0].name == "factor");
  CHECK(helper.args[0].type == "f32");
  REQUIRE(helper.results.size() == 1);
  CHECK(helper.results[0] == "f32");

  CHECK(findFunction(*p.module, helper.name, error));
  CHECK(!findFunction(*p.module, "no_such_kernel", error));
  CHECK(error.find("no_such_kernel") != std::string::npos);
  CHECK(error.find("call_kernel") != std::string::npos);

  Parsed two = parse(R"(module {
  tt.func public @first() {
    tt.return
  }
  tt.func public @second() {
    tt.return
  }
}
)");
  REQUIRE_MESSAGE(two.module, two.error);
  CHECK(!findFunction(*two.module, "", error));
  CHECK(error.find("first") != std::string::npos);
  CHECK(error.find("second") != std::string::npos);
  CHECK(findFunction(*two.module, "second", error));

  Parsed none = parse("module {\n}\n");
  REQUIRE_MESSAGE(none.module, none.error);
  CHECK(!findFunction(*none.module, "", error));
  CHECK(error.find("no public function") != std::string::npos);
}

TEST_CASE("formatted signature for `ttinterp info`") {
  Parsed p = load(samplePath("3.8.0", "add_kernel.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  std::string text = formatSignatures(signatures(*p.module));
  CAPTURE(text);
  CHECK(text.rfind("add_kernel (public)\n", 0) == 0);
  CHECK(text.find("#0  x_ptr       !tt.ptr<f32>  divisibility=16\n") != std::string::npos);
  CHECK(text.find("#3  n_elements  i32\n") != std::string::npos);
}

TEST_CASE("describeLocation renders file, name and call-site locations") {
  auto ctx = makeContext();
  mlir::MLIRContext *c = ctx.get();
  auto file = mlir::FileLineColLoc::get(c, "k.py", 12, 5);
  auto lib = mlir::FileLineColLoc::get(c, "standard.py", 290, 15);
  CHECK(describeLocation(file) == "k.py:12:5");
  CHECK(describeLocation(mlir::NameLoc::get(mlir::StringAttr::get(c, "x_ptr"), file)) ==
        "k.py:12:5");
  CHECK(describeLocation(mlir::CallSiteLoc::get(lib, file)) ==
        "standard.py:290:15 (inlined at k.py:12:5)");
  CHECK(describeLocation(mlir::UnknownLoc::get(c)).empty());
}
