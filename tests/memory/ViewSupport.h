//===- ViewSupport.h - Building views in memory tests ---------------------===//
#pragma once

#include "ttinterp/memory/View.h"

#include <vector>

namespace ttinterp::test {

inline View makeView(uint64_t address, DType dtype, std::vector<int64_t> shape,
                     std::vector<int64_t> strides) {
  View v;
  v.address = address;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  return v;
}

} // namespace ttinterp::test
