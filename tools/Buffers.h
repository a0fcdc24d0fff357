//===- Buffers.h - Host storage for a spec's buffers ------------*- C++ -*-===//
//
// Each buffer that is not an alias gets its own 64-byte aligned host allocation, filled
// as its init says; an alias_of buffer is a window into its root's allocation. Kernels
// see these as caller memory (HostMemory): their addresses are what views point at.
// Separate allocations never overlap, so two buffers share bytes only through alias_of,
// exactly as the spec declares.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Spec.h"

#include "ttinterp/memory/View.h"

#include <cstdint>
#include <memory>
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

  uint8_t *data(size_t buffer) const { return data_[buffer]; }
  uint64_t address(size_t buffer) const { return reinterpret_cast<uintptr_t>(data_[buffer]); }
  /// The buffer's bytes as caller addresses.
  ByteRange range(size_t buffer) const {
    return {address(buffer), address(buffer) + sizes_[buffer]};
  }

private:
  std::vector<std::unique_ptr<uint8_t[]>> storage_;
  std::vector<uint8_t *> data_;
  std::vector<uint64_t> sizes_;
};

/// Reads the npy file of an Npy init into `data`, checking its shape and dtype (as readNpy
/// accepts them). `error` names the JSON path.
bool loadNpyInit(const Spec &spec, const BufferSpec &buffer, uint8_t *data, std::string &error);

} // namespace ttinterp::driver
