//===- KernelLibrary.cpp - Kernel loading and the lowered-kernel cache -----===//
#include "ttinterp/interp/KernelLibrary.h"

#include "ttinterp/frontend/Frontend.h"
#include "ttinterp/interp/Caches.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <map>

namespace ttinterp::interp {

struct KernelLibrary::Impl {
  std::unique_ptr<mlir::MLIRContext> context = frontend::makeContext();
  /// Parsed modules by "file:" normalised path or "text:" TTIR text, kept alive with the
  /// library.
  std::map<std::string, mlir::OwningOpRef<mlir::ModuleOp>> modules;
  KernelCache kernels;
};

KernelLibrary::KernelLibrary() : impl_(std::make_unique<Impl>()) {}
KernelLibrary::~KernelLibrary() = default;

/// One key per file however the spec spells its path.
static std::string fileKey(const std::string &path) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : canonical.string();
}

/// The kernel `function` of a parsed module, lowered once per structural hash.
static std::optional<KernelLibrary::Entry> lowerFunction(KernelCache &kernels,
                                                        mlir::ModuleOp module,
                                                        const std::string &function,
                                                        KernelFailure &failure,
                                                        std::string &error) {
  mlir::FunctionOpInterface fn = frontend::findFunction(module, function, error);
  if (!fn) {
    failure = KernelFailure::Function;
    return std::nullopt;
  }
  std::optional<KernelCache::Result> lowered = kernels.get(fn, error);
  if (!lowered) {
    failure = KernelFailure::Unsupported;
    return std::nullopt;
  }
  KernelLibrary::Entry entry;
  entry.function = fn.getName().str();
  entry.hash = lowered->hash;
  entry.kernel = lowered->kernel;
  entry.cached = lowered->hit;
  return entry;
}

std::optional<KernelLibrary::Entry> KernelLibrary::get(const std::string &path,
                                                       const std::string &function,
                                                       KernelFailure &failure, std::string &error) {
  std::string key = "file:" + fileKey(path);
  auto it = impl_->modules.find(key);
  if (it == impl_->modules.end()) {
    mlir::OwningOpRef<mlir::ModuleOp> module = frontend::loadTTIRFile(*impl_->context, path, error);
    if (!module) {
      failure = KernelFailure::Load;
      return std::nullopt;
    }
    it = impl_->modules.emplace(key, std::move(module)).first;
  }
  return lowerFunction(impl_->kernels, *it->second, function, failure, error);
}

std::optional<KernelLibrary::Entry> KernelLibrary::getFromText(const std::string &text,
                                                               const std::string &name,
                                                               const std::string &function,
                                                               KernelFailure &failure,
                                                               std::string &error) {
  // The text itself is the key: two compiles with equal text share one parse.
  std::string key = "text:" + text;
  auto it = impl_->modules.find(key);
  if (it == impl_->modules.end()) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        frontend::parseTTIR(*impl_->context, text, name, error);
    if (!module) {
      failure = KernelFailure::Load;
      return std::nullopt;
    }
    it = impl_->modules.emplace(key, std::move(module)).first;
  }
  return lowerFunction(impl_->kernels, *it->second, function, failure, error);
}

std::optional<std::string> hashKernel(const std::string &path, const std::string &function,
                                      std::string &error) {
  std::unique_ptr<mlir::MLIRContext> context = frontend::makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = frontend::loadTTIRFile(*context, path, error);
  if (!module)
    return std::nullopt;
  mlir::FunctionOpInterface fn = frontend::findFunction(*module, function, error);
  if (!fn) {
    error = path + ": " + error;
    return std::nullopt;
  }
  return frontend::structuralHash(fn);
}

std::optional<std::string> describeKernels(const std::string &path, std::string &error) {
  std::unique_ptr<mlir::MLIRContext> context = frontend::makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = frontend::loadTTIRFile(*context, path, error);
  if (!module)
    return std::nullopt;
  std::string text = frontend::formatSignatures(frontend::signatures(*module));
  // What each public function does through its pointers, as the memory model
  // will use it (proven when the function is lowered).
  std::string access;
  module->walk([&](mlir::FunctionOpInterface fn) {
    if (!fn.isPublic() || fn.isExternal())
      return;
    std::string lowerError;
    std::unique_ptr<Kernel> kernel = Kernel::lower(fn, lowerError);
    if (!kernel) {
      access += fmt::format("  {}: cannot be interpreted: {}\n", fn.getName().str(), lowerError);
      return;
    }
    std::vector<std::string> parts;
    for (const Parameter &p : kernel->parameters())
      if (p.isPointer)
        parts.push_back(fmt::format("{} {}", p.name, accessName(p.access)));
    access += fmt::format("  {}: {}\n", fn.getName().str(),
                          parts.empty() ? "no pointer arguments" : fmt::format("{}", fmt::join(parts, ", ")));
  });
  if (!access.empty())
    text += "memory access (proven from the TTIR):\n" + access;
  return text;
}

} // namespace ttinterp::interp
