//===- CallerMemory.cpp - Host implementation of caller memory ------------===//
#include "ttinterp/memory/CallerMemory.h"

#include <cstring>

namespace ttinterp {

bool HostMemory::read(uint64_t address, void *dst, size_t size, std::string &) {
  if (size)
    std::memcpy(dst, reinterpret_cast<const void *>(static_cast<uintptr_t>(address)), size);
  return true;
}

bool HostMemory::write(uint64_t address, const void *src, size_t size, std::string &) {
  if (size)
    std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(address)), src, size);
  return true;
}

HostMemory &HostMemory::instance() {
  static HostMemory memory;
  return memory;
}

} // namespace ttinterp
