//===- Harness.h - Running TTIR through the C++ API in tests --------------===//
#pragma once

#include "ttinterp/frontend/Frontend.h"
#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/memory/Session.h"

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ttinterp::test {

/// A parsed and lowered kernel (the context outlives the kernel's lowering).
struct LoadedKernel {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<interp::Kernel> kernel;
  std::string error;
};

inline LoadedKernel loadKernel(const std::string &textOrPath, bool isPath = false,
                               const std::string &function = "") {
  LoadedKernel k;
  k.context = frontend::makeContext();
  k.module = isPath ? frontend::loadTTIRFile(*k.context, textOrPath, k.error)
                    : frontend::parseTTIR(*k.context, textOrPath, "test.ttir", k.error);
  if (!k.module)
    return k;
  mlir::FunctionOpInterface fn = frontend::findFunction(*k.module, function, k.error);
  if (!fn)
    return k;
  k.kernel = interp::Kernel::lower(fn, k.error);
  return k;
}

/// A contiguous host array viewed as a kernel argument.
template <class T> View viewOf(std::vector<T> &v, DType dtype) {
  View view;
  view.address = reinterpret_cast<uint64_t>(v.data());
  view.dtype = dtype;
  view.shape = {int64_t(v.size())};
  view.strides = {1};
  return view;
}

inline PointerArgument pointer(const std::string &name, View view) {
  PointerArgument a;
  a.name = name;
  a.buffer = name;
  a.view = std::move(view);
  return a;
}

/// `ptrs` with each argument's access taken from the kernel: a pointer argument
/// bound to pointer parameters gets the OR of their proven accesses (so tests
/// run with read-in-place and written-only shadows, as the CLI does); one no
/// parameter refers to keeps the access it has.
inline std::vector<PointerArgument>
withKernelAccess(const interp::Kernel &kernel, std::vector<PointerArgument> ptrs,
                 const std::vector<interp::ArgumentValue> &args) {
  kernel.applyAccess(args, ptrs);
  return ptrs;
}

/// Runs one launch in a fresh session and steps it (writes back) unless it faulted.
struct LaunchResult {
  std::optional<interp::Fault> fault;
  std::string error;
  TransferStats stats;
};

inline LaunchResult launch(const interp::Kernel &kernel, const std::vector<PointerArgument> &ptrs,
                           const std::vector<interp::ArgumentValue> &args,
                           std::array<int64_t, 3> grid, unsigned threads = 1,
                           uint64_t maxSteps = 0,
                           interp::LaunchOptions::Order order = interp::LaunchOptions::Order::Forward,
                           uint64_t shuffleSeed = 0) {
  LaunchResult r;
  Session session;
  LaunchMemory memory;
  if (!session.prepare(withKernelAccess(kernel, ptrs, args), memory, r.error))
    return r;
  interp::LaunchOptions options;
  options.grid = grid;
  options.threads = threads;
  options.maxSteps = maxSteps;
  options.order = order;
  options.shuffleSeed = shuffleSeed;
  r.fault = kernel.run(args, memory, options);
  if (r.fault)
    session.abandon();
  else
    session.step(r.error);
  r.stats = session.stats();
  return r;
}

inline interp::ArgumentValue ptrArg(uint32_t index) {
  interp::ArgumentValue v;
  v.pointerIndex = index;
  return v;
}
inline interp::ArgumentValue intArg(int64_t value) {
  interp::ArgumentValue v;
  v.integer = value;
  return v;
}
inline interp::ArgumentValue floatArg(double value) {
  interp::ArgumentValue v;
  v.real = value;
  return v;
}

/// `text` with every occurrence of each key of `subs` replaced by its value
/// (TTIR templates: "$T", "$BODY", ...).
inline std::string subst(std::string text,
                         const std::vector<std::pair<std::string, std::string>> &subs) {
  for (const auto &[key, value] : subs)
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

inline std::string source(const std::string &relative) {
  return std::string(TTINTERP_SOURCE_DIR) + "/" + relative;
}

} // namespace ttinterp::test
