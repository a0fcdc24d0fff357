//===- TestSupport.cpp - Example specs, .npy files and the fake driver for the cuda tests ===//
#include "TestSupport.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

namespace ttinterp::cuda::test {

using nlohmann::json;

std::string examplePath(const std::string &relative) {
  // A test binary carried to another machine (a GPU box) finds the checkout there.
  const char *root = std::getenv("TTINTERP_SOURCE_DIR");
  return std::string(root && *root ? root : TTINTERP_SOURCE_DIR) + "/examples/" + relative;
}

std::vector<std::string> exampleNames() {
  std::vector<std::string> names;
  std::string root = examplePath("");
  if (DIR *dir = opendir(root.c_str())) {
    while (dirent *entry = readdir(dir)) {
      std::string name = entry->d_name;
      struct stat st;
      if (name[0] != '.' && stat((root + name + "/" + name + ".json").c_str(), &st) == 0)
        names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool readNpy(const std::string &path, Npy &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    error = path + ": cannot read";
    return false;
  }
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) {
    error = path + ": not a .npy file";
    return false;
  }
  int major = uint8_t(data[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = uint8_t(data[8]) | size_t(uint8_t(data[9])) << 8;
    headerStart = 10;
  } else {
    if (data.size() < 12) {
      error = path + ": truncated";
      return false;
    }
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= size_t(uint8_t(data[8 + i])) << (8 * i);
    headerStart = 12;
  }
  if (headerStart + headerLength > data.size()) {
    error = path + ": truncated header";
    return false;
  }
  std::string header = data.substr(headerStart, headerLength);
  auto quoted = [&](const std::string &key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      return {};
    size_t a = header.find('\'', header.find(':', k) + 1);
    size_t b = header.find('\'', a + 1);
    return header.substr(a + 1, b - a - 1);
  };
  out.descr = quoted("descr");
  if (header.find("'fortran_order': False") == std::string::npos) {
    error = path + ": only C-order arrays are supported";
    return false;
  }
  size_t s = header.find("'shape'");
  size_t open = header.find('(', s), close = header.find(')', open);
  out.shape.clear();
  std::string dims = header.substr(open + 1, close - open - 1);
  for (size_t i = 0; i < dims.size();) {
    while (i < dims.size() && (dims[i] < '0' || dims[i] > '9'))
      ++i;
    if (i >= dims.size())
      break;
    int64_t v = 0;
    while (i < dims.size() && dims[i] >= '0' && dims[i] <= '9')
      v = v * 10 + (dims[i++] - '0');
    out.shape.push_back(v);
  }
  out.bytes.assign(data.begin() + long(headerStart + headerLength), data.end());
  return true;
}

namespace {

std::string folderOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

} // namespace

bool readSpec(const std::string &path, Spec &out, std::string &error) {
  json root = json::parse(readText(path), nullptr, false);
  if (root.is_discarded() || !root.is_object()) {
    error = path + ": not a JSON object";
    return false;
  }
  Spec spec;
  std::string folder = folderOf(path);
  for (const auto &[name, b] : root["buffers"].items()) {
    SpecBuffer buffer;
    buffer.name = name;
    auto dtype = parseDType(b.value("dtype", ""));
    if (!dtype) {
      error = fmt::format("{}: buffer {}: unknown dtype", path, name);
      return false;
    }
    buffer.dtype = *dtype;
    for (const json &d : b["shape"]) {
      buffer.shape.push_back(d.get<int64_t>());
      buffer.elements *= d.get<int64_t>();
    }
    const json &init = b["init"];
    if (init.is_string() && init == "zeros") {
      buffer.init = SpecBuffer::Init::Zeros;
    } else if (init.is_object() && init.contains("fill")) {
      buffer.init = SpecBuffer::Init::Fill;
      buffer.fill = init["fill"].get<double>();
    } else if (init.is_object() && init.contains("npy")) {
      buffer.init = SpecBuffer::Init::Npy;
      buffer.npyPath = folder + "/" + init["npy"].get<std::string>();
    } else {
      error = fmt::format("{}: buffer {}: init {} is not supported by this test", path, name,
                          init.dump());
      return false;
    }
    spec.buffers.push_back(buffer);
  }
  for (const json &l : root["launches"]) {
    SpecLaunch launch;
    launch.function = l.value("function", "");
    const json &grid = l["grid"];
    for (size_t i = 0; i < grid.size() && i < 3; ++i)
      launch.grid[i] = grid[i].get<uint32_t>();
    for (const json &a : l["args"]) {
      SpecArg arg;
      if (a.is_string()) {
        auto it = std::find_if(spec.buffers.begin(), spec.buffers.end(),
                               [&](const SpecBuffer &b) { return b.name == a; });
        if (it == spec.buffers.end()) {
          error = fmt::format("{}: unknown buffer {}", path, a.dump());
          return false;
        }
        arg.buffer = int(it - spec.buffers.begin());
      } else if (a.is_object() && a.size() == 1) {
        auto dtype = parseDType(a.begin().key());
        if (!dtype) {
          error = fmt::format("{}: unsupported argument {}", path, a.dump());
          return false;
        }
        arg.scalar = isFloat(*dtype) ? KernelArg::real(*dtype, a.begin()->get<double>())
                                     : KernelArg::integer(*dtype, a.begin()->get<int64_t>());
      } else {
        error = fmt::format("{}: unsupported argument {}", path, a.dump());
        return false;
      }
      launch.args.push_back(arg);
    }
    spec.launches.push_back(launch);
  }
  out = std::move(spec);
  return true;
}

bool gpuOrSkip() {
  std::string why;
  if (available(why))
    return true;
  // The marker SkipGpuTests.cmake matches; printed directly so it shows whatever the reporter.
  std::cout << "[ttinterp-cuda] SKIPPED (needs a CUDA GPU): " << why << std::endl;
  MESSAGE("skipped: " << why);
  return false;
}

#ifdef TTINTERP_FAKE_LIBCUDA
Fake::Fake(const char *path) {
  handle_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(handle_ != nullptr, "cannot load the fake libcuda " << path);
  auto get = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle_, name));
    bool found = fn != nullptr;
    REQUIRE_MESSAGE(found, "the fake libcuda lacks " << name);
  };
  get(reset, "ttfake_reset");
  get(setInitResult, "ttfake_set_init_result");
  get(setDeviceCount, "ttfake_set_device_count");
  get(setLaunchResult, "ttfake_set_launch_result");
  get(setSyncResult, "ttfake_set_sync_result");
  get(setMemoryLimit, "ttfake_set_memory_limit");
  get(setParamSizes, "ttfake_set_param_sizes");
  get(lastLaunch, "ttfake_last_launch");
  get(maxDynamicShared, "ttfake_max_dynamic_shared");
  get(liveModules, "ttfake_live_modules");
  get(liveAllocations, "ttfake_live_allocations");
  get(setCapability, "ttfake_set_capability");
  reset();
}

Fake::~Fake() {
  if (handle_)
    dlclose(handle_);
}

TtFakeLaunch Fake::launch() const {
  TtFakeLaunch l;
  lastLaunch(&l);
  return l;
}
#endif

} // namespace ttinterp::cuda::test
