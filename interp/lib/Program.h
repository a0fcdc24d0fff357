//===- Program.h - The executable form of a lowered kernel -----*- C++ -*-===//
//
// Lowering turns a tt.func into a Program: every SSA value gets a Slot (dtype,
// static shape, a fixed offset in a per-thread arena), every op becomes an
// Instr holding a typed kernel function chosen at lowering time. Executing a
// program instance is a walk over flat instruction lists: no MLIR, no maps, no
// strings, no allocation. Regions of scf/tt ops become nested Bodies that the
// parent op's kernel runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Numeric.h"
#include "ttinterp/interp/Interpreter.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ttinterp::interp {

using SlotId = uint32_t;
constexpr SlotId kNoSlot = ~SlotId(0);

/// Storage for one SSA value (or a scratch value) in the frame arena.
struct Slot {
  DType dtype = DType::I32;
  std::vector<int64_t> shape; ///< Empty for scalars.
  int64_t numel = 1;
  size_t offset = 0;
  uint32_t function = 0; ///< The function whose frame section holds it.
  size_t bytes() const { return size_t(numel) * computeSize(dtype); }
};

struct Frame;
struct Instr;
using ExecFn = void (*)(Frame &, const Instr &);

struct Instr {
  ExecFn fn = nullptr;
  int64_t n = 0; ///< Elements of the first result: the usual loop bound.
  const SlotId *operands = nullptr;
  const SlotId *results = nullptr;
  uint32_t numOperands = 0, numResults = 0;
  const void *data = nullptr; ///< Op-specific constant data, owned by the Program.
  uint32_t site = 0;          ///< Index into Program::sites.
};

/// Values handed from one list of slots to another, src[i] -> dst[i], as if all at once:
/// each copied into the destination's own buffer, or, where the source may give its buffer
/// away (Terminator::movable), the buffer handed over. Everything this depends on is in the
/// slot lists, so it is worked out once, when lowered: a loop's yield runs once an iteration,
/// often of a scalar or two, and working it out again each time cost more than the copies.
struct SlotTransfer {
  struct Item {
    SlotId from, to;
    uint32_t bytes; ///< The value's size (a copy's length).
    bool move;      ///< Hand the buffer over instead of copying.
  };
  /// Values that stay in their own slot are left out. A few are held inline, so that
  /// copySlots, planning on the spot, allocates nothing for them.
  llvm::SmallVector<Item, 4> items;
  /// A copied value is also a destination (a loop rotating its arguments): the copies are
  /// then read into a buffer before any destination is written.
  bool staged = false;
};

/// How a block hands control back.
struct Terminator {
  enum Kind { Yield, Return, Branch, CondBranch } kind = Yield;
  std::vector<SlotId> operands; ///< Yielded/returned values, or Branch's operands.
  /// Per operand of a Yield: defined by an op inside the region it leaves (so dead
  /// once it is left, and written again before it is next read), not a constant,
  /// and yielded once. Its buffer may be handed to the receiving slot instead of
  /// copied (SlotTransfer): how a loop carries a 64x64 accumulator without copying it.
  std::vector<uint8_t> movable;
  SlotId condition = kNoSlot;
  uint32_t dest = 0, falseDest = 0;
  std::vector<SlotId> falseOperands;
  /// A Branch's operands into its destination's arguments, a CondBranch's into either.
  SlotTransfer toDest, toFalseDest;
  uint32_t site = 0;
};

struct Block {
  std::vector<SlotId> arguments;
  std::vector<Instr> instrs;
  Terminator term;
};

/// A lowered region.
struct Body {
  std::vector<Block> blocks;
  uint32_t site = 0; ///< The op that owns the region (step-limit messages).
};

struct Function {
  std::string name;
  Body body;
  std::vector<SlotId> results;    ///< Where tt.return leaves its operands.
  size_t arenaBegin = 0, arenaEnd = 0; ///< Its slots' bytes (saved around recursive calls).
};

/// An op's identity for messages.
struct Site {
  std::string op;
  std::string location;
};

/// A constant slot's contents, written once when a frame is created.
struct ConstantInit {
  SlotId slot;
  std::vector<uint8_t> bytes;
};

class Program {
public:
  std::string name;
  std::vector<Parameter> parameters;
  std::vector<SlotId> parameterSlots;
  Access reachableAccess = Access::None; ///< Kernel::reachableAccess.
  std::vector<Slot> slots;
  std::vector<Site> sites;
  std::vector<std::unique_ptr<Function>> functions; ///< [0] is the kernel.
  std::vector<ConstantInit> constants;
  size_t arenaSize = 0;
  uint32_t startRunsCaches = 0; ///< Accesses that learn their runs (Frame::startRuns).
  uint32_t accessHistories = 0; ///< Fused contiguous accesses (Frame::lastAccess).
  /// Whether a program may wait for another (an scf.while, which is how spin-waits are
  /// written, or an atomic poll without a timeout): such kernels run their programs one at
  /// a time, where a waiting program can let the others run (Executor.cpp), whatever the
  /// thread count. Worker threads could all end up waiting for programs none of them runs.
  bool mayWait = false;
  /// Whether an atomic of the kernel acquires what another program released (and reads
  /// the value): only then is happens-before tracked for hazards (HazardTracker).
  bool synchronises = false;

  /// Keeps operand lists and op data alive at stable addresses.
  std::deque<std::vector<SlotId>> idLists;
  std::vector<std::shared_ptr<const void>> payloads;
};

/// Receives tt.print output; the mutex keeps lines whole across threads.
struct PrintSink {
  std::ostream *out = nullptr;
  std::mutex mutex;
};

/// The state of one program instance (reused for every program a thread runs).
struct Frame {
  const Program *program = nullptr;
  uint8_t *arena = nullptr;
  const LaunchMemory *memory = nullptr;
  std::array<int32_t, 3> pid = {0, 0, 0};
  std::array<int32_t, 3> numPrograms = {1, 1, 1};
  uint64_t steps = 0, maxSteps = 0;
  int callDepth = 0;
  std::vector<int> active; ///< Per function: how many calls of it are running.
  /// Scratch for memory ops: runs of consecutive lanes (first lane, length).
  std::vector<std::pair<int64_t, int64_t>> runs;
  /// Scratch for fused accesses that fall back to lane-by-lane pointers and mask.
  std::vector<uint64_t> lanePointers;
  std::vector<uint8_t> laneMask;
  std::vector<int32_t> laneOffsets; ///< and their i32 offsets (a StepGather's)
  /// Scratch for memory ops: where runs of lanes end, and which lanes are active (bits of lanes).
  std::vector<uint64_t> laneCuts, laneActive;
  /// Per load through a pointer tensor that its loop advances (Lowerer::AdvancedPointer): the
  /// run breaks of the pointers that loop began with, and which entry into the loop that was.
  struct StartRuns {
    uint64_t loopEntry = 0;
    std::vector<uint64_t> breaks;
    /// With every lane active: the runs (first lane, length), each one's byte offset from
    /// lane 0's pointer, and the span [lo, hi) of bytes they cover relative to it; valid
    /// when every run's pointer has lane 0's tag.
    std::vector<std::pair<int64_t, int64_t>> runs;
    std::vector<int64_t> offsets;
    int64_t lo = 0, hi = 0;
    bool oneTag = false;
    /// Runs of equal length `rowLength` (lanes) whose offsets step by `rowBytes`: the rows of
    /// a tile inside a matrix. 0 when they are not, or are one run.
    int64_t rowLength = 0, rowBytes = 0;
    /// Outer pointers (OuterPointers, Fusion.h): the pointer of each row's first lane when
    /// every row's lanes are consecutive, else every lane's pointer in `lanePointers`.
    std::vector<uint64_t> rowStarts, lanePointers;
  };
  std::vector<StartRuns> startRuns;
  uint64_t loopEntries = 0; ///< Entries into loops with advanced pointers, ever (never 0 after).
  /// Per fused contiguous access: the first lane's pointer when it last ran on this frame
  /// (MemoryOps.cpp's prefetchNext predicts the next one from it).
  std::vector<uint64_t> lastAccess;
  /// The bytes the last of those accesses guessed (start, length, whether for a write) and
  /// how many of them are asked for so far: a row that several accesses read (a layer norm's
  /// x, loaded in each of its three loops) is guessed once, and asked for a few lines at a
  /// time by the accesses that follow.
  struct Prefetched {
    const uint8_t *start = nullptr;
    int64_t bytes = 0;
    bool forWrite = false;
    int64_t issued = 0;
  } lastPrefetch;
  /// Set while an op writes its result straight into memory that a forwarded store streams
  /// to (LaunchMemory::streamsStores): ops that can write it by streaming stores do
  /// (simd::basic, compiled chains); the others store as usual, with the same bytes.
  bool streamResult = false;
  /// This worker's stores not yet marked dirty (with concurrent workers; flushed by the worker).
  DirtyRuns dirtyRuns;
  bool stopped = false;
  std::optional<Fault> fault;
  PrintSink *printer = nullptr;

  /// Where each slot's bytes are now: its place in the arena, except for the
  /// result of a load that reads immutable memory in place (readInPlace). Only
  /// the op defining a slot writes it, so such a slot is only ever read.
  std::vector<uint8_t *> storage;
  /// The arena buffer each slot owns now. The buffers start at the slots' offsets
  /// and move between slots when a region hands values over (SlotTransfer): always one
  /// buffer per slot, each of a slot's size.
  std::vector<uint8_t *> home;

  /// Per slot: elements from one row to the next of a tile view (readsTileViews, OpSupport.h),
  /// a 2-D block that its load left in memory, rows apart there; 0 for a dense block. Only
  /// the loads that may leave views set it (each time they run), only tt.dot reads it.
  std::vector<int64_t> rowStride;

  template <class T> T *at(SlotId s) const { return reinterpret_cast<T *>(storage[s]); }
  uint8_t *bytes(SlotId s) const { return storage[s]; }
  /// The slot's own arena bytes, made its storage again: what an op that may
  /// also read in place writes its result into when it does not.
  template <class T> T *atHome(SlotId s) {
    storage[s] = home[s];
    return reinterpret_cast<T *>(storage[s]);
  }
  /// Lets slot s be the `bytes` of memory that nothing can change during the
  /// launch (LaunchMemory::translateImmutable), instead of a copy of them.
  void readInPlace(SlotId s, const uint8_t *bytes) { storage[s] = const_cast<uint8_t *>(bytes); }
  const Slot &slot(SlotId s) const { return program->slots[s]; }

  /// Records a fault at the op of `site` and stops the program.
  void fail(uint32_t site, std::string kind, std::string message,
            std::optional<int64_t> element = std::nullopt);

  /// Called by a program at `site` that cannot go on until another program of the launch
  /// changes memory (a loop whose state repeats with nothing stored, an atomic poll).
  /// Returns true to retry (other programs ran meanwhile), false after a fault that
  /// stops this program (a deadlock, or another program's fault). Executor.cpp.
  bool waitForOthers(uint32_t site);
  class Cooperation *cooperation = nullptr; ///< Set when programs run one at a time.
  int thread = 0;                           ///< This frame's thread in it.
  int64_t linear = 0;                       ///< The linear id of the running program.
};

/// The transfer of src[i] -> dst[i] (copies only).
SlotTransfer planCopies(const Program &program, const std::vector<SlotId> &src,
                        const std::vector<SlotId> &dst);
/// The transfer of a Yield's operands from `first` on into dst, handing over the buffers of
/// the movable ones (Terminator::movable) instead of copying them.
SlotTransfer planMoves(const Program &program, const Terminator &t, const std::vector<SlotId> &dst,
                       size_t first = 0);
/// transfer's parallel assignment through a buffer (SlotTransfer::staged).
void transferStaged(Frame &f, const SlotTransfer &plan);

/// A copy of a value's bytes, with the sizes of scalars spelled out: a call to memcpy cost
/// more than the copy of a loop's counter or sum.
inline void copyValue(uint8_t *to, const uint8_t *from, uint32_t bytes) {
  switch (bytes) {
  case 4:
    std::memcpy(to, from, 4);
    return;
  case 8:
    std::memcpy(to, from, 8);
    return;
  default:
    std::memcpy(to, from, bytes);
  }
}

/// `to` takes `from`'s value where it lies (its buffer, or memory read in place); `from`
/// keeps `to`'s old buffer, which the op defining `from` overwrites before any read.
inline void handOver(Frame &f, SlotId from, SlotId to) {
  uint8_t *value = f.storage[from];
  std::swap(f.home[from], f.home[to]);
  f.storage[to] = value;
  f.storage[from] = f.home[from];
}

/// Carries out a planned transfer. Inline, like runBody: a loop's iteration is a few of
/// each, and calls between the library's files went through the module's PLT.
inline void transfer(Frame &f, const SlotTransfer &plan) {
  if (plan.staged) {
    transferStaged(f, plan);
    return;
  }
  // A destination may be reading memory in place: a copy gives it its own buffer back.
  for (const SlotTransfer::Item &item : plan.items) {
    if (item.move)
      handOver(f, item.from, item.to);
    else
      copyValue(f.atHome<uint8_t>(item.to), f.bytes(item.from), item.bytes);
  }
}

/// Records the step-limit fault of `body` (runBody's, out of line).
void failStepLimit(Frame &f, const Body &body);

/// Runs a body from its entry block; returns the terminator that left it
/// (Yield or Return), or null when the program stopped (a fault).
inline const Terminator *runBody(Frame &f, const Body &body) {
  const Block *b = &body.blocks[0];
  for (;;) {
    f.steps += b->instrs.size() + 1;
    if (f.maxSteps && f.steps > f.maxSteps) {
      failStepLimit(f, body);
      return nullptr;
    }
    HazardTracker *hazards = f.memory->hazardTracker();
    for (const Instr &in : b->instrs) {
      if (hazards)
        hazards->setSite(in.site);
      in.fn(f, in);
      if (f.stopped)
        return nullptr;
    }
    const Terminator &t = b->term;
    switch (t.kind) {
    case Terminator::Branch:
      transfer(f, t.toDest);
      b = &body.blocks[t.dest];
      continue;
    case Terminator::CondBranch:
      if (*f.at<uint8_t>(t.condition)) {
        transfer(f, t.toDest);
        b = &body.blocks[t.dest];
      } else {
        transfer(f, t.toFalseDest);
        b = &body.blocks[t.falseDest];
      }
      continue;
    default:
      return &t;
    }
  }
}

/// planCopies and transfer in one, for lists handed over rarely (a call's, whose callee
/// may still be being lowered when the call is).
void copySlots(Frame &f, const std::vector<SlotId> &src, const std::vector<SlotId> &dst);

} // namespace ttinterp::interp
