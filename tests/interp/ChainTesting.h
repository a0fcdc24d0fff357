//===- ChainTesting.h - What tests of compiled chains share ---------------===//
#pragma once

#include "ChainCompiler.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ttinterp::test {

/// Sets a chain compilation mode for one scope.
struct ChainMode {
  interp::ChainCompilation saved = interp::chainCompilation();
  explicit ChainMode(interp::ChainCompilation mode) { interp::setChainCompilation(mode); }
  ~ChainMode() { interp::setChainCompilation(saved); }
};

/// Equal bits, or both NaN: which NaN's payload an operation on two NaNs keeps is not
/// specified (docs/semantics.md).
inline bool sameFloat(float a, float b) {
  if (std::isnan(a) && std::isnan(b))
    return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

} // namespace ttinterp::test
