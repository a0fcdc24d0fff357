//===- ChainExitHelper.cpp - A process that exits while a chain compiles --===//
//
// Runs a kernel with an element-wise chain over 2^21 + 1024 lanes, compiling in the background
// (a chain asks at 2^21 lanes), waits for that compilation, then runs a second kernel whose chain
// asks too, and exits at once, that compilation still under way. ctest expects exit status 0:
// exit must stop the compiler's thread before LLVM's static objects, made by the first
// compilation, are destroyed (ChainCompiler.cpp's stopAtExit). It used to crash there.
//
//===----------------------------------------------------------------------===//
#define DOCTEST_CONFIG_DISABLE
#include "Harness.h"

#include "ttinterp/interp/Interpreter.h"

#include <cstdio>
#include <cstdlib>

using namespace ttinterp;
using namespace ttinterp::test;

namespace {

/// out = CHAIN(x, y) over programs of 1024 lanes.
std::string chainKernel(const std::string &chain) {
  return subst(R"(
module {
  tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>, %out: !tt.ptr<f32>) {
    %c1024 = arith.constant 1024 : i32
    %two = arith.constant dense<2.0> : tensor<1024xf32>
    %three = arith.constant dense<3.0> : tensor<1024xf32>
    %pid = tt.get_program_id x : i32
    %start = arith.muli %pid, %c1024 : i32
    %r = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ss = tt.splat %start : i32 -> tensor<1024xi32>
    %offs = arith.addi %ss, %r : tensor<1024xi32>
    %xb = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %xp = tt.addptr %xb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %xv = tt.load %xp : tensor<1024x!tt.ptr<f32>>
    %yb = tt.splat %y : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %yp = tt.addptr %yb, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    %yv = tt.load %yp : tensor<1024x!tt.ptr<f32>>
$CHAIN
    %ob = tt.splat %out : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
    %op = tt.addptr %ob, %offs : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
    tt.store %op, %z : tensor<1024x!tt.ptr<f32>>
    tt.return
  }
}
)",
               {{"$CHAIN", chain}});
}

/// Runs `chain` over x = 1.5 and y = 0.5 everywhere; whether every lane holds `want`.
bool runs(const std::string &chain, float want) {
  LoadedKernel k = loadKernel(chainKernel(chain));
  if (!k.kernel) {
    std::fprintf(stderr, "chain_exit_helper: %s\n", k.error.c_str());
    return false;
  }
  const int64_t programs = 2049;
  const size_t lanes = size_t(programs) * 1024;
  std::vector<float> x(lanes, 1.5f), y(lanes, 0.5f), out(lanes);
  LaunchResult r = launch(*k.kernel,
                          {pointer("x", viewOf(x, DType::F32)), pointer("y", viewOf(y, DType::F32)),
                           pointer("out", viewOf(out, DType::F32))},
                          {ptrArg(0), ptrArg(1), ptrArg(2)}, {programs, 1, 1});
  return !r.fault && r.error.empty() && out[0] == want && out[lanes - 1] == want;
}

} // namespace

int main() {
  interp::setChainCompilation(interp::ChainCompilation::Background);
  // (1.5 - 0.5) * 1.5 / (0.5 + 3) = 1.5 / 3.5
  if (!runs(R"(
    %d = arith.subf %xv, %yv : tensor<1024xf32>
    %p = arith.mulf %d, %xv : tensor<1024xf32>
    %q = arith.addf %yv, %three : tensor<1024xf32>
    %z = arith.divf %p, %q : tensor<1024xf32>)",
            1.5f / 3.5f))
    return 1;
  interp::waitForChainCompilations();
  // max(1.5 * 2 - 0.5, 0.5) = 2.5
  if (!runs(R"(
    %e = arith.mulf %xv, %two : tensor<1024xf32>
    %f = arith.subf %e, %yv : tensor<1024xf32>
    %z = arith.maxnumf %f, %yv : tensor<1024xf32>)",
            2.5f))
    return 1;
  std::exit(0); // the second kernel's compilation is still under way
}
