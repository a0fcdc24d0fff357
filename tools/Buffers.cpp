//===- Buffers.cpp - Allocating and initialising a spec's buffers ----------===//
#include "Buffers.h"

#include "Elements.h"
#include "Npy.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <new>

namespace ttinterp::driver {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void fillBuffer(const BufferSpec &b, uint8_t *data) {
  size_t size = byteSize(b.dtype);
  switch (b.init) {
  case InitKind::Npy: // HostBuffers::create reads the file's data over every byte
    return;
  case InitKind::Zeros:
  case InitKind::Addresses: // filled by HostBuffers::create, once every buffer has its address
    std::memset(data, 0, b.byteSize);
    return;
  case InitKind::Arange:
    for (int64_t i = 0; i < b.numElements; ++i) {
      if (b.dtype == DType::I1)
        data[i] = i != 0; // as numpy's astype(bool)
      else if (isInteger(b.dtype))
        storeInteger(b.dtype, data + i * size, i);
      else
        storeFloat(b.dtype, data + i * size, double(i));
    }
    return;
  case InitKind::Fill:
    for (int64_t i = 0; i < b.numElements; ++i) {
      if (isInteger(b.dtype))
        storeInteger(b.dtype, data + i * size, b.fill.integer);
      else
        storeFloat(b.dtype, data + i * size, b.fill.real);
    }
    return;
  case InitKind::Uniform: {
    uint64_t state = b.seed;
    double span = b.high - b.low;
    for (int64_t i = 0; i < b.numElements; ++i) {
      // The top 53 bits give every double in [0, 1) that is a multiple of 2^-53.
      double u = double(splitmix64(state) >> 11) * 0x1.0p-53;
      if (isInteger(b.dtype)) {
        double k = std::floor(u * span);
        // u * span can round up to span when the span needs more than 53 bits.
        int64_t v = std::min(int64_t(b.low) + int64_t(k), int64_t(b.high) - 1);
        storeInteger(b.dtype, data + i * size, v);
      } else if (std::isfinite(span)) {
        storeFloat(b.dtype, data + i * size, b.low + u * span);
      } else {
        // hi - lo overflows for f64 ranges wider than the largest double; this form
        // stays between lo and hi.
        storeFloat(b.dtype, data + i * size, b.low * (1 - u) + b.high * u);
      }
    }
    return;
  }
  }
}

bool loadNpyInit(const Spec &spec, const BufferSpec &b, uint8_t *data, std::string &error) {
  NpyReader reader;
  std::string why;
  std::string path = fmt::format("{}: {}.init.npy", spec.file, b.path);
  if (!reader.open(b.npyPath, b.dtype, why)) {
    error = fmt::format("{}: {}", path, why);
    return false;
  }
  const NpyHeader &header = reader.header();
  if (header.shape != b.shape) {
    error = fmt::format("{}: '{}' has shape [{}] but the buffer has shape [{}]", path, b.npyPath,
                        fmt::join(header.shape, ", "), fmt::join(b.shape, ", "));
    return false;
  }
  if (header.payloadBytes != b.byteSize) {
    error = fmt::format("{}: '{}' holds {} bytes, expected {}", path, b.npyPath,
                        header.payloadBytes, b.byteSize);
    return false;
  }
  // Straight from the file into the buffer: no copy of the array in between.
  if (b.byteSize && !reader.readPayload(data, why)) {
    error = fmt::format("{}: {}", path, why);
    return false;
  }
  return true;
}

bool HostBuffers::create(const Spec &spec, std::string &error) {
  size_t n = spec.buffers.size();
  storage_.clear();
  storage_.resize(n);
  data_.assign(n, nullptr);
  sizes_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const BufferSpec &b = spec.buffers[i];
    sizes_[i] = b.byteSize;
    if (b.aliasOf)
      continue;
    // 64-byte aligned; never empty, so every root has its own address.
    try {
      storage_[i] = acquireHostBlock(b.byteSize);
    } catch (const std::bad_alloc &) {
      error = fmt::format("{}: {}: cannot allocate {} bytes", spec.file, b.path, b.byteSize);
      return false;
    }
    data_[i] = storage_[i].get();
    fillBuffer(b, data_[i]);
    if (b.init == InitKind::Npy && !loadNpyInit(spec, b, data_[i], error))
      return false;
  }
  for (size_t i = 0; i < n; ++i)
    if (spec.buffers[i].aliasOf)
      data_[i] = data_[spec.buffers[i].root] + spec.buffers[i].rootOffset;
  // Tables last: their targets may come after them in the spec. parseSpec refused device
  // buffers here, so every address is a host address.
  for (size_t i = 0; i < n; ++i) {
    const BufferSpec &b = spec.buffers[i];
    if (b.init != InitKind::Addresses)
      continue;
    for (size_t k = 0; k < b.addresses.size(); ++k) {
      const AddressEntry &e = b.addresses[k];
      uint64_t address = reinterpret_cast<uintptr_t>(data_[e.buffer]) +
                         uint64_t(e.offset) * uint64_t(byteSize(spec.buffers[e.buffer].dtype));
      std::memcpy(data_[i] + k * sizeof(uint64_t), &address, sizeof(address));
    }
  }
  return true;
}

bool HostBuffers::createDevice(const Spec &spec, std::string &error) {
  size_t n = spec.buffers.size();
  deviceAddress_.assign(n, std::nullopt);
  device_.clear();
  device_.resize(n);
  deviceMemory_ = std::make_unique<cuda::DeviceMemory>(0);
  for (size_t i = 0; i < n; ++i) {
    const BufferSpec &b = spec.buffers[i];
    if (!b.device || b.aliasOf)
      continue;
    std::string why;
    std::optional<cuda::DeviceBuffer> buffer = cuda::DeviceBuffer::allocate(b.byteSize, why);
    if (!buffer || !buffer->upload(data_[i], b.byteSize, why)) {
      error = fmt::format("{}: {}: cannot create the device buffer: {}", spec.file, b.path, why);
      return false;
    }
    deviceAddress_[i] = buffer->address();
    device_[i] = std::move(*buffer);
  }
  for (size_t i = 0; i < n; ++i)
    if (spec.buffers[i].device && spec.buffers[i].aliasOf)
      deviceAddress_[i] = *deviceAddress_[spec.buffers[i].root] + spec.buffers[i].rootOffset;
  return true;
}

bool HostBuffers::download(std::string &error) {
  for (size_t i = 0; i < device_.size(); ++i)
    if (device_[i].size() && !device_[i].download(data_[i], device_[i].size(), error))
      return false;
  return true;
}

} // namespace ttinterp::driver
