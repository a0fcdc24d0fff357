//===- KernelParams.cpp - Typed values to the kernelParams array ----------===//
#include "ttinterp/cuda/KernelParams.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace ttinterp::cuda {

namespace {

// Rounds `value` to a binary format with `expBits` exponent and `manBits` stored mantissa bits,
// to nearest, ties to even, and returns its bits. Works from the double directly: going through
// float first could round twice.
uint16_t roundToSmallFloat(double value, int expBits, int manBits) {
  uint64_t d;
  std::memcpy(&d, &value, sizeof d);
  uint16_t sign = uint16_t((d >> 63) << (expBits + manBits));
  uint16_t expMask = uint16_t(((1u << expBits) - 1) << manBits);
  if (std::isnan(value))
    return uint16_t(sign | expMask | (1u << (manBits - 1))); // A quiet NaN.
  double a = std::fabs(value);
  if (std::isinf(a))
    return uint16_t(sign | expMask);
  if (a == 0)
    return sign;
  int bias = (1 << (expBits - 1)) - 1;
  int emin = 1 - bias;
  int e;
  std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1): the leading bit has weight 2^(e-1).
  int exponent = std::max(e - 1, emin);
  // Scaled so one unit is one step of the target format at this exponent: exact in double.
  double scaled = std::ldexp(a, manBits - exponent);
  double whole = std::floor(scaled);
  double frac = scaled - whole;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(whole, 2.0) != 0))
    whole += 1;
  uint64_t mantissa = uint64_t(whole);
  if (mantissa >= (uint64_t(2) << manBits)) { // Rounded up to the next binade.
    mantissa >>= 1;
    ++exponent;
  }
  uint64_t expField;
  if (mantissa < (uint64_t(1) << manBits)) {
    expField = 0; // Subnormal (exponent == emin).
  } else {
    expField = uint64_t(exponent + bias);
    mantissa -= uint64_t(1) << manBits;
  }
  if (expField >= (uint64_t(1) << expBits) - 1)
    return uint16_t(sign | expMask); // Overflow: infinity.
  return uint16_t(sign | (expField << manBits) | mantissa);
}

uint64_t widthMask(size_t bytes) {
  return bytes >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * bytes)) - 1;
}

const char *hiddenName(bool global) {
  return global ? "the hidden global-scratch pointer" : "the hidden profile-scratch pointer";
}

} // namespace

uint16_t roundToF16(double value) { return roundToSmallFloat(value, 5, 10); }
uint16_t roundToBF16(double value) { return roundToSmallFloat(value, 8, 7); }

size_t paramSize(DType type) {
  // Scalars travel in their own width; fp8 has no C ABI type, so it is not a parameter type.
  return isFP8(type) ? 0 : byteSize(type);
}

KernelArg KernelArg::integer(DType type, int64_t value) {
  if (type == DType::I1)
    return {type, value != 0 ? 1u : 0u};
  size_t size = paramSize(type);
  return {type, uint64_t(value) & widthMask(size ? size : 8)};
}

KernelArg KernelArg::real(DType type, double value) {
  switch (type) {
  case DType::F16:
    return {type, roundToF16(value)};
  case DType::BF16:
    return {type, roundToBF16(value)};
  case DType::F32: {
    float f = float(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return {type, bits};
  }
  default: {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return {type, bits};
  }
  }
}

KernelArg KernelArg::raw(DType type, uint64_t bits) {
  size_t size = paramSize(type);
  return {type, bits & widthMask(size ? size : 8)};
}

std::vector<void *> ParamPack::pointers() {
  std::vector<void *> out;
  out.reserve(slots_.size());
  uint8_t *base = reinterpret_cast<uint8_t *>(words_.data());
  for (const ParamSlot &slot : slots_)
    out.push_back(base + slot.offset);
  return out;
}

bool marshalParams(const std::vector<KernelArg> &args, const HiddenParams &hidden, ParamPack &out,
                   std::string &error) {
  struct Item {
    DType type;
    uint64_t bits;
    bool hidden;
  };
  std::vector<Item> items;
  items.reserve(args.size() + 2);
  for (size_t i = 0; i < args.size(); ++i) {
    if (paramSize(args[i].type) == 0) {
      error = fmt::format("argument {} has type {}, which cannot be a kernel parameter", i,
                          name(args[i].type));
      return false;
    }
    items.push_back({args[i].type, args[i].bits, false});
  }
  if (hidden.globalScratch)
    items.push_back({DType::Ptr, hidden.globalScratchPtr, true});
  if (hidden.profileScratch)
    items.push_back({DType::Ptr, hidden.profileScratchPtr, true});

  ParamPack pack;
  size_t offset = 0;
  for (const Item &item : items) {
    size_t size = paramSize(item.type);
    offset = (offset + size - 1) / size * size;
    pack.slots_.push_back({item.type, offset, size, item.hidden});
    offset += size;
  }
  pack.size_ = offset;
  pack.words_.assign((offset + 7) / 8, 0);
  uint8_t *base = reinterpret_cast<uint8_t *>(pack.words_.data());
  for (size_t i = 0; i < items.size(); ++i) {
    const ParamSlot &slot = pack.slots_[i];
    uint64_t bits = items[i].bits & widthMask(slot.size);
    // Little endian, as the GPU reads its parameter space.
    for (size_t b = 0; b < slot.size; ++b)
      base[slot.offset + b] = uint8_t(bits >> (8 * b));
  }
  out = std::move(pack);
  return true;
}

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '.';
}

// Bytes of a PTX fundamental type; 0 for anything else.
size_t ptxTypeSize(std::string_view t) {
  if (t == ".b8" || t == ".u8" || t == ".s8")
    return 1;
  if (t == ".b16" || t == ".u16" || t == ".s16" || t == ".f16" || t == ".bf16")
    return 2;
  if (t == ".b32" || t == ".u32" || t == ".s32" || t == ".f32" || t == ".f16x2" || t == ".bf16x2")
    return 4;
  if (t == ".b64" || t == ".u64" || t == ".s64" || t == ".f64")
    return 8;
  if (t == ".b128")
    return 16;
  return 0;
}

// Drops `//` and `/* */` comments so the parameter list splits cleanly on commas.
std::string stripComments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
      out += '\n';
    } else if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

} // namespace

bool parsePtxParams(std::string_view ptxText, std::string_view entry, std::vector<size_t> &sizes,
                    std::string &error) {
  std::string ptx = stripComments(ptxText);
  std::string_view text(ptx);
  size_t pos = 0;
  size_t open = std::string_view::npos;
  while ((pos = text.find(".entry", pos)) != std::string_view::npos) {
    size_t p = pos + 6;
    pos = p;
    if (p >= text.size() || !isSpace(text[p]))
      continue;
    while (p < text.size() && isSpace(text[p]))
      ++p;
    if (text.substr(p, entry.size()) != entry)
      continue;
    p += entry.size();
    if (p < text.size() && isIdentChar(text[p]))
      continue; // A longer name that starts with `entry`.
    while (p < text.size() && isSpace(text[p]))
      ++p;
    open = p;
    break;
  }
  if (open == std::string_view::npos) {
    error = fmt::format("the PTX has no .entry {}", entry);
    return false;
  }
  sizes.clear();
  if (open >= text.size() || text[open] != '(')
    return true; // `.entry k {`: no parameters.
  size_t close = text.find(')', open);
  if (close == std::string_view::npos) {
    error = fmt::format("the parameter list of .entry {} is not closed", entry);
    return false;
  }
  std::string_view list = text.substr(open + 1, close - open - 1);
  size_t index = 0;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view param = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    // Tokens: .param [.align N] .type [.ptr [.space] [.align N]] name[[count]]
    std::vector<std::string_view> tokens;
    for (size_t i = 0; i < param.size();) {
      while (i < param.size() && isSpace(param[i]))
        ++i;
      size_t start = i;
      while (i < param.size() && !isSpace(param[i]))
        ++i;
      if (i > start)
        tokens.push_back(param.substr(start, i - start));
    }
    if (tokens.empty() && list.empty() && index == 0)
      break; // `()`.
    if (tokens.size() < 2 || tokens[0] != ".param") {
      error = fmt::format("parameter {} of .entry {} is not a .param declaration: '{}'", index,
                          entry, param);
      return false;
    }
    size_t size = 0;
    for (size_t t = 1; t + 1 < tokens.size() && size == 0; ++t)
      size = ptxTypeSize(tokens[t]);
    if (size == 0) {
      error = fmt::format("parameter {} of .entry {} has no type this reader knows: '{}'", index,
                          entry, param);
      return false;
    }
    std::string_view name = tokens.back();
    if (size_t bracket = name.find('['); bracket != std::string_view::npos) {
      size_t count = 0;
      for (size_t i = bracket + 1; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i)
        count = count * 10 + size_t(name[i] - '0');
      size *= count;
    }
    sizes.push_back(size);
    ++index;
  }
  return true;
}

bool checkParams(const ParamPack &pack, const std::vector<size_t> &declared,
                 std::string_view kernel, std::string &error) {
  const std::vector<ParamSlot> &slots = pack.slots();
  size_t arguments = 0;
  bool global = false, profile = false;
  for (const ParamSlot &slot : slots) {
    if (!slot.hidden)
      ++arguments;
    else if (!global)
      global = true;
    else
      profile = true;
  }
  if (declared.size() != slots.size()) {
    std::string hidden = global && profile ? " and the two hidden scratch pointers"
                         : global          ? " and the hidden global-scratch pointer"
                                           : " and no hidden pointer";
    error = fmt::format("kernel '{}' declares {} parameters but the launch passes {}: {} "
                        "argument{}{}",
                        kernel, declared.size(), slots.size(), arguments, arguments == 1 ? "" : "s",
                        hidden);
    return false;
  }
  size_t hiddenSeen = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    const ParamSlot &slot = slots[i];
    if (declared[i] != slot.size) {
      std::string subject =
          slot.hidden ? hiddenName(hiddenSeen == 0) : fmt::format("argument {}", i);
      error = fmt::format("parameter {} of kernel '{}' is {} bytes, but {} is {} ({} bytes)", i,
                          kernel, declared[i], subject, name(slot.type), slot.size);
      return false;
    }
    hiddenSeen += slot.hidden;
  }
  return true;
}

} // namespace ttinterp::cuda
