//===- fuzz_spec.cpp - libFuzzer target: run specs, parsed, bound and run ----===//
//
// The input is a spec (docs/spec.md). Three stages, each further only when the one before
// accepted the input:
//   1. parseSpec: accepts, or refuses with one line of error.
//   2. bindArguments against parameters made to match each launch's arguments (must bind),
//      and against the same list short of one parameter (must be refused).
//   3. The whole of `ttinterp run` (driver::runSpec, or `check` for some inputs) when the
//      buffers are small and every path stays inside a sandbox: a folder in /dev/shm whose
//      entries link to each folder of examples/ and tests/data/kernels/, so the seeds (their
//      specs with paths prefixed by the folder name) load real kernels and .npy inputs.
//      It must end with status 0, 1 (fault) or 2 (bad input), the latter two with a message.
// Run options (threads, bounds, in-place, hazards, program order) come from the input's
// hash, so a saved input reproduces with the same ones.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "Driver.h"
#include "Spec.h"

#include "ttinterp/interp/Interpreter.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace ttinterp;
using namespace ttinterp::driver;
namespace fs = std::filesystem;

namespace {

/// Runs of the whole driver are for specs this small (all buffers' bytes together).
constexpr uint64_t kMaxRunBytes = 1 << 20;
/// ... and launches of at most this many programs.
constexpr int64_t kMaxRunPrograms = 64;
constexpr uint64_t kMaxSteps = 20000;

fs::path sandbox;

void removeSandbox() {
  std::error_code ec;
  fs::remove_all(sandbox, ec); // the links only: remove_all does not follow them
}

/// Whether `path` (resolved by the spec against the sandbox) names a file under it.
bool insideSandbox(const std::string &path) {
  if (path.empty())
    return true;
  std::string root = sandbox.string() + "/";
  return path.compare(0, root.size(), root) == 0;
}

/// Parameters that `launch`'s arguments bind to as written.
std::vector<interp::Parameter> matchingParameters(const Spec &spec, const LaunchSpec &launch) {
  std::vector<interp::Parameter> params;
  for (const ArgSpec &a : launch.args) {
    interp::Parameter p;
    p.name = "p" + std::to_string(params.size());
    if (a.kind == ArgKind::Scalar) {
      p.dtype = a.scalar.dtype;
      params.push_back(p);
      continue;
    }
    p.isPointer = true;
    p.dtype = spec.buffers[a.buffer].dtype;
    p.access = Access::ReadWrite;
    if (a.kind != ArgKind::Descriptor) {
      params.push_back(p);
      continue;
    }
    p.descriptorRank = unsigned(a.shape.size());
    p.blockShape.assign(a.shape.size(), 16);
    params.push_back(p);
    for (int strides = 0; strides < 2; ++strides)
      for (size_t d = 0; d < a.shape.size(); ++d) {
        interp::Parameter value;
        value.name = "p" + std::to_string(params.size());
        value.dtype = strides ? DType::I64 : DType::I32;
        params.push_back(value);
      }
  }
  return params;
}

void checkOneLine(const std::string &error, const char *stage) {
  if (error.empty())
    fuzz::invariantBroken(stage, "failed without a message");
  if (error.find('\n') != std::string::npos)
    fuzz::invariantBroken(stage, ("gave an error of several lines:\n" + error).c_str());
}

bool runnable(const Spec &spec) {
  uint64_t bytes = 0;
  for (const BufferSpec &b : spec.buffers) {
    if (b.aliasOf)
      continue;
    bytes += b.byteSize;
    if (bytes > kMaxRunBytes || (b.init == InitKind::Npy && !insideSandbox(b.npyPath)))
      return false;
  }
  for (const LaunchSpec &l : spec.launches) {
    if (l.kind != StepKind::Launch)
      continue;
    int64_t programs = 1;
    for (int64_t g : l.grid)
      if (g < 0 || __builtin_mul_overflow(programs, g, &programs))
        return false;
    if (programs > kMaxRunPrograms || !insideSandbox(l.kernelPath) ||
        !insideSandbox(l.nativePath) || !insideSandbox(l.metadataPath))
      return false;
  }
  return true;
}

void runDriver(std::string_view text, uint64_t choice) {
  fs::path specPath = sandbox / "spec.json";
  {
    std::ofstream out(specPath, std::ios::binary | std::ios::trunc);
    out.write(text.data(), std::streamsize(text.size()));
  }
  RunOptions options;
  options.quiet = choice & 1;
  options.threads = (choice >> 1) & 1 ? 2 : 1;
  options.maxSteps = kMaxSteps;
  options.bounds = (choice >> 2) & 1 ? BoundsMode::Region : BoundsMode::Argument;
  options.inPlace = ((choice >> 3) & 7) == 0;
  options.hazards = ((choice >> 6) & 3) == 0;
  options.order = interp::LaunchOptions::Order((choice >> 8) % 3);
  options.shuffleSeed = choice >> 16;
  if ((choice >> 10) & 1)
    options.outDir = (sandbox / "out").string();
  if ((choice >> 11) & 1)
    options.reportPath = (sandbox / "report.json").string();
  std::vector<RunOptions::FinalBuffer> finals;
  if ((choice >> 12) & 1)
    options.finalBuffers = &finals;
  bool check = ((choice >> 13) & 7) == 0;

  fuzz::NullStream out;
  std::ostringstream err;
  int status = check ? checkSpec(specPath.string(), options, out, err)
                     : runSpec(specPath.string(), options, out, err);
  if (status != kExitOk && status != kExitFault && status != kExitBadInput)
    fuzz::invariantBroken("the driver returned an unknown status");
  if (status != kExitOk && err.str().empty())
    fuzz::invariantBroken("the driver failed without a message");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // fuzz_ttir covers compiled chains; here no compiler thread changes coverage under an input.
  interp::setChainCompilation(interp::ChainCompilation::Off);
  // /dev/shm keeps the per-input spec file and outputs off the disk.
  fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
  sandbox = base / ("ttinterp-fuzz-spec-" + std::to_string(getpid()));
  removeSandbox();
  fs::create_directories(sandbox);
  for (const char *folder : {"examples", "tests/data/kernels"})
    for (const fs::directory_entry &e :
         fs::directory_iterator(fs::path(TTINTERP_SOURCE_DIR) / folder))
      if (e.is_directory())
        fs::create_directory_symlink(e.path(), sandbox / e.path().filename());
  std::atexit(removeSandbox);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  uint64_t choice = fuzz::hashBytes(data, size);
  try {
    std::string error;
    std::optional<Spec> spec = parseSpec(text, "spec.json", sandbox.string(), error);
    if (!spec) {
      checkOneLine(error, "parseSpec");
      return 0;
    }
    for (const LaunchSpec &launch : spec->launches) {
      if (launch.kind != StepKind::Launch)
        continue;
      std::vector<interp::Parameter> params = matchingParameters(*spec, launch);
      LaunchSpec bound = launch;
      if (!bindArguments(*spec, bound, "k", params, error))
        fuzz::invariantBroken("bindArguments refused matching parameters:", error.c_str());
      if (bound.args.size() != params.size())
        fuzz::invariantBroken("bindArguments did not give one argument per parameter");
      if (params.empty())
        continue;
      // One call argument fewer: a descriptor stands for itself, its shape and its strides.
      const ArgSpec &last = launch.args.back();
      params.resize(params.size() - 1 -
                    (last.kind == ArgKind::Descriptor ? 2 * last.shape.size() : 0));
      bound = launch;
      if (bindArguments(*spec, bound, "k", params, error))
        fuzz::invariantBroken("bindArguments accepted one parameter too few");
      checkOneLine(error, "bindArguments");
    }
    if (runnable(*spec))
      runDriver(text, choice);
  } catch (const std::bad_alloc &) {
  }
  return 0;
}
