//===- DeviceMemory.cpp - Device copies behind the CallerMemory interface -===//
#include "ttinterp/cuda/DeviceMemory.h"

#include <fmt/format.h>

namespace ttinterp::cuda {

std::string DeviceMemory::name() const { return fmt::format("cuda:{}", device_); }

bool DeviceMemory::read(uint64_t address, void *dst, size_t size, std::string &error) {
  if (size == 0)
    return true;
  return driver_->copyToHost(device_, dst, address, size, error);
}

bool DeviceMemory::write(uint64_t address, const void *src, size_t size, std::string &error) {
  if (size == 0)
    return true;
  return driver_->copyToDevice(device_, address, src, size, error);
}

std::optional<ByteRange> DeviceMemory::allocationRange(uint64_t devicePtr, std::string &error) {
  int owner = -1;
  std::string why;
  if (!driver_->pointerDevice(devicePtr, owner, why)) {
    if (!driver_->initialize(error))
      return std::nullopt;
    error = fmt::format("0x{:x} is not CUDA device memory: {}", devicePtr, why);
    return std::nullopt;
  }
  if (owner != device_) {
    error = fmt::format("0x{:x} is memory of cuda:{}, not of {}", devicePtr, owner, name());
    return std::nullopt;
  }
  DevicePtr base = 0;
  size_t size = 0;
  if (!driver_->addressRange(device_, devicePtr, base, size, error))
    return std::nullopt;
  return ByteRange{base, base + size};
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    std::string ignored;
    release(ignored);
    driver_ = other.driver_;
    address_ = other.address_;
    size_ = other.size_;
    device_ = other.device_;
    other.address_ = 0;
    other.size_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  std::string ignored;
  release(ignored);
}

std::optional<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, std::string &error, int device,
                                                   Driver &driver) {
  DeviceBuffer buffer;
  buffer.driver_ = &driver;
  buffer.device_ = device;
  if (bytes == 0)
    return buffer;
  DevicePtr address = 0;
  if (!driver.memAlloc(device, bytes, address, error))
    return std::nullopt;
  buffer.address_ = address;
  buffer.size_ = bytes;
  return buffer;
}

bool DeviceBuffer::checkRange(const char *what, size_t offset, size_t bytes,
                              std::string &error) const {
  if (offset > size_ || bytes > size_ - offset) {
    error = fmt::format("{} of {} bytes at offset {} does not fit the {}-byte device buffer", what,
                        bytes, offset, size_);
    return false;
  }
  return true;
}

bool DeviceBuffer::upload(const void *src, size_t bytes, std::string &error, size_t offset) {
  if (!checkRange("upload", offset, bytes, error))
    return false;
  if (bytes == 0)
    return true;
  return driver_->copyToDevice(device_, address_ + offset, src, bytes, error);
}

bool DeviceBuffer::download(void *dst, size_t bytes, std::string &error, size_t offset) const {
  if (!checkRange("download", offset, bytes, error))
    return false;
  if (bytes == 0)
    return true;
  return driver_->copyToHost(device_, dst, address_ + offset, bytes, error);
}

bool DeviceBuffer::fill(uint8_t value, std::string &error) {
  if (size_ == 0)
    return true;
  return driver_->memsetD8(device_, address_, value, size_, error);
}

bool DeviceBuffer::release(std::string &error) {
  if (address_ == 0)
    return true;
  uint64_t address = address_;
  address_ = 0;
  size_ = 0;
  return driver_->memFree(device_, address, error);
}

} // namespace ttinterp::cuda
