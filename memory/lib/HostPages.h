//===- HostPages.h - Page size and faulting pages in, for memory/'s host code -*- C++ -*-===//
//
// Shared by CallerMemory.cpp (write-backs into pages not yet in memory) and FreshPages.cpp
// (claimed output pages): internal to memory/.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace ttinterp {

/// The system's page size (4 KiB on x86-64 Linux).
uint64_t hostPageSize();

/// Faults in the pages under [p, p + size) for writing in one call, as a first write to each
/// would, one trap per page. The pages at either end may be only partly the range's, but whole
/// pages lie in one mapping, writable as the range's part is, and faulting them in changes no
/// byte. False where the kernel cannot (before Linux 5.14, not Linux).
bool populateForWrite(void *p, size_t size);

} // namespace ttinterp
