//===- Buffers.h - Host and device storage for a spec's buffers -*- C++ -*-===//
//
// Each buffer that is not an alias gets its own 64-byte aligned host allocation, filled
// as its init says; an alias_of buffer is a window into its root's allocation. Kernels
// see these as caller memory (HostMemory): their addresses are what views point at.
// Separate allocations never overlap, so two buffers share bytes only through alias_of,
// exactly as the spec declares.
//
// A "device": "cuda" root also gets a cuMemAlloc allocation on device 0, uploaded from its
// host bytes; kernels then see the device addresses through a cuda::DeviceMemory, and the
// host bytes are only the staging copy that download() refreshes for --out and the summary.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Spec.h"

#include "ttinterp/cuda/DeviceMemory.h"
#include "ttinterp/memory/HostBlocks.h"
#include "ttinterp/memory/View.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ttinterp::driver {

/// The next value of a splitmix64 generator (advances `state`).
uint64_t splitmix64(uint64_t &state);

/// Fills `data` (buffer.byteSize bytes) as a zeros, arange, fill or uniform init says.
/// Npy inits are loaded by HostBuffers::create.
void fillBuffer(const BufferSpec &buffer, uint8_t *data);

class HostBuffers {
public:
  /// Allocates and initialises every buffer of `spec`. Fails (with a message naming the
  /// JSON path) when an npy file cannot be read or does not match, or memory runs out.
  bool create(const Spec &spec, std::string &error);

  /// Allocates every device root on CUDA device 0 and uploads its host bytes. The driver must
  /// be available (cuda::available); fails with a message naming the JSON path otherwise.
  bool createDevice(const Spec &spec, std::string &error);
  /// Copies every device root's bytes into its host copy, so data() shows them.
  bool download(std::string &error);

  /// The host bytes (for a device buffer: the copy the last download() made).
  uint8_t *data(size_t buffer) const { return data_[buffer]; }
  /// Where kernels find the buffer: a host address, or a device address for a device buffer.
  uint64_t address(size_t buffer) const {
    return deviceAddress_.empty() || !deviceAddress_[buffer]
               ? reinterpret_cast<uintptr_t>(data_[buffer])
               : *deviceAddress_[buffer];
  }
  /// The caller memory address() lies in.
  CallerMemory &memory(size_t buffer) const {
    if (!deviceAddress_.empty() && deviceAddress_[buffer])
      return *deviceMemory_;
    return HostMemory::instance();
  }
  /// The buffer's bytes as caller addresses.
  ByteRange range(size_t buffer) const {
    return {address(buffer), address(buffer) + sizes_[buffer]};
  }

private:
  std::vector<HostBlock> storage_; ///< Roots' bytes (huge pages for big ones).
  std::vector<uint8_t *> data_;
  std::vector<uint64_t> sizes_;
  /// Per buffer: its device address, or none for a host buffer.
  std::vector<std::optional<uint64_t>> deviceAddress_;
  /// Per buffer: the allocation of a device root (empty otherwise).
  std::vector<cuda::DeviceBuffer> device_;
  std::unique_ptr<cuda::DeviceMemory> deviceMemory_;
};

/// Reads the npy file of an Npy init into `data`, checking its shape and dtype (as readNpy
/// accepts them). `error` names the JSON path.
bool loadNpyInit(const Spec &spec, const BufferSpec &buffer, uint8_t *data, std::string &error);

} // namespace ttinterp::driver
