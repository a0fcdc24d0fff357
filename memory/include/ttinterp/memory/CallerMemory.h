//===- CallerMemory.h - Where a caller's bytes live (host, device) -*- C++ -*-===//
//
// The memory model never touches caller memory except through this interface,
// and only in bulk (copy-in of a region, write-back of coalesced dirty ranges):
// the kernel itself only ever sees shadows, or, for host regions no launch
// writes, the caller's bytes read in place. Host memory is a memcpy; the CUDA
// plug-in (cuda/) implements it with device copies.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ttinterp {

class CallerMemory {
public:
  virtual ~CallerMemory() = default;
  /// Short name for reports: "host", "cuda:0".
  virtual std::string name() const = 0;
  /// Copies `size` bytes at caller address `address` into `dst`. Returns false
  /// and fills `error` on failure (a device copy can fail).
  virtual bool read(uint64_t address, void *dst, size_t size, std::string &error) = 0;
  /// Copies `size` bytes from `src` to caller address `address`.
  virtual bool write(uint64_t address, const void *src, size_t size, std::string &error) = 0;
  /// Whether caller addresses are host pointers this process may read
  /// directly (then a region no launch writes needs no shadow).
  virtual bool hostAddressable() const { return false; }
};

/// The process's own memory: caller addresses are host pointers.
class HostMemory final : public CallerMemory {
public:
  std::string name() const override { return "host"; }
  bool read(uint64_t address, void *dst, size_t size, std::string &error) override;
  bool write(uint64_t address, const void *src, size_t size, std::string &error) override;
  bool hostAddressable() const override { return true; }
  /// The one instance; host memory has no state.
  static HostMemory &instance();
};

} // namespace ttinterp
