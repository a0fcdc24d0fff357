//===- AtomicOps.cpp - tt.atomic_rmw/cas/load/store/poll on the launch's shadows -===//
//
// Each lane is one atomic read-modify-write on the shadow, done with the
// compiler's __atomic builtins so that programs running on other threads see
// it whole (C++17 has no atomic_ref); when one thread runs all the programs it
// is a plain read-modify-write, which nothing can tell apart. Kinds the
// hardware has (add, and, or, xor, exchange on integers) map to fetch-ops; the
// rest (signed/unsigned max/min, float add/max/min, 16-bit floats) are
// compare-and-swap loops on the element's bits; a run of consecutive lanes is
// updated a 16-byte group per compare-and-swap (concurrentRun). Within one op the lanes are
// applied in lane order, which fixes the returned old values when several
// lanes hit one address (lanes of one run hit distinct elements). Every
// access is checked first: a faulting lane stops the program before anything
// of the op happened. All orderings are sequentially consistent, which is at
// least as strong as any `sem`/`scope` the op asks for; with hazard tracking on,
// each op's `sem` and `scope` say what it publishes and acquires (Ordering).
//
//===----------------------------------------------------------------------===//
#include "LaneRuns.h"
#include "OpSupport.h"
#include "simd/Simd.h"

#include "ttinterp/frontend/Dialect.h"
#include "ttinterp/memory/Hazards.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace ttinterp::interp {
namespace {

/// RMWOp as TTIR numbers it.
enum class Rmw { And = 1, Or, Xor, Add, FAdd, Max, Min, UMax, UMin, Xchg };

/// The unsigned integer holding one element's bits in memory.
template <DType D>
using Bits = std::conditional_t<
    byteSize(D) == 1, uint8_t,
    std::conditional_t<byteSize(D) == 2, uint16_t,
                       std::conditional_t<byteSize(D) == 4, uint32_t, uint64_t>>>;

template <DType D> Bits<D> encode(Repr<D> v) {
  Bits<D> b;
  storeElement<D>(reinterpret_cast<uint8_t *>(&b), v);
  return b;
}
template <DType D> Repr<D> decode(Bits<D> b) {
  return loadElement<D>(reinterpret_cast<const uint8_t *>(&b));
}

/// The new contents of an element for the kinds done as a CAS loop.
template <DType D, Rmw K> Repr<D> combine(Repr<D> old, Repr<D> v) {
  if constexpr (isFloat(D)) {
    if constexpr (K == Rmw::Max)
      return std::fmax(old, v); // IEEE maxNum: a NaN operand is ignored
    else if constexpr (K == Rmw::Min)
      return std::fmin(old, v);
    else if constexpr (D == DType::F32)
      return simd::flushSubnormal(simd::flushSubnormal(old) + simd::flushSubnormal(v));
    else
      return old + v; // .noftz: f16/bf16 (rounded once by encode()) and f64 keep subnormals
  } else {
    using U = UnsignedRepr<D>;
    if constexpr (K == Rmw::Max)
      return old > v ? old : v;
    else if constexpr (K == Rmw::Min)
      return old < v ? old : v;
    else if constexpr (K == Rmw::UMax)
      return U(old) > U(v) ? old : v;
    else
      return U(old) < U(v) ? old : v;
  }
}

/// One atomic update of the element at `host`; returns its old value.
template <DType D, Rmw K> Repr<D> atomicUpdate(uint8_t *host, Repr<D> v) {
  using B = Bits<D>;
  B *addr = reinterpret_cast<B *>(host);
  if constexpr (K == Rmw::Xchg) {
    return decode<D>(__atomic_exchange_n(addr, encode<D>(v), __ATOMIC_SEQ_CST));
  } else if constexpr (isInteger(D) && K == Rmw::Add) {
    return decode<D>(__atomic_fetch_add(addr, encode<D>(v), __ATOMIC_SEQ_CST));
  } else if constexpr (K == Rmw::And) {
    return decode<D>(__atomic_fetch_and(addr, encode<D>(v), __ATOMIC_SEQ_CST));
  } else if constexpr (K == Rmw::Or) {
    return decode<D>(__atomic_fetch_or(addr, encode<D>(v), __ATOMIC_SEQ_CST));
  } else if constexpr (K == Rmw::Xor) {
    return decode<D>(__atomic_fetch_xor(addr, encode<D>(v), __ATOMIC_SEQ_CST));
  } else {
    B old = __atomic_load_n(addr, __ATOMIC_RELAXED);
    // On failure `old` is reloaded with the current contents.
    while (!__atomic_compare_exchange_n(addr, &old, encode<D>(combine<D, K>(decode<D>(old), v)),
                                        /*weak=*/false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return decode<D>(old);
  }
}

/// What an atomic op does for happens-before between programs (HazardTracker). Only
/// GPU and system scope reach other programs (a CTA-scoped release orders nothing
/// outside its own), and an acquire counts only where the kernel uses the value read:
/// a program that never looks cannot know which writes it came after, and a
/// histogram's `atomic_add`s (acq_rel by default) would otherwise chain every program.
struct Ordering {
  bool acquires = false, releases = false;
};

const Ordering *orderingOf(mlir::Operation *op, Lowerer &L) {
  enum { Relaxed = 1, Acquire, Release, AcquireRelease };
  enum { Gpu = 1, Cta, System };
  int64_t sem = intAttr(op, "sem", AcquireRelease), scope = intAttr(op, "scope", Gpu);
  // A poll waits for the values it reads, used or not.
  bool observed = mlir::isa<mlir::triton::AtomicPollOp>(op) ||
                  (op->getNumResults() > 0 && !op->getResult(0).use_empty());
  Ordering o;
  o.acquires = scope != Cta && observed && (sem == Acquire || sem == AcquireRelease);
  o.releases = scope != Cta && (sem == Release || sem == AcquireRelease);
  if (o.acquires)
    L.synchronises();
  return L.keep(o);
}

/// One lane's part in happens-before, after its access: what it read is acquired, then
/// what this program did so far is published where it wrote.
void synchronise(Frame &f, const Instr &in, uint64_t p, bool wrote, Release kind) {
  HazardTracker *h = f.memory->hazardTracker();
  if (!h)
    return;
  const Ordering &o = *static_cast<const Ordering *>(in.data);
  uint64_t address = tagged::address(p);
  if (o.acquires)
    h->acquire(address);
  if (wrote && o.releases)
    h->release(address, kind);
  else if (wrote && kind == Release::Store)
    h->release(address, Release::RelaxedStore);
}

/// Checks every active lane's access before anything happens, as stores do.
bool checkLanes(Frame &f, const Instr &in, const uint64_t *p, const uint8_t *mask, int64_t n,
                uint32_t size) {
  const LaunchMemory &mem = *f.memory;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i])
      continue;
    if (!mem.translateWritable(p[i], size)) {
      f.fail(in.site, "out_of_bounds", "atomic access to " + mem.describeFault(p[i], size), i);
      return false;
    }
    // The GPU traps on a misaligned atomic; the host's atomics need alignment too.
    if (tagged::address(p[i]) % size != 0) {
      f.fail(in.site, "misaligned_address",
             fmt::format("atomic access to address 0x{:x}, which is not a multiple of its "
                         "{}-byte element",
                         tagged::address(p[i]), size),
             i);
      return false;
    }
  }
  return true;
}

/// The new contents of an element updated by one lane, from its old bits.
template <DType D, Rmw K> Bits<D> updatedBits(Bits<D> old, Repr<D> v) {
  using B = Bits<D>;
  if constexpr (K == Rmw::Xchg)
    return encode<D>(v);
  else if constexpr (isInteger(D) && K == Rmw::Add)
    return B(old + encode<D>(v)); // as __atomic_fetch_add: modulo 2^bits
  else if constexpr (K == Rmw::And)
    return B(old & encode<D>(v));
  else if constexpr (K == Rmw::Or)
    return B(old | encode<D>(v));
  else if constexpr (K == Rmw::Xor)
    return B(old ^ encode<D>(v));
  else
    return encode<D>(combine<D, K>(decode<D>(old), v));
}

/// One thread's update of a run of consecutive elements at `host` by `length` lanes: their
/// elements are distinct, so the lanes' order within the run cannot matter, and the loop has no
/// dependence from one element to the next. Whether any element changed.
template <DType D, Rmw K>
bool updateRun(uint8_t *__restrict host, const Repr<D> *__restrict v, Repr<D> *__restrict r,
               int64_t length) {
  if constexpr (D == DType::F32 && K == Rmw::FAdd)
    if (length > 1) // a run of a gradient's row: the vector unit's width at a time
      return simd::atomicAddRunF32(reinterpret_cast<float *>(host), v, r, length);
  using B = Bits<D>;
  B changed = 0;
  for (int64_t k = 0; k < length; ++k) {
    B old, now;
    std::memcpy(&old, host + k * int64_t(sizeof(B)), sizeof old);
    now = updatedBits<D, K>(old, v[k]);
    std::memcpy(host + k * int64_t(sizeof(B)), &now, sizeof now);
    r[k] = decode<D>(old);
    changed |= B(now ^ old);
  }
  return changed != 0;
}

#if defined(__x86_64__)
/// Whether the CPU has cmpxchg16b (every x86-64 since 2008; asked once).
bool hasCas16() {
  static const bool has = [] {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B) != 0;
  }();
  return has;
}

/// lock cmpxchg16b of the 16-byte-aligned `at`, with the halves in registers (GCC's 16-byte
/// __atomic builtins would call libatomic). On failure, `low` and `high` are what `at` held.
bool compareExchange16(uint8_t *at, uint64_t &low, uint64_t &high, uint64_t newLow,
                       uint64_t newHigh) {
  bool swapped;
  __asm__ __volatile__("lock cmpxchg16b %1"
                       : "=@ccz"(swapped), "+m"(*reinterpret_cast<unsigned __int128 *>(at)),
                         "+a"(low), "+d"(high)
                       : "b"(newLow), "c"(newHigh)
                       : "memory");
  return swapped;
}
#else
bool hasCas16() { return false; }
bool compareExchange16(uint8_t *, uint64_t &, uint64_t &, uint64_t, uint64_t) { return false; }
#endif

/// An update of a run of consecutive elements at `host` while other threads may update them
/// too: each lane is still one atomic read-modify-write, but the lanes of an aligned group of
/// 16 bytes (8 without cmpxchg16b) are done by one compare-and-swap of the group, together.
/// That is a valid order of their atomics (distinct elements, updated at one instant), with a
/// fourth (a half) of the locked instructions, each of which waits for every store before it:
/// a float scatter-add's lanes otherwise each cost a compare-and-swap loop, which made it
/// slower on two threads than on one. The lanes before the first aligned group and after the
/// last go one by one.
template <DType D, Rmw K>
void concurrentRun(uint8_t *host, const Repr<D> *v, Repr<D> *r, int64_t length) {
  using B = Bits<D>;
  constexpr int64_t size = int64_t(sizeof(B)), perWord = 8 / size, bits = 8 * size;
  const bool wide = hasCas16();
  const int64_t groupBytes = wide ? 16 : 8, perGroup = groupBytes / size;
  const auto misalignment = int64_t(reinterpret_cast<uintptr_t>(host) % uintptr_t(groupBytes));
  int64_t k = std::min(length, (groupBytes - misalignment) % groupBytes / size);
  for (int64_t i = 0; i < k; ++i)
    r[i] = atomicUpdate<D, K>(host + i * size, v[i]);
  // Element j of a group lies in word j / perWord, at bit (j % perWord) * bits.
  auto element = [&](uint64_t word, int64_t j) { return B(word >> (j % perWord * bits)); };
  auto updated = [&](uint64_t word, int64_t first) {
    uint64_t result = 0;
    for (int64_t j = 0; j < perWord; ++j)
      result |= uint64_t(updatedBits<D, K>(element(word, j), v[first + j])) << (j * bits);
    return result;
  };
  for (; k + perGroup <= length; k += perGroup) {
    uint8_t *at = host + k * size;
    auto *word = reinterpret_cast<uint64_t *>(at);
    // A first guess, read in halves: it may be torn, which a failed exchange corrects.
    uint64_t low = __atomic_load_n(word, __ATOMIC_RELAXED);
    uint64_t high = wide ? __atomic_load_n(word + 1, __ATOMIC_RELAXED) : 0;
    if (wide) {
      while (!compareExchange16(at, low, high, updated(low, k), updated(high, k + perWord))) {
      }
    } else {
      while (!__atomic_compare_exchange_n(word, &low, updated(low, k), /*weak=*/false,
                                          __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
      }
    }
    for (int64_t j = 0; j < perGroup; ++j)
      r[k + j] = decode<D>(element(j < perWord ? low : high, j));
  }
  for (; k < length; ++k)
    r[k] = atomicUpdate<D, K>(host + k * size, v[k]);
}

/// Lane i's update at `host`: its old value into r[i]. With one thread running the launch's
/// programs (everything but Executor's parallel path), nothing else can touch the element
/// meanwhile, so a plain read-modify-write (updateRun) does what the atomic would, without the
/// locked instruction (or, for floats, the compare-and-swap loop); a change is noted for spin
/// detection, which only counts then.
template <DType D, Rmw K>
void updateLane(const LaunchMemory &mem, uint8_t *host, const Repr<D> *v, Repr<D> *r, int64_t i) {
  if (mem.concurrent())
    r[i] = atomicUpdate<D, K>(host, v[i]);
  else if (updateRun<D, K>(host, v + i, r + i, 1))
    mem.noteChange();
}

template <DType D, Rmw K, bool HasMask> void rmwKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const T *v = f.at<T>(in.operands[1]);
  const uint8_t *mask = HasMask ? f.at<uint8_t>(in.operands[2]) : nullptr;
  T *r = f.at<T>(in.results[0]);
  const LaunchMemory &mem = *f.memory;
  const int64_t n = in.n;
  if (HasMask)
    for (int64_t i = 0; i < n; ++i)
      if (!mask[i])
        r[i] = T(0); // undefined on the GPU (the predicated-off atom writes no register)
  auto laneByLane = [&] {
    if (!checkLanes(f, in, p, mask, n, size))
      return;
    for (int64_t i = 0; i < n; ++i) {
      if (HasMask && !mask[i])
        continue;
      updateLane<D, K>(mem, mem.translateForAtomic(p[i], size), v, r, i);
      synchronise(f, in, p[i], true, Release::ReadModifyWrite);
    }
  };
  // With hazard tracking, each lane's access and its ordering are recorded as its own.
  if (mem.hazardTracker() || n == 1)
    return laneByLane();
  // A scatter into rows (an embedding's gradient, a histogram's bins in order) is runs of
  // consecutive lanes: each run is checked, translated and marked dirty once, and its lanes
  // updated in order. All runs are checked before any lane changes memory. A run that fails
  // goes lane by lane, which names the faulting lane (or, for a run of untagged pointers
  // across two regions that meet, finds every lane in bounds).
  LaneRunCursor runs(f, p, mask, n, size);
  for (int64_t first, length; runs.next(first, length);)
    if (!mem.translateWritable(p[first], uint32_t(length) * size) ||
        tagged::address(p[first]) % size != 0)
      return laneByLane();
  runs.skipTo(0);
  for (int64_t first, length; runs.next(first, length);) {
    uint8_t *host = mem.translateForAtomic(p[first], uint32_t(length) * size);
    if (mem.concurrent()) {
      concurrentRun<D, K>(host, v + first, r + first, length);
    } else if (updateRun<D, K>(host, v + first, r + first, length)) {
      mem.noteChange();
    }
  }
}

template <DType D> void casKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  using B = Bits<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const T *cmp = f.at<T>(in.operands[1]);
  const T *val = f.at<T>(in.operands[2]);
  T *r = f.at<T>(in.results[0]);
  if (!checkLanes(f, in, p, nullptr, in.n, size))
    return;
  const LaunchMemory &mem = *f.memory;
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    // atom.cas compares bits (so -0.0 and +0.0 differ for floats).
    B expected = encode<D>(cmp[i]);
    // Writable (checkLanes): a swap may write, so its bytes are ready for a write first.
    B *addr = reinterpret_cast<B *>(mem.translateWritable(p[i], size));
    bool swapped = __atomic_compare_exchange_n(addr, &expected, encode<D>(val[i]),
                                               /*weak=*/false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    if (swapped) {
      mem.translateForAtomic(p[i], size); // only a successful swap writes
      if (expected != encode<D>(val[i]))
        mem.noteChange();
    } else {
      mem.translateForAtomicRead(p[i], size); // a failed one reads, as an atomic load
    }
    r[i] = decode<D>(expected); // the old contents either way
    // A failed compare-and-swap is a load: it acquires, and publishes nothing.
    synchronise(f, in, p[i], swapped, Release::ReadModifyWrite);
  }
}

/// tt.atomic_load: masked-off lanes read 0, as masked loads without `other` do.
template <DType D, bool HasMask> void atomicLoadKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  using B = Bits<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const uint8_t *mask = HasMask ? f.at<uint8_t>(in.operands[1]) : nullptr;
  T *r = f.at<T>(in.results[0]);
  if (!checkLanes(f, in, p, mask, in.n, size))
    return;
  const LaunchMemory &mem = *f.memory;
  for (int64_t i = 0, n = in.n; i < n; ++i) {
    if (HasMask && !mask[i]) {
      r[i] = T(0);
      continue;
    }
    auto *addr = reinterpret_cast<B *>(mem.translateForAtomicRead(p[i], size));
    r[i] = decode<D>(__atomic_load_n(addr, __ATOMIC_SEQ_CST));
    synchronise(f, in, p[i], false, Release::ReadModifyWrite);
  }
}

/// tt.atomic_store: lanes store in lane order, so the last of several lanes on one
/// address wins.
template <DType D, bool HasMask> void atomicStoreKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  using B = Bits<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const T *v = f.at<T>(in.operands[1]);
  const uint8_t *mask = HasMask ? f.at<uint8_t>(in.operands[2]) : nullptr;
  const int64_t n = f.slot(in.operands[0]).numel; // no result to count lanes by
  if (!checkLanes(f, in, p, mask, n, size))
    return;
  const LaunchMemory &mem = *f.memory;
  for (int64_t i = 0; i < n; ++i) {
    if (HasMask && !mask[i])
      continue;
    auto *addr = reinterpret_cast<B *>(mem.translateForAtomic(p[i], size));
    if (__atomic_exchange_n(addr, encode<D>(v[i]), __ATOMIC_SEQ_CST) != encode<D>(v[i]))
      mem.noteChange();
    // A relaxed store ends the release sequence of what the location held.
    synchronise(f, in, p[i], true, Release::Store);
  }
}

/// tt.atomic_poll: every element is loaded and compared with `expected`. With a timeout,
/// once: programs run one at a time, so nothing changes the elements during this
/// program's poll, and where they differ the timeout expires (false). Without one, the
/// program waits for the others (Frame::waitForOthers) until every element is there.
template <DType D, bool HasTimeout> void atomicPollKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  using B = Bits<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const T *expected = f.at<T>(in.operands[1]);
  uint8_t *r = f.at<uint8_t>(in.results[0]);
  if (!checkLanes(f, in, p, nullptr, in.n, size))
    return;
  const LaunchMemory &mem = *f.memory;
  for (;;) {
    bool all = true;
    for (int64_t i = 0, n = in.n; i < n; ++i) {
      auto *addr = reinterpret_cast<B *>(mem.translateForAtomicRead(p[i], size));
      r[i] = __atomic_load_n(addr, __ATOMIC_SEQ_CST) == encode<D>(expected[i]);
      all &= r[i] != 0;
      synchronise(f, in, p[i], false, Release::ReadModifyWrite);
    }
    if (HasTimeout || all || !f.waitForOthers(in.site))
      return;
  }
}

/// Whether the hardware (and Triton) has kind K on element type D.
template <DType D, Rmw K> constexpr bool validKind() {
  if constexpr (isInteger(D))
    return D != DType::I1 && K != Rmw::FAdd;
  else if constexpr (isFloat(D) && !isFP8(D))
    return K == Rmw::Add || K == Rmw::FAdd || K == Rmw::Max || K == Rmw::Min || K == Rmw::Xchg;
  else
    return false;
}

template <DType D, Rmw K> ExecFn rmwFn(bool hasMask) {
  if constexpr (validKind<D, K>()) {
    // An integer `add` on floats means fadd.
    constexpr Rmw Kind = isFloat(D) && K == Rmw::Add ? Rmw::FAdd : K;
    return hasMask ? &rmwKernel<D, Kind, true> : &rmwKernel<D, Kind, false>;
  } else {
    return nullptr;
  }
}

template <DType D> ExecFn pickRmw(int kind, bool hasMask) {
  switch (Rmw(kind)) {
  case Rmw::And:
    return rmwFn<D, Rmw::And>(hasMask);
  case Rmw::Or:
    return rmwFn<D, Rmw::Or>(hasMask);
  case Rmw::Xor:
    return rmwFn<D, Rmw::Xor>(hasMask);
  case Rmw::Add:
    return rmwFn<D, Rmw::Add>(hasMask);
  case Rmw::FAdd:
    return rmwFn<D, Rmw::FAdd>(hasMask);
  case Rmw::Max:
    return rmwFn<D, Rmw::Max>(hasMask);
  case Rmw::Min:
    return rmwFn<D, Rmw::Min>(hasMask);
  case Rmw::UMax:
    return rmwFn<D, Rmw::UMax>(hasMask);
  case Rmw::UMin:
    return rmwFn<D, Rmw::UMin>(hasMask);
  case Rmw::Xchg:
    return rmwFn<D, Rmw::Xchg>(hasMask);
  }
  return nullptr;
}

/// The element type behind a pointer-typed value (scalar or tensor of pointers).
std::optional<DType> pointeeDType(mlir::Type t) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t))
    t = tensor.getElementType();
  auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(t);
  if (!pointer || mlir::isa<mlir::RankedTensorType>(pointer.getPointeeType()))
    return std::nullopt;
  return Lowerer::dtypeOf(pointer.getPointeeType());
}

/// Checks that the pointer points to the result's element type; returns the result slot.
SlotId defineResult(mlir::Operation *op, Lowerer &L) {
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return kNoSlot;
  std::optional<DType> pointee = pointeeDType(op->getOperand(0).getType());
  if (!pointee || *pointee != L.slot(r).dtype) {
    L.error(op, "the pointer must point to elements of the result's type");
    return kNoSlot;
  }
  return r;
}

bool lowerAtomicRMW(mlir::Operation *op, Lowerer &L) {
  int kind = int(intAttr(op, "atomic_rmw_op", -1));
  bool hasMask = op->getNumOperands() > 2;
  std::vector<SlotId> operands{L.use(op->getOperand(0)), L.use(op->getOperand(1))};
  if (hasMask)
    operands.push_back(L.use(op->getOperand(2)));
  SlotId r = defineResult(op, L);
  if (r == kNoSlot)
    return false;
  DType d = L.slot(r).dtype;
  auto pick = [&](auto tag) -> ExecFn { return pickRmw<decltype(tag)::value>(kind, hasMask); };
  ExecFn fn = isInteger(d) ? visitInt(d, pick) : visitFloat(d, pick);
  if (!fn)
    return L.error(op, fmt::format("atomic kind {} is not supported on {} elements", kind,
                                   std::string(name(d))));
  L.emit(op, fn, operands, {r}, orderingOf(op, L));
  return true;
}

bool lowerAtomicCAS(mlir::Operation *op, Lowerer &L) {
  std::vector<SlotId> operands{L.use(op->getOperand(0)), L.use(op->getOperand(1)),
                               L.use(op->getOperand(2))};
  SlotId r = defineResult(op, L);
  if (r == kNoSlot)
    return false;
  DType d = L.slot(r).dtype;
  auto pick = [](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if constexpr (D == DType::I1 || isFP8(D))
      return nullptr;
    else
      return &casKernel<D>;
  };
  ExecFn fn = isInteger(d) ? visitInt(d, pick) : visitFloat(d, pick);
  if (!fn)
    return L.error(
        op, fmt::format("compare-and-swap is not supported on {} elements", std::string(name(d))));
  L.emit(op, fn, operands, {r}, orderingOf(op, L));
  return true;
}

/// The kernel for a load or store of `d` elements, or null for i1 and fp8 (Triton
/// widens i1 to i8 before these ops; fp8 has no atomic access).
template <template <DType, bool> class Kernel> ExecFn pickAccess(DType d, bool flag) {
  auto pick = [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if constexpr (D == DType::I1 || isFP8(D))
      return nullptr;
    else
      return flag ? &Kernel<D, true>::run : &Kernel<D, false>::run;
  };
  return isInteger(d) ? visitInt(d, pick) : visitFloat(d, pick);
}
template <DType D, bool F> struct AtomicLoad {
  static void run(Frame &f, const Instr &in) { atomicLoadKernel<D, F>(f, in); }
};
template <DType D, bool F> struct AtomicStore {
  static void run(Frame &f, const Instr &in) { atomicStoreKernel<D, F>(f, in); }
};
template <DType D, bool F> struct AtomicPoll {
  static void run(Frame &f, const Instr &in) {
    if constexpr (isInteger(D) && byteSize(D) >= 2)
      atomicPollKernel<D, F>(f, in);
  }
};

bool lowerAtomicLoad(mlir::Operation *op, Lowerer &L) {
  bool hasMask = op->getNumOperands() > 1;
  std::vector<SlotId> operands{L.use(op->getOperand(0))};
  if (hasMask)
    operands.push_back(L.use(op->getOperand(1)));
  SlotId r = defineResult(op, L);
  if (r == kNoSlot)
    return false;
  ExecFn fn = pickAccess<AtomicLoad>(L.slot(r).dtype, hasMask);
  if (!fn)
    return L.error(op, fmt::format("atomic load is not supported on {} elements",
                                   std::string(name(L.slot(r).dtype))));
  L.emit(op, fn, operands, {r}, orderingOf(op, L));
  return true;
}

bool lowerAtomicStore(mlir::Operation *op, Lowerer &L) {
  bool hasMask = op->getNumOperands() > 2;
  std::vector<SlotId> operands{L.use(op->getOperand(0)), L.use(op->getOperand(1))};
  if (hasMask)
    operands.push_back(L.use(op->getOperand(2)));
  DType d = L.slot(operands[1]).dtype;
  std::optional<DType> pointee = pointeeDType(op->getOperand(0).getType());
  if (!pointee || *pointee != d)
    return L.error(op, "the pointer must point to elements of the value's type");
  ExecFn fn = pickAccess<AtomicStore>(d, hasMask);
  if (!fn)
    return L.error(
        op, fmt::format("atomic store is not supported on {} elements", std::string(name(d))));
  L.emit(op, fn, operands, {}, orderingOf(op, L));
  return true;
}

bool lowerAtomicPoll(mlir::Operation *op, Lowerer &L) {
  // The timeout's value does not matter: whatever it is, nothing changes while it runs.
  bool hasTimeout = op->getNumOperands() > 2;
  std::vector<SlotId> operands{L.use(op->getOperand(0)), L.use(op->getOperand(1))};
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  DType d = L.slot(operands[1]).dtype;
  std::optional<DType> pointee = pointeeDType(op->getOperand(0).getType());
  if (!pointee || *pointee != d || !isInteger(d) || byteSize(d) < 2)
    return L.error(op, "atomic_poll needs a pointer to 16-, 32- or 64-bit integers of the "
                       "expected value's type");
  if (!hasTimeout)
    L.mayWait();
  L.emit(op, pickAccess<AtomicPoll>(d, hasTimeout), operands, {r}, orderingOf(op, L));
  return true;
}

} // namespace

void registerAtomicOps(OpTable &t) {
  t.add("tt.atomic_rmw", &lowerAtomicRMW);
  t.add("tt.atomic_cas", &lowerAtomicCAS);
  t.add("tt.atomic_load", &lowerAtomicLoad);
  t.add("tt.atomic_store", &lowerAtomicStore);
  t.add("tt.atomic_poll", &lowerAtomicPoll);
}

} // namespace ttinterp::interp
