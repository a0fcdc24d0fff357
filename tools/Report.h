//===- Report.h - The JSON report of a spec run (--report) ------*- C++ -*-===//
//
// Plain records filled in by the driver as it goes, turned into JSON once at the end (or
// at the first error). The format is documented in docs/cli.md; fields are only added,
// never renamed, so scripts can rely on them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/interp/Launch.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ttinterp::driver {

// What the launch layer reports of regions, alias pairs and hazards goes into the report as is.
using interp::HazardReport;
using interp::PairReport;
using interp::RegionReport;

struct LaunchReport {
  size_t index = 0; ///< Position in the spec's launches array.
  std::string function;
  std::string kernel; ///< The kernel file as the spec names it.
  std::string kernelHash;
  bool kernelCached = false; ///< Lowered by an earlier launch with the same hash.
  std::string planKey;
  bool planCached = false; ///< The same plan key appeared earlier in this run.
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::vector<RegionReport> regions;
  std::vector<PairReport> pairs;
  std::vector<HazardReport> hazards;
  uint64_t hazardBytes = 0; ///< All conflicting bytes (hazards lists at most 100 ranges).
  std::vector<std::string> donated; ///< Buffers this launch donated.
  std::string native;               ///< The cubin or PTX a native launch ran (empty: interpreted).
  uint64_t bytesIn = 0;  ///< Copied into shadows, before the launch ran or as it touched them.
  uint64_t bytesOut = 0; ///< Written back by the syncs and steps that follow it.
};

/// A sync, a step, or the implicit step at the end of the spec.
struct SyncReport {
  std::optional<size_t> index;      ///< Position in launches; none for the final step.
  std::string kind;                 ///< "sync", "step" or "final_step".
  std::vector<std::string> buffers; ///< sync: the buffers named.
  uint64_t bytesOut = 0;
};

struct ErrorReport {
  std::string kind; ///< A fault kind (out_of_bounds, assert, ...), or spec, ttir, unsupported,
                    ///< io, memory; cuda for a CUDA driver error.
  std::string message;
  std::optional<size_t> launch;
  std::optional<std::array<int64_t, 3>> program;
  std::string location;
  std::string op;
  std::optional<int64_t> element;
  /// Faults: bytes per buffer that were pending write-back and were dropped.
  std::vector<std::pair<std::string, uint64_t>> pendingBytes;
};

struct RunReport {
  std::optional<ErrorReport> error; ///< None: status "ok".
  std::vector<LaunchReport> launches;
  std::vector<SyncReport> syncs;
  uint64_t bytesIn = 0, bytesOut = 0;
};

/// The report as JSON text (pretty-printed, two-space indent, trailing newline).
std::string renderReport(const RunReport &report);

/// Writes the report to `path`; false with `error` set when the file cannot be written.
bool writeReport(const std::string &path, const RunReport &report, std::string &error);

} // namespace ttinterp::driver
