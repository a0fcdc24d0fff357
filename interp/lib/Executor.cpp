//===- Executor.cpp - Running a Program over a launch grid ----------------===//
#include "Program.h"
#include "ops/BlockPointerOps.h"

#include "ttinterp/memory/Workers.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <mutex>

namespace ttinterp::interp {

void Frame::fail(uint32_t site, std::string kind, std::string message,
                 std::optional<int64_t> element) {
  if (stopped)
    return;
  stopped = true;
  Fault f;
  f.kind = std::move(kind);
  f.message = std::move(message);
  f.op = program->sites[site].op;
  f.location = program->sites[site].location;
  f.program = {pid[0], pid[1], pid[2]};
  f.element = element;
  fault = std::move(f);
}

void copySlots(Frame &f, const std::vector<SlotId> &src, const std::vector<SlotId> &dst) {
  // Parallel assignment (a block's arguments may be passed each other, e.g. a
  // swap): stage through a buffer whenever a source is also a destination.
  bool overlap = false;
  for (SlotId s : src)
    overlap |= std::find(dst.begin(), dst.end(), s) != dst.end();
  if (!overlap) {
    for (size_t i = 0; i < src.size(); ++i)
      if (src[i] != dst[i])
        std::memcpy(f.bytes(dst[i]), f.bytes(src[i]), f.slot(dst[i]).bytes());
    return;
  }
  std::vector<uint8_t> staged;
  std::vector<size_t> at;
  for (SlotId s : src) {
    at.push_back(staged.size());
    staged.insert(staged.end(), f.bytes(s), f.bytes(s) + f.slot(s).bytes());
  }
  for (size_t i = 0; i < dst.size(); ++i)
    std::memcpy(f.bytes(dst[i]), staged.data() + at[i], f.slot(dst[i]).bytes());
}

const Terminator *runBody(Frame &f, const Body &body) {
  const Block *b = &body.blocks[0];
  for (;;) {
    f.steps += b->instrs.size() + 1;
    if (f.maxSteps && f.steps > f.maxSteps) {
      f.fail(body.site, "step_limit",
             fmt::format("program exceeded the step limit of {} executed ops (--max-steps)",
                         f.maxSteps));
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
      copySlots(f, t.operands, body.blocks[t.dest].arguments);
      b = &body.blocks[t.dest];
      continue;
    case Terminator::CondBranch:
      if (*f.at<uint8_t>(t.condition)) {
        copySlots(f, t.operands, body.blocks[t.dest].arguments);
        b = &body.blocks[t.dest];
      } else {
        copySlots(f, t.falseOperands, body.blocks[t.falseDest].arguments);
        b = &body.blocks[t.falseDest];
      }
      continue;
    default:
      return &t;
    }
  }
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

Kernel::Kernel(std::unique_ptr<Program> program) : program_(std::move(program)) {}
Kernel::~Kernel() = default;
const std::string &Kernel::name() const { return program_->name; }
const std::vector<Parameter> &Kernel::parameters() const { return program_->parameters; }

void Kernel::applyAccess(const std::vector<ArgumentValue> &arguments,
                         std::vector<PointerArgument> &pointers) const {
  const std::vector<Parameter> &params = program_->parameters;
  std::vector<Access> access(pointers.size(), Access::None);
  std::vector<bool> referenced(pointers.size(), false);
  for (size_t i = 0; i < params.size() && i < arguments.size(); ++i) {
    uint32_t p = arguments[i].pointerIndex;
    if (!params[i].isPointer || p >= pointers.size())
      continue;
    access[p] = access[p] | params[i].access;
    referenced[p] = true;
  }
  for (size_t p = 0; p < pointers.size(); ++p)
    if (referenced[p])
      pointers[p].access = access[p];
}
Access Kernel::reachableAccess() const { return program_->reachableAccess; }
const std::string &Kernel::siteOp(uint32_t site) const { return program_->sites.at(site).op; }
const std::string &Kernel::siteLocation(uint32_t site) const {
  return program_->sites.at(site).location;
}

namespace {
/// A thread's frame, with its arena initialised for this launch.
struct FrameStorage {
  std::unique_ptr<uint8_t[]> bytes;
  Frame frame;

  FrameStorage(const Program &p, const LaunchMemory &memory, const std::vector<ArgumentValue> &args,
               const LaunchOptions &options, PrintSink *printer) {
    bytes.reset(new uint8_t[p.arenaSize + 64]);
    uintptr_t base = (reinterpret_cast<uintptr_t>(bytes.get()) + 63) & ~uintptr_t(63);
    frame.arena = reinterpret_cast<uint8_t *>(base);
    std::memset(frame.arena, 0, p.arenaSize);
    frame.storage.resize(p.slots.size());
    for (size_t s = 0; s < p.slots.size(); ++s)
      frame.storage[s] = frame.arena + p.slots[s].offset;
    frame.program = &p;
    frame.memory = &memory;
    frame.maxSteps = options.maxSteps;
    frame.printer = printer;
    frame.active.assign(p.functions.size(), 0);
    for (int d = 0; d < 3; ++d)
      frame.numPrograms[d] = int32_t(options.grid[d]);
    for (const ConstantInit &c : p.constants)
      std::memcpy(frame.bytes(c.slot), c.bytes.data(), c.bytes.size());
    // Parameters never change during a launch: write them once.
    for (size_t i = 0; i < p.parameters.size(); ++i) {
      const Parameter &param = p.parameters[i];
      SlotId s = p.parameterSlots[i];
      if (param.isPointer && param.descriptorRank) {
        // Its shape and strides are the 2 x rank parameters after it, as Triton passes them.
        unsigned rank = param.descriptorRank;
        writeDescriptorRecord(
            frame.at<int64_t>(s), memory.argumentPointer(args[i].pointerIndex), rank,
            [&](unsigned d) { return int64_t(int32_t(args[i + 1 + d].integer)); },
            [&](unsigned d) { return args[i + 1 + rank + d].integer; }, args[i].integer != 0);
        continue;
      }
      if (param.isPointer) {
        *frame.at<uint64_t>(s) = memory.argumentPointer(args[i].pointerIndex);
        continue;
      }
      visitAny(param.dtype, [&](auto tag) {
        constexpr DType D = decltype(tag)::value;
        using T = Repr<D>;
        if constexpr (isFloat(D))
          *frame.at<T>(s) = roundTo<D>(T(args[i].real));
        else if constexpr (D == DType::I1)
          *frame.at<T>(s) = T(args[i].integer & 1);
        else
          *frame.at<T>(s) = T(args[i].integer);
        return 0;
      });
    }
  }

  void runProgram(int64_t linear) {
    Frame &f = frame;
    f.pid = {int32_t(linear % f.numPrograms[0]),
             int32_t((linear / f.numPrograms[0]) % f.numPrograms[1]),
             int32_t(linear / (int64_t(f.numPrograms[0]) * f.numPrograms[1]))};
    f.steps = 0;
    f.stopped = false;
    if (HazardTracker *h = f.memory->hazardTracker())
      h->beginProgram(linear);
    f.fault.reset();
    runBody(f, f.program->functions[0]->body);
  }
};
} // namespace

std::optional<Fault> Kernel::run(const std::vector<ArgumentValue> &arguments, LaunchMemory &memory,
                                 const LaunchOptions &options) const {
  const Program &p = *program_;
  if (arguments.size() != p.parameters.size()) {
    Fault f;
    f.kind = "arguments";
    f.message = fmt::format("{} takes {} arguments, {} given", p.name, p.parameters.size(),
                            arguments.size());
    return f;
  }
  int64_t total = options.grid[0] * options.grid[1] * options.grid[2];
  PrintSink printer;
  printer.out = options.printStream ? options.printStream : &std::cout;
  unsigned threads = std::max(1u, options.threads);
  // Hazard tracking and a chosen program order both need one program at a time.
  if (threads == 1 || total <= 1 || memory.hazardTracker() ||
      options.order != LaunchOptions::Order::Forward) {
    memory.setConcurrent(false);
    FrameStorage storage(p, memory, arguments, options, &printer);
    std::vector<int64_t> order;
    if (options.order != LaunchOptions::Order::Forward) {
      order.resize(size_t(total));
      for (int64_t i = 0; i < total; ++i)
        order[size_t(i)] = options.order == LaunchOptions::Order::Reverse ? total - 1 - i : i;
      if (options.order == LaunchOptions::Order::Shuffled) {
        // Fisher-Yates with splitmix64: the same seed gives the same order everywhere.
        uint64_t state = options.shuffleSeed;
        auto next = [&state] {
          uint64_t z = (state += 0x9E3779B97F4A7C15ull);
          z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
          z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
          return z ^ (z >> 31);
        };
        for (int64_t i = total - 1; i > 0; --i)
          std::swap(order[size_t(i)], order[size_t(next() % uint64_t(i + 1))]);
      }
    }
    for (int64_t k = 0; k < total; ++k) {
      storage.runProgram(order.empty() ? k : order[size_t(k)]);
      if (storage.frame.fault)
        return storage.frame.fault;
    }
    return std::nullopt;
  }

  // Parallel: workers claim runs of consecutive programs in increasing order
  // (consecutive programs touch consecutive memory: one stream per worker for
  // the prefetcher, not every other page). On a fault, programs after it are
  // skipped but earlier ones still finish, so the fault reported is the one a
  // serial run would report first. The calling thread is one of the workers
  // (runOnThreads).
  memory.setConcurrent(true);
  const int64_t chunk = std::max<int64_t>(1, total / (int64_t(threads) * 64));
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> firstFault{total};
  std::mutex faultMutex;
  std::optional<Fault> fault;
  auto work = [&] {
    FrameStorage storage(p, memory, arguments, options, &printer);
    for (;;) {
      int64_t first = next.fetch_add(chunk);
      if (first >= total)
        return;
      for (int64_t linear = first; linear < std::min(first + chunk, total); ++linear) {
        if (linear > firstFault.load())
          return;
        storage.runProgram(linear);
        if (storage.frame.fault) {
          std::lock_guard<std::mutex> lock(faultMutex);
          if (linear < firstFault.load()) {
            firstFault.store(linear);
            fault = storage.frame.fault;
          }
          return;
        }
      }
    }
  };
  runOnThreads(threads, work);
  memory.setConcurrent(false);
  return fault;
}

} // namespace ttinterp::interp
