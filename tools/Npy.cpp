//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
#include "Npy.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy data is copied as is, which assumes a little-endian host");

namespace ttinterp {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
/// numpy.save pads the preamble and header to this many bytes, for memory mapping.
constexpr size_t kAlign = 64;
/// numpy.save leaves room after the dict for the first dimension to grow to this many digits,
/// so that appending to a file can rewrite the header in place.
constexpr size_t kGrowthDigits = 21;

/// A parsed descr such as "<i4": kind 'b', 'i', 'u' or 'f' and a width in bytes.
struct Descr {
  char kind = 0;
  size_t width = 0;
};

/// The subset of Python literals a .npy header uses.
struct HeaderValue {
  enum class Kind { String, Bool, Tuple } kind = Kind::String;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

/// Recursive-descent reader of the header dict; every access is bounds-checked because the
/// header comes from an untrusted file.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Parses "{'key': value, ...}" followed only by whitespace.
  bool parseDict(std::vector<std::pair<std::string, HeaderValue>> &entries, std::string &why) {
    skipSpace();
    if (!consume('{'))
      return fail(why, "the header does not start with '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key, why))
        return false;
      skipSpace();
      if (!consume(':'))
        return fail(why, fmt::format("expected ':' after key '{}'", key));
      HeaderValue value;
      if (!parseValue(value, why))
        return false;
      entries.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return fail(why, "expected ',' or '}' after a value");
    }
    skipSpace();
    if (pos != text.size())
      return fail(why, "unexpected text after the header dict");
    return true;
  }

private:
  bool fail(std::string &why, std::string message) {
    why = fmt::format("malformed header at offset {}: {}", pos, message);
    return false;
  }

  void skipSpace() {
    while (pos < text.size() &&
           (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool consumeWord(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }

  bool parseString(std::string &out, std::string &why) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return fail(why, "expected a quoted string");
    const char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string_view::npos)
      return fail(why, "unterminated string");
    out = std::string(text.substr(pos, end - pos));
    // NumPy's descrs and keys never need escapes; refusing them keeps this reader simple.
    if (out.find('\\') != std::string::npos || out.find('\n') != std::string::npos)
      return fail(why, "escape sequences and line breaks in strings are not supported");
    pos = end + 1;
    return true;
  }

  bool parseInt(int64_t &out, std::string &why) {
    skipSpace();
    const size_t start = pos;
    bool negative = consume('-');
    if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
      return fail(why, "expected an integer");
    uint64_t value = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text[pos++] - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10 ||
          value * 10 + digit > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        pos = start;
        return fail(why, "integer does not fit in 64 bits");
      }
      value = value * 10 + digit;
    }
    consume('L'); // Python 2 wrote long integers with a suffix.
    out = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
    return true;
  }

  bool parseValue(HeaderValue &value, std::string &why) {
    skipSpace();
    if (pos >= text.size())
      return fail(why, "expected a value");
    char c = text[pos];
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::Kind::String;
      return parseString(value.text, why);
    }
    if (consumeWord("True")) {
      value.kind = HeaderValue::Kind::Bool;
      value.flag = true;
      return true;
    }
    if (consumeWord("False")) {
      value.kind = HeaderValue::Kind::Bool;
      value.flag = false;
      return true;
    }
    if (c == '(') {
      ++pos;
      value.kind = HeaderValue::Kind::Tuple;
      while (true) {
        skipSpace();
        if (consume(')'))
          return true;
        int64_t n = 0;
        if (!parseInt(n, why))
          return false;
        value.ints.push_back(n);
        skipSpace();
        if (consume(','))
          continue;
        if (consume(')'))
          return true;
        return fail(why, "expected ',' or ')' in a tuple");
      }
    }
    if (c == '[')
      return fail(why, "structured (record) dtypes are not supported");
    return fail(why, fmt::format("unsupported value starting with '{}'", c));
  }

  std::string_view text;
  size_t pos = 0;
};

/// Splits "<i4" into kind and width; a message on anything ttinterp cannot represent.
bool parseDescr(const std::string &descr, Descr &out, std::string &why) {
  if (descr.size() < 2) {
    why = fmt::format("unsupported descr '{}'", descr);
    return false;
  }
  const char order = descr[0];
  const char kind = descr[1];
  if (kind == 'O') {
    why = fmt::format("object arrays are not supported (descr '{}')", descr);
    return false;
  }
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    why = fmt::format("descr '{}' has no byte-order character", descr);
    return false;
  }
  size_t width = 0;
  if (descr.size() == 3 && descr[2] >= '1' && descr[2] <= '8')
    width = static_cast<size_t>(descr[2] - '0');
  const bool known =
      (kind == 'b' && width == 1) ||
      ((kind == 'i' || kind == 'u') && (width == 1 || width == 2 || width == 4 || width == 8)) ||
      (kind == 'f' && (width == 2 || width == 4 || width == 8));
  if (!known) {
    why = fmt::format("unsupported descr '{}' (booleans, integers and floats of 1 to 8 "
                      "bytes are supported)",
                      descr);
    return false;
  }
  // Byte order only matters for multi-byte elements.
  if (width > 1 && order == '>') {
    why = fmt::format("big-endian data is not supported (descr '{}')", descr);
    return false;
  }
  if (width > 1 && order != '<') {
    why = fmt::format("descr '{}' does not say the data is little endian", descr);
    return false;
  }
  out = {kind, width};
  return true;
}

/// The dtype a descr names when the caller has no expectation.
DType naturalDType(const Descr &d) {
  if (d.kind == 'b')
    return DType::I1;
  if (d.kind == 'f')
    return d.width == 2 ? DType::F16 : d.width == 4 ? DType::F32 : DType::F64;
  switch (d.width) {
  case 1:
    return DType::I8;
  case 2:
    return DType::I16;
  case 4:
    return DType::I32;
  default:
    return DType::I64;
  }
}

/// Whether data of descr `d` may be read as `t` (see readNpy).
bool acceptable(const Descr &d, DType t) {
  if (d.width != byteSize(t))
    return false;
  switch (t) {
  case DType::I1:
    return d.kind == 'b' || d.kind == 'u';
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
    return d.kind == 'i' || d.kind == 'u';
  case DType::F16:
  case DType::F32:
  case DType::F64:
    return d.kind == 'f';
  case DType::BF16:
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
  case DType::Ptr:
    return d.kind == 'u' || d.kind == 'i';
  }
  return false;
}

std::string shapeRepr(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k)
    s += fmt::format("{}{}", k ? ", " : "", shape[k]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

/// Element count of a shape, or nullopt on a negative size or overflow of int64 bytes.
std::optional<int64_t> countElements(const std::vector<int64_t> &shape, size_t width) {
  int64_t count = 1;
  for (int64_t n : shape) {
    if (n < 0 || __builtin_mul_overflow(count, n, &count))
      return std::nullopt;
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(width), &bytes))
    return std::nullopt;
  return count;
}

uint32_t readLE(const uint8_t *p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

/// Appends everything `f` yields to `out`.
bool readStream(std::FILE *f, const std::string &path, std::vector<uint8_t> &out,
                std::string &error) {
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    out.insert(out.end(), chunk, chunk + n);
  if (std::ferror(f)) {
    error = fmt::format("{}: read error", path);
    return false;
  }
  return true;
}

bool readFile(const std::string &path, std::vector<uint8_t> &out, std::string &error) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return false;
  }
  const bool read = readStream(f, path, out, error);
  std::fclose(f);
  return read;
}

} // namespace

int64_t NpyArray::numElements() const {
  std::optional<int64_t> count = countElements(shape, 1);
  return count.value_or(0);
}

std::string_view npyDescr(DType dtype) {
  switch (dtype) {
  case DType::I1:
    return "|b1";
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::F16:
    return "<f2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::BF16:
    return "<u2";
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ:
    return "|u1";
  case DType::Ptr:
    return "<u8";
  }
  return "";
}

namespace {
/// The length of the preamble (magic, version, header length) of a .npy image that
/// starts with `data` (`size` bytes available), or 0 with `why` set.
size_t preambleLength(const uint8_t *data, size_t size, std::string &why) {
  if (size < kMagicLen + 2 || std::memcmp(data, kMagic, kMagicLen) != 0) {
    why = "not a .npy file (bad magic string)";
    return 0;
  }
  const unsigned major = data[kMagicLen], minor = data[kMagicLen + 1];
  if ((major == 1 || major == 2) && minor == 0)
    return kMagicLen + 2 + (major == 1 ? 2 : 4);
  why = fmt::format("unsupported .npy format version {}.{} (1.0 and 2.0 are read)", major, minor);
  return 0;
}

/// Decodes the header of a .npy file of `fileSize` bytes whose first `size` bytes (at
/// least the preamble and the header) are `data`.
bool parseHeader(const uint8_t *data, size_t size, uint64_t fileSize, std::string_view name,
                 std::optional<DType> expected, NpyHeader &out, std::string &error) {
  auto fail = [&](std::string message) {
    error = fmt::format("{}: {}", name, message);
    return false;
  };
  std::string why;
  const size_t preamble = preambleLength(data, size, why);
  if (!preamble)
    return fail(why);
  const size_t lengthBytes = preamble - kMagicLen - 2;
  if (size < preamble)
    return fail(
        fmt::format("truncated: {} bytes, shorter than the {}-byte preamble", size, preamble));
  const size_t headerLen = readLE(data + kMagicLen + 2, lengthBytes);
  if (headerLen > fileSize - preamble || headerLen > size - preamble)
    return fail(fmt::format("truncated header: it declares {} bytes, {} are present", headerLen,
                            fileSize - preamble));

  std::string_view header(reinterpret_cast<const char *>(data + preamble), headerLen);
  std::vector<std::pair<std::string, HeaderValue>> entries;
  if (!HeaderParser(header).parseDict(entries, why))
    return fail(why);

  const HeaderValue *descrValue = nullptr, *fortranValue = nullptr, *shapeValue = nullptr;
  for (const auto &[key, value] : entries) {
    const HeaderValue **slot = key == "descr"           ? &descrValue
                               : key == "fortran_order" ? &fortranValue
                               : key == "shape"         ? &shapeValue
                                                        : nullptr;
    if (!slot)
      return fail(fmt::format("unexpected key '{}' in the header", key));
    if (*slot)
      return fail(fmt::format("key '{}' appears twice in the header", key));
    *slot = &value;
  }
  if (!descrValue || !fortranValue || !shapeValue)
    return fail(fmt::format("the header lacks the key '{}'", !descrValue     ? "descr"
                                                             : !fortranValue ? "fortran_order"
                                                                             : "shape"));
  if (descrValue->kind != HeaderValue::Kind::String)
    return fail("'descr' is not a string");
  if (fortranValue->kind != HeaderValue::Kind::Bool)
    return fail("'fortran_order' is not True or False");
  if (shapeValue->kind != HeaderValue::Kind::Tuple)
    return fail("'shape' is not a tuple");

  Descr descr;
  if (!parseDescr(descrValue->text, descr, why))
    return fail(why);
  if (fortranValue->flag)
    return fail("Fortran-ordered arrays are not supported (save a C-ordered array, e.g. "
                "with numpy.ascontiguousarray)");
  DType dtype = expected.value_or(naturalDType(descr));
  if (!acceptable(descr, dtype))
    return fail(fmt::format("holds '{}' data, which cannot be read as {} (expected '{}')",
                            descrValue->text, ttinterp::name(dtype), npyDescr(dtype)));

  const std::vector<int64_t> &shape = shapeValue->ints;
  for (int64_t n : shape)
    if (n < 0)
      return fail(fmt::format("negative dimension in shape {}", shapeRepr(shape)));
  std::optional<int64_t> count = countElements(shape, descr.width);
  if (!count)
    return fail(fmt::format("shape {} is too large", shapeRepr(shape)));
  const uint64_t needed = static_cast<uint64_t>(*count) * descr.width;
  const uint64_t present = fileSize - preamble - headerLen;
  if (needed > present)
    return fail(fmt::format("truncated data: shape {} of '{}' needs {} bytes, {} are present",
                            shapeRepr(shape), descrValue->text, needed, present));
  if (needed < present)
    return fail(
        fmt::format("{} unexpected bytes after the {} bytes of data", present - needed, needed));

  out.dtype = dtype;
  out.shape = shape;
  out.payloadOffset = preamble + headerLen;
  out.payloadBytes = needed;
  return true;
}

/// Booleans as 0/1 whatever byte the file had (i1 also reads '|u1').
void normaliseBooleans(DType dtype, uint8_t *bytes, size_t n) {
  if (dtype == DType::I1)
    for (size_t i = 0; i < n; ++i)
      bytes[i] = bytes[i] != 0;
}
} // namespace

bool parseNpy(const uint8_t *data, size_t size, std::string_view name,
              std::optional<DType> expected, NpyArray &out, std::string &error) {
  NpyHeader header;
  if (!parseHeader(data, size, size, name, expected, header, error))
    return false;
  out.dtype = header.dtype;
  out.shape = header.shape;
  const uint8_t *payload = data + header.payloadOffset;
  out.bytes.assign(payload, payload + header.payloadBytes);
  normaliseBooleans(out.dtype, out.bytes.data(), out.bytes.size());
  return true;
}

bool NpyReader::open(const std::string &path, DType expected, std::string &error) {
  close();
  path_ = path;
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) {
    error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fileno(file_), &st) != 0 || !S_ISREG(st.st_mode)) {
    // Not a regular file (a pipe, a device): read what it gives, whole, once.
    std::vector<uint8_t> image;
    bool read = readStream(file_, path, image, error);
    std::fclose(file_);
    file_ = nullptr;
    NpyArray whole;
    if (!read || !parseNpy(image.data(), image.size(), path, expected, whole, error))
      return false;
    header_.dtype = whole.dtype;
    header_.shape = whole.shape;
    header_.payloadBytes = whole.bytes.size();
    buffered_ = std::move(whole.bytes);
    return true;
  }
  // The preamble, then exactly the header: no more than the file holds.
  uint64_t fileSize = uint64_t(st.st_size);
  std::vector<uint8_t> head(std::min<uint64_t>(fileSize, kMagicLen + 2 + 4));
  if (std::fread(head.data(), 1, head.size(), file_) != head.size()) {
    error = fmt::format("{}: read error", path);
    return false;
  }
  std::string why;
  size_t preamble = preambleLength(head.data(), head.size(), why);
  if (preamble && head.size() >= preamble) {
    uint64_t headerLen = readLE(head.data() + kMagicLen + 2, preamble - kMagicLen - 2);
    if (headerLen <= fileSize - preamble) {
      size_t had = head.size();
      head.resize(preamble + headerLen);
      if (head.size() > had &&
          std::fread(head.data() + had, 1, head.size() - had, file_) != head.size() - had) {
        error = fmt::format("{}: read error", path);
        return false;
      }
      if (head.size() < had) // the header ends inside the bytes read: step back
        std::fseek(file_, long(head.size()), SEEK_SET);
    }
  }
  return parseHeader(head.data(), head.size(), fileSize, path, expected, header_, error);
}

bool NpyReader::readPayload(uint8_t *dest, std::string &error) {
  size_t n = size_t(header_.payloadBytes);
  if (!file_) {
    std::memcpy(dest, buffered_.data(), n);
    return true;
  }
  if (std::fread(dest, 1, n, file_) != n) {
    error = fmt::format("{}: read error (the file changed while it was read?)", path_);
    return false;
  }
  normaliseBooleans(header_.dtype, dest, n);
  return true;
}

void NpyReader::close() {
  if (file_)
    std::fclose(file_);
  file_ = nullptr;
  buffered_.clear();
}

bool readNpy(const std::string &path, DType expected, NpyArray &out, std::string &error) {
  std::vector<uint8_t> image;
  if (!readFile(path, image, error))
    return false;
  return parseNpy(image.data(), image.size(), path, expected, out, error);
}

bool readNpy(const std::string &path, NpyArray &out, std::string &error) {
  std::vector<uint8_t> image;
  if (!readFile(path, image, error))
    return false;
  return parseNpy(image.data(), image.size(), path, std::nullopt, out, error);
}

namespace {
/// The header numpy.save writes for dtype and shape, and the data's byte count.
bool encodeHeader(DType dtype, const std::vector<int64_t> &shape, const void *data,
                  std::vector<uint8_t> &out, size_t &dataBytes, std::string &error) {
  const size_t width = byteSize(dtype);
  std::optional<int64_t> count = countElements(shape, width);
  if (!count) {
    error = fmt::format("cannot write shape {}: negative or too large", shapeRepr(shape));
    return false;
  }
  dataBytes = static_cast<size_t>(*count) * width;
  if (dataBytes != 0 && !data) {
    error = "no data to write";
    return false;
  }

  // Byte for byte what numpy.save writes: keys sorted, a trailing ", ", room for the first
  // dimension to grow, then spaces and a newline up to the alignment.
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 npyDescr(dtype), shapeRepr(shape));
  if (!shape.empty()) {
    size_t digits = fmt::format("{}", shape[0]).size();
    if (digits < kGrowthDigits)
      dict.append(kGrowthDigits - digits, ' ');
  }
  unsigned major = 1;
  size_t lengthBytes = 2;
  size_t unpadded = dict.size() + 1; // the final newline
  size_t pad = kAlign - (kMagicLen + 2 + lengthBytes + unpadded) % kAlign;
  if (unpadded + pad > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    lengthBytes = 4;
    pad = kAlign - (kMagicLen + 2 + lengthBytes + unpadded) % kAlign;
  }
  const size_t headerLen = unpadded + pad;
  if (headerLen > std::numeric_limits<uint32_t>::max()) {
    error = "cannot write: the header exceeds 4 GiB";
    return false;
  }

  out.clear();
  out.reserve(kMagicLen + 2 + lengthBytes + headerLen);
  out.insert(out.end(), kMagic, kMagic + kMagicLen);
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  for (size_t i = 0; i < lengthBytes; ++i)
    out.push_back(static_cast<uint8_t>(headerLen >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), pad, ' ');
  out.push_back('\n');
  return true;
}
} // namespace

bool encodeNpy(DType dtype, const std::vector<int64_t> &shape, const void *data,
               std::vector<uint8_t> &out, std::string &error) {
  size_t dataBytes = 0;
  if (!encodeHeader(dtype, shape, data, out, dataBytes, error))
    return false;
  out.reserve(out.size() + dataBytes);
  const uint8_t *src = static_cast<const uint8_t *>(data);
  if (dtype == DType::I1) {
    for (size_t i = 0; i < dataBytes; ++i)
      out.push_back(src[i] != 0);
  } else if (dataBytes != 0) {
    out.insert(out.end(), src, src + dataBytes);
  }
  return true;
}

bool writeNpy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
              const void *data, std::string &error) {
  // The header, then the data straight from the caller's memory (no image of the file).
  std::vector<uint8_t> header;
  size_t dataBytes = 0;
  if (!encodeHeader(dtype, shape, data, header, dataBytes, error)) {
    error = fmt::format("{}: {}", path, error);
    return false;
  }
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    error = fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno));
    return false;
  }
  bool wrote = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  const uint8_t *src = static_cast<const uint8_t *>(data);
  if (dtype == DType::I1) {
    uint8_t chunk[1 << 16];
    for (size_t at = 0; wrote && at < dataBytes; at += sizeof(chunk)) {
      size_t n = std::min(sizeof(chunk), dataBytes - at);
      for (size_t i = 0; i < n; ++i)
        chunk[i] = src[at + i] != 0;
      wrote = std::fwrite(chunk, 1, n, f) == n;
    }
  } else if (dataBytes != 0) {
    wrote = wrote && std::fwrite(src, 1, dataBytes, f) == dataBytes;
  }
  const int savedErrno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    error = fmt::format("{}: write failed: {}", path, std::strerror(wrote ? errno : savedErrno));
    std::remove(path.c_str()); // a partial file would only fail later, less clearly
    return false;
  }
  return true;
}

} // namespace ttinterp
