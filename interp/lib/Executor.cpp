//===- Executor.cpp - Running a Program over a launch grid ----------------===//
#include "Program.h"
#include "ops/BlockPointerOps.h"
#include "simd/Simd.h"

#include "ttinterp/memory/StreamingStores.h"
#include "ttinterp/memory/Workers.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <thread>

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

namespace {
SlotTransfer plan(const Program &program, const std::vector<SlotId> &src,
                  const std::vector<SlotId> &dst, const std::vector<uint8_t> *movable,
                  size_t first) {
  SlotTransfer plan;
  for (size_t i = 0; i < dst.size(); ++i) {
    SlotId from = src[first + i], to = dst[i];
    if (from == to)
      continue;
    bool move = movable && (*movable)[first + i];
    plan.items.push_back({from, to, uint32_t(program.slots[to].bytes()), move});
    // A copy reads its source after the transfer may have written it. A moved value is
    // defined inside the region it leaves, so no destination (an argument) is one.
    plan.staged |= !move && std::find(dst.begin(), dst.end(), from) != dst.end();
  }
  return plan;
}

} // namespace

SlotTransfer planCopies(const Program &program, const std::vector<SlotId> &src,
                        const std::vector<SlotId> &dst) {
  return plan(program, src, dst, nullptr, 0);
}

SlotTransfer planMoves(const Program &program, const Terminator &t, const std::vector<SlotId> &dst,
                       size_t first) {
  return plan(program, t.operands, dst, &t.movable, first);
}

void transferStaged(Frame &f, const SlotTransfer &plan) {
  // Parallel assignment: every copied value is read before any destination is written;
  // the hand-overs, which no copy reads, come last.
  std::vector<uint8_t> staged;
  for (const SlotTransfer::Item &item : plan.items)
    if (!item.move)
      staged.insert(staged.end(), f.bytes(item.from), f.bytes(item.from) + item.bytes);
  size_t at = 0;
  for (const SlotTransfer::Item &item : plan.items)
    if (!item.move) {
      std::memcpy(f.atHome<uint8_t>(item.to), staged.data() + at, item.bytes);
      at += item.bytes;
    }
  for (const SlotTransfer::Item &item : plan.items)
    if (item.move)
      handOver(f, item.from, item.to);
}

void copySlots(Frame &f, const std::vector<SlotId> &src, const std::vector<SlotId> &dst) {
  transfer(f, planCopies(*f.program, src, dst));
}

void failStepLimit(Frame &f, const Body &body) {
  f.fail(
      body.site, "step_limit",
      fmt::format("program exceeded the step limit of {} executed ops (--max-steps)", f.maxSteps));
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

Kernel::Kernel(std::unique_ptr<Program> program) : program_(std::move(program)) {}
Kernel::~Kernel() = default;
const std::string &Kernel::name() const { return program_->name; }
const std::vector<Parameter> &Kernel::parameters() const { return program_->parameters; }
size_t Kernel::frameBytes() const { return program_->arenaSize; }

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
const char *vectorTarget() { return simd::targetName(); }

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
    frame.home.resize(p.slots.size());
    for (size_t s = 0; s < p.slots.size(); ++s)
      frame.home[s] = frame.arena + p.slots[s].offset;
    frame.storage = frame.home;
    frame.rowStride.assign(p.slots.size(), 0);
    frame.program = &p;
    frame.memory = &memory;
    frame.maxSteps = options.maxSteps;
    frame.printer = printer;
    frame.active.assign(p.functions.size(), 0);
    frame.lastAccess.assign(p.accessHistories, 0);
    for (int d = 0; d < 3; ++d)
      frame.numPrograms[d] = int32_t(options.grid[d]);
    for (const ConstantInit &c : p.constants)
      if (!c.bytes.empty()) // a tensor with a 0 in its shape has no bytes (nor a data())
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

  // The thread's streaming stores (LaunchMemory::streamsStores) are seen by whoever reads
  // its results: the write-back, a page exchange, another thread.
  // Its stores are marked dirty before the launch's write-back looks (DirtyRuns).
  ~FrameStorage() {
    frame.dirtyRuns.flush();
    fenceStreamingStores();
  }
  FrameStorage(const FrameStorage &) = delete;
  FrameStorage &operator=(const FrameStorage &) = delete;

  void runProgram(int64_t linear) {
    Frame &f = frame;
    f.pid = {int32_t(linear % f.numPrograms[0]),
             int32_t((linear / f.numPrograms[0]) % f.numPrograms[1]),
             int32_t(linear / (int64_t(f.numPrograms[0]) * f.numPrograms[1]))};
    f.steps = 0;
    f.stopped = false;
    f.linear = linear;
    HazardTracker *hazards = f.memory->hazardTracker();
    if (hazards)
      hazards->beginProgram(linear);
    f.fault.reset();
    // What a library throws (memory exhausted, a stream that fails to print) ends this program
    // as a fault, so that the launch is abandoned like any faulting one; on a worker thread an
    // escaping exception would end the process.
    try {
      runBody(f, f.program->functions[0]->body);
    } catch (const std::bad_alloc &) {
      internalFault("out of memory");
    } catch (const std::exception &e) {
      internalFault(e.what());
    }
    if (hazards)
      hazards->endProgram();
  }

private:
  void internalFault(const std::string &what) {
    Frame &f = frame;
    f.stopped = true;
    Fault fault;
    fault.kind = "internal_error";
    fault.message = "the interpreter could not go on: " + what;
    fault.program = {f.pid[0], f.pid[1], f.pid[2]};
    f.fault = std::move(fault);
  }
};
} // namespace

/// Programs of one launch that wait for each other while programs run one at a time:
/// decoupled look-back, a lock, a flag set by a program that runs later, a grid-wide
/// barrier. On a GPU such programs are co-resident and the one waited for runs too; here a
/// waiting program parks on its own thread and the launch goes on without it (a new thread
/// takes over starting programs), and a parked program is resumed once memory has changed
/// since it parked. Exactly one thread runs interpreter code at a time (the one whose
/// token is `turn_`), so runs stay deterministic and every program order is still honoured.
/// When every program has finished or waits and no waiting program can see a change, the
/// launch faults `spin_wait`, naming the waiting programs and where they wait.
class Cooperation {
public:
  Cooperation(const Program &p, const LaunchMemory &memory, const std::vector<ArgumentValue> &args,
              const LaunchOptions &options, PrintSink *printer, int64_t total,
              std::vector<int64_t> order)
      : program_(p), memory_(memory), args_(args), options_(options), printer_(printer),
        total_(total), order_(std::move(order)) {}

  std::optional<Fault> run() {
    runner(0, 0);
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return done_; });
    lock.unlock();
    for (std::thread &t : threads_)
      t.join();
    return fault_;
  }

  /// Frame::waitForOthers when this launch runs programs one at a time.
  bool wait(Frame &f, uint32_t site) {
    std::unique_lock<std::mutex> lock(m_);
    if (abort_)
      return stop(f, site);
    if (waiting_.size() >= kMaxWaiting) {
      f.fail(site, "spin_wait",
             fmt::format("more than {} programs wait for other programs at once", kMaxWaiting));
      return false;
    }
    waiting_.push_back({f.thread, f.linear, site, f.pid, memory_.changes()});
    if (f.thread == runner_) {
      // Someone must go on starting programs: a new thread, from the next one.
      int next = nextThread_++;
      runner_ = next;
      size_t from = nextIndex_;
      threads_.emplace_back([this, next, from] {
        {
          std::unique_lock<std::mutex> l(m_);
          awaitTurn(next, l);
        }
        runner(next, from);
      });
      handTo(next);
    } else {
      handTo(resumer_.at(f.thread));
    }
    awaitTurn(f.thread, lock);
    if (abort_)
      return stop(f, site);
    if (HazardTracker *h = memory_.hazardTracker())
      h->beginProgram(f.linear);
    return true;
  }

private:
  static constexpr size_t kMaxWaiting = 4096;

  /// Stops a waiting program once the launch has faulted (the launch reports that fault).
  static bool stop(Frame &f, uint32_t site) {
    f.fail(site, "spin_wait", "stopped: another program of the launch faulted");
    return false;
  }
  struct Waiting {
    int thread;
    int64_t linear;
    uint32_t site;
    std::array<int32_t, 3> pid;
    uint64_t changes; ///< memory_.changes() when it parked
  };

  /// Starts the programs from position `from` of the run order on this thread, giving waiting programs that can see
  /// a change a turn before each; when none is left to start, resumes waiting programs
  /// until none is, or none can see a change (a deadlock).
  void runner(int thread, size_t from) {
    FrameStorage storage(program_, memory_, args_, options_, printer_);
    storage.frame.cooperation = this;
    storage.frame.thread = thread;
    for (size_t k = from; k < size_t(total_); ++k) {
      resumeWaiting(thread);
      {
        std::unique_lock<std::mutex> lock(m_);
        if (fault_)
          break;
        nextIndex_ = k + 1;
      }
      storage.runProgram(order_.empty() ? int64_t(k) : order_[k]);
      std::unique_lock<std::mutex> lock(m_);
      if (storage.frame.fault && !fault_)
        fault_ = storage.frame.fault;
      if (thread != runner_) {
        // This program waited and was resumed by another thread: give the turn back.
        handTo(resumer_.at(thread));
        return;
      }
      if (fault_)
        break;
    }
    // Nothing left to start: the waiting programs either finish or are stuck.
    while (!fault_ && resumeWaiting(thread)) {
    }
    std::unique_lock<std::mutex> lock(m_);
    if (!fault_ && !waiting_.empty())
      fault_ = deadlock();
    // Let every waiting program give up (wait() returns false), one at a time.
    abort_ = true;
    while (!waiting_.empty()) {
      Waiting w = waiting_.front();
      waiting_.pop_front();
      resumer_[w.thread] = thread;
      handTo(w.thread);
      awaitTurn(thread, lock);
    }
    done_ = true;
    cv_.notify_all();
  }

  /// Gives a turn to each waiting program that can see a change since it parked, in the
  /// order they parked; returns whether any ran.
  bool resumeWaiting(int thread) {
    bool resumed = false;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      if (fault_ || abort_)
        return resumed;
      auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiting &w) {
        return w.changes != memory_.changes();
      });
      if (it == waiting_.end())
        return resumed;
      Waiting w = *it;
      waiting_.erase(it);
      resumer_[w.thread] = thread;
      handTo(w.thread);
      awaitTurn(thread, lock);
      resumed = true;
    }
  }

  Fault deadlock() {
    std::sort(waiting_.begin(), waiting_.end(),
              [](const Waiting &a, const Waiting &b) { return a.linear < b.linear; });
    const Waiting &first = waiting_.front();
    Fault f;
    f.kind = "spin_wait";
    f.op = program_.sites[first.site].op;
    f.location = program_.sites[first.site].location;
    f.program = {first.pid[0], first.pid[1], first.pid[2]};
    std::string who;
    size_t shown = 0;
    for (const Waiting &w : waiting_) {
      if (shown++ == 8) {
        who += fmt::format(", and {} more", waiting_.size() - 8);
        break;
      }
      who += fmt::format("{}({}, {}, {}) at {}", who.empty() ? "" : ", ", w.pid[0], w.pid[1],
                         w.pid[2], program_.sites[w.site].location);
    }
    f.message = fmt::format(
        "inter-program synchronisation that cannot complete: {} program(s) wait for memory that "
        "no other program of the launch changes (every other program has finished or waits "
        "too): {}",
        waiting_.size(), who);
    return f;
  }

  void handTo(int thread) {
    turn_ = thread;
    cv_.notify_all();
  }
  void awaitTurn(int thread, std::unique_lock<std::mutex> &lock) {
    cv_.wait(lock, [&] { return turn_ == thread; });
  }

  const Program &program_;
  const LaunchMemory &memory_;
  const std::vector<ArgumentValue> &args_;
  const LaunchOptions &options_;
  PrintSink *printer_;
  const int64_t total_;
  const std::vector<int64_t> order_; ///< The run order; empty: linear ids in increasing order.

  std::mutex m_;
  std::condition_variable cv_;
  int turn_ = 0, runner_ = 0, nextThread_ = 1;
  size_t nextIndex_ = 0;
  std::deque<Waiting> waiting_;
  std::map<int, int> resumer_; ///< Thread -> the thread that resumed it.
  std::vector<std::thread> threads_;
  std::optional<Fault> fault_;
  bool abort_ = false, done_ = false;
};

bool Frame::waitForOthers(uint32_t site) {
  if (cooperation)
    return cooperation->wait(*this, site);
  // Kernels that may wait run their programs one at a time, cooperating (Program::mayWait).
  fail(site, "spin_wait",
       "the program waits for memory that only another program can change, outside a "
       "cooperative run (an internal error in ttinterp: please report it with the kernel)");
  return false;
}

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
  if (HazardTracker *h = memory.hazardTracker())
    h->setSynchronising(p.synchronises);
  // Hazard tracking, a chosen program order and programs that may wait for each other
  // all need one program at a time.
  if (threads == 1 || total <= 1 || memory.hazardTracker() || p.mayWait ||
      options.order != LaunchOptions::Order::Forward) {
    memory.setConcurrent(false);
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
    if (p.mayWait)
      return Cooperation(p, memory, arguments, options, &printer, total, std::move(order)).run();
    // No program can wait for another, so none needs the cooperative turn-taking (whose lock
    // around every program was a tenth of a one-thread layer norm): one after another.
    FrameStorage storage(p, memory, arguments, options, &printer);
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
  // No more threads than programs: the rest would find nothing to claim.
  runOnThreads(unsigned(std::min<int64_t>(threads, total)), work);
  memory.setConcurrent(false);
  return fault;
}

} // namespace ttinterp::interp
