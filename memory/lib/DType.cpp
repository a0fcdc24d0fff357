//===- DType.cpp - Names of element types ---------------------------------===//
#include "ttinterp/memory/DType.h"

namespace ttinterp {

static constexpr std::string_view kNames[] = {
    "i1",  "i8",  "i16",      "i32",        "i64",    "f16",        "bf16",
    "f32", "f64", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "ptr"};

std::string_view name(DType t) { return kNames[static_cast<size_t>(t)]; }

std::optional<DType> parseDType(std::string_view s) {
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (kNames[i] == s)
      return static_cast<DType>(i);
  return std::nullopt;
}

} // namespace ttinterp
