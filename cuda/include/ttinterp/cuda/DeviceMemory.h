//===- DeviceMemory.h - CUDA device memory as caller memory, and owned buffers -*- C++ -*-===//
//
// DeviceMemory lets the memory model (memory/Session.h) run interpreted kernels on device
// pointers: caller addresses are device addresses, copied in and out in bulk with
// cuMemcpyDtoH/HtoD. allocationRange tells which allocation a raw device pointer lies in, the
// storage identity two views must share to alias.
//
// DeviceBuffer owns one cuMemAlloc allocation (freed on destruction).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/cuda/Driver.h"
#include "ttinterp/memory/CallerMemory.h"
#include "ttinterp/memory/View.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ttinterp::cuda {

/// The memory of one CUDA device, seen through the driver.
class DeviceMemory final : public CallerMemory {
public:
  explicit DeviceMemory(int device = 0, Driver &driver = Driver::instance())
      : driver_(&driver), device_(device) {}

  /// "cuda:N".
  std::string name() const override;
  /// cuMemcpyDtoH; a zero-byte read touches nothing.
  bool read(uint64_t address, void *dst, size_t size, std::string &error) override;
  /// cuMemcpyHtoD; a zero-byte write touches nothing.
  bool write(uint64_t address, const void *src, size_t size, std::string &error) override;

  /// The whole allocation holding `devicePtr` (cuMemGetAddressRange), which must be memory of
  /// this device. nullopt with a message otherwise.
  std::optional<ByteRange> allocationRange(uint64_t devicePtr, std::string &error);

  int device() const { return device_; }
  Driver &driver() const { return *driver_; }

private:
  Driver *driver_;
  int device_;
};

/// One device allocation, owned. Move-only.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  /// Frees the allocation, ignoring errors (use release() to see them).
  ~DeviceBuffer();

  /// Allocates `bytes` on `device`. Zero bytes gives an empty buffer at address 0 without asking
  /// the driver (which rejects empty allocations).
  static std::optional<DeviceBuffer> allocate(size_t bytes, std::string &error, int device = 0,
                                              Driver &driver = Driver::instance());

  uint64_t address() const { return address_; }
  size_t size() const { return size_; }
  int device() const { return device_; }

  /// Copies `bytes` from host `src` to the buffer at `offset`; the range must lie inside.
  bool upload(const void *src, size_t bytes, std::string &error, size_t offset = 0);
  /// Copies `bytes` at `offset` of the buffer to host `dst`.
  bool download(void *dst, size_t bytes, std::string &error, size_t offset = 0) const;
  /// Sets every byte to `value` (cuMemsetD8).
  bool fill(uint8_t value, std::string &error);
  /// Frees the allocation now, reporting a failure; the buffer is empty afterwards either way.
  bool release(std::string &error);

private:
  bool checkRange(const char *what, size_t offset, size_t bytes, std::string &error) const;

  Driver *driver_ = nullptr;
  uint64_t address_ = 0;
  size_t size_ = 0;
  int device_ = 0;
};

} // namespace ttinterp::cuda
