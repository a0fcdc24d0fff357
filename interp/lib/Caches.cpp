//===- Caches.cpp - Kernel and launch-plan caches -------------------------===//
#include "ttinterp/interp/Caches.h"

#include "ttinterp/frontend/Frontend.h"

#include "llvm/Support/SHA256.h"

#include <fmt/format.h>

#include <algorithm>

namespace ttinterp::interp {

std::optional<KernelCache::Result> KernelCache::get(mlir::FunctionOpInterface fn,
                                                    std::string &error) {
  Result r;
  r.hash = frontend::structuralHash(fn);
  auto it = kernels_.find(r.hash);
  if (it != kernels_.end()) {
    r.kernel = it->second.get();
    r.hit = true;
    return r;
  }
  std::unique_ptr<Kernel> kernel = Kernel::lower(fn, error);
  if (!kernel)
    return std::nullopt;
  r.kernel = kernel.get();
  kernels_.emplace(r.hash, std::move(kernel));
  return r;
}

PlanCache::Result PlanCache::get(const std::string &kernelHash, const std::vector<View> &views,
                                 std::vector<uint32_t> donors, const PlanOptions &options) {
  // Sorted and de-duplicated before it enters the key: {a, b} and {b, a, a} are one set.
  std::sort(donors.begin(), donors.end());
  donors.erase(std::unique(donors.begin(), donors.end()), donors.end());
  AliasPattern aliasing = analyzeAliasing(views);
  // Looked up by a binary key holding exactly the canonical text's fields (a cached launch
  // builds no text and hashes nothing); the text and its digest are made for a new plan.
  std::string lookup;
  auto appendRaw = [&lookup](auto value) {
    lookup.append(reinterpret_cast<const char *>(&value), sizeof value);
  };
  appendRaw(uint64_t(kernelHash.size()));
  lookup += kernelHash;
  aliasing.appendKey(lookup);
  appendRaw(uint64_t(donors.size()));
  for (uint32_t d : donors)
    appendRaw(d);
  appendRaw(uint8_t(options.bounds == BoundsMode::Region));
  appendRaw(uint8_t(options.inPlace));
  appendRaw(uint8_t(options.hazards));
  appendRaw(options.threads);
  auto it = plans_.find(lookup);
  if (it != plans_.end())
    return {it->second, true};
  std::string canonical = fmt::format(
      "kernel {}\n{}donors {}\nbounds {}\nin_place {}\nhazards {}\nthreads {}\n", kernelHash,
      aliasing.canonical(), fmt::join(donors, " "),
      options.bounds == BoundsMode::Region ? "region" : "arg", options.inPlace, options.hazards,
      options.threads);
  auto plan = std::make_shared<LaunchPlan>();
  llvm::SHA256 sha;
  sha.update(llvm::StringRef(canonical));
  static constexpr char kHex[] = "0123456789abcdef";
  for (uint8_t b : sha.final()) {
    plan->key += kHex[b >> 4];
    plan->key += kHex[b & 15];
  }
  plan->canonical = std::move(canonical);
  plan->aliasing = std::move(aliasing);
  plan->donors = std::move(donors);
  plan->options = options;
  plan->serial = options.threads <= 1 || options.hazards;
  plans_.emplace(std::move(lookup), plan);
  return {plan, false};
}

} // namespace ttinterp::interp
