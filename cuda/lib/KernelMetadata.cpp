//===- KernelMetadata.cpp - Reading Triton's {name}.json ------------------===//
#include "ttinterp/cuda/KernelMetadata.h"
#include "ttinterp/cuda/JsonLimits.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ttinterp::cuda {

using nlohmann::json;

namespace {

// Reads the integers of the metadata without letting nlohmann throw on a wrong type.
class Fields {
public:
  Fields(const json &object, std::string_view source, std::string &error)
      : object_(object), source_(source), error_(error) {}

  bool has(const char *key) const {
    auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }

  bool unsignedField(const char *key, bool required, uint64_t max, uint64_t &out) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      if (required)
        return fail(fmt::format("missing required field '{}'", key));
      return true;
    }
    if (!it->is_number_integer() || (!it->is_number_unsigned() && it->get<int64_t>() < 0))
      return fail(
          fmt::format("field '{}' must be a non-negative integer, got {}", key, it->dump()));
    uint64_t value = it->get<uint64_t>();
    if (value > max)
      return fail(
          fmt::format("field '{}' is {}, above the largest supported value {}", key, value, max));
    out = value;
    return true;
  }

  bool u32Field(const char *key, bool required, uint32_t &out) {
    uint64_t value = out;
    if (!unsignedField(key, required, UINT32_MAX, value))
      return false;
    out = uint32_t(value);
    return true;
  }

  bool stringField(const char *key, bool required, std::string &out) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) {
      if (required)
        return fail(fmt::format("missing required field '{}'", key));
      return true;
    }
    if (!it->is_string())
      return fail(fmt::format("field '{}' must be a string, got {}", key, it->dump()));
    out = it->get<std::string>();
    return true;
  }

  bool boolField(const char *key, bool &out) {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null())
      return true;
    if (!it->is_boolean())
      return fail(fmt::format("field '{}' must be true or false, got {}", key, it->dump()));
    out = it->get<bool>();
    return true;
  }

  bool fail(const std::string &message) {
    error_ = fmt::format("{}: {}", source_, message);
    return false;
  }

private:
  const json &object_;
  std::string_view source_;
  std::string &error_;
};

bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// `target` is an object {backend, arch, warp_size} (Triton 3.x) or the same three values as a
// list (a namedtuple dumped by older versions).
bool readTarget(const json &target, KernelMetadata &out, Fields &fields) {
  const json *backend = nullptr, *arch = nullptr, *warpSize = nullptr;
  if (target.is_object()) {
    auto get = [&](const char *key) -> const json * {
      auto it = target.find(key);
      return it == target.end() || it->is_null() ? nullptr : &*it;
    };
    backend = get("backend");
    arch = get("arch");
    warpSize = get("warp_size");
  } else if (target.is_array() && target.size() == 3) {
    backend = &target[0];
    arch = &target[1];
    warpSize = &target[2];
  } else {
    return fields.fail(fmt::format("field 'target' must be an object {{backend, arch, "
                                   "warp_size}}, got {}",
                                   target.dump()));
  }
  if (backend) {
    if (!backend->is_string())
      return fields.fail(fmt::format("target.backend must be a string, got {}", backend->dump()));
    out.backend = backend->get<std::string>();
    if (out.backend != "cuda")
      return fields.fail(
          fmt::format("the kernel was compiled for backend '{}', not 'cuda'", out.backend));
  }
  if (arch) {
    if (arch->is_number_integer())
      out.arch = std::to_string(arch->get<int64_t>());
    else if (arch->is_string())
      out.arch = arch->get<std::string>();
    else
      return fields.fail(
          fmt::format("target.arch must be a number or a string, got {}", arch->dump()));
  }
  if (warpSize) {
    if (!warpSize->is_number_integer() || warpSize->get<int64_t>() != 32)
      return fields.fail(fmt::format("target.warp_size is {}; NVIDIA GPUs have 32 threads per "
                                     "warp",
                                     warpSize->dump()));
  }
  return true;
}

} // namespace

std::optional<std::pair<int, int>> parseTritonVersion(std::string_view version) {
  int parts[2] = {0, 0};
  size_t i = 0;
  for (int k = 0; k < 2; ++k) {
    size_t start = i;
    long value = 0;
    while (i < version.size() && version[i] >= '0' && version[i] <= '9' && i - start < 6)
      value = value * 10 + (version[i++] - '0');
    if (i == start)
      return std::nullopt;
    parts[k] = int(value);
    if (k == 0) {
      if (i >= version.size() || version[i] != '.')
        return std::nullopt;
      ++i;
    }
  }
  return std::make_pair(parts[0], parts[1]);
}

bool parseKernelMetadata(std::string_view text, std::string_view source, KernelMetadata &out,
                         std::string &error) {
  if (jsonNestsDeeperThan(text)) {
    error = fmt::format("{}: the JSON nests arrays and objects more than {} deep", source,
                        kMaxJsonDepth);
    return false;
  }
  json root = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = fmt::format("{}: not valid JSON", source);
    return false;
  }
  if (!root.is_object()) {
    error = fmt::format("{}: the metadata must be a JSON object", source);
    return false;
  }
  KernelMetadata m;
  Fields f(root, source, error);
  if (!f.stringField("name", true, m.name))
    return false;
  if (m.name.empty())
    return f.fail("field 'name' is empty");
  if (!f.u32Field("num_warps", true, m.numWarps))
    return false;
  // A block holds at most 1024 threads.
  if (m.numWarps == 0 || m.numWarps > 32)
    return f.fail(fmt::format("num_warps is {}; a CUDA block holds 1 to 32 warps", m.numWarps));
  if (!f.u32Field("shared", true, m.shared) || !f.u32Field("num_ctas", false, m.numCtas))
    return false;
  if (m.numCtas == 0)
    return f.fail("num_ctas is 0");
  if (!f.unsignedField("global_scratch_size", false, UINT32_MAX, m.globalScratchSize) ||
      !f.unsignedField("global_scratch_align", false, UINT32_MAX, m.globalScratchAlign) ||
      !f.unsignedField("profile_scratch_size", false, UINT32_MAX, m.profileScratchSize) ||
      !f.unsignedField("profile_scratch_align", false, UINT32_MAX, m.profileScratchAlign))
    return false;
  if (!isPowerOfTwo(m.globalScratchAlign))
    return f.fail(
        fmt::format("global_scratch_align is {}, not a power of two", m.globalScratchAlign));
  if (!isPowerOfTwo(m.profileScratchAlign))
    return f.fail(
        fmt::format("profile_scratch_align is {}, not a power of two", m.profileScratchAlign));
  if (!f.stringField("triton_version", false, m.tritonVersion) ||
      !f.stringField("hash", false, m.hash) ||
      !f.boolField("launch_cooperative_grid", m.launchCooperativeGrid) ||
      !f.boolField("launch_pdl", m.launchPdl))
    return false;

  if (auto it = root.find("target"); it != root.end() && !it->is_null())
    if (!readTarget(*it, m, f))
      return false;
  // Older metadata names the backend only at the top level.
  if (m.backend.empty() && !f.stringField("backend_name", false, m.backend))
    return false;
  if (!m.backend.empty() && m.backend != "cuda")
    return f.fail(fmt::format("the kernel was compiled for backend '{}', not 'cuda'", m.backend));
  if (auto it = root.find("warp_size"); it != root.end() && !it->is_null())
    if (!it->is_number_integer() || it->get<int64_t>() != 32)
      return f.fail(
          fmt::format("warp_size is {}; NVIDIA GPUs have 32 threads per warp", it->dump()));

  if (auto it = root.find("cluster_dims"); it != root.end() && !it->is_null()) {
    bool ok = it->is_array() && it->size() == 3;
    for (size_t i = 0; ok && i < 3; ++i) {
      const json &d = (*it)[i];
      ok = d.is_number_integer() && d.get<int64_t>() >= 1 && d.get<int64_t>() <= 65535;
      if (ok)
        m.clusterDims[i] = uint32_t(d.get<int64_t>());
    }
    if (!ok)
      return f.fail(
          fmt::format("cluster_dims must be three positive integers, got {}", it->dump()));
    m.hasClusterDims = true;
  }

  if (auto version = parseTritonVersion(m.tritonVersion)) {
    m.globalScratchParam = *version >= std::make_pair(3, 2);
    m.profileScratchParam = *version >= std::make_pair(3, 5);
  } else {
    m.globalScratchParam = root.contains("global_scratch_size");
    m.profileScratchParam = root.contains("profile_scratch_size");
  }
  if (m.globalScratchSize > 0 && !m.globalScratchParam)
    return f.fail(fmt::format("global_scratch_size is {} but Triton {} passes no global-scratch "
                              "pointer",
                              m.globalScratchSize, m.tritonVersion));
  if (m.profileScratchSize > 0 && !m.profileScratchParam)
    return f.fail(fmt::format("profile_scratch_size is {} but Triton {} passes no "
                              "profile-scratch pointer",
                              m.profileScratchSize, m.tritonVersion));
  out = std::move(m);
  return true;
}

bool loadKernelMetadata(const std::string &path, KernelMetadata &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot open ({})", path, std::strerror(errno));
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    error = fmt::format("{}: read error", path);
    return false;
  }
  return parseKernelMetadata(text.str(), path, out, error);
}

} // namespace ttinterp::cuda
