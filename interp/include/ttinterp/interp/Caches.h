//===- Caches.h - Lowered kernels and launch plans, keyed by what they depend on -*- C++ -*-===//
//
// Two caches, each keyed by everything that changes what it holds and by
// nothing else:
//  * KernelCache: a lowered Kernel per structural hash of its function. The
//    hash covers ops, types and argument attributes (tt.divisibility hints) and
//    ignores debug locations and SSA names, so the same kernel dumped with
//    other line numbers is a hit.
//  * PlanCache: a LaunchPlan per (kernel hash, alias pattern of the pointer
//    arguments, donor set, aliasing options). A launch whose arguments alias
//    differently, or that donates other buffers, never reuses a plan made for
//    another pattern.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/memory/Aliasing.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class FunctionOpInterface;
} // namespace mlir

namespace ttinterp::interp {

class KernelCache {
public:
  struct Result {
    const Kernel *kernel = nullptr;
    std::string hash; ///< Structural hash, lowercase hex.
    bool hit = false;
  };
  /// The lowered form of `fn`, lowering it only if no function with the same
  /// structural hash was lowered before. Fails as Kernel::lower does.
  std::optional<Result> get(mlir::FunctionOpInterface fn, std::string &error);
  size_t size() const { return kernels_.size(); }

private:
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

/// Launch options that change how aliasing is handled.
struct PlanOptions {
  BoundsMode bounds = BoundsMode::Argument;
  bool inPlace = false;
  bool hazards = false;
  unsigned threads = 1;
};

/// Everything decided per launch before running it.
struct LaunchPlan {
  std::string key;       ///< Hex SHA-256 of `canonical`.
  std::string canonical; ///< The text the key digests.
  AliasPattern aliasing; ///< Regions, offsets and pair classes of the pointer arguments.
  std::vector<uint32_t> donors; ///< Donated pointer arguments (positions), sorted, unique.
  PlanOptions options;
  /// Programs run one at a time: one thread asked for, or hazard tracking on.
  bool serial = true;
};

class PlanCache {
public:
  struct Result {
    std::shared_ptr<const LaunchPlan> plan;
    bool hit = false;
  };
  /// The plan for a launch of the kernel with structural hash `kernelHash` on
  /// pointer arguments `views` (in parameter order) donating `donors`
  /// (positions in `views`). Plans are found by everything that changes how the launch
  /// runs (the alias pattern, the donors, the options): the fields of their canonical text.
  Result get(const std::string &kernelHash, const std::vector<View> &views,
             std::vector<uint32_t> donors, const PlanOptions &options);
  size_t size() const { return plans_.size(); }

private:
  /// By the canonical text's fields in binary (PlanCache::get).
  std::map<std::string, std::shared_ptr<const LaunchPlan>> plans_;
};

} // namespace ttinterp::interp
