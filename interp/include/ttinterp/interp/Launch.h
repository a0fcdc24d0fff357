//===- Launch.h - One launch end to end: prepare, plan, run, report -*- C++ -*-===//
//
// The one launch path every front end shares (the ttinterp CLI, the benchmark, the
// Python module): given a lowered kernel, its argument values and pointer views,
// a Launcher refuses memory a donation released, gives each pointer the access
// its parameters proved, maps the views onto the session's regions, looks up the
// launch plan (cached by alias pattern and donor set), runs the grid, collects
// hazards, and on a fault counts what is dropped and abandons the session, so a
// failing launch changes none of the caller's bytes. Callers keep only their own
// input parsing and printing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/interp/Caches.h"
#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/memory/Session.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ttinterp::interp {

/// A buffer the caller knows by name, so that reports can say which buffer bytes lie in
/// (a hazard's bytes, bytes a fault dropped).
struct NamedBuffer {
  std::string name;
  const CallerMemory *memory = nullptr;
  ByteRange range;
  /// Lies inside another named buffer (a spec's `alias_of`): bytes are named after the
  /// outer buffer in hazard reports.
  bool inner = false;
};

/// One storage region (one shadow) of a launch.
struct RegionReport {
  std::vector<std::string> buffers;   ///< Named buffers whose bytes it holds.
  std::vector<std::string> arguments; ///< Kernel parameters whose pointers point into it.
  std::vector<std::string> reachable; ///< Reachable buffers (LaunchRequest::reachable) in it.
  uint64_t bytes = 0;
  std::string shadow; ///< How the launch holds its bytes (shadowStateName).
};

/// How the views of two pointer arguments relate.
struct PairReport {
  std::string a, b;    ///< Kernel parameter names.
  std::string overlap; ///< "disjoint", "identical" or "overlapping".
};

/// A cross-program conflict found with hazard tracking on.
struct HazardReport {
  std::string kind; ///< "read-after-write", "write-after-read", "write-after-write".
  std::array<int64_t, 3> first = {0, 0, 0}, second = {0, 0, 0}; ///< Program ids, in run order.
  std::vector<std::string> arguments; ///< Kernel parameters whose extents hold the bytes.
  std::vector<std::string> reachable; ///< Reachable buffers whose extents hold the bytes.
  std::string buffer;                 ///< The named buffer holding the bytes.
  uint64_t offset = 0, bytes = 0;     ///< Byte range, relative to that buffer's start.
  std::string firstOp, firstLocation, secondOp, secondLocation;
};

struct LaunchRequest {
  const Kernel *kernel = nullptr;
  std::string kernelHash; ///< Structural hash (part of the plan key).
  std::vector<ArgumentValue> values;     ///< One per kernel parameter.
  std::vector<PointerArgument> pointers; ///< Indexed by ArgumentValue::pointerIndex.
  /// Buffers the kernel may reach without receiving them (through addresses it loads
  /// from a pointer table), bound to no parameter. They join the memory model as
  /// arguments do (regions, shadows, write-back, faults, hazards, donation), with the
  /// access the kernel makes through pointers it cannot trace (Kernel::reachableAccess);
  /// tt.int_to_ptr of an address inside one gives it that buffer's bounds. `name` is
  /// ignored; `buffer` names it.
  std::vector<PointerArgument> reachable;
  /// Pointer arguments (positions in `pointers`, then `reachable` counted after them)
  /// whose buffers this launch donates: part of the plan key, and `donations` are
  /// recorded once the launch succeeds.
  std::vector<uint32_t> donors;
  std::vector<Session::Donation> donations;
  PlanOptions plan;   ///< Bounds, in-place, hazards and threads.
  LaunchOptions run;  ///< Grid, step limit, print stream, program order (threads: from the plan).
  /// The caller's buffers, for naming bytes in reports; may be empty.
  std::vector<NamedBuffer> buffers;
  /// Whether the result describes the launch's memory (`regions`, `regionOfPointer`,
  /// `pairs`): what the CLI reports. A caller that shows none of it (the Python package)
  /// says no, and a small launch is spared the strings.
  bool describe = true;
};

struct LaunchResult {
  enum class Status {
    Ran,      ///< Every program finished; stores are pending in the session.
    Faulted,  ///< `fault` says why; the session was abandoned (nothing written back).
    BadInput, ///< The views could not be mapped (`error` says why); nothing ran.
  } status = Status::Ran;
  std::string error;
  std::optional<Fault> fault;
  /// On a fault: dirty bytes per named buffer that were dropped, in `buffers` order.
  std::vector<std::pair<std::string, uint64_t>> droppedBytes;

  std::string planKey;
  bool planCached = false;
  /// Copied into shadows: before the launch ran (all that beforeRun sees), and once it has
  /// run, also what it copied in as it touched large read-write regions.
  uint64_t bytesIn = 0;
  /// Regions numbered in the order the pointer arguments first reach them
  /// (this and regionOfPointer and pairs: with LaunchRequest::describe).
  std::vector<RegionReport> regions;
  /// Per pointer argument, then per reachable buffer: its region's number, kNoRegion for
  /// a view with no bytes.
  std::vector<size_t> regionOfPointer;
  static constexpr size_t kNoRegion = ~size_t(0);
  /// Per pointer argument, then per reachable buffer: what the kernel may do.
  std::vector<Access> access;
  std::vector<PairReport> pairs; ///< Every pair of pointer arguments (not reachable), in order.
  std::vector<HazardReport> hazards;
  uint64_t hazardBytes = 0; ///< All conflicting bytes (hazards lists at most 100 ranges).
};

/// Runs launches against one session, with the plan cache of that session's caller.
class Launcher {
public:
  explicit Launcher(Session &session) : session_(session) {}

  /// Runs `request`. `beforeRun`, when given, sees the result once the launch is prepared
  /// and planned, before the first program runs (the CLI prints its summary there, so the
  /// kernel's tt.print output follows it).
  LaunchResult launch(const LaunchRequest &request,
                      const std::function<void(const LaunchResult &)> &beforeRun = {});

  /// A fault for a launch that cannot start (say, a binding error found by the caller):
  /// counts the dropped bytes of `buffers` and abandons the session, as a kernel fault does.
  LaunchResult fail(Fault fault, const std::vector<NamedBuffer> &buffers);

  PlanCache &plans() { return plans_; }

private:
  Session &session_;
  PlanCache plans_;
};

} // namespace ttinterp::interp
