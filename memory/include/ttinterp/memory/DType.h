//===- DType.h - Element types of buffers and tensors ----------*- C++ -*-===//
//
// The element types ttinterp moves through memory, named as TTIR spells them.
// Signedness is not part of a type (as in TTIR): ops say how they read bits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ttinterp {

enum class DType : uint8_t {
  I1,
  I8,
  I16,
  I32,
  I64,
  F16,
  BF16,
  F32,
  F64,
  F8E4M3FN,
  F8E4M3FNUZ,
  F8E5M2,
  F8E5M2FNUZ,
  Ptr, ///< A 64-bit address (pointers stored in memory, e.g. a pointer table).
};

/// Bytes one element occupies in memory (i1 is stored as one byte, as on the GPU).
constexpr size_t byteSize(DType t) {
  switch (t) {
  case DType::I1:
  case DType::I8:
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
    return 1;
  case DType::I16:
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I32:
  case DType::F32:
    return 4;
  case DType::I64:
  case DType::F64:
  case DType::Ptr:
    return 8;
  }
  return 0;
}

constexpr bool isFloat(DType t) {
  return t >= DType::F16 && t <= DType::F8E5M2FNUZ;
}
constexpr bool isInteger(DType t) { return t <= DType::I64; }
constexpr bool isFP8(DType t) { return t >= DType::F8E4M3FN && t <= DType::F8E5M2FNUZ; }

/// The TTIR spelling: "i32", "bf16", "f8E4M3FN", "ptr".
std::string_view name(DType t);
/// Parses a TTIR spelling; nullopt for anything else.
std::optional<DType> parseDType(std::string_view s);

} // namespace ttinterp
