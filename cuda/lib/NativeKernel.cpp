//===- NativeKernel.cpp - Loading and launching Triton-compiled kernels ---===//
#include "ttinterp/cuda/NativeKernel.h"

#include "ttinterp/cuda/DeviceMemory.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

namespace ttinterp::cuda {

namespace {

// Without an opt-in, a block may use at most this much dynamic shared memory.
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;
// cuMemAlloc returns addresses aligned at least this much.
constexpr uint64_t kAllocAlignment = 256;

enum class ImageKind { Elf, Fatbin, Ptx, Unknown };

ImageKind classify(const std::vector<char> &image) {
  const char elfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (image.size() >= 4 && std::memcmp(image.data(), elfMagic, 4) == 0)
    return ImageKind::Elf;
  // The fatbin magic 0xBA55ED50, little endian.
  if (image.size() >= 4 && std::memcmp(image.data(), "\x50\xed\x55\xba", 4) == 0)
    return ImageKind::Fatbin;
  std::string_view text(image.data(), image.size());
  if (text.find(".entry") != std::string_view::npos &&
      text.find(".version") != std::string_view::npos)
    return ImageKind::Ptx;
  return ImageKind::Unknown;
}

bool readFile(const std::string &path, std::vector<char> &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot open ({})", path, std::strerror(errno));
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = fmt::format("{}: read error", path);
    return false;
  }
  return true;
}

std::string dims(const std::array<uint32_t, 3> &d) {
  return fmt::format("({}, {}, {})", d[0], d[1], d[2]);
}

// A zero-filled scratch area of `bytes` at `align`: Triton leaves it uninitialised, but zeros
// make runs repeatable.
bool allocateScratch(Driver &driver, int device, uint64_t bytes, uint64_t align,
                     std::optional<DeviceBuffer> &buffer, uint64_t &pointer, std::string &error) {
  uint64_t slack = align > kAllocAlignment ? align - 1 : 0;
  buffer = DeviceBuffer::allocate(bytes + slack, error, device, driver);
  if (!buffer || !buffer->fill(0, error))
    return false;
  pointer = (buffer->address() + align - 1) / align * align;
  return true;
}

} // namespace

bool planLaunch(const KernelMetadata &meta, const std::array<uint32_t, 3> &grid, LaunchPlan &out,
                std::string &error) {
  LaunchPlan plan;
  plan.programs = uint64_t(grid[0]) * grid[1] * grid[2];
  std::array<uint32_t, 3> cluster = {1, 1, 1};
  if (meta.numCtas > 1)
    cluster = meta.hasClusterDims ? meta.clusterDims : std::array<uint32_t, 3>{meta.numCtas, 1, 1};
  uint64_t blocks[3];
  for (int i = 0; i < 3; ++i)
    blocks[i] = uint64_t(grid[i]) * cluster[i];
  if (blocks[0] > 0x7fffffff || blocks[1] > 65535 || blocks[2] > 65535) {
    error = fmt::format("grid {} is ({}, {}, {}) blocks, beyond CUDA's limits (x < 2^31, y and z "
                        "<= 65535)",
                        dims(grid), blocks[0], blocks[1], blocks[2]);
    return false;
  }
  plan.config.grid = {uint32_t(blocks[0]), uint32_t(blocks[1]), uint32_t(blocks[2])};
  plan.config.block = {meta.threadsPerBlock(), 1, 1};
  plan.config.sharedBytes = meta.shared;
  plan.config.cluster = cluster;
  plan.config.cooperative = meta.launchCooperativeGrid;
  plan.config.programmaticPdl = meta.launchPdl;

  uint64_t ctas = plan.programs * meta.numCtas;
  auto scratch = [&](uint64_t size, const char *what, uint64_t &bytes) {
    if (size != 0 && ctas > UINT64_MAX / size) {
      error = fmt::format("the {} scratch of grid {} ({} CTAs of {} bytes) overflows", what,
                          dims(grid), ctas, size);
      return false;
    }
    bytes = ctas * size;
    return true;
  };
  if (!scratch(meta.globalScratchSize, "global", plan.globalScratchBytes) ||
      !scratch(meta.profileScratchSize, "profile", plan.profileScratchBytes))
    return false;
  plan.globalScratchAlign = meta.globalScratchAlign;
  plan.profileScratchAlign = meta.profileScratchAlign;
  out = plan;
  return true;
}

std::unique_ptr<NativeKernel> NativeKernel::load(const std::string &binaryPath,
                                                 const std::string &metadataPath,
                                                 std::string &error, int device, Driver &driver) {
  KernelMetadata meta;
  if (!loadKernelMetadata(metadataPath, meta, error))
    return nullptr;
  std::vector<char> image;
  if (!readFile(binaryPath, image, error))
    return nullptr;
  return create(std::move(image), binaryPath, std::move(meta), error, device, driver);
}

std::unique_ptr<NativeKernel> NativeKernel::create(std::vector<char> image, std::string imageName,
                                                   KernelMetadata metadata, std::string &error,
                                                   int device, Driver &driver) {
  std::unique_ptr<NativeKernel> kernel(new NativeKernel());
  kernel->driver_ = &driver;
  kernel->device_ = device;
  kernel->meta_ = std::move(metadata);
  kernel->imageName_ = std::move(imageName);
  const KernelMetadata &meta = kernel->meta_;
  const std::string &where = kernel->imageName_;

  ImageKind kind = classify(image);
  if (kind == ImageKind::Unknown) {
    error = fmt::format("{}: neither a cubin, a fatbin nor PTX", where);
    return nullptr;
  }
  kernel->isPtx_ = kind == ImageKind::Ptx;
  if (kernel->isPtx_) {
    // The JIT reads a C string; the declared parameters come from the text itself.
    if (image.empty() || image.back() != '\0')
      image.push_back('\0');
    std::string why;
    if (!parsePtxParams(std::string_view(image.data()), meta.name, kernel->declared_, why)) {
      error = fmt::format("{}: {}", where, why);
      return nullptr;
    }
    kernel->paramsKnown_ = true;
  }

  std::string why;
  if (!driver.loadModule(device, image.data(), kernel->isPtx_, kernel->module_, why)) {
    error = fmt::format("{}: {}", where, why);
    // Name the likely cause when the kernel was built for another architecture.
    int major = 0, minor = 0;
    std::string ignored;
    if (!meta.arch.empty() && driver.computeCapability(device, major, minor, ignored) &&
        meta.arch.rfind(std::to_string(major * 10 + minor), 0) != 0)
      error += fmt::format(" (the kernel targets sm_{}; cuda:{} is sm_{}{})", meta.arch, device,
                           major, minor);
    return nullptr;
  }
  if (!driver.getFunction(kernel->module_, meta.name, kernel->function_, why)) {
    error = fmt::format("{}: kernel '{}' named by the metadata is not in the image: {}", where,
                        meta.name, why);
    return nullptr;
  }
  if (meta.shared > kDefaultSharedLimit &&
      !driver.setMaxDynamicShared(kernel->function_, meta.shared, why)) {
    error = fmt::format("{}: kernel '{}' needs {} bytes of shared memory: {}", where, meta.name,
                        meta.shared, why);
    return nullptr;
  }
  if (!kernel->isPtx_) {
    std::vector<DriverParam> layout;
    if (driver.paramLayout(kernel->function_, layout, why)) {
      for (const DriverParam &p : layout)
        kernel->declared_.push_back(p.size);
      kernel->paramsKnown_ = true;
    }
  }
  return kernel;
}

NativeKernel::~NativeKernel() {
  if (module_) {
    std::string ignored;
    driver_->unloadModule(device_, module_, ignored);
  }
}

bool NativeKernel::launch(const std::array<uint32_t, 3> &grid, const std::vector<KernelArg> &args,
                          std::string &error) {
  std::string why;
  LaunchPlan plan;
  if (!planLaunch(meta_, grid, plan, why)) {
    error = fmt::format("kernel '{}': {}", meta_.name, why);
    return false;
  }
  if (plan.programs == 0)
    return true; // As Triton: an empty grid launches nothing.

  HiddenParams hidden;
  hidden.globalScratch = meta_.globalScratchParam;
  hidden.profileScratch = meta_.profileScratchParam;
  std::optional<DeviceBuffer> globalScratch, profileScratch;
  if (plan.globalScratchBytes > 0 &&
      !allocateScratch(*driver_, device_, plan.globalScratchBytes, plan.globalScratchAlign,
                       globalScratch, hidden.globalScratchPtr, why)) {
    error = fmt::format("kernel '{}': global scratch of {} bytes: {}", meta_.name,
                        plan.globalScratchBytes, why);
    return false;
  }
  if (plan.profileScratchBytes > 0 &&
      !allocateScratch(*driver_, device_, plan.profileScratchBytes, plan.profileScratchAlign,
                       profileScratch, hidden.profileScratchPtr, why)) {
    error = fmt::format("kernel '{}': profile scratch of {} bytes: {}", meta_.name,
                        plan.profileScratchBytes, why);
    return false;
  }

  ParamPack pack;
  if (!marshalParams(args, hidden, pack, why)) {
    error = fmt::format("kernel '{}': {}", meta_.name, why);
    return false;
  }
  if (paramsKnown_ && !checkParams(pack, declared_, meta_.name, error))
    return false;
  std::vector<void *> pointers = pack.pointers();
  if (!driver_->launch(device_, function_, plan.config, pointers.data(), why)) {
    error = fmt::format("kernel '{}' could not be launched: {}", meta_.name, why);
    return false;
  }
  if (!driver_->synchronize(device_, why)) {
    error =
        fmt::format("kernel '{}' failed while running on grid {}: {}", meta_.name, dims(grid), why);
    return false;
  }
  return true;
}

} // namespace ttinterp::cuda
