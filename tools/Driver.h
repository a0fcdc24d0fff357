//===- Driver.h - Running a spec: buffers, launches, syncs, outputs -*- C++ -*-===//
//
// `ttinterp run` as a library call. A run resolves everything it can before launching
// anything (spec, buffers, kernels, argument types), so bad input never leaves a
// half-run spec behind; then it runs the launches in order against one memory Session.
// A kernel fault abandons the session: nothing still pending is written back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Compare.h"

#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/memory/Session.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace ttinterp::driver {

/// Exit statuses of the CLI.
enum ExitCode : int {
  kExitOk = 0,
  kExitFault = 1,    ///< A kernel faulted (out of bounds, failed assert, step limit, ...).
  kExitBadInput = 2, ///< Usage, unreadable or invalid files, spec or argument errors.
};

struct RunOptions {
  std::string outDir;     ///< Empty: no .npy output.
  /// With outDir: the buffers to write (spec names); empty: every buffer.
  std::vector<std::string> outBuffers;
  std::string reportPath; ///< Empty: no JSON report.
  unsigned threads = 1;
  uint64_t maxSteps = 0;
  BoundsMode bounds = BoundsMode::Argument;
  bool inPlace = false; ///< Kernels write host buffers directly (no shadows; not transactional).
  bool hazards = false; ///< Track cross-program read/write conflicts (programs run serially).
  /// Program order of every launch (check runs reversed and shuffled orders).
  interp::LaunchOptions::Order order = interp::LaunchOptions::Order::Forward;
  uint64_t shuffleSeed = 0;
  bool quiet = false; ///< No human summary (errors still go to `err`).
  /// When set, receives every buffer's final bytes (name, dtype, shape, bytes).
  struct FinalBuffer {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
    bool donated = false;
    /// Filled with addresses (an `addresses` init): they differ from run to run, so check
    /// does not compare it.
    bool addresses = false;
  };
  std::vector<FinalBuffer> *finalBuffers = nullptr;
  /// Set by the run: conflicting bytes found with `hazards` on.
  uint64_t *hazardBytes = nullptr;
};

/// Runs the spec at `specPath`: the human summary (and tt.print output) goes to `out`,
/// errors to `err`. Returns an ExitCode.
int runSpec(const std::string &specPath, const RunOptions &options, std::ostream &out,
            std::ostream &err);

/// `ttinterp check`: runs the spec with hazard tracking, then again in reverse and in a
/// shuffled program order from identical initial data, and compares every buffer. Returns
/// kExitFault when a hazard or an order-dependent result is found.
int checkSpec(const std::string &specPath, const RunOptions &options, std::ostream &out,
              std::ostream &err);

/// `ttinterp check --native`: runs the spec in the interpreter (every buffer on the host) and
/// again with every launch that has a native binary (its "native" field, else <kernel>.cubin
/// beside its .ttir) run on the GPU (every buffer on the device), each from fresh copies of the
/// initial data, and compares every buffer under `tolerance`. Returns kExitFault when a buffer
/// differs or either run fails, kExitBadInput without a driver or without any native binary.
int checkNativeSpec(const std::string &specPath, const RunOptions &options,
                    const Tolerance &tolerance, std::ostream &out, std::ostream &err);

/// Prints `message` as "ttinterp: error: ..." followed by "note: ..." lines. Front-end
/// diagnostics ("FILE:L:C: error: M" then "FILE:L:C: note: N" lines) are reworded so the
/// first line reads "ttinterp: error: FILE:L:C: M" and the rest "note: FILE:L:C: N".
void printError(std::ostream &err, std::string_view message,
                const std::vector<std::string> &notes = {});

} // namespace ttinterp::driver
