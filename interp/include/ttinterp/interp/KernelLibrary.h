//===- KernelLibrary.h - Loading, hashing and lowering kernels from TTIR -*- C++ -*-===//
//
// The one door to the front end and to lowering for every tool (the CLI, the Python
// module). A library parses each distinct TTIR file or text once (one MLIRContext) and
// lowers each distinct kernel once, keyed by its structural hash, so launching the same
// kernel again, even from a re-dump with other locations or SSA names, reuses the lowered
// form. MLIR types stay inside KernelLibrary.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/interp/Interpreter.h"

#include <cstdint>

#include <memory>
#include <optional>
#include <string>

namespace ttinterp::interp {

/// Why a kernel could not be had; each is bad input (the CLI's exit status 2).
enum class KernelFailure {
  Load,        ///< Unreadable file, parse or verify error.
  Function,    ///< No such function, or no single public one.
  Unsupported, ///< An op or type the interpreter cannot run.
};

class KernelLibrary {
public:
  KernelLibrary();
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;

  struct Entry {
    const interp::Kernel *kernel = nullptr;
    std::string function;
    std::string hash;    ///< Structural hash, lowercase hex.
    bool cached = false; ///< Lowered for an earlier request with the same hash.
  };

  /// The kernel `function` of the TTIR file at `path` (empty `function`: the file's only
  /// public one). On failure returns nullopt with `failure` and a message in `error`
  /// ("FILE:LINE:COL: error: ..." lines for TTIR errors, as the front end words them; for
  /// KernelFailure::Function a bare sentence the caller places).
  std::optional<Entry> get(const std::string &path, const std::string &function,
                           KernelFailure &failure, std::string &error);
  /// As get, for TTIR held in memory (a Triton compile's output); `name` stands for the
  /// file in messages. Each distinct text is parsed once.
  std::optional<Entry> getFromText(const std::string &text, const std::string &name,
                                   const std::string &function, KernelFailure &failure,
                                   std::string &error);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The structural hash of `function` in the TTIR file at `path` (`ttinterp hash`).
std::optional<std::string> hashKernel(const std::string &path, const std::string &function,
                                      std::string &error);

/// Every function's signature in the TTIR file at `path`, as text (`ttinterp info`).
std::optional<std::string> describeKernels(const std::string &path, std::string &error);

} // namespace ttinterp::interp
