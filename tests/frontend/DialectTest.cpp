//===- DialectTest.cpp - tt types, enums and op syntax ---------------------===//

#include "TestUtil.h"

#include "mlir/AsmParser/AsmParser.h"
#include "llvm/Support/raw_ostream.h"

using namespace fe_test;
using namespace ttinterp::frontend;
namespace tt = mlir::triton;

namespace {

std::string str(mlir::Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

} // namespace

TEST_CASE("enum values are Triton's (TTIR-FACTS.md)") {
  CHECK(static_cast<int>(tt::CacheModifier::NONE) == 1);
  CHECK(static_cast<int>(tt::CacheModifier::CV) == 7);
  CHECK(static_cast<int>(tt::EvictionPolicy::EVICT_LAST) == 3);
  CHECK(static_cast<int>(tt::PaddingOption::PAD_NAN) == 2);
  CHECK(static_cast<int>(tt::RMWOp::FADD) == 5);
  CHECK(static_cast<int>(tt::RMWOp::XCHG) == 10);
  CHECK(static_cast<int>(tt::MemSemantic::ACQUIRE_RELEASE) == 4);
  CHECK(static_cast<int>(tt::MemSyncScope::SYSTEM) == 3);
  CHECK(static_cast<int>(tt::ProgramIDDim::Z) == 2);
  CHECK(static_cast<int>(tt::RoundingMode::RTNE) == 1);
  CHECK(static_cast<int>(tt::PropagateNan::ALL) == 0xFFFF);
  CHECK(static_cast<int>(tt::InputPrecision::TF32) == 0);
  CHECK(static_cast<int>(tt::InputPrecision::IEEE) == 2);
  CHECK(static_cast<int>(tt::InputPrecision::BF16x6) == 4);
  CHECK(tt::stringifyRMWOp(tt::RMWOp::XCHG) == "exch");
  CHECK(tt::symbolizeMemSemantic("acq_rel") == tt::MemSemantic::ACQUIRE_RELEASE);
}

TEST_CASE("pointer types: default and explicit address space, block pointers") {
  auto ctx = makeContext();
  mlir::Type f32 = mlir::Float32Type::get(ctx.get());
  auto p1 = llvm::dyn_cast_or_null<tt::PointerType>(mlir::parseType("!tt.ptr<f32>", ctx.get()));
  REQUIRE(p1);
  CHECK(p1.getPointeeType() == f32);
  CHECK(p1.getAddressSpace() == 1);
  CHECK(p1 == tt::PointerType::get(f32));
  CHECK(str(p1) == "!tt.ptr<f32>");

  auto p3 = llvm::dyn_cast_or_null<tt::PointerType>(mlir::parseType("!tt.ptr<f16, 3>", ctx.get()));
  REQUIRE(p3);
  CHECK(p3.getAddressSpace() == 3);
  CHECK(str(p3) == "!tt.ptr<f16, 3>");

  mlir::Type block = mlir::parseType("!tt.ptr<tensor<128x32xf16>>", ctx.get());
  REQUIRE(block);
  CHECK(tt::isTensorPointerType(block));
  CHECK(!tt::isTensorPointerType(p1));
  CHECK(tt::getBasePointerType(block) == tt::PointerType::get(mlir::Float16Type::get(ctx.get())));
}

TEST_CASE("a tl.const pointer's named address space (Triton 3.9) parses and prints back") {
  auto ctx = makeContext();
  mlir::Type f32 = mlir::Float32Type::get(ctx.get());
  auto constant = llvm::dyn_cast_or_null<tt::PointerType>(
      mlir::parseType("!tt.ptr<f32, \"constant\">", ctx.get()));
  REQUIRE(constant);
  CHECK(constant.getPointeeType() == f32);
  CHECK(constant != tt::PointerType::get(f32)); // a type of its own, as in Triton
  CHECK(str(constant) == "!tt.ptr<f32, \"constant\">");
  CHECK(mlir::parseType("!tt.ptr<f32, \"global\">", ctx.get()) == tt::PointerType::get(f32));
  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler capture(ctx.get(), [&](mlir::Diagnostic &d) {
      diagnostics += d.str();
      return mlir::success();
    });
    CHECK_FALSE(mlir::parseType("!tt.ptr<f32, \"texture\">", ctx.get()));
  }
  CHECK(diagnostics.find("unknown pointer address space \"texture\"") != std::string::npos);
}

TEST_CASE("both tensor descriptor spellings are the same type; the 3.8 one is printed") {
  auto ctx = makeContext();
  mlir::Type old = mlir::parseType("!tt.tensordesc<tensor<128x64xf16>>", ctx.get());
  mlir::Type neu = mlir::parseType("!tt.tensordesc<128x64xf16>", ctx.get());
  REQUIRE(old);
  REQUIRE(neu);
  CHECK(old == neu);
  auto desc = llvm::cast<tt::TensorDescType>(neu);
  CHECK(desc.getShape() == llvm::ArrayRef<int64_t>{128, 64});
  CHECK(desc.getElementType() == mlir::Float16Type::get(ctx.get()));
  CHECK(str(desc) == "!tt.tensordesc<128x64xf16>");
}

TEST_CASE("type helpers used for inference") {
  auto ctx = makeContext();
  mlir::Type f32 = mlir::Float32Type::get(ctx.get());
  mlir::Type i1 = mlir::IntegerType::get(ctx.get(), 1);
  auto ptr = tt::PointerType::get(f32);
  auto ptrs = mlir::RankedTensorType::get({4, 8}, ptr);
  CHECK(tt::getPointeeType(ptr) == f32);
  CHECK(tt::getPointeeType(ptrs) == mlir::RankedTensorType::get({4, 8}, f32));
  CHECK(tt::getI1SameShape(ptrs) == mlir::RankedTensorType::get({4, 8}, i1));
  CHECK(tt::getI1SameShape(f32) == i1);
  CHECK(tt::getPointerTypeSameShape(mlir::RankedTensorType::get({4, 8}, f32)) == ptrs);
}

namespace {

// Hand-written TTIR in the spellings TTIR-FACTS.md lists, including the stripped `<...>`
// types and the optional clauses that the generated samples do not all show.
const char *kSpellings = R"(
module {
  tt.func public @spellings(%p: !tt.ptr<f32> {tt.divisibility = 16 : i32, tt.pointer_range = 32 : i32},
                            %q: !tt.ptr<i32>, %h: !tt.ptr<f16>, %n: i32) attributes {noinline = false, tt.num_stages = 3 : i32} {
    %c0_i32 = arith.constant 0 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %r = tt.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %ps = tt.splat %p : !tt.ptr<f32> -> tensor<256x!tt.ptr<f32>>
    %pa = tt.addptr %ps, %r : tensor<256x!tt.ptr<f32>>, tensor<256xi32>
    %ns = tt.splat %n : i32 -> tensor<256xi32>
    %m = arith.cmpi slt, %r, %ns {tt.contiguity = 16 : i32} : tensor<256xi32>
    %o = arith.constant dense<0.000000e+00> : tensor<256xf32>
    %v = tt.load %pa, %m, %o cacheModifier = cg evictionPolicy = evict_last {isVolatile = true} : tensor<256x!tt.ptr<f32>>
    %w = tt.load %pa, %m evictionPolicy = evict_first cacheModifier = ca : tensor<256x!tt.ptr<f32>>
    tt.store %pa, %v, %m cacheModifier = wb : tensor<256x!tt.ptr<f32>>
    %s = tt.load %p : !tt.ptr<f32>
    %x = tt.atomic_rmw fadd, acquire, gpu, %p, %s : (!tt.ptr<f32>, f32) -> f32
    %y = tt.atomic_cas acq_rel, cta, %q, %c0_i32, %n : (!tt.ptr<i32>, i32, i32) -> i32
    %bp = tt.make_tensor_ptr %h, [%c64_i64, %c64_i64], [%c64_i64, %c1_i64], [%c0_i32, %c0_i32] {order = array<i32: 1, 0>} : <tensor<16x32xf16>>
    %bq = tt.advance %bp, [%c0_i32, %n] : <tensor<16x32xf16>>
    %bv = tt.load %bq {boundaryCheck = array<i32: 1>, padding = 2 : i32} : !tt.ptr<tensor<16x32xf16>>
    tt.store %bq, %bv {boundaryCheck = array<i32: 0, 1>} : !tt.ptr<tensor<16x32xf16>>
    %hi = tt.histogram %r, %m : tensor<256xi32> -> tensor<16xi32>
    %c = tt.clampf %v, %o, %o, propagateNan = all : tensor<256xf32>
    %one = tt.splat %n : i32 -> tensor<1xi32>
    %u = tt.unsplat %one : tensor<1xi32>
    %sq = tt.precise_sqrt %c : tensor<256xf32>
    %e = tt.reshape %v allow_reorder efficient_layout : tensor<256xf32> -> tensor<16x16xf32>
    %d = tt.dot %e, %e, %e, inputPrecision = tf32x3 {maxNumImpreciseAcc = 64 : i32} : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %f8 = tt.fp_to_fp %d, rounding = rtne : tensor<16x16xf32> -> tensor<16x16xf8E4M3FNUZ>
    %td = tt.make_tensor_descriptor %h, [%n, %n], [%c64_i64, %c1_i64] : <f16>, <tensor<16x32xf16>>
    %tl = tt.descriptor_load %td[%c0_i32, %c0_i32] : !tt.tensordesc<tensor<16x32xf16>> -> tensor<16x32xf16>
    tt.descriptor_store %td[%n, %c0_i32], %tl : !tt.tensordesc<16x32xf16>, tensor<16x32xf16>
    tt.descriptor_reduce add, %td[%n, %c0_i32], %tl : !tt.tensordesc<16x32xf16>, tensor<16x32xf16>
    %pid = tt.get_program_id z : i32
    %np = tt.get_num_programs y : i32
    gpu.barrier
    ttg.barrier local
    tt.return
  }
}
)";

} // namespace

TEST_CASE("hand-written TTIR in every documented spelling parses and reads back") {
  Parsed p = parse(kSpellings);
  REQUIRE_MESSAGE(p.module, p.error);
  auto fn = *p.module->getOps<tt::FuncOp>().begin();
  CHECK(fn->hasAttr("tt.num_stages"));
  CHECK(fn.getArgAttr(0, "tt.pointer_range"));

  std::vector<tt::LoadOp> loads;
  p.module->walk([&](tt::LoadOp op) { loads.push_back(op); });
  REQUIRE(loads.size() == 4);
  CHECK(loads[0].getCache() == tt::CacheModifier::CG);
  CHECK(loads[0].getEvict() == tt::EvictionPolicy::EVICT_LAST);
  CHECK(loads[0].getIsVolatile());
  CHECK(loads[1].getCache() == tt::CacheModifier::CA);
  CHECK(!loads[1].getOther());
  CHECK(!loads[2].getMask());
  CHECK(loads[2].getType() == mlir::Float32Type::get(p.ctx.get()));
  CHECK(loads[3].getPadding() == tt::PaddingOption::PAD_NAN);

  tt::AtomicRMWOp rmw;
  p.module->walk([&](tt::AtomicRMWOp op) { rmw = op; });
  REQUIRE(rmw);
  CHECK(rmw.getAtomicRmwOp() == tt::RMWOp::FADD);
  CHECK(rmw.getSem() == tt::MemSemantic::ACQUIRE);
  CHECK(rmw.getScope() == tt::MemSyncScope::GPU);
  CHECK(!rmw.getMask());

  tt::DotOp dot;
  p.module->walk([&](tt::DotOp op) { dot = op; });
  REQUIRE(dot);
  CHECK(dot.getInputPrecision() == tt::InputPrecision::TF32x3);
  CHECK(dot.getMaxNumImpreciseAcc() == 64);

  tt::GetProgramIdOp pid;
  p.module->walk([&](tt::GetProgramIdOp op) { pid = op; });
  REQUIRE(pid);
  CHECK(pid.getAxis() == tt::ProgramIDDim::Z);
  CHECK(pid.getAxisAsInt() == 2);

  tt::ClampFOp clamp;
  p.module->walk([&](tt::ClampFOp op) { clamp = op; });
  REQUIRE(clamp);
  CHECK(clamp.getPropagateNan() == tt::PropagateNan::ALL);

  mlir::Operation *barrier = nullptr;
  p.module->walk([&](mlir::triton::gpu::BarrierOp op) { barrier = op; });
  CHECK(barrier);

  // Hints on ops are kept.
  bool contiguity = false;
  p.module->walk([&](mlir::Operation *op) { contiguity |= op->hasAttr("tt.contiguity"); });
  CHECK(contiguity);
}

TEST_CASE("a default dot prints without inputPrecision; a tf32 one with it") {
  const char *text = R"(
module {
  tt.func public @k(%a: tensor<16x16xf32>) {
    %d = tt.dot %a, %a, %a : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    %e = tt.dot %a, %a, %d, inputPrecision = tf32 : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
    tt.return
  }
}
)";
  Parsed p = parse(text);
  REQUIRE_MESSAGE(p.module, p.error);
  std::vector<tt::DotOp> dots;
  p.module->walk([&](tt::DotOp op) { dots.push_back(op); });
  REQUIRE(dots.size() == 2);
  CHECK(dots[0].getInputPrecision() == tt::InputPrecision::IEEE);
  CHECK(dots[1].getInputPrecision() == tt::InputPrecision::TF32);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  p.module->print(os);
  CHECK(printed.find("inputPrecision = tf32 :") != std::string::npos);
  CHECK(printed.find("inputPrecision = ieee") == std::string::npos);
}

TEST_CASE("multi-operand reduce (argmax) exposes its operands, axis and region") {
  Parsed p = load(samplePath("3.8.0", "reduce_kernel.ttir"));
  REQUIRE_MESSAGE(p.module, p.error);
  std::vector<tt::ReduceOp> reduces;
  p.module->walk([&](tt::ReduceOp op) { reduces.push_back(op); });
  // kernels.py: tl.sum(axis=1), tl.max(axis=0), tl.argmax(axis=1), tl.reduce(x, None, mul).
  REQUIRE(reduces.size() == 4);
  CHECK(reduces[0].getAxis() == 1);
  CHECK(reduces[1].getAxis() == 0);
  tt::ReduceOp argmax = reduces[2];
  CHECK(argmax.getSrcs().size() == 2);
  CHECK(argmax.getAxis() == 1);
  CHECK(argmax.getCombineOp().front().getNumArguments() == 4);
  CHECK(llvm::isa<tt::ReduceReturnOp>(argmax.getCombineOp().front().getTerminator()));
  // Reducing everything of a 1-D tensor gives a scalar.
  CHECK(reduces[3].getResult()[0].getType() == mlir::Float32Type::get(p.ctx.get()));

  std::vector<tt::ScanOp> scans;
  Parsed s = load(samplePath("3.8.0", "scan_kernel.ttir"));
  REQUIRE_MESSAGE(s.module, s.error);
  s.module->walk([&](tt::ScanOp op) { scans.push_back(op); });
  REQUIRE(scans.size() == 2);
  CHECK(!scans[0].getReverse());
  CHECK(scans[1].getReverse()); // tl.cumprod(..., reverse=True)
}

TEST_CASE("less common ops: dot_scaled, descriptor gather/scatter, inline asm, int/ptr casts") {
  const char *text = R"(module {
  tt.func public @k(%a: tensor<16x32xf8E4M3FN>, %b: tensor<32x16xf8E5M2>, %sa: tensor<16x1xi8>,
                    %sb: tensor<16x1xi8>, %acc: tensor<16x16xf32>, %td: !tt.tensordesc<1x32xf16>,
                    %xo: tensor<8xi32>, %y: i32, %p: !tt.ptr<f32>) {
    %d = tt.dot_scaled %a scale %sa, %b scale %sb, %acc lhs = e4m3 rhs = e5m2 {fastMath = false} : tensor<16x32xf8E4M3FN>, tensor<16x1xi8> * tensor<32x16xf8E5M2>, tensor<16x1xi8> -> tensor<16x16xf32>
    %g = tt.descriptor_gather %td[%xo, %y] : (!tt.tensordesc<1x32xf16>, tensor<8xi32>, i32) -> tensor<8x32xf16>
    tt.descriptor_scatter %td[%xo, %y], %g : !tt.tensordesc<1x32xf16>, tensor<8xi32>, i32, tensor<8x32xf16>
    %l = tt.descriptor_load %td[%y, %y] cacheModifier = cg : !tt.tensordesc<1x32xf16> -> tensor<1x32xf16>
    %i = tt.ptr_to_int %p : !tt.ptr<f32> -> i64
    %q = tt.int_to_ptr %i : i64 -> !tt.ptr<f32>
    %r:2 = tt.elementwise_inline_asm "mov.b32 $0, $2; mov.b32 $1, $2;" {constraints = "=r,=r,r", packed_element = 1 : i32, pure = true} %xo : tensor<8xi32> -> tensor<8xi32>, tensor<8xi32>
    %h = tt.mulhiui %xo, %xo : tensor<8xi32>
    %acc2 = tt.join %acc, %acc : tensor<16x16xf32> -> tensor<16x16x2xf32>
    %lo, %hi = tt.split %acc2 : tensor<16x16x2xf32> -> tensor<16x16xf32>
    tt.return
  }
}
)";
  Parsed p = parse(text);
  REQUIRE_MESSAGE(p.module, p.error);
  tt::DotScaledOp scaled;
  p.module->walk([&](tt::DotScaledOp op) { scaled = op; });
  REQUIRE(scaled);
  CHECK(scaled.getAElemType() == tt::ScaleDotElemType::E4M3);
  CHECK(scaled.getBElemType() == tt::ScaleDotElemType::E5M2);
  CHECK(scaled.getAScale());
  CHECK(scaled.getLhsKPack());
  tt::DescriptorLoadOp load;
  p.module->walk([&](tt::DescriptorLoadOp op) { load = op; });
  REQUIRE(load);
  CHECK(load.getCache() == tt::CacheModifier::CG);
  tt::SplitOp split;
  p.module->walk([&](tt::SplitOp op) { split = op; });
  REQUIRE(split);
  CHECK(split.getOutLHS().getType() == split.getOutRHS().getType());
  tt::ElementwiseInlineAsmOp asmOp;
  p.module->walk([&](tt::ElementwiseInlineAsmOp op) { asmOp = op; });
  REQUIRE(asmOp);
  CHECK(asmOp.getNumResults() == 2);
  CHECK(asmOp.getPackedElement() == 1);
}
