//===- Fixtures.h - Running tests/data/kernels specs through the C++ API --===//
//
// A spec names buffers (dtype, shape, init: "zeros", "arange", {"fill": v},
// {"npy": file}) and launches (kernel, function, grid, args: buffer names or
// {"i32"|"i64"|"f32": v}, {"tensordesc": ...}). runSpec builds the buffers, lowers and runs each
// launch and steps the session; the tests compare the buffers with the
// fixture's numpy expectations with the tolerances its README gives.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Harness.h"
#include "Npy.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace ttinterp::test {

/// One buffer of a spec: raw little-endian elements.
struct Buffer {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  template <class T> T at(int64_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
};

inline NpyArray loadNpy(const std::string &path, DType dtype) {
  NpyArray a;
  std::string error;
  REQUIRE_MESSAGE(readNpy(path, dtype, a, error), error);
  return a;
}

struct SpecRun {
  std::map<std::string, Buffer> buffers;
  std::optional<interp::Fault> fault;
};

/// Runs every launch of `dir/specName`. `initOverride` replaces a buffer's npy
/// init (relative to dir); `printStream` receives tt.print output.
/// C-contiguous strides (in elements) of `shape`.
inline std::vector<int64_t> rowMajor(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[size_t(i)] = strides[size_t(i) + 1] * shape[size_t(i) + 1];
  return strides;
}

inline SpecRun runSpec(const std::string &dir, const std::string &specName, unsigned threads = 1,
                       const std::map<std::string, std::string> &initOverride = {},
                       std::ostream *printStream = nullptr) {
  std::ifstream specFile(dir + "/" + specName);
  REQUIRE_MESSAGE(specFile, (dir + "/" + specName));
  nlohmann::json spec = nlohmann::json::parse(specFile);
  SpecRun run;
  for (const auto &[name, desc] : spec["buffers"].items()) {
    Buffer b;
    std::optional<DType> dtype = parseDType(desc["dtype"].get<std::string>());
    REQUIRE(dtype);
    b.dtype = *dtype;
    b.shape = desc["shape"].get<std::vector<int64_t>>();
    size_t size = byteSize(b.dtype);
    b.bytes.assign(size_t(b.numel()) * size, 0);
    const nlohmann::json &init = desc["init"];
    auto fill = [&](auto value) {
      for (int64_t i = 0; i < b.numel(); ++i)
        std::memcpy(b.bytes.data() + i * size, &value, size);
    };
    auto fillValue = [&](double v) {
      switch (b.dtype) {
      case DType::I32:
        fill(int32_t(v));
        break;
      case DType::I64:
        fill(int64_t(v));
        break;
      case DType::F32:
        fill(float(v));
        break;
      case DType::F64:
        fill(v);
        break;
      default:
        FAIL("unsupported fill dtype");
      }
    };
    if (initOverride.count(name)) {
      b.bytes = loadNpy(dir + "/" + initOverride.at(name), b.dtype).bytes;
    } else if (init.is_string() && init == "arange") {
      for (int64_t i = 0; i < b.numel(); ++i) {
        if (b.dtype == DType::I32) {
          int32_t v = int32_t(i);
          std::memcpy(b.bytes.data() + i * 4, &v, 4);
        } else {
          REQUIRE(b.dtype == DType::F32);
          float v = float(i);
          std::memcpy(b.bytes.data() + i * 4, &v, 4);
        }
      }
    } else if (init.is_object() && init.contains("npy")) {
      b.bytes = loadNpy(dir + "/" + init["npy"].get<std::string>(), b.dtype).bytes;
    } else if (init.is_object() && init.contains("fill")) {
      fillValue(init["fill"].get<double>());
    } else {
      REQUIRE(init == "zeros");
    }
    REQUIRE(b.bytes.size() == size_t(b.numel()) * size);
    run.buffers[name] = std::move(b);
  }
  for (const nlohmann::json &launchSpec : spec["launches"]) {
    LoadedKernel k = loadKernel(dir + "/" + launchSpec["kernel"].get<std::string>(), true,
                                launchSpec["function"].get<std::string>());
    REQUIRE_MESSAGE(k.kernel, k.error);
    std::vector<PointerArgument> pointers;
    std::vector<interp::ArgumentValue> args;
    for (const nlohmann::json &arg : launchSpec["args"]) {
      if (arg.is_string()) {
        std::string name = arg.get<std::string>();
        Buffer &b = run.buffers.at(name);
        View view;
        view.address = reinterpret_cast<uint64_t>(b.bytes.data());
        view.dtype = b.dtype;
        view.shape = b.shape;
        view.strides = rowMajor(view.shape);
        args.push_back(ptrArg(uint32_t(pointers.size())));
        pointers.push_back(pointer(name, view));
      } else if (arg.contains("tensordesc")) {
        // A host tensor descriptor, bound as the C++ API takes it: a pointer
        // argument for its view, the padding in the descriptor's own value,
        // then its shape and strides as the scalar parameters after it.
        std::string name = arg["tensordesc"].get<std::string>();
        Buffer &b = run.buffers.at(name);
        View view;
        view.dtype = b.dtype;
        view.shape = arg.value("shape", b.shape);
        view.strides = arg.value("strides", rowMajor(view.shape));
        view.address = reinterpret_cast<uint64_t>(b.bytes.data()) +
                       uint64_t(arg.value("offset", int64_t(0))) * byteSize(b.dtype);
        interp::ArgumentValue descriptor = ptrArg(uint32_t(pointers.size()));
        descriptor.integer = arg.value("padding", std::string("zero")) == "nan";
        args.push_back(descriptor);
        pointers.push_back(pointer(name, view));
        for (int64_t size : view.shape)
          args.push_back(intArg(size));
        for (int64_t stride : view.strides)
          args.push_back(intArg(stride));
      } else if (arg.contains("f32")) {
        args.push_back(floatArg(arg["f32"].get<double>()));
      } else {
        REQUIRE((arg.contains("i32") || arg.contains("i64")));
        args.push_back(intArg((arg.contains("i32") ? arg["i32"] : arg["i64"]).get<int64_t>()));
      }
    }
    std::array<int64_t, 3> grid = {1, 1, 1};
    std::vector<int64_t> g = launchSpec["grid"].get<std::vector<int64_t>>();
    std::copy(g.begin(), g.end(), grid.begin());
    Session session;
    LaunchMemory memory;
    std::string error;
    REQUIRE_MESSAGE(session.prepare(withKernelAccess(*k.kernel, pointers, args), memory, error),
                    error);
    interp::LaunchOptions options;
    options.grid = grid;
    options.threads = threads;
    options.printStream = printStream;
    run.fault = k.kernel->run(args, memory, options);
    if (run.fault) {
      session.abandon();
      return run;
    }
    REQUIRE_MESSAGE(session.step(error), error);
  }
  return run;
}

/// The expected contents of a buffer.
inline NpyArray expected(const std::string &dir, const std::string &folder, const std::string &name,
                         DType dtype) {
  return loadNpy(dir + "/" + folder + "/" + name + ".npy", dtype);
}

/// Distance in units in the last place between two finite floats of one sign class.
inline int64_t ulpDistance(float a, float b) {
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? int64_t(int32_t(0x80000000) - i) : int64_t(i);
  };
  return std::llabs(key(a) - key(b));
}

/// Compares every element bit for bit (floats: NaN equals NaN).
inline void checkExact(const Buffer &got, const NpyArray &want, const std::string &what) {
  INFO(what);
  REQUIRE(got.bytes.size() == want.bytes.size());
  size_t size = byteSize(got.dtype);
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    bool same = std::memcmp(got.bytes.data() + i * size, want.bytes.data() + i * size, size) == 0;
    if (!same && got.dtype == DType::F32) {
      float a = got.at<float>(i), b;
      std::memcpy(&b, want.bytes.data() + i * 4, 4);
      same = std::isnan(a) && std::isnan(b);
    }
    if (!same && first < 0)
      first = i;
    mismatches += !same;
  }
  INFO("first mismatch at element " << first);
  CHECK(mismatches == 0);
}

} // namespace ttinterp::test
