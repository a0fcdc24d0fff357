//===- Interpreter.h - Public API: lower a tt.func once, run it over a grid -*- C++ -*-===//
//
// A Kernel is the executable form of one tt.func: lowered once (all MLIR
// walking, type dispatch and attribute decoding happen here), immutable
// afterwards, and shared by every launch and thread. Running it needs a
// LaunchMemory from a memory::Session, which decides what the kernel's pointers
// may touch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ttinterp/memory/DType.h"
#include "ttinterp/memory/Session.h"

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class FunctionOpInterface;
} // namespace mlir

namespace ttinterp::interp {

class Program;

/// One parameter of a kernel, as the interpreter needs it.
struct Parameter {
  std::string name;      ///< From the argument's name location, else "argN".
  /// Binds a PointerArgument: a pointer, or a tensor descriptor's base.
  bool isPointer = false;
  /// Scalar type, the pointee type for pointers, the element type for descriptors.
  DType dtype = DType::I32;
  /// A host-side tensor descriptor (`!tt.tensordesc`, Triton 3.4+'s TensorDescriptor
  /// argument): its rank, else 0. Triton passes the descriptor's shape (i32) and
  /// strides (i64, in elements) as the 2 x rank parameters right after it; the
  /// launch builds the descriptor from the base pointer and those values, so they
  /// must describe the view of the PointerArgument (they do when a tool fills all
  /// three from one view, as `ttinterp` does for a `tensordesc` spec argument).
  unsigned descriptorRank = 0;
  /// Descriptors: the block shape of their type (one descriptor_load's result).
  std::vector<int64_t> blockShape;
  /// Pointers: what the kernel may do through it, proven when it is lowered
  /// (ReadWrite whenever a pointer's provenance cannot be traced). Give it to
  /// PointerArgument::access (Kernel::applyAccess) so that only-read regions
  /// are not shadowed and only-written ones are not copied in.
  Access access = Access::None;
};

/// The value bound to one kernel parameter for a launch.
struct ArgumentValue {
  /// For pointer parameters: the index of its PointerArgument in the LaunchMemory.
  uint32_t pointerIndex = 0;
  /// For scalar parameters: the value (integers in `integer`, floats in `real`).
  /// For descriptor parameters, `integer` is the padding: 1 reads NaN out of
  /// bounds (TensorDescriptor's padding="nan"), 0 reads zero.
  int64_t integer = 0;
  double real = 0;
};

struct LaunchOptions {
  std::array<int64_t, 3> grid = {1, 1, 1};
  /// Worker threads; 1 runs programs in order (x fastest, then y, then z).
  unsigned threads = 1;
  /// Executed ops per program instance before a step_limit fault; 0: no limit.
  uint64_t maxSteps = 0;
  /// Where tt.print writes (stdout when null).
  std::ostream *printStream = nullptr;
  /// The order programs run in when threads == 1. Results that change with
  /// the order reveal cross-program races (`ttinterp check`).
  enum class Order { Forward, Reverse, Shuffled } order = Order::Forward;
  uint64_t shuffleSeed = 0;
};

/// Why a launch stopped: the first faulting program in program order.
struct Fault {
  std::string kind;     ///< out_of_bounds, assert, step_limit, spin_wait, ...
  std::string message;  ///< One line saying what went wrong, with numbers.
  std::string location; ///< The kernel's own source location, "file.py:12:8".
  std::string op;       ///< The TTIR op, e.g. "tt.load".
  std::array<int64_t, 3> program = {0, 0, 0};
  std::optional<int64_t> element; ///< Linear index in the op's block, when per element.
};

class Kernel {
public:
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  /// Lowers `fn` (and the functions it calls). On an op or type the interpreter
  /// cannot run, returns null and sets `error` to "LOCATION: error: ..." naming the op.
  static std::unique_ptr<Kernel> lower(mlir::FunctionOpInterface fn, std::string &error);

  const std::string &name() const;
  const std::vector<Parameter> &parameters() const;
  /// Bytes of the frame that each thread running the kernel holds: a block for every
  /// value, values whose lives do not overlap sharing bytes.
  size_t frameBytes() const;

  /// Gives each pointer argument the access its parameters proved (the OR when
  /// several parameters share it), so that regions only read are read in place
  /// and regions only written are not copied in. Arguments no parameter refers
  /// to keep the access they have.
  void applyAccess(const std::vector<ArgumentValue> &arguments,
                   std::vector<PointerArgument> &pointers) const;
  /// What the kernel may do through pointers it cannot trace to a parameter (loaded
  /// from memory, made by tt.int_to_ptr): the access of every reachable buffer
  /// (LaunchRequest::reachable), which only such pointers can touch.
  Access reachableAccess() const;

  /// Runs every program instance of the grid. Returns the first fault, if any;
  /// stores went to `memory`'s shadows either way (the caller decides what goes back).
  std::optional<Fault> run(const std::vector<ArgumentValue> &arguments, LaunchMemory &memory,
                           const LaunchOptions &options) const;

  /// The op and source location of an op site (as in Fault and Hazard).
  const std::string &siteOp(uint32_t site) const;
  const std::string &siteLocation(uint32_t site) const;

private:
  explicit Kernel(std::unique_ptr<Program> program);
  std::unique_ptr<Program> program_;
};

/// How element-wise chains (a run of f32 arithmetic and selects in one block, each op
/// used only by the next: docs/architecture.md, "Compiled chains") run. Off: op by op,
/// interpreted. Background (the default): interpreted until a chain has run about two
/// million lanes, then compiled by LLVM on a background thread and run as one loop from
/// then on. Eager: compiled at a chain's first run, which waits for it (tests,
/// benchmarks). The results are the same bits either way. The environment variable
/// TTINTERP_JIT=off|background|eager sets the mode a process starts in.
enum class ChainCompilation { Off, Background, Eager };
void setChainCompilation(ChainCompilation mode);
ChainCompilation chainCompilation();
/// Returns once every compilation asked for so far has finished (benchmarks call it after
/// their warm-up, so that what they time is the compiled loop).
void waitForChainCompilations();

/// The instruction set the vector kernels run with on this CPU (Highway's name for
/// it, e.g. "AVX2"), chosen once at first use; benchmarks report it with figures.
const char *vectorTarget();

} // namespace ttinterp::interp
