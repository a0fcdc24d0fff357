//===- SamplesTest.cpp - real TTIR from Triton 3.3 to 3.9 parses and verifies ===//
//
// The samples in tests/data/ttir/<version>/ were produced by scripts/gen_ttir_samples.py
// from the kernels in tests/data/ttir/kernels.py.

#include "TestUtil.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace fe_test;
using namespace ttinterp::frontend;

namespace {

std::string printModule(mlir::ModuleOp module, mlir::OpPrintingFlags flags) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, flags);
  return text;
}

} // namespace

TEST_CASE("every committed TTIR sample parses, verifies and has one kernel") {
  std::vector<std::string> files = allSamples();
  // 15 kernels per version; 3.9 lost tl.make_block_ptr. Guard against an empty folder.
  CHECK(files.size() >= 55);
  for (const std::string &file : files) {
    CAPTURE(file);
    Parsed p = load(file);
    REQUIRE_MESSAGE(p.module, p.error);
    CHECK(p.error.empty());
    std::string error;
    auto kernel = findFunction(*p.module, "", error);
    CHECK_MESSAGE(kernel, error);
  }
}

TEST_CASE("each Triton version has the full kernel set") {
  const char *kernels[] = {
      "add_kernel",   "atomics_kernel",     "reduce_kernel", "scan_kernel",    "matmul_kernel",
      "shape_kernel", "hist_gather_kernel", "fp8_kernel",    "debug_kernel",   "tensor_desc_kernel",
      "math_kernel",  "control_kernel",     "call_kernel",   "ptr_cast_kernel"};
  for (const char *version : {"3.3.1", "3.5.1", "3.8.0", "3.9.0"})
    for (const char *kernel : kernels) {
      CAPTURE(version);
      CAPTURE(kernel);
      CHECK(fs::exists(samplePath(version, std::string(kernel) + ".ttir")));
    }
  for (const char *version : {"3.3.1", "3.5.1", "3.8.0"})
    CHECK(fs::exists(samplePath(version, "block_ptr_kernel.ttir")));
  // Host-side TensorDescriptor arguments arrived in 3.4; tl.map_elementwise after 3.3.
  for (const char *version : {"3.5.1", "3.8.0", "3.9.0"}) {
    CHECK(fs::exists(samplePath(version, "host_desc_kernel.ttir")));
    CHECK(fs::exists(samplePath(version, "map_kernel.ttir")));
  }
}

TEST_CASE("printing and re-parsing a sample keeps it valid and structurally equal") {
  for (const std::string &file : allSamples()) {
    CAPTURE(file);
    Parsed p = load(file);
    REQUIRE_MESSAGE(p.module, p.error);
    std::string error;
    auto kernel = findFunction(*p.module, "", error);
    REQUIRE(kernel);
    std::string expected = structuralHash(kernel);

    // Custom syntax with locations, custom syntax without, and generic syntax.
    mlir::OpPrintingFlags withLocs;
    withLocs.enableDebugInfo(true);
    mlir::OpPrintingFlags generic;
    generic.printGenericOpForm();
    for (const mlir::OpPrintingFlags &flags : {withLocs, mlir::OpPrintingFlags(), generic}) {
      Parsed again = parse(printModule(*p.module, flags), "reprinted.ttir");
      REQUIRE_MESSAGE(again.module, again.error);
      auto fn = findFunction(*again.module, "", error);
      REQUIRE(fn);
      CHECK(structuralHash(fn) == expected);
    }
  }
}

TEST_CASE("the samples cover the TTIR op set") {
  std::set<std::string> seen;
  for (const std::string &file : allSamples()) {
    Parsed p = load(file);
    REQUIRE_MESSAGE(p.module, p.error);
    p.module->walk([&](mlir::Operation *op) { seen.insert(op->getName().getStringRef().str()); });
  }
  const char *expected[] = {"tt.func",
                            "tt.return",
                            "tt.call",
                            "tt.get_program_id",
                            "tt.get_num_programs",
                            "tt.make_range",
                            "tt.splat",
                            "tt.broadcast",
                            "tt.expand_dims",
                            "tt.reshape",
                            "tt.trans",
                            "tt.addptr",
                            "tt.load",
                            "tt.store",
                            "tt.atomic_rmw",
                            "tt.atomic_cas",
                            "tt.dot",
                            "tt.reduce",
                            "tt.reduce.return",
                            "tt.scan",
                            "tt.scan.return",
                            "tt.make_tensor_ptr",
                            "tt.advance",
                            "tt.bitcast",
                            "tt.fp_to_fp",
                            "tt.int_to_ptr",
                            "tt.ptr_to_int",
                            "tt.join",
                            "tt.split",
                            "tt.cat",
                            "tt.histogram",
                            "tt.print",
                            "tt.assert",
                            "tt.precise_sqrt",
                            "tt.precise_divf",
                            "tt.mulhiui",
                            "tt.clampf",
                            "tt.extern_elementwise",
                            "tt.elementwise_inline_asm",
                            "tt.gather",
                            "tt.make_tensor_descriptor",
                            "tt.descriptor_load",
                            "tt.descriptor_store",
                            "scf.for",
                            "scf.while",
                            "scf.if",
                            "cf.cond_br",
                            "ub.poison",
                            "gpu.barrier",
                            "ttg.barrier",
                            "llvm.intr.assume",
                            "math.exp",
                            "arith.cmpi"};
  for (const char *name : expected) {
    CAPTURE(name);
    CHECK(seen.count(name) == 1);
  }
  // Normalised away on load.
  CHECK(seen.count("tt.experimental_descriptor_load") == 0);
  CHECK(seen.count("tt.experimental_descriptor_store") == 0);
}

TEST_CASE("Triton 3.3 experimental descriptor ops become tt.descriptor_load/store") {
  std::string text = readFile(samplePath("3.3.1", "tensor_desc_kernel.ttir"));
  REQUIRE(text.find("tt.experimental_descriptor_load") != std::string::npos);
  Parsed p = parse(text);
  REQUIRE_MESSAGE(p.module, p.error);
  int loads = 0, stores = 0;
  p.module->walk([&](mlir::triton::DescriptorLoadOp op) {
    ++loads;
    CHECK(op.getIndices().size() == 2);
    CHECK(op.getDesc().getType().getShape() == llvm::ArrayRef<int64_t>{64, 64});
    // The original (Python source) location is kept.
    CHECK(describeLocation(op.getLoc()).find("kernels.py:") != std::string::npos);
  });
  p.module->walk([&](mlir::triton::DescriptorStoreOp) { ++stores; });
  CHECK(loads == 1);
  CHECK(stores == 1);
}

TEST_CASE("Triton 3.9 cachePolicy attributes become cache/evict") {
  Parsed p = load(samplePath("3.9.0", "add_kernel.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  std::vector<mlir::triton::LoadOp> loads;
  p.module->walk([&](mlir::triton::LoadOp op) { loads.push_back(op); });
  REQUIRE(loads.size() == 2);
  // kernels.py: x with eviction_policy="evict_first", y with cache_modifier=".cg".
  CHECK(loads[0].getEvict() == mlir::triton::EvictionPolicy::EVICT_FIRST);
  CHECK(loads[0].getCache() == mlir::triton::CacheModifier::NONE);
  CHECK(loads[1].getCache() == mlir::triton::CacheModifier::CG);
  CHECK(loads[1].getEvict() == mlir::triton::EvictionPolicy::NORMAL);
  for (auto load : loads)
    CHECK(!load->hasAttr("cachePolicy"));
  // Same program as 3.8's spelling of the load clauses.
  mlir::triton::StoreOp store;
  p.module->walk([&](mlir::triton::StoreOp op) { store = op; });
  REQUIRE(store);
  CHECK(store.getEvict() == mlir::triton::EvictionPolicy::EVICT_LAST);
}

TEST_CASE("3.8 load clauses and masks are read into the op") {
  Parsed p = load(samplePath("3.8.0", "add_kernel.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  std::vector<mlir::triton::LoadOp> loads;
  p.module->walk([&](mlir::triton::LoadOp op) { loads.push_back(op); });
  REQUIRE(loads.size() == 2);
  CHECK(loads[0].getMask());
  CHECK(loads[0].getOther());
  CHECK(loads[0].getEvict() == mlir::triton::EvictionPolicy::EVICT_FIRST);
  CHECK(loads[1].getCache() == mlir::triton::CacheModifier::CG);
  auto ptrType = llvm::cast<mlir::RankedTensorType>(loads[0].getPtr().getType());
  CHECK(ptrType.getShape() == llvm::ArrayRef<int64_t>{1024});
  CHECK(loads[0].getType() ==
        mlir::RankedTensorType::get({1024}, mlir::Float32Type::get(p.ctx.get())));
}

TEST_CASE("3.5 front-end IR keeps block pointers") {
  Parsed p = load(samplePath("3.5.1", "block_ptr_kernel.source.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  int makes = 0, advances = 0, blockLoads = 0;
  p.module->walk([&](mlir::triton::MakeTensorPtrOp op) {
    ++makes;
    CHECK(op.getShape().size() == 2);
    CHECK(op.getOrder() == llvm::ArrayRef<int32_t>{1, 0});
  });
  p.module->walk([&](mlir::triton::AdvanceOp) { ++advances; });
  p.module->walk([&](mlir::triton::LoadOp op) {
    if (!mlir::triton::isTensorPointerType(op.getPtr().getType()))
      return;
    ++blockLoads;
    // kernels.py: boundary_check=(0, 1), padding_option="zero".
    CHECK(op.getBoundaryCheck() == llvm::ArrayRef<int32_t>{0, 1});
    CHECK(op.getPadding() == mlir::triton::PaddingOption::PAD_ZERO);
  });
  CHECK(makes == 2);
  CHECK(advances == 2);
  CHECK(blockLoads == 1);
}

TEST_CASE("the committed example kernels parse too") {
  fs::path examples = fs::path(TTINTERP_SOURCE_DIR) / "examples";
  if (!fs::exists(examples))
    return;
  for (const auto &entry : fs::recursive_directory_iterator(examples)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".ttir")
      continue;
    CAPTURE(entry.path().string());
    Parsed p = load(entry.path().string());
    CHECK_MESSAGE(p.module, p.error);
  }
}
