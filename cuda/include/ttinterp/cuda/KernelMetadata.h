//===- KernelMetadata.h - Triton's compiled-kernel metadata ({name}.json) -*- C++ -*-===//
//
// What a native launch needs from the metadata Triton writes next to a cubin: the entry name,
// warps, CTAs per cluster, dynamic shared memory, scratch sizes, the target, and which hidden
// parameters the compiler appended to the kernel's signature.
//
// Required: name, num_warps, shared. Everything else is optional and defaults to what older
// Triton versions did (num_ctas 1, no scratch). A field that is present but malformed is an
// error, so a typo never silently becomes a default.
//
// The hidden-parameter rule. Triton appends pointer parameters after the tt.func arguments:
// a global-scratch pointer since 3.2 and a profile-scratch pointer since 3.5, both always
// present (0 when their size is 0). From the metadata:
//   1. when `triton_version` reads as MAJOR.MINOR[...]: global scratch iff >= 3.2, profile
//      scratch iff >= 3.5;
//   2. otherwise: global scratch iff the key `global_scratch_size` is present, profile scratch
//      iff `profile_scratch_size` is present (the keys arrived with the parameters).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ttinterp::cuda {

struct KernelMetadata {
  std::string name; ///< The PTX .entry to launch.
  uint32_t numWarps = 0;
  uint32_t numCtas = 1;
  uint32_t shared = 0;             ///< Dynamic shared memory per block, in bytes.
  uint64_t globalScratchSize = 0;  ///< Bytes per CTA; 0 = none.
  uint64_t globalScratchAlign = 1; ///< A power of two.
  uint64_t profileScratchSize = 0;
  uint64_t profileScratchAlign = 1;
  /// Cluster shape (Triton 3.2 to 3.5 wrote `cluster_dims`); used only when numCtas > 1, where
  /// the default is (numCtas, 1, 1) as Triton 3.6+ launches.
  std::array<uint32_t, 3> clusterDims = {1, 1, 1};
  bool hasClusterDims = false;
  bool launchCooperativeGrid = false;
  bool launchPdl = false;
  std::string backend;       ///< "cuda"; empty when the metadata does not say.
  std::string arch;          ///< As written: "90" for sm_90.
  std::string tritonVersion; ///< Empty when absent.
  std::string hash;
  /// The hidden parameters appended after the arguments (see the rule above).
  bool globalScratchParam = false;
  bool profileScratchParam = false;

  /// 32 threads per warp (NVIDIA); the block is (threadsPerBlock(), 1, 1).
  uint32_t threadsPerBlock() const { return 32 * numWarps; }
  /// 0, 1 or 2.
  unsigned hiddenParamCount() const { return unsigned(globalScratchParam) + profileScratchParam; }
};

/// MAJOR.MINOR of a version string such as "3.8.0" or "3.5.0+git1234"; nullopt when it does not
/// start with two dot-separated numbers.
std::optional<std::pair<int, int>> parseTritonVersion(std::string_view version);

/// Parses metadata JSON. `source` names the file in messages: "add_kernel.json: missing required
/// field 'num_warps'".
bool parseKernelMetadata(std::string_view json, std::string_view source, KernelMetadata &out,
                         std::string &error);

/// Reads and parses the metadata file at `path`.
bool loadKernelMetadata(const std::string &path, KernelMetadata &out, std::string &error);

} // namespace ttinterp::cuda
