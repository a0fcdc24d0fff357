//===- Spec.cpp - Parsing and validating run specs --------------------------===//
#include "Spec.h"

#include "ttinterp/cuda/JsonLimits.h"

#include "Elements.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace ttinterp::driver {

using Json = nlohmann::ordered_json;

namespace {

/// Thrown inside the parser only, to unwind to parseSpec with one message.
struct SpecError {
  std::string path;
  std::string message;
};

[[noreturn]] void fail(const std::string &path, std::string message) {
  throw SpecError{path, std::move(message)};
}

/// `message` on one line: messages quote names taken from the spec (keys, buffer names,
/// dtypes), which may hold any character, and the CLI promises one-line errors.
std::string oneLine(const std::string &message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (byte < 0x20 || byte == 0x7f)
      out += fmt::format("\\x{:02x}", byte);
    else
      out += c;
  }
  return out;
}

bool plainKey(std::string_view key) {
  if (key.empty())
    return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

std::string member(const std::string &path, std::string_view key) {
  if (plainKey(key))
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  return fmt::format("{}[{}]", path, Json(std::string(key)).dump());
}

std::string element(const std::string &path, size_t i) { return fmt::format("{}[{}]", path, i); }

/// A short rendering of a JSON value for messages.
std::string shown(const Json &j) {
  std::string s = j.dump();
  if (s.size() > 40)
    s = s.substr(0, 37) + "...";
  return s;
}

std::string kindOf(const Json &j) {
  switch (j.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::object:
    return "an object";
  case Json::value_t::array:
    return "an array";
  case Json::value_t::string:
    return fmt::format("the string {}", shown(j));
  case Json::value_t::boolean:
    return fmt::format("{}", j.get<bool>());
  default:
    return shown(j);
  }
}

void expectObject(const Json &j, const std::string &path,
                  std::initializer_list<std::string_view> allowed) {
  if (!j.is_object())
    fail(path, fmt::format("expected an object, got {}", kindOf(j)));
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed)
      known |= it.key() == a;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed)
        list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      fail(member(path, it.key()),
           fmt::format("unknown key '{}' (expected one of: {})", it.key(), list));
    }
  }
}

const Json &required(const Json &object, const std::string &path, const char *key) {
  auto it = object.find(key);
  if (it == object.end())
    fail(path, fmt::format("missing required key '{}'", key));
  return *it;
}

int64_t integer(const Json &j, const std::string &path, int64_t min, int64_t max,
                const char *what) {
  if (!j.is_number_integer())
    fail(path, fmt::format("expected {}, got {}", what, kindOf(j)));
  if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    fail(path, fmt::format("{} is too large", shown(j)));
  int64_t v = j.get<int64_t>();
  if (v < min || v > max)
    fail(path, fmt::format("expected {}, got {}", what, v));
  return v;
}

std::string string(const Json &j, const std::string &path, const char *what) {
  if (!j.is_string())
    fail(path, fmt::format("expected {}, got {}", what, kindOf(j)));
  return j.get<std::string>();
}

DType dtype(const Json &j, const std::string &path) {
  std::string s = string(j, path, "a dtype name");
  std::optional<DType> d = parseDType(s);
  if (!d || *d == DType::Ptr)
    fail(path, fmt::format("unknown dtype '{}' (expected one of: i1 i8 i16 i32 i64 f16 bf16 f32 "
                           "f64 f8E4M3FN f8E4M3FNUZ f8E5M2 f8E5M2FNUZ)",
                           s));
  return *d;
}

/// A shape: non-negative sizes whose element count fits in int64.
std::vector<int64_t> shape(const Json &j, const std::string &path) {
  if (!j.is_array())
    fail(path, fmt::format("expected an array of sizes, got {}", kindOf(j)));
  std::vector<int64_t> out;
  for (size_t i = 0; i < j.size(); ++i)
    out.push_back(integer(j[i], element(path, i), 0, std::numeric_limits<int64_t>::max(),
                          "a non-negative size"));
  return out;
}

int64_t countElements(const std::vector<int64_t> &shape, const std::string &path) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n))
      fail(path, "too many elements");
  return n;
}

/// A JSON value as a value of `d`: integers in range (signed or unsigned reading), i1 also
/// from true/false, floats as numbers or "nan"/"inf"/"-inf" that stay finite when finite.
ScalarValue scalarValue(DType d, const Json &j, const std::string &path) {
  ScalarValue v;
  v.dtype = d;
  if (isInteger(d)) {
    if (d == DType::I1 && j.is_boolean()) {
      v.integer = j.get<bool>();
      return v;
    }
    if (!j.is_number_integer())
      fail(path, fmt::format("expected an integer for {}, got {}", name(d), kindOf(j)));
    std::string range = fmt::format("{} to {}", integerMin(d), integerMax(d));
    if (j.is_number_unsigned()) {
      uint64_t u = j.get<uint64_t>();
      if (u > integerMax(d))
        fail(path, fmt::format("value {} is out of range for {} ({})", u, name(d), range));
      v.integer = wrapInteger(d, int64_t(u));
    } else {
      int64_t s = j.get<int64_t>();
      if (s < integerMin(d))
        fail(path, fmt::format("value {} is out of range for {} ({})", s, name(d), range));
      v.integer = wrapInteger(d, s);
    }
    return v;
  }
  double x;
  if (j.is_number()) {
    x = j.get<double>();
  } else if (j.is_string() && (j == "nan" || j == "inf" || j == "+inf" || j == "-inf")) {
    std::string s = j.get<std::string>();
    x = s == "nan" ? std::numeric_limits<double>::quiet_NaN()
                   : (s == "-inf" ? -1 : 1) * std::numeric_limits<double>::infinity();
  } else {
    fail(path, fmt::format("expected a number (or \"nan\", \"inf\", \"-inf\") for {}, got {}",
                           name(d), kindOf(j)));
  }
  double rounded = decodeFloat(d, encodeFloat(d, x));
  if (std::isfinite(x) && !std::isfinite(rounded))
    fail(path, fmt::format("value {} is out of range for {} (largest finite {})", shown(j), name(d),
                           largestFinite(d)));
  v.real = rounded;
  return v;
}

std::string resolve(const std::string &baseDir, const std::string &p) {
  std::filesystem::path path(p);
  if (path.is_absolute() || baseDir.empty())
    return path.lexically_normal().string();
  return (std::filesystem::path(baseDir) / path).lexically_normal().string();
}

/// An `addresses` entry's buffer, named before every buffer is known.
struct PendingAddress {
  size_t table = 0, entry = 0;
  std::string name;
  std::string path; ///< "buffers.t.init.addresses[1]".
};

void parseAddresses(BufferSpec &b, const Json &j, const std::string &path, size_t table,
                    std::vector<PendingAddress> &pending) {
  const std::string apath = member(path, "addresses");
  // Addresses are 64-bit: only a 64-bit integer buffer holds them as Triton's tables do.
  if (b.dtype != DType::I64)
    fail(apath, fmt::format("an addresses init fills an i64 buffer (addresses are 64-bit "
                            "integers); buffer '{}' has dtype {}",
                            b.name, name(b.dtype)));
  const Json &list = j["addresses"];
  if (!list.is_array())
    fail(apath, fmt::format("expected an array of {{\"buffer\": name, \"offset\": n}}, got {}",
                            kindOf(list)));
  if (int64_t(list.size()) != b.numElements)
    fail(apath, fmt::format("{} addresses for buffer '{}' of {} elements (one per element)",
                            list.size(), b.name, b.numElements));
  for (size_t i = 0; i < list.size(); ++i) {
    std::string epath = element(apath, i);
    expectObject(list[i], epath, {"buffer", "offset"});
    AddressEntry e;
    std::string target =
        string(required(list[i], epath, "buffer"), member(epath, "buffer"), "a buffer name");
    if (list[i].contains("offset"))
      e.offset = integer(list[i]["offset"], member(epath, "offset"), 0,
                         std::numeric_limits<int64_t>::max(), "a non-negative element offset");
    b.addresses.push_back(e);
    pending.push_back({table, i, target, epath});
  }
}

/// Names each addresses entry's buffer once all buffers are known (a table may come before
/// its targets in the file), and checks offsets and where the buffers live.
void resolveAddresses(Spec &spec, const std::vector<PendingAddress> &pending) {
  for (const PendingAddress &p : pending) {
    BufferSpec &table = spec.buffers[p.table];
    std::optional<size_t> target = spec.findBuffer(p.name);
    if (!target)
      fail(member(p.path, "buffer"), fmt::format("unknown buffer '{}'", p.name));
    const BufferSpec &t = spec.buffers[*target];
    AddressEntry &e = table.addresses[p.entry];
    e.buffer = *target;
    // An address must name an element; an empty buffer has only its start.
    if (t.numElements == 0 ? e.offset != 0 : e.offset >= t.numElements)
      fail(member(p.path, "offset"),
           fmt::format("offset {} is outside buffer '{}' ({} elements of {})", e.offset, t.name,
                       t.numElements, name(t.dtype)));
  }
}

void parseInit(BufferSpec &b, const Json &j, const std::string &path, const std::string &baseDir,
               size_t index, std::vector<PendingAddress> &pending) {
  const char *forms = "\"zeros\", \"arange\", {\"fill\": v}, {\"npy\": path}, "
                      "{\"uniform\": [lo, hi], \"seed\": s} or {\"addresses\": [...]}";
  if (j.is_string()) {
    if (j == "zeros")
      b.init = InitKind::Zeros;
    else if (j == "arange")
      b.init = InitKind::Arange;
    else
      fail(path, fmt::format("unknown init {} (expected {})", shown(j), forms));
    return;
  }
  if (!j.is_object())
    fail(path, fmt::format("expected {}, got {}", forms, kindOf(j)));
  if (j.contains("fill")) {
    expectObject(j, path, {"fill"});
    b.init = InitKind::Fill;
    b.fill = scalarValue(b.dtype, j["fill"], member(path, "fill"));
  } else if (j.contains("npy")) {
    expectObject(j, path, {"npy"});
    b.init = InitKind::Npy;
    b.npyPath = resolve(baseDir, string(j["npy"], member(path, "npy"), "a file path"));
  } else if (j.contains("addresses")) {
    expectObject(j, path, {"addresses"});
    b.init = InitKind::Addresses;
    parseAddresses(b, j, path, index, pending);
  } else if (j.contains("uniform")) {
    expectObject(j, path, {"uniform", "seed"});
    b.init = InitKind::Uniform;
    std::string upath = member(path, "uniform");
    const Json &u = j["uniform"];
    if (!u.is_array() || u.size() != 2 || !u[0].is_number() || !u[1].is_number())
      fail(upath, fmt::format("expected [lo, hi] (two numbers), got {}", kindOf(u)));
    b.low = u[0].get<double>();
    b.high = u[1].get<double>();
    if (j.contains("seed"))
      b.seed = uint64_t(integer(j["seed"], member(path, "seed"), 0,
                                std::numeric_limits<int64_t>::max(), "a non-negative integer"));
    if (isInteger(b.dtype)) {
      // Integers are drawn from [lo, hi): both ends must be integers the draw can reach.
      constexpr double kExact = 9007199254740992.0; // 2^53
      if (!u[0].is_number_integer() || !u[1].is_number_integer() || !(b.low < b.high) ||
          std::fabs(b.low) > kExact || std::fabs(b.high) > kExact)
        fail(upath, fmt::format("for {} expected integers lo < hi (|lo|, |hi| <= 2^53), got {}",
                                name(b.dtype), shown(u)));
      if (b.low < double(integerMin(b.dtype)) || b.high - 1 > double(integerMax(b.dtype)))
        fail(upath, fmt::format("[{}, {}) is out of range for {} ({} to {})", b.low, b.high,
                                name(b.dtype), integerMin(b.dtype), integerMax(b.dtype)));
    } else {
      double big = largestFinite(b.dtype);
      if (!(b.low <= b.high) || std::fabs(b.low) > big || std::fabs(b.high) > big)
        fail(upath, fmt::format("expected finite lo <= hi within {}'s range (largest finite "
                                "{}), got {}",
                                name(b.dtype), big, shown(u)));
    }
  } else {
    fail(path, fmt::format("expected {}, got {}", forms, shown(j)));
  }
}

/// Buffer names become file names under --out, so keep them portable.
void checkBufferName(const std::string &name, const std::string &path) {
  bool ok = !name.empty() && name[0] != '.' && name.size() <= 128;
  for (char c : name)
    ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  if (!ok)
    fail(path, fmt::format("invalid buffer name {} (buffer names are used as file names: "
                           "letters, digits, '_', '-' and '.', not starting with '.')",
                           Json(name).dump()));
}

void parseBuffers(Spec &spec, const Json &j, std::map<size_t, std::string> &aliasNames,
                  std::vector<PendingAddress> &pending) {
  const std::string path = "buffers";
  if (!j.is_object())
    fail(path, fmt::format("expected an object mapping names to buffers, got {}", kindOf(j)));
  for (auto it = j.begin(); it != j.end(); ++it) {
    BufferSpec b;
    b.name = it.key();
    b.path = member(path, b.name);
    checkBufferName(b.name, b.path);
    const Json &o = it.value();
    expectObject(o, b.path, {"dtype", "shape", "init", "alias_of", "byte_offset", "device"});
    b.dtype = dtype(required(o, b.path, "dtype"), member(b.path, "dtype"));
    b.shape = shape(required(o, b.path, "shape"), member(b.path, "shape"));
    b.numElements = countElements(b.shape, member(b.path, "shape"));
    if (__builtin_mul_overflow(uint64_t(b.numElements), uint64_t(byteSize(b.dtype)), &b.byteSize) ||
        b.byteSize > (uint64_t(1) << 46))
      fail(member(b.path, "shape"), "buffer is too large");
    if (o.contains("alias_of")) {
      if (o.contains("init"))
        fail(member(b.path, "init"),
             "an alias_of buffer shows its parent's bytes and takes no init");
      if (o.contains("device"))
        fail(member(b.path, "device"),
             "an alias_of buffer lives where its parent does and takes no device");
      aliasNames[spec.buffers.size()] =
          string(o["alias_of"], member(b.path, "alias_of"), "a buffer name");
      if (o.contains("byte_offset"))
        b.byteOffset =
            uint64_t(integer(o["byte_offset"], member(b.path, "byte_offset"), 0,
                             std::numeric_limits<int64_t>::max(), "a non-negative byte offset"));
    } else {
      if (o.contains("byte_offset"))
        fail(member(b.path, "byte_offset"), "byte_offset is only valid together with alias_of");
      if (o.contains("init"))
        parseInit(b, o["init"], member(b.path, "init"), spec.baseDir, spec.buffers.size(), pending);
      if (o.contains("device")) {
        std::string dpath = member(b.path, "device");
        std::string where = string(o["device"], dpath, "\"cuda\" or \"host\"");
        if (where != "cuda" && where != "host")
          fail(dpath, fmt::format("unknown device '{}' (expected \"cuda\" or \"host\")", where));
        b.device = where == "cuda";
      }
    }
    spec.buffers.push_back(std::move(b));
  }
}

/// Links aliases to their parents, rejects cycles and aliases that do not fit, and finds
/// each buffer's root storage.
void resolveAliases(Spec &spec, const std::map<size_t, std::string> &aliasNames) {
  for (auto &[index, parentName] : aliasNames) {
    BufferSpec &b = spec.buffers[index];
    std::optional<size_t> parent = spec.findBuffer(parentName);
    if (!parent)
      fail(member(b.path, "alias_of"), fmt::format("unknown buffer '{}'", parentName));
    if (*parent == index)
      fail(member(b.path, "alias_of"), fmt::format("buffer '{}' is an alias of itself", b.name));
    b.aliasOf = *parent;
  }
  for (size_t i = 0; i < spec.buffers.size(); ++i) {
    // Walk to the root; a chain longer than the number of buffers has a cycle.
    std::vector<size_t> chain = {i};
    uint64_t offset = 0;
    size_t at = i;
    while (spec.buffers[at].aliasOf) {
      offset += spec.buffers[at].byteOffset;
      at = *spec.buffers[at].aliasOf;
      for (size_t seen : chain)
        if (seen == at) {
          std::string cycle;
          auto from = std::find(chain.begin(), chain.end(), at);
          for (auto c = from; c != chain.end(); ++c)
            cycle += spec.buffers[*c].name + " -> ";
          fail(member(spec.buffers[i].path, "alias_of"),
               fmt::format("alias cycle: {}{}", cycle, spec.buffers[at].name));
        }
      chain.push_back(at);
    }
    spec.buffers[i].root = at;
    spec.buffers[i].rootOffset = offset;
    spec.buffers[i].device = spec.buffers[at].device;
  }
  for (BufferSpec &b : spec.buffers) {
    if (!b.aliasOf)
      continue;
    const BufferSpec &parent = spec.buffers[*b.aliasOf];
    uint64_t end;
    if (__builtin_add_overflow(b.byteOffset, b.byteSize, &end) || end > parent.byteSize)
      fail(b.path,
           fmt::format("alias of '{}' covers bytes [{}, {}) but '{}' has {} bytes", parent.name,
                       b.byteOffset, b.byteOffset + b.byteSize, parent.name, parent.byteSize));
  }
}

std::optional<size_t> bufferRef(const Spec &spec, const Json &j, const std::string &path) {
  std::string name = string(j, path, "a buffer name");
  std::optional<size_t> b = spec.findBuffer(name);
  if (!b)
    fail(path, fmt::format("unknown buffer '{}'", name));
  return b;
}

/// Checks that every element of the view lies inside its buffer's own bytes.
void checkViewInside(const Spec &spec, const ArgSpec &a) {
  const BufferSpec &b = spec.buffers[a.buffer];
  // An empty view reaches no element, and its spans are not summed: after a zero any number
  // of sizes near 2^63 may follow, with strides saturated at 2^63 - 1 (contiguousStrides),
  // and three such spans overflow 128 bits.
  if (std::find(a.shape.begin(), a.shape.end(), 0) != a.shape.end()) {
    if (a.offset < 0 || a.offset > b.numElements)
      fail(a.path, fmt::format("offset {} is outside buffer '{}' ({} elements)", a.offset, b.name,
                               b.numElements));
    return;
  }
  // The element count fits in int64, so at most 63 sizes exceed 1, each spanning less than
  // 2^63 elements times a stride below 2^63: the sums stay inside 128 bits.
  __int128 lo = a.offset, hi = a.offset;
  for (size_t k = 0; k < a.shape.size(); ++k) {
    __int128 span = __int128(a.shape[k] - 1) * a.strides[k];
    (span < 0 ? lo : hi) += span;
  }
  if (lo < 0 || hi >= b.numElements)
    fail(a.path, fmt::format("view reaches elements [{}, {}] but buffer '{}' has elements "
                             "[0, {}]",
                             int64_t(lo), int64_t(hi), b.name, b.numElements - 1));
}

/// The `offset`, `shape` and `strides` keys of a view or descriptor argument
/// (`a.buffer` set). Without `shape` (allowed for descriptors only), the whole
/// buffer; without `strides`, C-contiguous.
void parseViewKeys(const Spec &spec, const Json &j, const std::string &path, ArgSpec &a,
                   bool shapeRequired) {
  if (j.contains("offset"))
    a.offset = integer(j["offset"], member(path, "offset"), std::numeric_limits<int64_t>::min(),
                       std::numeric_limits<int64_t>::max(), "an element offset");
  if (shapeRequired || j.contains("shape")) {
    a.shape = shape(required(j, path, "shape"), member(path, "shape"));
    countElements(a.shape, member(path, "shape"));
  } else {
    a.shape = spec.buffers[a.buffer].shape;
  }
  if (j.contains("strides")) {
    const Json &s = j["strides"];
    std::string spath = member(path, "strides");
    if (!s.is_array())
      fail(spath, fmt::format("expected an array of strides, got {}", kindOf(s)));
    if (s.size() != a.shape.size())
      fail(spath, fmt::format("{} strides for a shape of rank {}", s.size(), a.shape.size()));
    for (size_t i = 0; i < s.size(); ++i)
      a.strides.push_back(integer(s[i], element(spath, i), -(int64_t(1) << 48), int64_t(1) << 48,
                                  "a stride (in elements)"));
  } else {
    a.strides = contiguousStrides(a.shape);
  }
  checkViewInside(spec, a);
}

ArgSpec parseArg(const Spec &spec, const Json &j, const std::string &path) {
  ArgSpec a;
  a.path = path;
  if (j.is_string()) {
    a.kind = ArgKind::Buffer;
    a.buffer = *bufferRef(spec, j, path);
    a.shape = spec.buffers[a.buffer].shape;
    a.strides = contiguousStrides(a.shape);
    return a;
  }
  const char *forms = "a buffer name, a view {\"view\": name, \"offset\": n, \"shape\": [...], "
                      "\"strides\": [...]}, a tensor descriptor {\"tensordesc\": name, ...} or a "
                      "scalar {\"<dtype>\": value}";
  if (!j.is_object())
    fail(path, fmt::format("expected {}, got {}", forms, kindOf(j)));
  if (j.contains("view")) {
    expectObject(j, path, {"view", "offset", "shape", "strides"});
    a.kind = ArgKind::View;
    a.buffer = *bufferRef(spec, j["view"], member(path, "view"));
    parseViewKeys(spec, j, path, a, /*shapeRequired=*/true);
    return a;
  }
  if (j.contains("tensordesc")) {
    expectObject(j, path, {"tensordesc", "offset", "shape", "strides", "padding"});
    a.kind = ArgKind::Descriptor;
    a.buffer = *bufferRef(spec, j["tensordesc"], member(path, "tensordesc"));
    parseViewKeys(spec, j, path, a, /*shapeRequired=*/false);
    if (a.shape.empty())
      fail(path, "a tensor descriptor needs a shape of rank 1 or more");
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (a.shape[d] > std::numeric_limits<int32_t>::max())
        fail(path, fmt::format("dimension {} of the descriptor has {} elements; Triton passes "
                               "descriptor sizes as i32",
                               d, a.shape[d]));
    if (j.contains("padding")) {
      std::string padding = string(j["padding"], member(path, "padding"), "\"zero\" or \"nan\"");
      if (padding != "zero" && padding != "nan")
        fail(member(path, "padding"),
             fmt::format("expected \"zero\" or \"nan\", got \"{}\"", padding));
      a.padNaN = padding == "nan";
      if (a.padNaN && !isFloat(spec.buffers[a.buffer].dtype))
        fail(member(path, "padding"),
             fmt::format("NaN padding needs a float buffer; '{}' has dtype {}",
                         spec.buffers[a.buffer].name, name(spec.buffers[a.buffer].dtype)));
    }
    return a;
  }
  if (j.size() != 1)
    fail(path, fmt::format("expected {}, got {}", forms, shown(j)));
  std::string key = j.begin().key();
  std::optional<DType> d = parseDType(key);
  if (!d || *d == DType::Ptr)
    fail(path, fmt::format("expected {}; '{}' is not a dtype", forms, key));
  a.kind = ArgKind::Scalar;
  a.scalar = scalarValue(*d, j.begin().value(), member(path, key));
  return a;
}

std::vector<size_t> bufferList(const Spec &spec, const Json &j, const std::string &path) {
  if (!j.is_array())
    fail(path, fmt::format("expected an array of buffer names, got {}", kindOf(j)));
  std::vector<size_t> out;
  for (size_t i = 0; i < j.size(); ++i) {
    size_t b = *bufferRef(spec, j[i], element(path, i));
    if (std::find(out.begin(), out.end(), b) != out.end())
      fail(element(path, i), fmt::format("buffer '{}' is listed twice", spec.buffers[b].name));
    out.push_back(b);
  }
  return out;
}

LaunchSpec parseLaunch(const Spec &spec, const Json &j, const std::string &path) {
  LaunchSpec l;
  l.path = path;
  if (j.is_object() && j.contains("sync")) {
    expectObject(j, path, {"sync"});
    l.kind = StepKind::Sync;
    l.sync = bufferList(spec, j["sync"], member(path, "sync"));
    return l;
  }
  if (j.is_object() && j.contains("step")) {
    expectObject(j, path, {"step"});
    if (j["step"] != true)
      fail(member(path, "step"), fmt::format("expected true, got {}", kindOf(j["step"])));
    l.kind = StepKind::Step;
    return l;
  }
  expectObject(j, path,
               {"kernel", "function", "grid", "args", "donate", "reachable", "native", "metadata"});
  l.kind = StepKind::Launch;
  l.kernel = string(required(j, path, "kernel"), member(path, "kernel"), "a TTIR file path");
  l.kernelPath = resolve(spec.baseDir, l.kernel);
  if (j.contains("function"))
    l.function = string(j["function"], member(path, "function"), "a function name");

  const Json &grid = required(j, path, "grid");
  std::string gpath = member(path, "grid");
  if (!grid.is_array() || grid.empty() || grid.size() > 3)
    fail(gpath, fmt::format("expected 1 to 3 grid sizes, got {}",
                            grid.is_array() ? fmt::format("{} sizes", grid.size()) : kindOf(grid)));
  for (size_t i = 0; i < grid.size(); ++i)
    // Program ids are i32 in TTIR.
    l.grid[i] = integer(grid[i], element(gpath, i), 0, std::numeric_limits<int32_t>::max(),
                        "a grid size from 0 to 2147483647");
  int64_t programs = 1;
  for (int64_t g : l.grid)
    if (__builtin_mul_overflow(programs, g, &programs))
      fail(gpath, "the grid has more than 2^63 - 1 programs");

  const Json &args = required(j, path, "args");
  std::string apath = member(path, "args");
  if (!args.is_array())
    fail(apath, fmt::format("expected an array of arguments, got {}", kindOf(args)));
  for (size_t i = 0; i < args.size(); ++i)
    l.args.push_back(parseArg(spec, args[i], element(apath, i)));

  if (j.contains("metadata") && !j.contains("native"))
    fail(member(path, "metadata"), "metadata is only valid together with native");
  if (j.contains("native")) {
    std::string npath = member(path, "native");
    l.native = string(j["native"], npath, "a cubin or PTX file path");
    l.nativePath = resolve(spec.baseDir, l.native);
    if (j.contains("metadata")) {
      l.metadataKey = member(path, "metadata");
      l.metadataPath = resolve(spec.baseDir, string(j["metadata"], l.metadataKey, "a file path"));
    } else {
      l.metadataKey = npath;
      l.metadataPath = std::filesystem::path(l.nativePath).replace_extension(".json").string();
    }
    // The GPU can only reach device memory; a host buffer's address means nothing there.
    for (const ArgSpec &a : l.args)
      if (a.kind != ArgKind::Scalar && !spec.buffers[a.buffer].device)
        fail(a.path, fmt::format("a native launch runs on the GPU, so buffer '{}' must be a "
                                 "device buffer (\"device\": \"cuda\")",
                                 spec.buffers[a.buffer].name));
    // Donation is about the interpreter's shadows, which a native launch does not use.
    if (j.contains("donate"))
      fail(member(path, "donate"), "a native launch cannot donate buffers");
    if (j.contains("reachable"))
      fail(member(path, "reachable"), "a native launch reaches device memory directly; "
                                      "reachable is for interpreted launches");
  }

  // A buffer also passed as an argument may be listed too: it changes nothing (the same
  // bytes join the same region), so it is allowed.
  if (j.contains("reachable"))
    l.reachable = bufferList(spec, j["reachable"], member(path, "reachable"));

  if (j.contains("donate")) {
    std::string dpath = member(path, "donate");
    l.donate = bufferList(spec, j["donate"], dpath);
    for (size_t i = 0; i < l.donate.size(); ++i) {
      bool passed =
          std::find(l.reachable.begin(), l.reachable.end(), l.donate[i]) != l.reachable.end();
      for (const ArgSpec &a : l.args)
        passed |= a.kind != ArgKind::Scalar && a.buffer == l.donate[i];
      if (!passed)
        fail(element(dpath, i),
             fmt::format("buffer '{}' is not an argument or reachable buffer of this launch",
                         spec.buffers[l.donate[i]].name));
    }
  }
  return l;
}

/// "line L, column C" of byte offset `byte` (1-based, as editors count).
std::string lineColumn(std::string_view text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

} // namespace

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[k] = s;
    // Saturates: a product past int64 can only come from a shape with a zero elsewhere (larger
    // element counts are refused as buffers), where the strides of the outer dimensions are
    // never used to reach an element.
    if (__builtin_mul_overflow(s, std::max<int64_t>(shape[k], 1), &s))
      s = std::numeric_limits<int64_t>::max();
  }
  return strides;
}

std::string addressInitError(const Spec &spec) {
  for (const BufferSpec &b : spec.buffers) {
    if (b.init != InitKind::Addresses)
      continue;
    std::string path = member(member(b.path, "init"), "addresses");
    // The table is filled on the host before it is uploaded, and holds host addresses; a GPU
    // would need device addresses, which the interpreter cannot dereference.
    if (b.device)
      return fmt::format("{}: buffer '{}' is a device buffer; an addresses table holds host "
                         "addresses, so it and its targets must be host buffers",
                         path, b.name);
    for (size_t i = 0; i < b.addresses.size(); ++i)
      if (spec.buffers[b.addresses[i].buffer].device)
        return fmt::format("{}: buffer '{}' is a device buffer; an addresses table holds host "
                           "addresses, so it and its targets must be host buffers",
                           member(element(path, i), "buffer"),
                           spec.buffers[b.addresses[i].buffer].name);
  }
  return "";
}

bool Spec::usesCuda() const { return !firstCudaUse().empty(); }

std::string Spec::firstCudaUse() const {
  for (const BufferSpec &b : buffers)
    if (b.device && !b.aliasOf)
      return b.path + ".device";
  for (const LaunchSpec &l : launches)
    if (!l.native.empty())
      return l.path + ".native";
  return "";
}

std::optional<size_t> Spec::findBuffer(std::string_view name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name)
      return i;
  return std::nullopt;
}

std::optional<Spec> parseSpec(std::string_view text, const std::string &file,
                              const std::string &baseDir, std::string &error) {
  if (jsonNestsDeeperThan(text)) {
    error = fmt::format("{}: the JSON nests arrays and objects more than {} deep; a spec needs a "
                        "few levels",
                        file, kMaxJsonDepth);
    return std::nullopt;
  }
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error &e) {
    // nlohmann's what() repeats the position; keep only its explanation.
    std::string what = e.what();
    size_t colon = what.find(": ", what.find("parse error"));
    std::string why = colon == std::string::npos ? what : what.substr(colon + 2);
    size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    error = fmt::format("{}: invalid JSON at byte {} ({}): {}", file, byte, lineColumn(text, byte),
                        why);
    return std::nullopt;
  } catch (const Json::exception &e) {
    // Other parser failures (a number too large for a double) carry no position.
    std::string what = e.what();
    size_t tag = what.find("] ");
    error = fmt::format("{}: invalid JSON: {}", file,
                        tag == std::string::npos ? what : what.substr(tag + 2));
    return std::nullopt;
  }
  Spec spec;
  spec.file = file;
  spec.baseDir = baseDir;
  try {
    expectObject(root, "", {"buffers", "launches"});
    std::map<size_t, std::string> aliasNames;
    std::vector<PendingAddress> pending;
    if (root.contains("buffers"))
      parseBuffers(spec, root["buffers"], aliasNames, pending);
    resolveAliases(spec, aliasNames);
    resolveAddresses(spec, pending);
    if (std::string e = addressInitError(spec); !e.empty())
      throw SpecError{"", e};
    const Json &launches = required(root, "", "launches");
    if (!launches.is_array())
      fail("launches", fmt::format("expected an array, got {}", kindOf(launches)));
    for (size_t i = 0; i < launches.size(); ++i)
      spec.launches.push_back(parseLaunch(spec, launches[i], element("launches", i)));
  } catch (const SpecError &e) {
    error = oneLine(e.path.empty() ? fmt::format("{}: {}", file, e.message)
                                   : fmt::format("{}: {}: {}", file, e.path, e.message));
    return std::nullopt;
  }
  return spec;
}

std::optional<Spec> loadSpec(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("cannot read spec '{}': {}", path, std::strerror(errno));
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string dir = std::filesystem::path(path).parent_path().string();
  return parseSpec(text.str(), path, dir, error);
}

bool bindArguments(const Spec &spec, LaunchSpec &launch, const std::string &function,
                   const std::vector<interp::Parameter> &parameters, std::string &error) {
  auto report = [&](const std::string &path, const std::string &message) {
    error = oneLine(fmt::format("{}: {}: {}", spec.file, path, message));
    return false;
  };
  auto describe = [](const interp::Parameter &p) {
    if (p.descriptorRank)
      return fmt::format("{}: tensordesc<{}x{}>", p.name, fmt::join(p.blockShape, "x"),
                         name(p.dtype));
    return p.isPointer ? fmt::format("{}: *{}", p.name, name(p.dtype))
                       : fmt::format("{}: {}", p.name, name(p.dtype));
  };
  // A descriptor argument stands for its parameter and the shape and stride
  // parameters Triton passes after it, so the spec lists arguments as Python
  // calls the kernel.
  std::vector<size_t> callParameters;
  for (size_t p = 0; p < parameters.size(); p += 1 + 2 * parameters[p].descriptorRank)
    callParameters.push_back(p);
  if (launch.args.size() != callParameters.size()) {
    std::string list;
    for (size_t p : callParameters)
      list += fmt::format("{}{}", list.empty() ? "" : ", ", describe(parameters[p]));
    return report(launch.path + ".args",
                  fmt::format("{} takes {} argument{} ({}), got {}", function,
                              callParameters.size(), callParameters.size() == 1 ? "" : "s", list,
                              launch.args.size()));
  }
  std::vector<ArgSpec> bound;
  for (size_t i = 0; i < callParameters.size(); ++i) {
    const interp::Parameter &p = parameters[callParameters[i]];
    const ArgSpec &a = launch.args[i];
    bool descriptorArg = a.kind == ArgKind::Descriptor;
    if (p.isPointer && a.kind == ArgKind::Scalar)
      return report(a.path, fmt::format("parameter '{}' is a {} {}; expected {}, got a {} scalar",
                                        p.name, p.descriptorRank ? "tensor descriptor of" : "pointer to",
                                        name(p.dtype),
                                        p.descriptorRank ? "{\"tensordesc\": name, ...}"
                                                         : "a buffer name or a view",
                                        name(a.scalar.dtype)));
    if (!p.isPointer && a.kind != ArgKind::Scalar)
      return report(a.path,
                    fmt::format("parameter '{}' is a scalar {}; expected {{\"{}\": "
                                "value}}, got {} '{}'",
                                p.name, name(p.dtype), name(p.dtype),
                                descriptorArg ? "a tensor descriptor of buffer" : "buffer",
                                spec.buffers[a.buffer].name));
    if (p.isPointer && (p.descriptorRank != 0) != descriptorArg)
      return report(a.path,
                    p.descriptorRank
                        ? fmt::format("parameter '{}' is a tensor descriptor; expected "
                                      "{{\"tensordesc\": \"{}\", ...}}, got a pointer",
                                      p.name, spec.buffers[a.buffer].name)
                        : fmt::format("parameter '{}' is a pointer; expected a buffer name or a "
                                      "view, got a tensor descriptor",
                                      p.name));
    if (p.isPointer && spec.buffers[a.buffer].dtype != p.dtype)
      return report(a.path, fmt::format("buffer '{}' has dtype {} but parameter '{}' {} {}",
                                        spec.buffers[a.buffer].name,
                                        name(spec.buffers[a.buffer].dtype), p.name,
                                        p.descriptorRank ? "describes" : "points to",
                                        name(p.dtype)));
    if (!p.isPointer && a.scalar.dtype != p.dtype)
      return report(a.path, fmt::format("scalar type {} does not match parameter '{}' of type {}",
                                        name(a.scalar.dtype), p.name, name(p.dtype)));
    bound.push_back(a);
    if (!p.descriptorRank)
      continue;
    if (a.shape.size() != p.descriptorRank)
      return report(a.path, fmt::format("parameter '{}' is a tensor descriptor of rank {}, but the "
                                        "descriptor has shape [{}]",
                                        p.name, p.descriptorRank, fmt::join(a.shape, ", ")));
    for (int strides = 0; strides < 2; ++strides)
      for (size_t d = 0; d < a.shape.size(); ++d) {
        ArgSpec value;
        value.kind = ArgKind::Scalar;
        value.path = fmt::format("{}.{}[{}]", a.path, strides ? "strides" : "shape", d);
        value.scalar.dtype = strides ? DType::I64 : DType::I32;
        value.scalar.integer = strides ? a.strides[d] : a.shape[d];
        bound.push_back(value);
      }
  }
  launch.args = std::move(bound);
  return true;
}

} // namespace ttinterp::driver
