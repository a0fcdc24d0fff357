//===- KernelParams.h - Kernel parameters marshalled for a native launch -*- C++ -*-===//
//
// cuLaunchKernel takes one pointer per kernel parameter and copies as many bytes from each as the
// kernel declares. This file builds that array from typed values, as a pure function so its
// layout can be tested without a GPU.
//
// ABI (what the NVPTX backend declares for a tt.func parameter):
//   pointer -> .u64 (8 bytes)     i1 -> .u8 (1 byte, 0 or 1)   i8 -> 1   i16 -> 2   i32 -> 4
//   i64 -> 8    f16, bf16 -> .b16 (2, IEEE half / bfloat16 bits)   f32 -> 4   f64 -> 8
// Each parameter sits at the next offset aligned to its size, as in the driver's own parameter
// buffer; the hidden scratch pointers (see KernelMetadata.h) follow the arguments. fp8 types are
// not kernel parameters in Triton and are rejected.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ttinterp::cuda {

/// One kernel argument: its TTIR type and its value bits (little endian, zero-extended).
struct KernelArg {
  DType type = DType::I32;
  uint64_t bits = 0;

  /// A device pointer (DType::Ptr).
  static KernelArg pointer(uint64_t address) { return {DType::Ptr, address}; }
  /// An integer of `type` (i1..i64): i1 is 1 for any non-zero value, wider types keep the low
  /// bits of `value` (two's complement), as a C cast does.
  static KernelArg integer(DType type, int64_t value);
  /// A float of `type` (f16, bf16, f32, f64), rounded from `value` to nearest, ties to even.
  static KernelArg real(DType type, double value);
  /// Raw bits, taken as they are (masked to the type's width).
  static KernelArg raw(DType type, uint64_t bits);
};

/// IEEE binary16 bits of `value`, rounded to nearest even (overflow gives infinity).
uint16_t roundToF16(double value);
/// bfloat16 bits of `value`, rounded to nearest even directly from the double.
uint16_t roundToBF16(double value);

/// Bytes (and alignment) a parameter of `type` takes; 0 for types that cannot be parameters.
size_t paramSize(DType type);

/// One parameter inside the packed buffer.
struct ParamSlot {
  DType type = DType::Ptr;
  size_t offset = 0;
  size_t size = 0;
  bool hidden = false; ///< A scratch pointer appended after the arguments.
};

/// The hidden trailing pointers and their values (0 where nothing was allocated).
struct HiddenParams {
  bool globalScratch = false;
  uint64_t globalScratchPtr = 0;
  bool profileScratch = false;
  uint64_t profileScratchPtr = 0;
};

/// The parameters of one launch, packed.
class ParamPack {
public:
  const std::vector<ParamSlot> &slots() const { return slots_; }
  /// Bytes of the packed buffer (the end of the last parameter).
  size_t size() const { return size_; }
  const uint8_t *data() const { return reinterpret_cast<const uint8_t *>(words_.data()); }
  /// The kernelParams array: one pointer per parameter, into this pack. Valid while the pack
  /// lives and is not reassigned.
  std::vector<void *> pointers();

private:
  friend bool marshalParams(const std::vector<KernelArg> &, const HiddenParams &, ParamPack &,
                            std::string &);
  std::vector<ParamSlot> slots_;
  std::vector<uint64_t> words_; ///< 8-byte aligned storage of size_ bytes (rounded up).
  size_t size_ = 0;
};

/// Packs `args` then the hidden pointers. Fails (naming the argument) on a type that cannot be a
/// parameter.
bool marshalParams(const std::vector<KernelArg> &args, const HiddenParams &hidden, ParamPack &out,
                   std::string &error);

/// The size of each parameter a PTX `.entry` declares, in order.
bool parsePtxParams(std::string_view ptx, std::string_view entry, std::vector<size_t> &sizes,
                    std::string &error);

/// Checks a pack against the parameter sizes the kernel declares (from its PTX or the driver):
/// same count, same size each. The message names the kernel and the parameter.
bool checkParams(const ParamPack &pack, const std::vector<size_t> &declared,
                 std::string_view kernel, std::string &error);

} // namespace ttinterp::cuda
