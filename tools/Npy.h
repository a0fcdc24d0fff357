//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// The .npy format as NumPy writes it: a magic string, a version, a Python-literal header
// dict {'descr', 'fortran_order', 'shape'}, then the raw elements. ttinterp reads versions
// 1.0 and 2.0 and writes 1.0 (2.0 only when the header would not fit a 16-bit length), with
// headers byte-identical to numpy.save's, so files round-trip through NumPy unchanged.
//
// Arrays are always C order and little endian in memory and on disk. Types NumPy lacks are
// stored as raw bits: bf16 as '<u2', the fp8 types as '|u1', pointers as '<u8'. Booleans
// (i1) are one byte each, 0 or 1.
//
// Failures return false with a message that names the file and the problem; nothing throws
// for a malformed file, and no input can make the reader read out of bounds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ttinterp {

/// A dense array as stored in a .npy file.
struct NpyArray {
  DType dtype = DType::I8;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; ///< C order, little endian; numElements() * byteSize(dtype).

  /// Product of the shape (1 for a 0-d array; 0 for a negative or overflowing shape).
  int64_t numElements() const;
};

/// What a .npy header says: the array's dtype (as read) and shape, and where its data lies.
struct NpyHeader {
  DType dtype = DType::I8;
  std::vector<int64_t> shape;
  uint64_t payloadOffset = 0, payloadBytes = 0;
};

/// Reads a .npy file in two steps, so that its data can go straight to its destination:
/// open() reads and checks the header (as readNpy does: dtype, shape, the file's exact size),
/// readPayload() copies the data into memory the caller provides, header().payloadBytes
/// long. No intermediate copy of the data is made for a regular file.
class NpyReader {
public:
  NpyReader() = default;
  NpyReader(const NpyReader &) = delete;
  NpyReader &operator=(const NpyReader &) = delete;
  ~NpyReader() { close(); }

  bool open(const std::string &path, DType expected, std::string &error);
  const NpyHeader &header() const { return header_; }
  bool readPayload(uint8_t *dest, std::string &error);
  void close();

private:
  std::string path_;
  std::FILE *file_ = nullptr;
  NpyHeader header_;
  std::vector<uint8_t> buffered_; ///< The data of a file that is not a regular file.
};

/// The descr ttinterp writes for a dtype: "|b1" for i1, "<i4" for i32, "<u2" for bf16, ...
std::string_view npyDescr(DType dtype);

/// Reads the .npy file at `path`, which must hold data readable as `expected`: its own descr,
/// or an unsigned (or, for bf16, fp8 and pointers, signed) integer of the same width; i1 also
/// accepts '|u1', with any non-zero byte read as 1.
bool readNpy(const std::string &path, DType expected, NpyArray &out, std::string &error);

/// Reads the .npy file at `path` in the dtype its descr names: '|b1' is i1, '|i1' and '|u1'
/// are i8, '<i2' and '<u2' i16, and so on; '<f2', '<f4', '<f8' are f16, f32, f64.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// Decodes a .npy image held in memory; `name` stands for the file in error messages.
/// With no `expected` dtype, the descr decides as in the two-argument readNpy.
bool parseNpy(const uint8_t *data, size_t size, std::string_view name,
              std::optional<DType> expected, NpyArray &out, std::string &error);

/// Writes `data` (C order, numElements(shape) * byteSize(dtype) bytes; may be null when that
/// is zero) as a .npy file at `path`, replacing any file there. i1 bytes are written as 0/1.
bool writeNpy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
              const void *data, std::string &error);

/// The bytes writeNpy would write.
bool encodeNpy(DType dtype, const std::vector<int64_t> &shape, const void *data,
               std::vector<uint8_t> &out, std::string &error);

} // namespace ttinterp
