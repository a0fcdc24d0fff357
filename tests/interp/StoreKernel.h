//===- StoreKernel.h - Small kernels that compute a tensor and store it ---===//
#pragma once

#include "Harness.h"

namespace ttinterp::test {

/// `@k(%out: !tt.ptr<T>)` whose body computes %r : tensor<NxT> (given `%range`,
/// 0..N-1 as i32) and stores it to out[0..N).
inline std::string storeKernel(const std::string &type, const std::string &body, int n = 8) {
  std::string t = "tensor<" + std::to_string(n) + "x!tt.ptr<" + type + ">>";
  std::string r = "tensor<" + std::to_string(n) + "xi32>";
  return "module {\n  tt.func public @k(%out: !tt.ptr<" + type + ">) {\n" +
         "    %range = tt.make_range {end = " + std::to_string(n) +
         " : i32, start = 0 : i32} : " + r + "\n    %base = tt.splat %out : !tt.ptr<" + type +
         "> -> " + t + "\n" + "    %ptrs = tt.addptr %base, %range : " + t + ", " + r + "\n" +
         body + "\n" + "    tt.store %ptrs, %r : " + t +
         "\n    tt.return\n  }\n}\n#at = loc(\"k.py\":3:4)\n";
}

/// Runs a storeKernel and returns out[0..n).
template <class T> std::vector<T> runStoreKernel(const std::string &ttir, DType dtype, int n = 8) {
  LoadedKernel k = loadKernel(ttir);
  REQUIRE_MESSAGE(k.kernel, k.error);
  std::vector<T> out(size_t(n), T(0));
  LaunchResult r = launch(*k.kernel, {pointer("out", viewOf(out, dtype))}, {ptrArg(0)}, {1, 1, 1});
  REQUIRE(r.error.empty());
  REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message : ""));
  return out;
}

/// The lowering error of a kernel that must not lower.
inline std::string loweringError(const std::string &ttir) {
  LoadedKernel k = loadKernel(ttir);
  CHECK_FALSE(k.kernel);
  return k.error;
}

} // namespace ttinterp::test
