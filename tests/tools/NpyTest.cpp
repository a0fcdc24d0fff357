//===- NpyTest.cpp - .npy reading and writing against files NumPy wrote ---===//
//
// tests/data/npy/make.py wrote the ground-truth files; the values asserted here are the ones
// that script spells out (bit patterns of the float16 and bfloat16 values worked out by hand).
//
//===----------------------------------------------------------------------===//
#include "Npy.h"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

using namespace ttinterp;

namespace {

std::string dataPath(const std::string &file) {
  return std::string(TTINTERP_SOURCE_DIR) + "/tests/data/npy/" + file;
}

std::string tempPath(const std::string &file) {
  return std::string(TTINTERP_BINARY_DIR) + "/tests/tools/npytest-" + file;
}

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

template <typename T> std::vector<T> values(const NpyArray &a) {
  std::vector<T> out(a.bytes.size() / sizeof(T));
  if (!out.empty())
    std::memcpy(out.data(), a.bytes.data(), out.size() * sizeof(T));
  return out;
}

NpyArray mustRead(const std::string &file, DType expected) {
  NpyArray a;
  std::string error;
  bool ok = readNpy(dataPath(file), expected, a, error);
  INFO(error);
  REQUIRE(ok);
  return a;
}

std::string readError(const std::string &file, DType expected) {
  NpyArray a;
  std::string error;
  CHECK_FALSE(readNpy(dataPath(file), expected, a, error));
  return error;
}

/// A .npy image with the given header text (padded as NumPy pads it) and payload.
std::vector<uint8_t> image(const std::string &dict, const std::vector<uint8_t> &payload,
                           unsigned major = 1) {
  const size_t lengthBytes = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((8 + lengthBytes + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < lengthBytes; ++i)
    out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::string parseError(const std::vector<uint8_t> &img, std::optional<DType> expected) {
  NpyArray a;
  std::string error;
  CHECK_FALSE(parseNpy(img.data(), img.size(), "mem.npy", expected, a, error));
  CHECK(error.rfind("mem.npy: ", 0) == 0); // every message names the file
  return error;
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("readNpy: files written by NumPy") {
  NpyArray i32 = mustRead("i32_2x3.npy", DType::I32);
  CHECK(i32.dtype == DType::I32);
  CHECK(i32.shape == std::vector<int64_t>{2, 3});
  CHECK(values<int32_t>(i32) == std::vector<int32_t>{0, 1, 2, 3, 4, 5});

  // 0, 1, -2.5 (sign 1, exponent 16, mantissa 0.25), 65504, +inf, 2^-14.
  NpyArray f16 = mustRead("f16.npy", DType::F16);
  CHECK(f16.shape == std::vector<int64_t>{6});
  CHECK(values<uint16_t>(f16) ==
        std::vector<uint16_t>{0x0000, 0x3C00, 0xC100, 0x7BFF, 0x7C00, 0x0400});

  NpyArray b = mustRead("bool.npy", DType::I1);
  CHECK(b.bytes == std::vector<uint8_t>{1, 0, 1, 1});

  NpyArray bf16 = mustRead("bf16_bits.npy", DType::BF16);
  CHECK(bf16.dtype == DType::BF16);
  CHECK(values<uint16_t>(bf16) == std::vector<uint16_t>{0x3F80, 0xC000, 0x7F80, 0x0000});

  NpyArray i8 = mustRead("i8.npy", DType::I8);
  CHECK(values<int8_t>(i8) == std::vector<int8_t>{-128, -1, 0, 127});
  // Raw fp8 bits may come as signed bytes too.
  CHECK(mustRead("i8.npy", DType::F8E5M2).bytes == std::vector<uint8_t>{0x80, 0xFF, 0, 0x7F});

  NpyArray scalar = mustRead("f32_scalar.npy", DType::F32);
  CHECK(scalar.shape.empty());
  CHECK(scalar.numElements() == 1);
  CHECK(values<float>(scalar) == std::vector<float>{3.25f});

  NpyArray empty = mustRead("f32_empty.npy", DType::F32);
  CHECK(empty.shape == std::vector<int64_t>{0, 3});
  CHECK(empty.numElements() == 0);
  CHECK(empty.bytes.empty());

  NpyArray i64 = mustRead("i64_3.npy", DType::I64);
  CHECK(values<int64_t>(i64) == std::vector<int64_t>{-1, int64_t(1) << 40, 7});

  NpyArray v2 = mustRead("f64_v2.npy", DType::F64);
  CHECK(v2.shape == std::vector<int64_t>{5});
  CHECK(values<double>(v2) == std::vector<double>{0.0, 0.5, 1.0, 1.5, 2.0});
}

TEST_CASE("readNpy: the dtype from the descr when none is expected") {
  auto natural = [](const std::string &file) {
    NpyArray a;
    std::string error;
    REQUIRE(readNpy(dataPath(file), a, error));
    return a.dtype;
  };
  CHECK(natural("i32_2x3.npy") == DType::I32);
  CHECK(natural("f16.npy") == DType::F16);
  CHECK(natural("bool.npy") == DType::I1);
  CHECK(natural("bf16_bits.npy") == DType::I16); // '<u2' alone cannot say it is bf16
  CHECK(natural("i8.npy") == DType::I8);
  CHECK(natural("f64_v2.npy") == DType::F64);
}

TEST_CASE("readNpy: rejections name the file and the problem") {
  std::string e = readError("fortran.npy", DType::I32);
  CHECK(contains(e, dataPath("fortran.npy")));
  CHECK(contains(e, "Fortran-ordered"));
  CHECK(contains(readError("big_endian.npy", DType::I32), "big-endian"));
  CHECK(contains(readError("object.npy", DType::I64), "object arrays are not supported"));
  e = readError("i32_2x3.npy", DType::F32);
  CHECK(contains(e, "'<i4'"));
  CHECK(contains(e, "cannot be read as f32"));
  CHECK(contains(readError("bool.npy", DType::I8), "cannot be read as i8"));
  CHECK(contains(readError("f16.npy", DType::BF16), "cannot be read as bf16"));
  CHECK(contains(readError("i32_2x3.npy", DType::I64), "cannot be read as i64"));
  CHECK(contains(readError("no-such-file.npy", DType::I32), "cannot open"));
}

TEST_CASE("writeNpy: bytes identical to numpy.save") {
  auto same = [](const std::string &file, DType dtype, std::vector<int64_t> shape,
                 const void *data) {
    std::vector<uint8_t> ours;
    std::string error;
    REQUIRE(encodeNpy(dtype, shape, data, ours, error));
    CHECK(ours == fileBytes(dataPath(file)));
  };
  const int32_t i32[] = {0, 1, 2, 3, 4, 5};
  same("i32_2x3.npy", DType::I32, {2, 3}, i32);
  const uint16_t f16[] = {0x0000, 0x3C00, 0xC100, 0x7BFF, 0x7C00, 0x0400};
  same("f16.npy", DType::F16, {6}, f16);
  const uint8_t b[] = {1, 0, 1, 1};
  same("bool.npy", DType::I1, {4}, b);
  const uint8_t bNonCanonical[] = {7, 0, 255, 1}; // written as 0/1, as numpy stores booleans
  same("bool.npy", DType::I1, {4}, bNonCanonical);
  const uint16_t bf16[] = {0x3F80, 0xC000, 0x7F80, 0x0000};
  same("bf16_bits.npy", DType::BF16, {4}, bf16);
  const int8_t i8[] = {-128, -1, 0, 127};
  same("i8.npy", DType::I8, {4}, i8);
  const float scalar = 3.25f;
  same("f32_scalar.npy", DType::F32, {}, &scalar);
  same("f32_empty.npy", DType::F32, {0, 3}, nullptr);
  const int64_t i64[] = {-1, int64_t(1) << 40, 7};
  same("i64_3.npy", DType::I64, {3}, i64);
}

TEST_CASE("writeNpy/readNpy: round trip through a file for every dtype") {
  for (DType t : {DType::I1, DType::I8, DType::I16, DType::I32, DType::I64, DType::F16, DType::BF16,
                  DType::F32, DType::F64, DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2,
                  DType::F8E5M2FNUZ, DType::Ptr}) {
    INFO(name(t));
    const std::vector<int64_t> shape = {3, 1, 2};
    std::vector<uint8_t> data(6 * byteSize(t));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = t == DType::I1 ? i % 2 : static_cast<uint8_t>(37 * i + 11);
    const std::string path = tempPath(std::string(name(t)) + ".npy");
    std::string error;
    REQUIRE(writeNpy(path, t, shape, data.data(), error));
    NpyArray back;
    REQUIRE(readNpy(path, t, back, error));
    CHECK(back.dtype == t);
    CHECK(back.shape == shape);
    CHECK(back.bytes == data);
    std::remove(path.c_str());
  }
}

TEST_CASE("writeNpy: version 2.0 when the header outgrows 16 bits") {
  // 22000 dimensions of size 1 need 3 characters each (", 1"): more than 65535 in all.
  const std::vector<int64_t> shape(22000, 1);
  const float x = 1.5f;
  std::vector<uint8_t> img;
  std::string error;
  REQUIRE(encodeNpy(DType::F32, shape, &x, img, error));
  CHECK(img[6] == 2);
  CHECK(img[7] == 0);
  const size_t headerLen = img[8] | img[9] << 8 | img[10] << 16 | size_t(img[11]) << 24;
  CHECK(headerLen > 65535);
  CHECK((12 + headerLen) % 64 == 0);
  CHECK(img.size() == 12 + headerLen + 4);
  NpyArray back;
  REQUIRE(parseNpy(img.data(), img.size(), "v2", DType::F32, back, error));
  CHECK(back.shape == shape);
  CHECK(values<float>(back) == std::vector<float>{1.5f});

  CHECK_FALSE(writeNpy(tempPath("bad.npy"), DType::F32, {-1}, &x, error));
  CHECK(contains(error, "negative or too large"));
  CHECK_FALSE(writeNpy(tempPath("no-dir/x.npy"), DType::F32, {1}, &x, error));
  CHECK(contains(error, "cannot open for writing"));
}

TEST_CASE("parseNpy: header dialects NumPy accepts") {
  const std::vector<uint8_t> two = {5, 0, 0, 0, 0xFA, 0xFF, 0xFF, 0xFF};
  NpyArray a;
  std::string error;
  // Double quotes, keys in another order, no trailing comma, Python 2 long suffixes.
  auto img = image(R"({"shape": (2L,), "fortran_order": False, "descr": "<i4"})", two);
  REQUIRE(parseNpy(img.data(), img.size(), "mem.npy", DType::I32, a, error));
  CHECK(values<int32_t>(a) == std::vector<int32_t>{5, -6});
  // Unsigned data for a signed integer type: the bits are kept.
  img = image("{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", two);
  REQUIRE(parseNpy(img.data(), img.size(), "mem.npy", DType::I32, a, error));
  CHECK(values<int32_t>(a) == std::vector<int32_t>{5, -6});
  // '|u1' read as i1: non-zero bytes become 1.
  img = image("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", {0, 2, 255});
  REQUIRE(parseNpy(img.data(), img.size(), "mem.npy", DType::I1, a, error));
  CHECK(a.bytes == std::vector<uint8_t>{0, 1, 1});
  // Any byte-order mark is fine for one-byte elements.
  img = image("{'descr': '<i1', 'fortran_order': False, 'shape': (1,), }", {9});
  CHECK(parseNpy(img.data(), img.size(), "mem.npy", DType::I8, a, error));
  // Version 2.0 images.
  img = image("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", two, 2);
  REQUIRE(parseNpy(img.data(), img.size(), "mem.npy", DType::I32, a, error));
  CHECK(values<int32_t>(a) == std::vector<int32_t>{5, -6});
}

TEST_CASE("parseNpy: malformed headers") {
  const std::string ok = "'fortran_order': False, 'shape': (2,), }";
  const std::vector<uint8_t> eight(8, 0);
  auto err =
      [&](const std::string &dict, const std::vector<uint8_t> &payload = {0, 0, 0, 0, 0, 0, 0, 0},
          unsigned major = 1) { return parseError(image(dict, payload, major), DType::I32); };
  CHECK(contains(err("{'descr': '<i4', " + ok, eight, 3), "unsupported .npy format version 3.0"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False}"), "lacks the key 'shape'"));
  CHECK(contains(err("{'descr': '<i4', 'descr': '<i4', " + ok), "appears twice"));
  CHECK(contains(err("{'descr': '<i4', 'extra': 1, " + ok), "unsupported value"));
  CHECK(contains(err("{'descr': '<i4', 'extra': (1,), " + ok), "unexpected key 'extra'"));
  CHECK(contains(err("{'descr': 4, " + ok), "unsupported value starting with '4'"));
  CHECK(contains(err("{'descr': (4,), " + ok), "'descr' is not a string"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}"), "unsupported"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False, 'shape': 2}"), "unsupported"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False, 'shape': '2'}"),
                 "'shape' is not a tuple"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': true, 'shape': (2,)}"), "unsupported"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False, 'shape': (-2,)}"),
                 "negative dimension"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False, 'shape': (2 3)}"),
                 "expected ',' or ')'"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
                 "does not fit in 64 bits"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904, "
                     "4611686018427387904)}"),
                 "too large"));
  CHECK(contains(err("{'descr': '<i4, " + ok), "expected ',' or '}'")); // quote mismatch
  CHECK(contains(err("{'descr' '<i4', " + ok), "expected ':' after key 'descr'"));
  CHECK(contains(err("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x"),
                 "unterminated string"));
  CHECK(contains(err("{'descr': '<i4', " + ok + " junk"), "unexpected text after"));
  CHECK(contains(err("['descr', '<i4']"), "does not start with '{'"));
  CHECK(contains(err("{'descr': [('a', '<i4')], " + ok), "structured"));
  CHECK(contains(err("{'descr': '<c8', " + ok), "unsupported descr '<c8'"));
  CHECK(contains(err("{'descr': '<U3', " + ok), "unsupported descr '<U3'"));
  CHECK(contains(err("{'descr': '<i16', " + ok), "unsupported descr"));
  CHECK(contains(err("{'descr': 'i4', " + ok), "byte-order"));
  CHECK(contains(err("{'descr': '|i4', " + ok), "little endian"));
  CHECK(contains(err("{'descr': '<i4', " + ok, std::vector<uint8_t>(7)),
                 "truncated data: shape (2,) of '<i4' needs 8 bytes, 7 are present"));
  CHECK(contains(err("{'descr': '<i4', " + ok, std::vector<uint8_t>(9)),
                 "1 unexpected bytes after the 8 bytes of data"));

  std::vector<uint8_t> bad = image("{'descr': '<i4', " + ok, eight);
  bad[1] = 'M';
  CHECK(contains(parseError(bad, DType::I32), "bad magic"));
}

TEST_CASE("parseNpy: truncations and byte flips never crash") {
  const std::vector<uint8_t> valid = fileBytes(dataPath("i32_2x3.npy"));
  REQUIRE(valid.size() == 128 + 24);
  NpyArray a;
  std::string error;
  // Every proper prefix lacks data, header or magic.
  for (size_t n = 0; n < valid.size(); ++n) {
    CAPTURE(n);
    error.clear();
    CHECK_FALSE(parseNpy(valid.data(), n, "cut.npy", DType::I32, a, error));
    CHECK(error.rfind("cut.npy: ", 0) == 0);
  }
  // Flip random bits in random bytes: whatever parses must be self-consistent, and whatever
  // fails must say why. The sanitizer build checks that no access strays out of bounds.
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int parsed = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<uint8_t> img = valid;
    const int flips = 1 + static_cast<int>(next() % 3);
    for (int f = 0; f < flips; ++f)
      img[next() % 128] ^= static_cast<uint8_t>(1u << (next() % 8)); // header bytes only
    error.clear();
    if (parseNpy(img.data(), img.size(), "flip.npy", std::nullopt, a, error)) {
      ++parsed;
      CHECK(a.bytes.size() == static_cast<size_t>(a.numElements()) * byteSize(a.dtype));
    } else {
      CHECK(error.rfind("flip.npy: ", 0) == 0);
    }
  }
  // Flips in the header's padding leave it valid, so some must parse.
  CHECK(parsed > 0);
}

namespace {
/// NpyReader's view of a file: its header and data, or its error.
struct Streamed {
  bool ok = false;
  NpyHeader header;
  std::vector<uint8_t> bytes;
  std::string error;
};
Streamed stream(const std::string &path, DType expected) {
  Streamed s;
  NpyReader reader;
  if (!reader.open(path, expected, s.error))
    return s;
  s.header = reader.header();
  s.bytes.assign(size_t(s.header.payloadBytes), 0xEE);
  s.ok = s.bytes.empty() || reader.readPayload(s.bytes.data(), s.error);
  return s;
}
void writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}
} // namespace

TEST_CASE("NpyReader: streams exactly what readNpy reads, into the caller's memory") {
  const std::pair<const char *, DType> files[] = {
      {"i32_2x3.npy", DType::I32}, {"f16.npy", DType::F16},       {"bool.npy", DType::I1},
      {"bf16_bits.npy", DType::BF16}, {"i8.npy", DType::F8E5M2},  {"f32_scalar.npy", DType::F32},
      {"f32_empty.npy", DType::F32}, {"i64_3.npy", DType::I64},   {"f64_v2.npy", DType::F64}};
  for (const auto &entry : files) {
    // Named, not a structured binding: INFO captures it, which clang 14's C++17 does not allow.
    const char *file = entry.first;
    DType dtype = entry.second;
    INFO(file);
    NpyArray whole = mustRead(file, dtype);
    Streamed s = stream(dataPath(file), dtype);
    REQUIRE_MESSAGE(s.ok, s.error);
    CHECK(s.header.dtype == whole.dtype);
    CHECK(s.header.shape == whole.shape);
    CHECK(s.bytes == whole.bytes);
  }
  // Rejections are readNpy's, word for word.
  for (const auto &[file, dtype] : {std::pair{"fortran.npy", DType::I32},
                                    std::pair{"i32_2x3.npy", DType::F32},
                                    std::pair{"no-such-file.npy", DType::I32}}) {
    NpyArray a;
    std::string expected;
    CHECK_FALSE(readNpy(dataPath(file), dtype, a, expected));
    Streamed s = stream(dataPath(file), dtype);
    CHECK_FALSE(s.ok);
    CHECK(s.error == expected);
  }
}

TEST_CASE("NpyReader: a file shorter or longer than its header says is refused before reading") {
  std::vector<uint8_t> data(12);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i + 1);
  std::vector<uint8_t> img = image("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", data);
  std::vector<uint8_t> shorter(img.begin(), img.end() - 1), longer = img;
  longer.push_back(0);
  writeFile(tempPath("short.npy"), shorter);
  writeFile(tempPath("long.npy"), longer);
  writeFile(tempPath("exact.npy"), img);
  Streamed s = stream(tempPath("short.npy"), DType::I32);
  CHECK_FALSE(s.ok);
  CHECK(contains(s.error, "truncated data"));
  s = stream(tempPath("long.npy"), DType::I32);
  CHECK_FALSE(s.ok);
  CHECK(contains(s.error, "1 unexpected bytes after the 12 bytes of data"));
  s = stream(tempPath("exact.npy"), DType::I32);
  REQUIRE_MESSAGE(s.ok, s.error);
  CHECK(s.bytes == data);
  // A preamble cut short, and a header longer than the file.
  writeFile(tempPath("stub.npy"), std::vector<uint8_t>(img.begin(), img.begin() + 9));
  CHECK(contains(stream(tempPath("stub.npy"), DType::I32).error, "truncated"));
  writeFile(tempPath("header.npy"), std::vector<uint8_t>(img.begin(), img.begin() + 40));
  CHECK(contains(stream(tempPath("header.npy"), DType::I32).error, "truncated header"));
}

TEST_CASE("NpyReader: a file that is not a regular file (a FIFO) is read whole") {
  std::string path = tempPath("fifo.npy");
  std::remove(path.c_str());
  REQUIRE(mkfifo(path.c_str(), 0600) == 0);
  std::vector<uint8_t> img =
      image("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", {0, 7, 1});
  std::thread writer([&] { writeFile(path, img); });
  Streamed s = stream(path, DType::I1);
  writer.join();
  std::remove(path.c_str());
  REQUIRE_MESSAGE(s.ok, s.error);
  CHECK(s.header.shape == std::vector<int64_t>{3});
  CHECK(s.bytes == std::vector<uint8_t>{0, 1, 1}); // booleans read as 0/1
}
