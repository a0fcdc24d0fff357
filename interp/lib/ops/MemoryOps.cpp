//===- MemoryOps.cpp - tt.load and tt.store through the launch's shadows --===//
//
// Every lane's address is translated (and bounds-checked against the
// provenance of its pointer) by LaunchMemory; masked-off lanes are never
// checked or touched. A faulting lane stops the program before anything of
// the op is stored. Accesses FusionPlan fused (Fusion.h) take one contiguous
// run when they can, tiles through outer pointers one run per row, and
// otherwise they rebuild the lanes and take the same path.
//
//===----------------------------------------------------------------------===//
#include "BlockPointerOps.h"
#include "LaneRuns.h"
#include "OpSupport.h"
#include "simd/Simd.h"

#include "ttinterp/frontend/Dialect.h"
#include "ttinterp/memory/StreamingStores.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <tuple>

namespace ttinterp::interp {
namespace {

/// log2 of D's bytes in memory: the shift tt.addptr turns an element offset into bytes with.
template <DType D> constexpr unsigned log2Size() {
  static_assert(byteSize(D) == 1 || byteSize(D) == 2 || byteSize(D) == 4 || byteSize(D) == 8);
  return byteSize(D) == 8 ? 3 : byteSize(D) == 4 ? 2 : byteSize(D) == 2 ? 1 : 0;
}

/// True when D's bytes in memory are its compute representation (no
/// conversion: i8..i64, f32, f64), so runs move with memcpy.
template <DType D> constexpr bool sameLayout() {
  return sizeof(Repr<D>) == byteSize(D) && D != DType::I1 && D != DType::Ptr;
}

void reportAccessFault(Frame &f, const Instr &in, uint64_t p, uint32_t size, int64_t lane,
                       const char *what) {
  f.fail(in.site, "out_of_bounds",
         std::string(what) + " " + f.memory->describeFault(p, size), lane);
}

/// Copies a run of loaded bytes: short runs (a tile's row) inline, 16 bytes at a time,
/// where a call to memcpy would cost more than the copy.
inline void copyRun(void *dst, const void *src, size_t bytes) {
  if (bytes > 256) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto *d = static_cast<uint8_t *>(dst);
  auto *s = static_cast<const uint8_t *>(src);
  size_t k = 0;
  for (; k + 16 <= bytes; k += 16)
    std::memcpy(d + k, s + k, 16);
  for (; k < bytes; ++k)
    d[k] = s[k];
}

/// Where a load or store finds which lanes are active.
enum class MaskKind {
  None,  ///< every lane
  Lanes, ///< an i1 tensor of its shape
  Outer, ///< an [M, 1] and a [1, N] mask (OuterMask, Fusion.h): lane (i, j) is rows[i] && cols[j]
};

/// An outer mask's operands, and the block its lanes are spelled out into when not all active.
struct OuterMaskData {
  int rows = -1, cols = -1; ///< operand positions of the [M, 1] and [1, N] masks (-1: none)
  int64_t m = 0, n = 0;
  SlotId lanes = kNoSlot; ///< scratch, i1 [M, N]
};

/// The lanes of an outer mask, or null when every one is active: the usual case, a tile inside
/// the matrix, costs a look at M + N mask bytes.
const uint8_t *outerMaskLanes(Frame &f, const Instr &in, const OuterMaskData &d) {
  const uint8_t *rows = d.rows >= 0 ? f.at<uint8_t>(in.operands[d.rows]) : nullptr;
  const uint8_t *cols = d.cols >= 0 ? f.at<uint8_t>(in.operands[d.cols]) : nullptr;
  // i1 lanes are bytes 0 or 1: all true is no zero byte (libc's vectorised search).
  auto allTrue = [](const uint8_t *v, int64_t k) {
    return !v || !std::memchr(v, 0, size_t(k));
  };
  if (allTrue(rows, d.m) && allTrue(cols, d.n))
    return nullptr;
  uint8_t *lanes = f.at<uint8_t>(d.lanes);
  for (int64_t i = 0; i < d.m; ++i)
    for (int64_t j = 0; j < d.n; ++j)
      lanes[i * d.n + j] = uint8_t((rows ? rows[i] : 1) & (cols ? cols[j] : 1));
  return lanes;
}

/// Outer pointers (OuterPointers, Fusion.h): operand 0 holds the pointers (one, M or N of
/// them), and the operands at `rowOffsets` and `columnOffsets` (-1: none) the offsets; the
/// others follow at the positions given.
struct OuterPointerData {
  int64_t m = 0, n = 0;
  OuterPointers::Along along = OuterPointers::Everywhere;
  bool wideOffsets = false; ///< i64 offsets; i32 otherwise
  int rowOffsets = -1, columnOffsets = -1;
  int counter = -1; ///< an advanced pointer's (Lowerer::AdvancedPointer)
  int value = -1;   ///< a store's
  int mask = -1;    ///< a Lanes mask
};

/// What a load or store instruction carries besides its operands.
struct AccessData {
  uint32_t startRuns = 0; ///< an advanced pointer's (or outer pointers') Frame::startRuns entry
  OuterMaskData outer;    ///< with MaskKind::Outer
  OuterPointerData outerPointers; ///< of an access through outer pointers
  int other = -1;         ///< operand position of a load's `other` (-1: none)
  /// A load whose only reader takes tile views (readsTileViews): its tile's row length.
  int64_t viewRowLength = 0;
};

/// The active lanes of an access: null when every lane is (MaskKind::None, or an outer mask
/// that is all true); `at` is the position of a Lanes mask.
template <MaskKind K> const uint8_t *activeLanes(Frame &f, const Instr &in, int at) {
  if constexpr (K == MaskKind::Lanes)
    return f.at<uint8_t>(in.operands[at]);
  else if constexpr (K == MaskKind::Outer)
    return outerMaskLanes(f, in, static_cast<const AccessData *>(in.data)->outer);
  else
    return nullptr;
}

/// Lanes [from, n) of a load that are masked off: `other`'s values, or 0 without it (the GPU
/// leaves them undefined).
template <class T, bool HasOther>
void fillMaskedOff(T *r, const T *other, int64_t from, int64_t n) {
  for (int64_t i = from; i < n; ++i)
    r[i] = HasOther ? other[i] : T(0);
}

/// A fused range compare's lanes as mask bytes, in f.laneMask (what the unfused cmpi makes).
template <class Int>
const uint8_t *rangeMaskLanes(Frame &f, Int start, int64_t rangeStart, Int bound, bool isUnsigned,
                              int64_t n) {
  f.laneMask.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    f.laneMask[size_t(i)] = rangeLane<Int>(start, rangeStart, bound, isUnsigned, i);
  return f.laneMask.data();
}

/// Pointers held in a block, lane i at p[i] (what most loads have).
struct PointerBlock {
  const uint64_t *p;
  uint64_t operator()(int64_t i) const { return p[i]; }
};
/// The first lane j >= from whose pointer differs from lane from - 1's, or n.
inline int64_t repeatedPointerEnd(const PointerBlock &block, int64_t from, int64_t n) {
  return simd::repeatedPointerEnd(block.p, from, n);
}
/// The lanes of a gather (OffsetGather): the base advanced by each lane's i32 offset in
/// elements, as tt.addptr makes them.
struct GatherLanes {
  uint64_t base;
  const int32_t *off;
  unsigned shift; ///< log2 of the element's bytes
  uint64_t operator()(int64_t i) const {
    return tagged::advance(base, int64_t(uint64_t(int64_t(off[i])) << shift));
  }
};
/// Lanes that repeat an offset repeat its pointer, and (no address wrapping: gatherLoadKernel
/// checks) only those.
inline int64_t repeatedPointerEnd(const GatherLanes &lanes, int64_t from, int64_t n) {
  return simd::repeatedOffsetEnd(lanes.off, from, n);
}
template <class PointerOf>
int64_t repeatedPointerEnd(const PointerOf &pointerOf, int64_t from, int64_t n) {
  const uint64_t repeated = pointerOf(from - 1);
  while (from < n && pointerOf(from) == repeated)
    ++from;
  return from;
}

/// Loads the lanes of `runs`, lane i from pointerOf(i) (other: the values of masked-off lanes).
template <DType D, bool HasOther, class PointerOf>
void loadRuns(Frame &f, const Instr &in, LaneRunCursor &runs, PointerOf pointerOf,
              const Repr<D> *other, Repr<D> *r, int64_t n) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const LaunchMemory &mem = *f.memory;
  int64_t filled = 0; // lanes before it are loaded or masked off
  for (int64_t i, run; runs.next(i, run);) {
    fillMaskedOff<T, HasOther>(r, other, filled, i); // lanes between runs are masked off
    filled = i + run;
    if (const uint8_t *h = mem.translateForRead(pointerOf(i), uint32_t(run * size))) {
      if constexpr (sameLayout<D>())
        copyRun(r + i, h, size_t(run) * size); // memory and compute layouts agree
      else
        for (int64_t k = 0; k < run; ++k)
          r[i + k] = loadElement<D>(h + k * size);
      if (run == 1) {
        // The active lanes after it that point at the same element read the same value: one
        // weight per channel gathered over a block (a group norm's) was a run, a translation
        // and a copy per lane, then a compare and a copy per lane; now a vector scan and a fill.
        const int64_t j =
            std::min(repeatedPointerEnd(pointerOf, i + 1, n), runs.inactiveFrom(i + 1));
        if (j > i + 1) {
          std::fill(r + i + 1, r + j, r[i]);
          filled = j;
          runs.skipTo(j);
        }
      }
      continue;
    }
    // Part of the run is out of bounds: find the lane, lane by lane.
    for (int64_t end = i + run; i < end; ++i) {
      const uint8_t *h = mem.translateForRead(pointerOf(i), size);
      if (!h) {
        reportAccessFault(f, in, pointerOf(i), size, i, "load of");
        return;
      }
      r[i] = loadElement<D>(h);
    }
  }
  fillMaskedOff<T, HasOther>(r, other, filled, n);
}

/// Loads n lanes from pointers p (mask: active lanes, or null for all; other: masked-off values).
template <DType D, bool HasOther>
void loadLanes(Frame &f, const Instr &in, const uint64_t *p, const uint8_t *mask,
               const Repr<D> *other, Repr<D> *r, int64_t n) {
  LaneRunCursor runs(f, p, mask, n, byteSize(D));
  loadRuns<D, HasOther>(f, in, runs, PointerBlock{p}, other, r, n);
}

/// Reads n elements at lane0 in place when every lane is active, D's memory
/// and compute layouts agree, and the bytes are immutable for the launch and
/// aligned for D: the result slot then points at them and nothing is copied.
template <DType D> bool readInPlace(Frame &f, const Instr &in, uint64_t lane0, int64_t n) {
  if constexpr (sameLayout<D>()) {
    const uint8_t *h = f.memory->translateImmutable(lane0, uint32_t(n * int64_t(byteSize(D))));
    if (h && reinterpret_cast<uintptr_t>(h) % alignof(Repr<D>) == 0) {
      f.readInPlace(in.results[0], h);
      return true;
    }
  }
  return false;
}

/// tt.load(ptr[, mask[, other]]); with MaskKind::Outer the operands are (ptr, its masks...,
/// [other]) and AccessData says where each is.
template <DType D, MaskKind K, bool HasOther> void loadKernel(Frame &f, const Instr &in) {
  const uint64_t *p = f.at<uint64_t>(in.operands[0]);
  const int otherAt = K == MaskKind::Outer ? static_cast<const AccessData *>(in.data)->other : 2;
  const Repr<D> *other = HasOther ? f.at<Repr<D>>(in.operands[otherAt]) : nullptr;
  int64_t n = in.n;
  const uint8_t *mask = activeLanes<K>(f, in, 1);
  if (n == 1) {
    // A scalar (a row's parameter, a counter): nothing to gain from finding runs, and
    // finding them cost more than the load.
    Repr<D> *r = f.atHome<Repr<D>>(in.results[0]);
    if (mask && !mask[0]) {
      r[0] = HasOther ? other[0] : Repr<D>(0);
      return;
    }
    if (const uint8_t *h = f.memory->translateForRead(p[0], uint32_t(byteSize(D))))
      r[0] = loadElement<D>(h);
    else
      reportAccessFault(f, in, p[0], uint32_t(byteSize(D)), 0, "load of");
    return;
  }
  LaneRunCursor runs(f, p, mask, n, byteSize(D));
  if (runs.whole() && f.memory->immutable(p[0]) && readInPlace<D>(f, in, p[0], n))
    return;
  loadRuns<D, HasOther>(f, in, runs, PointerBlock{p}, other, f.atHome<Repr<D>>(in.results[0]), n);
}

/// tt.load through a gather's pointers (OffsetGather): operands (base, offsets, [mask],
/// [other]). The runs of consecutive lanes come from the offsets, which is right when no
/// lane's address leaves the address space (carrying into the tag, as laneBreaks guards
/// against); otherwise the pointers are made as tt.addptr would make them.
template <DType D, bool HasOther>
void gatherLoad(Frame &f, const Instr &in, const GatherLanes &lanes, const uint8_t *mask,
                const Repr<D> *other, int64_t n) {
  constexpr int64_t size = int64_t(byteSize(D));
  int32_t lo = 0, hi = 0;
  LaneRunCursor runs(f, mask, n,
                     [&](uint64_t *breaks) { simd::offsetBreaks(lanes.off, n, breaks, lo, hi); });
  const int64_t address = int64_t(tagged::address(lanes.base));
  if (n > 0 && address + int64_t(lo) * size >= 0 &&
      address + (int64_t(hi) + 1) * size - 1 <= int64_t(tagged::kAddressMask)) {
    if (runs.whole() && f.memory->immutable(lanes(0)) && readInPlace<D>(f, in, lanes(0), n))
      return;
    loadRuns<D, HasOther>(f, in, runs, lanes, other, f.atHome<Repr<D>>(in.results[0]), n);
    return;
  }
  f.lanePointers.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    f.lanePointers[size_t(i)] = lanes(i);
  loadLanes<D, HasOther>(f, in, f.lanePointers.data(), mask, other,
                         f.atHome<Repr<D>>(in.results[0]), n);
}

template <DType D, MaskKind K, bool HasOther> void gatherLoadKernel(Frame &f, const Instr &in) {
  const GatherLanes lanes{*f.at<uint64_t>(in.operands[0]), f.at<int32_t>(in.operands[1]),
                          log2Size<D>()};
  const Repr<D> *other =
      HasOther ? f.at<Repr<D>>(in.operands[static_cast<const AccessData *>(in.data)->other])
               : nullptr;
  gatherLoad<D, HasOther>(f, in, lanes, activeLanes<K>(f, in, 2), other, in.n);
}

/// What a load through stepping offsets (StepGather, Fusion.h) carries: operand positions
/// (-1: absent), and the divisor and addend when they are constants.
struct StepGatherData {
  int64_t rangeStart = 0;
  int start = -1, divisor = -1, addend = -1, bound = -1, mask = -1, other = -1;
  int32_t divisorConstant = 0, addendConstant = 0;
  bool unsignedBound = false;
};

/// tt.load through `base + addend + (start + range) / divisor` (StepGather): one element
/// read and filled in a run of lanes that share a quotient, when the active lanes are a
/// prefix (a bound, or no mask), the divisor is above 1 and no lane's numerator or offset
/// wraps. Otherwise the offsets are made as the unfused ops make them, and loaded as a gather.
template <DType D, bool HasOther> void stepGatherLoadKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr int64_t size = int64_t(byteSize(D));
  const StepGatherData &s = *static_cast<const StepGatherData *>(in.data);
  const uint64_t base = *f.at<uint64_t>(in.operands[0]);
  auto scalar = [&](int at, int32_t constant) {
    return at >= 0 ? *f.at<int32_t>(in.operands[at]) : constant;
  };
  const int32_t start = scalar(s.start, 0), divisor = scalar(s.divisor, s.divisorConstant),
                addend = scalar(s.addend, s.addendConstant);
  const T *other = HasOther ? f.at<T>(in.operands[s.other]) : nullptr;
  const int64_t n = in.n;
  const int64_t first = int64_t(start) + s.rangeStart;
  std::optional<int64_t> active;
  if (s.bound >= 0)
    active = rangePrefix<int32_t>(start, s.rangeStart, *f.at<int32_t>(in.operands[s.bound]),
                                  s.unsignedBound, n);
  else if (s.mask < 0 && first >= INT32_MIN && first + n - 1 <= INT32_MAX)
    active = n;
  // Truncating division by a positive divisor never decreases: the first and last active
  // lanes' offsets bound all of them.
  if (active && divisor > 1 &&
      (*active == 0 || (addend + first / divisor >= INT32_MIN &&
                        addend + (first + *active - 1) / divisor <= INT32_MAX))) {
    T *r = f.atHome<T>(in.results[0]);
    for (int64_t i = 0; i < *active;) {
      const int64_t numerator = first + i, quotient = numerator / divisor;
      // The first numerator with another quotient: truncation gives 0 to (-divisor, divisor).
      const int64_t next = numerator >= 0 ? (quotient + 1) * divisor
                           : quotient < 0 ? quotient * divisor + 1
                                          : divisor;
      const int64_t end = std::min(*active, next - first);
      const uint64_t p = tagged::advance(base, (addend + quotient) * size);
      const uint8_t *h = f.memory->translateForRead(p, uint32_t(size));
      if (!h) {
        reportAccessFault(f, in, p, uint32_t(size), i, "load of");
        return;
      }
      std::fill(r + i, r + end, loadElement<D>(h));
      i = end;
    }
    fillMaskedOff<T, HasOther>(r, other, *active, n);
    return;
  }
  std::vector<int32_t> &offsets = f.laneOffsets;
  offsets.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    offsets[size_t(i)] = laneOffset<int32_t>(start, s.rangeStart, i);
  if (divisor != 0)
    simd::intDivide32(simd::IntDivOp::DivS, offsets.data(), &divisor, true, offsets.data(), n);
  else
    std::fill(offsets.begin(), offsets.end(), int32_t(-1)); // a quotient by zero: all ones
  for (int32_t &offset : offsets)
    offset = int32_t(uint32_t(offset) + uint32_t(addend));
  const uint8_t *mask = nullptr;
  if (s.mask >= 0) {
    mask = f.at<uint8_t>(in.operands[s.mask]);
  } else if (s.bound >= 0) {
    mask = rangeMaskLanes<int32_t>(f, start, s.rangeStart, *f.at<int32_t>(in.operands[s.bound]),
                                   s.unsignedBound, n);
  }
  gatherLoad<D, HasOther>(f, in, GatherLanes{base, offsets.data(), log2Size<D>()}, mask, other, n);
}

bool lowerStepGather(mlir::Operation *op, const StepGather &g, DType d, Lowerer &L) {
  StepGatherData data;
  data.rangeStart = g.offsets.rangeStart;
  data.unsignedBound = g.unsignedBound;
  std::vector<SlotId> operands{L.use(g.base)};
  auto add = [&](mlir::Value v) {
    operands.push_back(L.use(v));
    return int(operands.size() - 1);
  };
  if (g.offsets.start)
    data.start = add(g.offsets.start);
  if (g.offsets.divisor.scalar)
    data.divisor = add(g.offsets.divisor.scalar);
  data.divisorConstant = int32_t(g.offsets.divisor.constant);
  if (g.offsets.addend && g.offsets.addend->scalar)
    data.addend = add(g.offsets.addend->scalar);
  data.addendConstant = g.offsets.addend ? int32_t(g.offsets.addend->constant) : 0;
  if (g.bound)
    data.bound = add(g.bound);
  else if (g.mask)
    data.mask = add(g.mask);
  const bool hasOther = op->getNumOperands() > 2;
  if (hasOther)
    data.other = add(op->getOperand(2));
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visitAny(d, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    return hasOther ? &stepGatherLoadKernel<D, true> : &stepGatherLoadKernel<D, false>;
  });
  L.emit(op, fn, operands, {r}, L.keep(data));
  return true;
}

/// Sets known.rowLength and rowBytes from its runs and offsets.
inline void findRows(Frame::StartRuns &known) {
  known.rowLength = known.rowBytes = 0;
  if (known.runs.size() > 1) {
    const int64_t length = known.runs[0].second, step = known.offsets[1];
    bool rows = true;
    for (size_t k = 0; k < known.runs.size() && rows; ++k)
      rows = known.runs[k].second == length && known.offsets[k] == int64_t(k) * step;
    if (rows) {
      known.rowLength = length;
      known.rowBytes = step;
    }
  }
}

/// Empties known's runs, offsets and span (one tag, until a run says otherwise).
inline void clearRuns(Frame::StartRuns &known, bool anyLanes) {
  known.runs.clear();
  known.offsets.clear();
  known.lo = known.hi = 0;
  known.oneTag = anyLanes;
}

/// Appends the run of `length` lanes from lane `lane` to known's runs; `first` is its first
/// lane's pointer, `start0` lane 0's.
template <DType D>
void appendRun(Frame::StartRuns &known, int64_t lane, int64_t length, uint64_t first,
               uint64_t start0) {
  // Offsets between addresses of one tag: a real span of memory when every run is in it.
  const int64_t offset = int64_t(tagged::address(first) - tagged::address(start0));
  known.oneTag &= tagged::tag(first) == tagged::tag(start0);
  known.runs.emplace_back(lane, length);
  known.offsets.push_back(offset);
  known.lo = std::min(known.lo, offset);
  known.hi = std::max(known.hi, offset + length * int64_t(byteSize(D)));
}

/// What the loads through an advanced pointer reuse for one entry into its loop: the run
/// breaks of the starting pointers, and the runs of a load with every lane active.
template <DType D>
void learnStartRuns(Frame &f, Frame::StartRuns &known, const uint64_t *start, int64_t n,
                    uint64_t loopEntry) {
  known.breaks.resize(size_t((n + 63) / 64));
  simd::laneBreaks(start, n, byteSize(D), known.breaks.data());
  known.loopEntry = loopEntry;
  clearRuns(known, n > 0);
  LaneRunCursor all(f, known.breaks.data(), nullptr, n);
  for (int64_t i, run; all.next(i, run);)
    appendRun<D>(known, i, run, start[i], start[0]);
  findRows(known);
}

/// The lanes of outer pointers (OuterPointerData): lane (i, j) is tt.addptr's sum of the
/// pointer and the offset that the unfused ops would have put there.
struct OuterLanes {
  const uint64_t *pointers;
  const void *rowOffsets = nullptr, *columnOffsets = nullptr;
  const OuterPointerData &shape;
  unsigned shift; ///< log2 of the pointee's bytes

  OuterLanes(const Frame &f, const Instr &in, const OuterPointerData &d, unsigned shift)
      : pointers(f.at<uint64_t>(in.operands[0])), shape(d), shift(shift) {
    if (d.rowOffsets >= 0)
      rowOffsets = f.storage[in.operands[d.rowOffsets]];
    if (d.columnOffsets >= 0)
      columnOffsets = f.storage[in.operands[d.columnOffsets]];
  }
  /// The k-th of `offsets` as a 64-bit pattern (0 when there are none).
  uint64_t offsetBits(const void *offsets, int64_t k) const {
    if (!offsets)
      return 0;
    return shape.wideOffsets ? uint64_t(static_cast<const int64_t *>(offsets)[k])
                             : uint64_t(int64_t(static_cast<const int32_t *>(offsets)[k]));
  }
  /// Lane (i, j)'s offset as arith.addi sums it: wrapping in the offsets' type.
  int64_t offset(int64_t i, int64_t j) const {
    uint64_t sum = offsetBits(rowOffsets, i) + offsetBits(columnOffsets, j);
    return shape.wideOffsets ? int64_t(sum) : int64_t(int32_t(uint32_t(sum)));
  }
  uint64_t pointer(int64_t i, int64_t j) const {
    return pointers[shape.along == OuterPointers::Rows      ? i
                    : shape.along == OuterPointers::Columns ? j
                                                            : 0];
  }
  /// As addPtrKernel adds an offset: its bits shifted, wrapping.
  uint64_t at(int64_t i, int64_t j) const {
    return tagged::advance(pointer(i, j), int64_t(uint64_t(offset(i, j)) << shift));
  }
};

/// What an access through outer pointers knows of its lanes, in `known` as learnStartRuns
/// leaves it: when every row's lanes are consecutive (column offsets or column pointers that
/// step by one element, no offset wrapping its type and no row the address space) its runs
/// follow from the M row starts; otherwise every lane's pointer is spelled out and classified.
template <DType D>
void learnOuterRuns(Frame &f, Frame::StartRuns &known, const OuterLanes &lanes,
                    uint64_t loopEntry) {
  constexpr uint64_t size = byteSize(D);
  const int64_t m = lanes.shape.m, n = lanes.shape.n, total = m * n;
  bool consecutive = true;
  if (lanes.columnOffsets) {
    const uint64_t first = lanes.offsetBits(lanes.columnOffsets, 0);
    for (int64_t j = 1; j < n; ++j)
      consecutive &= lanes.offsetBits(lanes.columnOffsets, j) == first + uint64_t(j);
    // i32 sums stay consecutive along a row when neither end of it wraps.
    for (int64_t i = 0; i < m && consecutive && !lanes.shape.wideOffsets; ++i) {
      int64_t lo = int64_t(lanes.offsetBits(lanes.rowOffsets, i)) + int64_t(first);
      consecutive = lo >= INT32_MIN && lo + (n - 1) <= INT32_MAX;
    }
  }
  if (lanes.shape.along == OuterPointers::Columns) {
    // Consecutive raw values within one address space: one buffer's, no carry into the tag.
    const uint64_t first = lanes.pointers[0];
    consecutive &= tagged::address(first) + uint64_t(n - 1) * size <= tagged::kAddressMask;
    for (int64_t j = 1; j < n; ++j)
      consecutive &= lanes.pointers[j] == first + uint64_t(j) * size;
  }
  known.rowStarts.resize(size_t(m));
  for (int64_t i = 0; i < m; ++i) {
    known.rowStarts[i] = lanes.at(i, 0);
    consecutive &=
        tagged::address(known.rowStarts[i]) + uint64_t(n - 1) * size <= tagged::kAddressMask;
  }
  known.lanePointers.clear();
  if (!consecutive) {
    known.rowStarts.clear();
    known.lanePointers.resize(size_t(total));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        known.lanePointers[i * n + j] = lanes.at(i, j);
    learnStartRuns<D>(f, known, known.lanePointers.data(), total, loopEntry);
    return;
  }
  // A run breaks where simd::laneBreaks would see one: at a row that does not continue the
  // row before it (and nowhere inside a row). The runs are read off the rows as learnStartRuns
  // reads them off the breaks.
  known.breaks.assign(size_t((total + 63) / 64), 0);
  if (total % 64)
    known.breaks.back() = ~uint64_t(0) << (total % 64); // past the lanes: breaks
  clearRuns(known, true);
  for (int64_t i = 0; i < m; ++i) {
    const uint64_t start = known.rowStarts[i];
    if (i > 0 && start == known.rowStarts[i - 1] + uint64_t(n) * size &&
        tagged::address(start) >= size) {
      known.runs.back().second += n; // continues the run before
      known.hi =
          std::max(known.hi, known.offsets.back() + known.runs.back().second * int64_t(size));
    } else {
      known.breaks[(i * n) >> 6] |= uint64_t(1) << ((i * n) & 63);
      appendRun<D>(known, i * n, n, start, known.rowStarts[0]);
    }
  }
  findRows(known);
  known.loopEntry = loopEntry;
}

/// Lane i's pointer among the lanes `learnOuterRuns` knows.
template <DType D> uint64_t outerLane(const Frame::StartRuns &known, int64_t n, int64_t i) {
  if (!known.lanePointers.empty())
    return known.lanePointers[i];
  return known.rowStarts[i / n] + uint64_t(i % n) * byteSize(D);
}

/// Leaves a load's tile where it lies (a tile view, readsTileViews): every lane active, its
/// runs the rows of a tile of `data.viewRowLength` lanes (Frame::StartRuns::rowLength), the
/// span in memory that no program of the launch can write, so reading it when the dot runs
/// reads what the load would have, and aligned for D. False (nothing done) otherwise.
template <DType D>
bool leaveTileInPlace(Frame &f, const Instr &in, const AccessData &data,
                      const Frame::StartRuns &known, uint64_t lane0) {
  constexpr int64_t size = int64_t(byteSize(D));
  // (Rows 0 bytes apart, a broadcast tile, would read as dense: a stride of 0 means dense.)
  if (!sameLayout<D>() || data.viewRowLength == 0 || known.rowLength != data.viewRowLength ||
      known.rowBytes == 0 || known.rowBytes % size != 0)
    return false;
  const uint8_t *h = f.memory->translateImmutable(tagged::advance(lane0, known.lo),
                                                  uint32_t(known.hi - known.lo));
  if (!h || reinterpret_cast<uintptr_t>(h) % alignof(Repr<D>) != 0)
    return false;
  f.readInPlace(in.results[0], h - known.lo);
  f.rowStride[in.results[0]] = known.rowBytes / size;
  return true;
}

/// The rest of a load whose runs `known` holds (an advanced pointer's, outer pointers'): lane
/// i reads pointerOf(i), and a Lanes mask is operand `maskAt`.
template <DType D, MaskKind K, bool HasOther, class PointerOf>
void loadLearnedRuns(Frame &f, const Instr &in, const Frame::StartRuns &known, PointerOf pointerOf,
                     int maskAt) {
  const int64_t n = in.n;
  const auto &data = *static_cast<const AccessData *>(in.data);
  const uint8_t *mask = activeLanes<K>(f, in, maskAt);
  const LaunchMemory &mem = *f.memory;
  // Every lane active (a tile inside the matrix): when the span of all runs is in bounds, so
  // is each run, and one translation serves them all. Where hazard tracking records reads,
  // each run is translated (and recorded) as itself.
  const bool oneSpan = known.oneTag && n > 0 && !mem.tracksReads(pointerOf(0)) &&
                       uint64_t(known.hi - known.lo) <= UINT32_MAX;
  auto copySpan = [&](Repr<D> *r) {
    uint64_t lo = tagged::advance(pointerOf(0), known.lo);
    const uint8_t *h = mem.translate(lo, uint32_t(known.hi - known.lo));
    if (!h)
      return false;
    constexpr uint32_t size = uint32_t(byteSize(D));
    const uint8_t *lane0 = h - known.lo;
    for (size_t k = 0; k < known.runs.size(); ++k) {
      auto [i, run] = known.runs[k];
      const uint8_t *src = lane0 + known.offsets[k];
      if constexpr (sameLayout<D>())
        copyRun(r + i, src, size_t(run) * size);
      else
        for (int64_t j = 0; j < run; ++j)
          r[i + j] = loadElement<D>(src + j * size);
    }
    return true;
  };
  // No mask and several runs (a matmul's tile each iteration): the runs learned are the
  // load's, with no lanes to classify. (One run may be read in place, below.)
  if (data.viewRowLength)
    f.rowStride[in.results[0]] = 0; // dense, unless left in place now
  if (!mask && oneSpan && known.runs.size() > 1 &&
      (leaveTileInPlace<D>(f, in, data, known, pointerOf(0)) ||
       copySpan(f.atHome<Repr<D>>(in.results[0]))))
    return;
  LaneRunCursor runs(f, known.breaks.data(), mask, n);
  if (runs.whole() && mem.immutable(pointerOf(0)) && readInPlace<D>(f, in, pointerOf(0), n))
    return;
  Repr<D> *r = f.atHome<Repr<D>>(in.results[0]);
  if (oneSpan && runs.allActive() && copySpan(r))
    return;
  loadRuns<D, HasOther>(f, in, runs, pointerOf,
                        HasOther ? f.at<Repr<D>>(in.operands[data.other]) : nullptr, r, n);
}

/// tt.load through a pointer tensor that its loop advances by one offset for every lane
/// (Lowerer::AdvancedPointer): operand 0 holds the pointers the loop began with, operand 1
/// the bytes added since (and which entry into the loop this is), and lane i reads
/// tagged::advance(start[i], added). The runs of `start` are found once per entry: adding one
/// offset to every lane keeps a run consecutive unless its addresses wrap, and a wrapped run
/// ends past every window, so its translation fails and its lanes go one by one.
template <DType D, MaskKind K, bool HasOther> void advancedLoadKernel(Frame &f, const Instr &in) {
  const uint64_t *start = f.at<uint64_t>(in.operands[0]);
  const uint64_t *counter = f.at<uint64_t>(in.operands[1]);
  const int64_t added = int64_t(counter[0]);
  const uint32_t cache = static_cast<const AccessData *>(in.data)->startRuns;
  if (f.startRuns.size() <= cache)
    f.startRuns.resize(size_t(cache) + 1);
  Frame::StartRuns &known = f.startRuns[cache];
  if (known.loopEntry != counter[1])
    learnStartRuns<D>(f, known, start, in.n, counter[1]);
  auto pointerOf = [start, added](int64_t i) { return tagged::advance(start[i], added); };
  loadLearnedRuns<D, K, HasOther>(f, in, known, pointerOf, 2);
}

/// tt.load through outer pointers (OuterPointerData): operands (pointers, offsets, [counter],
/// masks..., [other]). Advanced (the pointers a loop starts from, Lowerer::AdvancedPointer):
/// the runs are learned once per entry into the loop and moved by the counter's bytes, as
/// advancedLoadKernel moves its starting pointers; otherwise they are learned each time.
template <DType D, MaskKind K, bool HasOther, bool Advanced>
void outerLoadKernel(Frame &f, const Instr &in) {
  const auto &data = *static_cast<const AccessData *>(in.data);
  if (f.startRuns.size() <= data.startRuns)
    f.startRuns.resize(size_t(data.startRuns) + 1);
  Frame::StartRuns &known = f.startRuns[data.startRuns];
  const int64_t n = data.outerPointers.n;
  int64_t added = 0;
  if constexpr (Advanced) {
    const uint64_t *counter = f.at<uint64_t>(in.operands[data.outerPointers.counter]);
    added = int64_t(counter[0]);
    if (known.loopEntry != counter[1])
      learnOuterRuns<D>(f, known, OuterLanes(f, in, data.outerPointers, log2Size<D>()), counter[1]);
  } else {
    learnOuterRuns<D>(f, known, OuterLanes(f, in, data.outerPointers, log2Size<D>()), 0);
  }
  auto pointerOf = [&known, n, added](int64_t i) {
    return tagged::advance(outerLane<D>(known, n, i), added);
  };
  loadLearnedRuns<D, K, HasOther>(f, in, known, pointerOf, data.outerPointers.mask);
}

/// The runs of a Frame::StartRuns, every lane active, given as LaneRunCursor gives them.
class KnownRuns {
public:
  explicit KnownRuns(const Frame::StartRuns &known) : runs_(known.runs) {}
  bool next(int64_t &first, int64_t &length) {
    if (at_ == runs_.size())
      return false;
    std::tie(first, length) = runs_[at_++];
    return true;
  }

private:
  const std::vector<std::pair<int64_t, int64_t>> &runs_;
  size_t at_ = 0;
};

/// Stores the lanes of `runs` (a LaneRunCursor or KnownRuns) of v, lane i to pointerOf(i).
template <DType D, class Runs, class PointerOf>
void storeRuns(Frame &f, const Instr &in, Runs &runs, PointerOf pointerOf, const Repr<D> *v) {
  constexpr uint32_t size = uint32_t(byteSize(D));
  const LaunchMemory &mem = *f.memory;
  // Check every run first: a faulting store writes nothing.
  std::vector<std::pair<int64_t, int64_t>> &checked = f.runs;
  checked.clear();
  for (int64_t i, run; runs.next(i, run);) {
    if (mem.translateWritable(pointerOf(i), uint32_t(run * size))) {
      checked.emplace_back(i, run);
      continue;
    }
    // The run leaves its window (or spans two regions): lane by lane.
    for (int64_t end = i + run; i < end; ++i) {
      if (!mem.translateWritable(pointerOf(i), size)) {
        reportAccessFault(f, in, pointerOf(i), size, i, "store to");
        return;
      }
      checked.emplace_back(i, 1);
    }
  }
  for (auto [i, run] : checked) {
    uint8_t *h = mem.translateForWrite(pointerOf(i), uint32_t(run * size), f.dirtyRuns);
    if constexpr (sameLayout<D>())
      copyRun(h, v + i, size_t(run) * size);
    else
      for (int64_t k = 0; k < run; ++k)
        storeElement<D>(h + k * size, v[i + k]);
  }
}

/// Stores n lanes of v to pointers p (mask: active lanes, or null for all).
template <DType D>
void storeLanes(Frame &f, const Instr &in, const uint64_t *p, const Repr<D> *v, const uint8_t *mask,
                int64_t n) {
  constexpr uint32_t size = uint32_t(byteSize(D));
  const LaunchMemory &mem = *f.memory;
  if (n == 1) {
    // A scalar (a row's mean, a flag): one translation, no runs to find.
    if (mask && !mask[0])
      return;
    if (uint8_t *h = mem.translateForWrite(p[0], size, f.dirtyRuns))
      storeElement<D>(h, v[0]);
    else
      reportAccessFault(f, in, p[0], size, 0, "store to");
    return;
  }
  LaneRunCursor runs(f, p, mask, n, size);
  storeRuns<D>(
      f, in, runs, [p](int64_t i) { return p[i]; }, v);
}

template <DType D, MaskKind K> void storeKernel(Frame &f, const Instr &in) {
  storeLanes<D>(f, in, f.at<uint64_t>(in.operands[0]), f.at<Repr<D>>(in.operands[1]),
                activeLanes<K>(f, in, 2), f.slot(in.operands[0]).numel);
}

/// tt.store through outer pointers (OuterPointerData): operands (pointers, offsets, value,
/// masks...); a tile's rows found from its M row starts.
template <DType D, MaskKind K> void outerStoreKernel(Frame &f, const Instr &in) {
  const auto &data = *static_cast<const AccessData *>(in.data);
  if (f.startRuns.size() <= data.startRuns)
    f.startRuns.resize(size_t(data.startRuns) + 1);
  Frame::StartRuns &known = f.startRuns[data.startRuns];
  learnOuterRuns<D>(f, known, OuterLanes(f, in, data.outerPointers, log2Size<D>()), 0);
  const int64_t n = data.outerPointers.n;
  auto pointerOf = [&known, n](int64_t i) { return outerLane<D>(known, n, i); };
  const Repr<D> *v = f.at<Repr<D>>(in.operands[data.outerPointers.value]);
  if (const uint8_t *mask = activeLanes<K>(f, in, data.outerPointers.mask)) {
    LaneRunCursor runs(f, known.breaks.data(), mask, data.outerPointers.m * n);
    storeRuns<D>(f, in, runs, pointerOf, v);
  } else {
    KnownRuns runs(known); // every lane active: the runs learned are the store's
    storeRuns<D>(f, in, runs, pointerOf, v);
  }
}

//===----------------------------------------------------------------------===//
// Fused contiguous accesses (Fusion.h)
//===----------------------------------------------------------------------===//

/// Where a fused access finds its scalars among its operands (-1: absent).
struct FusedOperands {
  int64_t rangeStart = 0;
  int start = -1, bound = -1, mask = -1, value = -1, other = -1;
  bool unsignedBound = false;
  uint32_t history = 0; ///< Its entry in Frame::lastAccess.
};

/// Asks for up to `lines` more cache lines of the pending guess (Frame::Prefetched); all
/// that is left of it when `lines` is kAllLines.
constexpr int64_t kAllLines = INT64_MAX / 128;
inline void continuePrefetch(Frame::Prefetched &asked, int64_t lines) {
  const int64_t stop = std::min(asked.bytes, asked.issued + lines * 64);
  if (asked.forWrite)
    for (int64_t b = asked.issued; b < stop; b += 64)
      __builtin_prefetch(asked.start + b, 1);
  else
    for (int64_t b = asked.issued; b < stop; b += 64)
      __builtin_prefetch(asked.start + b, 0);
  asked.issued = stop;
}

/// A fused access of `bytes` at `lane0` (`host` in this process) asks for the bytes its next
/// run will touch: lane0 moves by the same stride from one run to the next (the next
/// program's row, the next iteration's block), so they are guessed as this run's moved by
/// the last stride. One thread runs a layer norm's programs far apart in time (a microsecond
/// each): the hardware's prefetchers, which stop at page ends, left each row's first touch
/// waiting on memory (docs/performance.md, seventh round). A wrong guess costs only the
/// prefetches: they never fault and change no byte.
///
/// A guess is asked for a few lines at a time, by this access and the ones after it: a
/// prefetch waits for a free fill buffer, and a row's 64 lines asked for at once held the
/// core up until most of them had arrived (docs/performance.md, twenty-third round). What
/// is left of a guess when the next one is made is asked for then.
inline void prefetchNext(Frame &f, uint32_t history, uint64_t lane0, const uint8_t *host,
                         int64_t bytes, bool forWrite) {
  // Strides beyond this are not a row or a block apart (or cross buffers: tags differ).
  constexpr int64_t kMaxStride = int64_t(1) << 26;
  // Enough for a row of 4,096 floats; beyond, the access itself trains the prefetchers.
  constexpr int64_t kMaxPrefetch = int64_t(16) << 10;
  constexpr int64_t kLinesPerAccess = 8;
  Frame::Prefetched &asked = f.lastPrefetch;
  continuePrefetch(asked, kLinesPerAccess);
  uint64_t &last = f.lastAccess[history];
  const int64_t stride = int64_t(lane0 - last);
  last = lane0;
  if (stride == 0 || stride > kMaxStride || stride < -kMaxStride)
    return;
  // Integer arithmetic: the guess may lie outside the buffer `host` points into.
  const auto *next =
      reinterpret_cast<const uint8_t *>(reinterpret_cast<uintptr_t>(host) + uintptr_t(stride));
  const int64_t end = std::min(bytes, kMaxPrefetch);
  // Asked for already (by another access of the same row, since): prefetches of lines on
  // their way cost the instructions, and stall when the miss buffers are full.
  if (next == asked.start && end <= asked.bytes && forWrite == asked.forWrite)
    return;
  continuePrefetch(asked, kAllLines);
  asked = {next, end, forWrite};
  continuePrefetch(asked, kLinesPerAccess);
}

/// The common case of a fused access: the lanes' offsets do not wrap, so the
/// pointers are consecutive from `lane0`, and the active lanes are exactly
/// [0, active). False when either does not hold (the caller then goes lane by lane).
/// Int is the offsets' type (RangeCompare::wide), a parameter of the kernels so that the
/// common i32 ones test nothing more.
template <uint32_t Size, class Int>
bool activePrefix(Frame &f, const Instr &in, const FusedOperands &o, int64_t n, uint64_t &lane0,
                  int64_t &active) {
  // i32 offsets and their byte distance fit in i64 (the common case, kept cheap); i64 ones
  // are checked in 128 bits.
  using Wide = std::conditional_t<sizeof(Int) == 4, int64_t, __int128>;
  const Int start = o.start >= 0 ? *f.at<Int>(in.operands[o.start]) : Int(0);
  const Wide first = Wide(start) + o.rangeStart;
  if (first < std::numeric_limits<Int>::min() || first + n - 1 > std::numeric_limits<Int>::max())
    return false;
  if constexpr (sizeof(Int) > 4)
    if (first * Size < INT64_MIN || first * Size > INT64_MAX)
      return false;
  lane0 = tagged::advance(*f.at<uint64_t>(in.operands[0]), int64_t(first) * int64_t(Size));
  if (o.bound >= 0) {
    std::optional<int64_t> prefix =
        rangePrefix<Int>(start, o.rangeStart, *f.at<Int>(in.operands[o.bound]), o.unsignedBound, n);
    if (!prefix)
      return false;
    active = *prefix;
  } else if (o.mask >= 0) {
    const uint8_t *m = f.at<uint8_t>(in.operands[o.mask]);
    const void *zero = std::memchr(m, 0, size_t(n));
    active = zero ? static_cast<const uint8_t *>(zero) - m : n;
    uint8_t rest = 0;
    for (int64_t i = active; i < n; ++i)
      rest |= m[i];
    if (rest)
      return false;
  } else {
    active = n;
  }
  return true;
}

/// The general case: the pointers and mask the unfused ops would have made.
template <uint32_t Size, class Int>
const uint8_t *materializeLanes(Frame &f, const Instr &in, const FusedOperands &o, int64_t n) {
  const Int start = o.start >= 0 ? *f.at<Int>(in.operands[o.start]) : Int(0);
  uint64_t base = *f.at<uint64_t>(in.operands[0]);
  f.lanePointers.resize(size_t(n));
  // As tt.addptr: the offset times the element size, in 64-bit two's complement.
  for (int64_t i = 0; i < n; ++i)
    f.lanePointers[i] = tagged::advance(
        base, int64_t(uint64_t(int64_t(laneOffset<Int>(start, o.rangeStart, i))) * Size));
  if (o.mask >= 0)
    return f.at<uint8_t>(in.operands[o.mask]);
  if (o.bound < 0)
    return nullptr;
  return rangeMaskLanes<Int>(f, start, o.rangeStart, *f.at<Int>(in.operands[o.bound]),
                             o.unsignedBound, n);
}

template <DType D, bool HasOther, class Int> void fusedLoadKernel(Frame &f, const Instr &in) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const FusedOperands &o = *static_cast<const FusedOperands *>(in.data);
  const T *other = HasOther ? f.at<T>(in.operands[o.other]) : nullptr;
  int64_t n = in.n;
  uint64_t lane0;
  int64_t active;
  bool prefix = activePrefix<size, Int>(f, in, o, n, lane0, active);
  if (prefix && active == n && n > 0 && readInPlace<D>(f, in, lane0, n)) {
    prefetchNext(f, o.history, lane0, f.bytes(in.results[0]), n * size, false);
    return;
  }
  T *r = f.atHome<T>(in.results[0]);
  if (prefix) {
    const uint8_t *h = active ? f.memory->translateForRead(lane0, uint32_t(active * size)) : nullptr;
    if (h)
      prefetchNext(f, o.history, lane0, h, active * size, false);
    if (h || !active) {
      if constexpr (sameLayout<D>()) {
        if (active)
          std::memcpy(r, h, size_t(active) * size);
      } else {
        for (int64_t k = 0; k < active; ++k)
          r[k] = loadElement<D>(h + k * size);
      }
      fillMaskedOff<T, HasOther>(r, other, active, n);
      return;
    }
  }
  const uint8_t *mask = materializeLanes<size, Int>(f, in, o, n);
  loadLanes<D, HasOther>(f, in, f.lanePointers.data(), mask, other, r, n);
}

/// Whether a contiguous store of `bytes` at p streams past the caches (LaunchMemory::
/// streamsStores). A short run is left to the caches: its lines are mostly partial, stored
/// plainly anyway, and a row of a kilobyte or more is what a large output is written in.
bool streamedStore(const LaunchMemory &mem, uint64_t p, int64_t bytes) {
  constexpr int64_t kStreamedRunMinimum = 1024;
  return bytes >= kStreamedRunMinimum && mem.streamsStores(p);
}

template <DType D, class Int> void fusedStore(Frame &f, const Instr &in, const FusedOperands &o) {
  using T = Repr<D>;
  constexpr uint32_t size = uint32_t(byteSize(D));
  const T *v = f.at<T>(in.operands[o.value]);
  int64_t n = f.slot(in.operands[o.value]).numel;
  const LaunchMemory &mem = *f.memory;
  uint64_t lane0;
  int64_t active;
  if (activePrefix<size, Int>(f, in, o, n, lane0, active)) {
    if (!active)
      return;
    // One run: translateForWrite refuses (and records nothing) or writes it all.
    if (uint8_t *h = mem.translateForWrite(lane0, uint32_t(active * size), f.dirtyRuns)) {
      if constexpr (sameLayout<D>()) {
        if (streamedStore(mem, lane0, active * size)) {
          streamingCopy(h, v, size_t(active) * size);
          return;
        }
      }
      prefetchNext(f, o.history, lane0, h, active * size, true);
      if constexpr (sameLayout<D>())
        std::memcpy(h, v, size_t(active) * size);
      else
        for (int64_t k = 0; k < active; ++k)
          storeElement<D>(h + k * size, v[k]);
      return;
    }
  }
  // Materialised first: it fills (and may reallocate) f.lanePointers.
  const uint8_t *mask = materializeLanes<size, Int>(f, in, o, n);
  storeLanes<D>(f, in, f.lanePointers.data(), v, mask, n);
}

template <DType D, class Int> void fusedStoreKernel(Frame &f, const Instr &in) {
  fusedStore<D, Int>(f, in, *static_cast<const FusedOperands *>(in.data));
}

/// A fused store that also runs the op defining its value (ContiguousAccess::producer).
struct ForwardedStore {
  FusedOperands operands;
  Instr producer;
};

/// With every lane active and the destination one writable run, the producer writes its
/// block straight into it: its result slot's storage points there while it runs, and it
/// streams (Frame::streamResult) where the store would. Otherwise (a masked tail, a fault to
/// report, a misaligned view) it runs into its own block, which the store then copies, as
/// unfused.
template <DType D, class Int> void forwardedStoreKernel(Frame &f, const Instr &in) {
  const ForwardedStore &s = *static_cast<const ForwardedStore *>(in.data);
  const Instr &producer = s.producer;
  if constexpr (sameLayout<D>()) {
    constexpr uint32_t size = uint32_t(byteSize(D));
    const int64_t n = producer.n;
    uint64_t lane0;
    int64_t active;
    if (activePrefix<size, Int>(f, in, s.operands, n, lane0, active) && active == n && n > 0 &&
        tagged::address(lane0) % alignof(Repr<D>) == 0) {
      // The host address keeps the caller's alignment (a shadow is placed so).
      if (uint8_t *h = f.memory->translateForWrite(lane0, uint32_t(n * size), f.dirtyRuns)) {
        const bool stream = streamedStore(*f.memory, lane0, n * size);
        if (!stream) // a streamed line is not read first: nothing to fetch
          prefetchNext(f, s.operands.history, lane0, h, n * size, true);
        const SlotId result = producer.results[0];
        uint8_t *own = f.storage[result];
        f.storage[result] = h;
        f.streamResult = stream;
        producer.fn(f, producer);
        f.streamResult = false;
        f.storage[result] = own;
        return;
      }
    }
  }
  producer.fn(f, producer);
  fusedStore<D, Int>(f, in, s.operands);
}

/// Lowers a tt.load or tt.store that FusionPlan matched.
bool lowerFusedAccess(mlir::Operation *op, const ContiguousAccess &a, DType d, Lowerer &L) {
  bool load = op->getName().getStringRef() == "tt.load";
  FusedOperands o;
  o.rangeStart = a.range.rangeStart;
  o.unsignedBound = a.range.unsignedBound;
  o.history = L.accessHistory();
  std::vector<SlotId> operands{L.use(a.base)};
  auto add = [&](mlir::Value v) {
    operands.push_back(L.use(v));
    return int(operands.size() - 1);
  };
  if (a.range.start)
    o.start = add(a.range.start);
  if (a.range.bound)
    o.bound = add(a.range.bound);
  else if (a.mask)
    o.mask = add(a.mask);
  if (!load)
    o.value = add(op->getOperand(1));
  else if (op->getNumOperands() > 2)
    o.other = add(op->getOperand(2));
  const Instr *producer = a.producer ? L.forwardedInstr(a.producer) : nullptr;
  ExecFn fn = visitAny(d, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    if (!load)
      return producer
                 ? (a.range.wide ? &forwardedStoreKernel<D, int64_t>
                                 : &forwardedStoreKernel<D, int32_t>)
                 : (a.range.wide ? &fusedStoreKernel<D, int64_t> : &fusedStoreKernel<D, int32_t>);
    if (o.other >= 0)
      return a.range.wide ? &fusedLoadKernel<D, true, int64_t> : &fusedLoadKernel<D, true, int32_t>;
    return a.range.wide ? &fusedLoadKernel<D, false, int64_t> : &fusedLoadKernel<D, false, int32_t>;
  });
  if (load) {
    SlotId r = L.def(op->getResult(0), op);
    if (r == kNoSlot)
      return false;
    L.emit(op, fn, operands, {r}, L.keep(o));
  } else if (producer) {
    L.emit(op, fn, operands, {}, L.keep(ForwardedStore{o, *producer}));
  } else {
    L.emit(op, fn, operands, {}, L.keep(o));
  }
  return true;
}

/// The element type behind a pointer-typed value (scalar or tensor of pointers).
std::optional<DType> pointeeDType(mlir::Type t) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(t))
    t = tensor.getElementType();
  auto pointer = mlir::dyn_cast<mlir::triton::PointerType>(t);
  if (!pointer)
    return std::nullopt;
  mlir::Type pointee = pointer.getPointeeType();
  if (mlir::isa<mlir::RankedTensorType>(pointee))
    return std::nullopt;
  return Lowerer::dtypeOf(pointee);
}

/// Calls fn(std::integral_constant<MaskKind, kind>()).
template <class Fn> ExecFn visitMaskKind(MaskKind kind, Fn fn) {
  switch (kind) {
  case MaskKind::None:
    return fn(std::integral_constant<MaskKind, MaskKind::None>());
  case MaskKind::Lanes:
    return fn(std::integral_constant<MaskKind, MaskKind::Lanes>());
  case MaskKind::Outer:
    return fn(std::integral_constant<MaskKind, MaskKind::Outer>());
  }
  return nullptr;
}

/// Appends the mask of `access` (operand `at`, if it has one) to `operands`: as it is, or an
/// outer mask's rows and columns, described in d.outer with a scratch block for its lanes.
MaskKind useMask(mlir::Operation *access, unsigned at, Lowerer &L, std::vector<SlotId> &operands,
                 AccessData &d) {
  if (access->getNumOperands() <= at)
    return MaskKind::None;
  const OuterMask *outer = L.outerMask(access);
  if (!outer) {
    operands.push_back(L.use(access->getOperand(at)));
    return MaskKind::Lanes;
  }
  auto shape = Lowerer::shapeOf(access->getOperand(0).getType());
  d.outer.m = shape[0];
  d.outer.n = shape[1];
  if (outer->rows) {
    d.outer.rows = int(operands.size());
    operands.push_back(L.use(outer->rows));
  }
  if (outer->cols) {
    d.outer.cols = int(operands.size());
    operands.push_back(L.use(outer->cols));
  }
  d.outer.lanes = L.scratch(DType::I1, {d.outer.m, d.outer.n});
  return MaskKind::Outer;
}

/// Lowers a tt.load or tt.store through outer pointers (OuterPointers, Fusion.h): operands
/// (pointers, offsets, [an advanced pointer's counter | the stored value], masks..., [other]).
bool lowerOuterAccess(mlir::Operation *op, const OuterPointers &outer, DType d, Lowerer &L) {
  const bool load = op->getName().getStringRef() == "tt.load";
  const std::vector<int64_t> shape = Lowerer::shapeOf(op->getOperand(0).getType());
  AccessData data;
  OuterPointerData &o = data.outerPointers;
  o.m = shape[0];
  o.n = shape[1];
  o.along = outer.along;
  mlir::Value someOffsets = outer.rowOffsets ? outer.rowOffsets : outer.columnOffsets;
  o.wideOffsets =
      mlir::cast<mlir::RankedTensorType>(someOffsets.getType()).getElementType().isInteger(64);
  std::vector<SlotId> operands{L.use(outer.pointers)};
  auto add = [&](SlotId slot) {
    operands.push_back(slot);
    return int(operands.size() - 1);
  };
  if (outer.rowOffsets)
    o.rowOffsets = add(L.use(outer.rowOffsets));
  if (outer.columnOffsets)
    o.columnOffsets = add(L.use(outer.columnOffsets));
  const Lowerer::AdvancedPointer *advanced = L.advancedPointer(op->getOperand(0));
  if (mlir::isa<mlir::BlockArgument>(op->getOperand(0)) && (!load || !advanced))
    return L.error(op, "internal error: outer pointers of a loop that does not advance them");
  if (advanced) {
    o.counter = add(advanced->counter);
    data.startRuns = advanced->startRuns;
  } else {
    data.startRuns = L.startRunsCache();
  }
  if (!load)
    o.value = add(L.use(op->getOperand(1)));
  mlir::Value result = load ? op->getResult(0) : mlir::Value();
  if (load && result.hasOneUse() && readsTileViews(*result.use_begin()))
    data.viewRowLength = shape[1];
  o.mask = int(operands.size()); // where useMask puts a Lanes mask
  MaskKind kind = useMask(op, load ? 1 : 2, L, operands, data);
  const bool hasOther = load && op->getNumOperands() > 2;
  if (hasOther) {
    data.other = int(operands.size());
    operands.push_back(L.use(op->getOperand(2)));
  }
  ExecFn fn = visitAny(d, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    return visitMaskKind(kind, [&](auto k) -> ExecFn {
      constexpr MaskKind K = decltype(k)::value;
      if (!load)
        return &outerStoreKernel<D, K>;
      if (advanced)
        return hasOther ? &outerLoadKernel<D, K, true, true> : &outerLoadKernel<D, K, false, true>;
      return hasOther ? &outerLoadKernel<D, K, true, false> : &outerLoadKernel<D, K, false, false>;
    });
  });
  if (!load) {
    L.emit(op, fn, operands, {}, L.keep(data));
    return true;
  }
  SlotId r = L.def(result, op);
  if (r == kNoSlot)
    return false;
  L.emit(op, fn, operands, {r}, L.keep(data));
  return true;
}

bool lowerLoad(mlir::Operation *op, Lowerer &L) {
  // A block pointer carries its own shape, strides and bounds.
  if (mlir::triton::isTensorPointerType(op->getOperand(0).getType()))
    return lowerBlockPointerLoad(op, L);
  std::optional<DType> d = pointeeDType(op->getOperand(0).getType());
  if (!d)
    return L.error(op, "unsupported pointer operand");
  if (const ContiguousAccess *a = L.contiguousAccess(op))
    return lowerFusedAccess(op, *a, *d, L);
  if (const StepGather *g = L.stepGather(op))
    return lowerStepGather(op, *g, *d, L);
  if (const OuterPointers *outer = L.outerPointers(op->getOperand(0)))
    return lowerOuterAccess(op, *outer, *d, L);
  // tt.load(ptr, mask, other) -> (ptr[, counter of an advanced pointer], mask, other), the
  // mask an outer mask's rows and columns where it is one; through a gather's pointers
  // (OffsetGather, Fusion.h), (base, offsets, mask, other).
  const OffsetGather *gather = L.offsetGather(op->getOperand(0));
  const Lowerer::AdvancedPointer *advanced = L.advancedPointer(op->getOperand(0));
  std::vector<SlotId> operands;
  if (gather)
    operands = {L.use(gather->base), L.use(gather->offsets)};
  else
    operands = {L.use(op->getOperand(0))};
  if (advanced)
    operands.push_back(advanced->counter);
  AccessData data;
  if (advanced) {
    data.startRuns = advanced->startRuns;
    mlir::Value tile = op->getResult(0);
    if (tile.hasOneUse() && readsTileViews(*tile.use_begin()))
      data.viewRowLength = Lowerer::shapeOf(tile.getType())[1];
  }
  MaskKind kind = useMask(op, 1, L, operands, data);
  bool hasOther = op->getNumOperands() > 2;
  if (hasOther) {
    data.other = int(operands.size());
    operands.push_back(L.use(op->getOperand(2)));
  }
  SlotId r = L.def(op->getResult(0), op);
  if (r == kNoSlot)
    return false;
  ExecFn fn = visitAny(*d, [&](auto tag) -> ExecFn {
    constexpr DType D = decltype(tag)::value;
    auto pick = [&](auto k) -> ExecFn {
      constexpr MaskKind K = decltype(k)::value;
      if (gather) {
        if constexpr (K == MaskKind::Outer)
          return nullptr; // a 1-D access has no outer mask
        else
          return hasOther ? &gatherLoadKernel<D, K, true> : &gatherLoadKernel<D, K, false>;
      }
      if (advanced)
        return hasOther ? &advancedLoadKernel<D, K, true> : &advancedLoadKernel<D, K, false>;
      return hasOther ? &loadKernel<D, K, true> : &loadKernel<D, K, false>;
    };
    return visitMaskKind(kind, pick);
  });
  if (!fn)
    return L.error(op, "internal error: a gather with an outer mask");
  L.emit(op, fn, operands, {r}, L.keep(data));
  return true;
}

bool lowerStore(mlir::Operation *op, Lowerer &L) {
  if (mlir::triton::isTensorPointerType(op->getOperand(0).getType()))
    return lowerBlockPointerStore(op, L);
  std::optional<DType> d = pointeeDType(op->getOperand(0).getType());
  if (!d)
    return L.error(op, "unsupported pointer operand");
  if (const ContiguousAccess *a = L.contiguousAccess(op))
    return lowerFusedAccess(op, *a, *d, L);
  if (const OuterPointers *outer = L.outerPointers(op->getOperand(0)))
    return lowerOuterAccess(op, *outer, *d, L);
  std::vector<SlotId> operands{L.use(op->getOperand(0)), L.use(op->getOperand(1))};
  AccessData data;
  MaskKind kind = useMask(op, 2, L, operands, data);
  ExecFn fn = visitAny(*d, [&](auto tag) -> ExecFn {
    return visitMaskKind(kind, [](auto k) -> ExecFn {
      return &storeKernel<decltype(tag)::value, decltype(k)::value>;
    });
  });
  L.emit(op, fn, operands, {}, L.keep(data));
  return true;
}

} // namespace

void registerMemoryOps(OpTable &t) {
  t.add("tt.load", &lowerLoad);
  t.add("tt.store", &lowerStore);
}

} // namespace ttinterp::interp
