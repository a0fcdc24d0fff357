//===- fuzz_npy.cpp - libFuzzer target: .npy files through the reader and writer ----===//
//
// The input is a .npy image (header and data). parseNpy reads it as the CLI reads an
// `init: {"npy": ...}` file, either in the dtype its descr names or as a dtype a buffer
// expects (picked from the input's hash). Whatever it accepts must be self-consistent and
// survive a round trip: encodeNpy writes it back and parseNpy reads the same dtype, shape
// and bytes.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "Npy.h"

#include <optional>
#include <string>
#include <vector>

using namespace ttinterp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t choice = fuzz::hashBytes(data, size);
  std::optional<DType> expected;
  // Half the inputs as `ttinterp run` reads an init file for a buffer of a given dtype.
  if (choice & 1)
    expected = DType((choice >> 1) % (unsigned(DType::Ptr) + 1));

  NpyArray array;
  std::string error;
  if (!parseNpy(data, size, "fuzz.npy", expected, array, error)) {
    if (error.empty())
      fuzz::invariantBroken("parseNpy failed without a message");
    return 0;
  }
  if (expected && array.dtype != *expected)
    fuzz::invariantBroken("parseNpy returned another dtype than the one asked for");
  int64_t elements = array.numElements();
  if (elements < 0 || array.bytes.size() != uint64_t(elements) * byteSize(array.dtype))
    fuzz::invariantBroken("parseNpy's bytes do not match its shape");

  std::vector<uint8_t> encoded;
  if (!encodeNpy(array.dtype, array.shape, array.bytes.data(), encoded, error))
    fuzz::invariantBroken("encodeNpy refused what parseNpy accepted:", error.c_str());
  NpyArray again;
  if (!parseNpy(encoded.data(), encoded.size(), "again.npy", array.dtype, again, error))
    fuzz::invariantBroken("parseNpy refused what encodeNpy wrote:", error.c_str());
  if (again.dtype != array.dtype || again.shape != array.shape || again.bytes != array.bytes)
    fuzz::invariantBroken("a .npy round trip changed the array");
  return 0;
}
