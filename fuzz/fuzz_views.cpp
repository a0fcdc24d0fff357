//===- fuzz_views.cpp - libFuzzer target: valid kernels on random views of one buffer ----===//
//
// Structure-aware: the input's bytes are choices, not text. They pick a few launches in one
// memory Session, each a kernel made from a template (copy, add, atomic add; element type;
// block size; unit or strided indexing), a grid, `n`, the strides the kernel indexes with,
// and views of ONE host buffer (offsets, shapes and strides: identical, overlapping,
// interleaved, disjoint, empty, even misaligned), plus syncs and steps between launches,
// Argument or Region bounds, shadowed or in-place memory. Every input decodes to a valid
// case, so the memory model and the interpreter get exercised, not only the parser.
//
// Each case runs twice in effect: through ttinterp, and through an independent model here
// of sequential program semantics (programs in order; in a program each op in order, a
// faulting op stores nothing and ends the launch). The invariants checked:
//  * a launch faults exactly when the model says an active lane leaves the window its
//    pointer may touch (its argument's extent, or its region's), in the same program;
//  * caller bytes: after a sync, a step, or a faulting launch's abandon, the buffer holds
//    what the model says (a fault loses what was still pending; in-place keeps it), so a
//    faulting launch never changes a byte the caller owns, and an in-bounds copy gives the copy
//    (with a buffer past 1 MiB, whose read-write region may be written in place before the
//    step, a sync is checked over the synced bytes);
//  * the overlap classifier agrees with brute force on every pair of views.
// Values are compared only when no store writes one byte twice (whose lane wins there is
// ttinterp's choice, not a promise).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ttinterp/frontend/Frontend.h"
#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/memory/Overlap.h"
#include "ttinterp/memory/Session.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace ttinterp;

namespace {

enum class Kind { Copy, Add, Atomic };

/// One kernel template instance. Pointers: copy (src, dst), add (a, b, out), atomic (src,
/// dst); then n and one i32 stride per pointer (ignored where `unit` says the template
/// indexes that pointer by the bare lane index, the form the fused fast paths take).
struct Template {
  Kind kind = Kind::Copy;
  DType dtype = DType::I32;
  int block = 4;
  unsigned unit = 0; ///< Bit k: pointer k indexed without its stride.
  int pointers() const { return kind == Kind::Add ? 3 : 2; }
  std::string key() const {
    return fmt::format("{}/{}/{}/{}", int(kind), int(dtype), block, unit);
  }
};

constexpr DType kCopyTypes[] = {DType::I8,  DType::I16, DType::I32,  DType::I64,
                                DType::F16, DType::BF16, DType::F32, DType::F64,
                                DType::F8E5M2};
constexpr DType kIntegerTypes[] = {DType::I8, DType::I16, DType::I32, DType::I64};
constexpr int kBlocks[] = {1, 2, 4, 8, 16, 64};

/// TTINTERP_FUZZ_VERBOSE=1 prints each case as it is decoded (to read a saved crash input).
const bool verbose = std::getenv("TTINTERP_FUZZ_VERBOSE") != nullptr;

std::string ttirOf(const Template &t) {
  std::string T(name(t.dtype));
  std::string B = std::to_string(t.block);
  std::string I = "tensor<" + B + "xi32>";
  std::string P = "tensor<" + B + "x!tt.ptr<" + T + ">>";
  std::string V = "tensor<" + B + "x" + T + ">";
  std::string s = "module {\n  tt.func public @k(";
  for (int k = 0; k < t.pointers(); ++k)
    s += fmt::format("%p{}: !tt.ptr<{}>, ", k, T);
  s += "%n: i32";
  for (int k = 0; k < t.pointers(); ++k)
    s += fmt::format(", %s{}: i32", k);
  s += ") {\n";
  s += fmt::format("    %cB = arith.constant {} : i32\n", B);
  s += "    %pid = tt.get_program_id x : i32\n";
  s += "    %base = arith.muli %pid, %cB : i32\n";
  s += fmt::format("    %range = tt.make_range {{end = {} : i32, start = 0 : i32}} : {}\n", B, I);
  s += fmt::format("    %bases = tt.splat %base : i32 -> {}\n", I);
  s += fmt::format("    %idx = arith.addi %bases, %range : {}\n", I);
  s += fmt::format("    %ns = tt.splat %n : i32 -> {}\n", I);
  s += fmt::format("    %mask = arith.cmpi slt, %idx, %ns : {}\n", I);
  for (int k = 0; k < t.pointers(); ++k) {
    std::string offset = "%idx";
    if (!(t.unit >> k & 1)) {
      s += fmt::format("    %ss{0} = tt.splat %s{0} : i32 -> {1}\n", k, I);
      s += fmt::format("    %off{0} = arith.muli %idx, %ss{0} : {1}\n", k, I);
      offset = fmt::format("%off{}", k);
    }
    s += fmt::format("    %ps{0} = tt.splat %p{0} : !tt.ptr<{1}> -> {2}\n", k, T, P);
    s += fmt::format("    %a{0} = tt.addptr %ps{0}, {1} : {2}, {3}\n", k, offset, P, I);
  }
  switch (t.kind) {
  case Kind::Copy:
    s += fmt::format("    %v = tt.load %a0, %mask : {}\n", P);
    s += fmt::format("    tt.store %a1, %v, %mask : {}\n", P);
    break;
  case Kind::Add:
    s += fmt::format("    %x = tt.load %a0, %mask : {}\n", P);
    s += fmt::format("    %y = tt.load %a1, %mask : {}\n", P);
    s += fmt::format("    %z = arith.addi %x, %y : {}\n", V);
    s += fmt::format("    tt.store %a2, %z, %mask : {}\n", P);
    break;
  case Kind::Atomic:
    s += fmt::format("    %v = tt.load %a0, %mask : {}\n", P);
    s += fmt::format("    %old = tt.atomic_rmw add, acq_rel, gpu, %a1, %v, %mask : ({}, {}, "
                     "tensor<{}xi1>) -> {}\n",
                     P, V, B, V);
    break;
  }
  s += "    tt.return\n  }\n}\n";
  return s;
}

/// Lowered kernels by template, for the whole run: a few hundred templates at most.
const interp::Kernel &kernelFor(const Template &t) {
  static std::unique_ptr<mlir::MLIRContext> context = frontend::makeContext();
  struct Loaded {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    std::unique_ptr<interp::Kernel> kernel;
  };
  static std::map<std::string, Loaded> cache;
  Loaded &entry = cache[t.key()];
  if (!entry.kernel) {
    std::string error;
    entry.module = frontend::parseTTIR(*context, ttirOf(t), "views.ttir", error);
    if (!entry.module)
      fuzz::invariantBroken("a template kernel does not load:", error.c_str());
    mlir::FunctionOpInterface fn = frontend::findFunction(*entry.module, "k", error);
    if (!fn)
      fuzz::invariantBroken("a template kernel has no function k:", error.c_str());
    entry.kernel = interp::Kernel::lower(fn, error);
    if (!entry.kernel)
      fuzz::invariantBroken("a template kernel does not lower:", error.c_str());
  }
  return *entry.kernel;
}

/// Byte offsets (from the view's address) of each element's first byte, in C order.
std::vector<int64_t> elementOffsets(const View &v) {
  std::vector<int64_t> out;
  if (v.numElements() == 0)
    return out;
  std::vector<int64_t> index(v.rank(), 0);
  int64_t size = int64_t(byteSize(v.dtype));
  while (true) {
    int64_t offset = 0;
    for (size_t d = 0; d < v.rank(); ++d)
      offset += index[d] * v.strides[d];
    out.push_back(offset * size);
    size_t d = v.rank();
    while (d > 0 && ++index[d - 1] == v.shape[d - 1])
      index[--d] = 0;
    if (d == 0)
      return out;
  }
}

std::set<uint64_t> bytesOf(const View &v) {
  std::set<uint64_t> bytes;
  for (int64_t offset : elementOffsets(v))
    for (size_t b = 0; b < byteSize(v.dtype); ++b)
      bytes.insert(v.address + uint64_t(offset) + b);
  return bytes;
}

/// The overlap classifier against brute force for one pair of views.
void checkOverlap(const View &a, const View &b) {
  std::set<uint64_t> x = bytesOf(a), y = bytesOf(b);
  bool shared = std::any_of(x.begin(), x.end(), [&](uint64_t p) { return y.count(p) != 0; });
  SharesMemory s = sharesMemory(a, b);
  if ((s == SharesMemory::Yes && !shared) || (s == SharesMemory::No && shared))
    fuzz::invariantBroken("sharesMemory disagrees with brute force:",
                          (a.describe() + " vs " + b.describe()).c_str());
  OverlapClass c = classify(a, b);
  if (c == OverlapClass::Disjoint && shared)
    fuzz::invariantBroken("classify calls sharing views disjoint:",
                          (a.describe() + " vs " + b.describe()).c_str());
  if (c == OverlapClass::Identical) {
    std::vector<int64_t> ea = elementOffsets(a), eb = elementOffsets(b);
    if (a.dtype != b.dtype || a.address != b.address || ea != eb)
      fuzz::invariantBroken("classify calls different views identical:",
                            (a.describe() + " vs " + b.describe()).c_str());
  }
  if (c != OverlapClass::Disjoint && !shared && s != SharesMemory::TooHard)
    fuzz::invariantBroken("classify calls disjoint views overlapping:",
                          (a.describe() + " vs " + b.describe()).c_str());
}

/// A view of the buffer [0, bytes) at `base`, decoded from the input; its extent lies
/// inside the buffer.
View makeView(fuzz::ByteReader &in, uint64_t base, size_t bytes, DType dtype, bool misalign) {
  View v;
  v.dtype = dtype;
  int64_t size = int64_t(byteSize(dtype));
  int64_t elements = int64_t(bytes) / size - 1; // one element's slack for a misaligned start
  size_t rank = size_t(in.range(1, 3));
  for (size_t d = 0; d < rank; ++d) {
    v.shape.push_back(in.range(0, rank == 1 ? 24 : 6));
    v.strides.push_back(in.range(-6, 6));
  }
  // Shrink until the span fits.
  auto span = [&](int64_t &low, int64_t &high) {
    low = high = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t reach = (v.shape[d] - 1) * v.strides[d];
      (reach < 0 ? low : high) += reach;
    }
  };
  auto isEmpty = [&] { return std::find(v.shape.begin(), v.shape.end(), 0) != v.shape.end(); };
  int64_t low = 0, high = 0;
  while (!isEmpty()) {
    span(low, high);
    if (high - low + 1 <= elements)
      break;
    --*std::max_element(v.shape.begin(), v.shape.end());
  }
  if (isEmpty())
    low = high = 0;
  int64_t first = -low + in.range(0, std::max<int64_t>(0, elements - 1 - (high - low)));
  int64_t shift = misalign ? in.range(0, size - 1) : 0;
  v.address = base + uint64_t(first * size + shift);
  return v;
}

struct LaunchCase {
  Template t;
  std::array<int64_t, 3> grid = {1, 1, 1};
  int64_t n = 0;
  std::vector<int64_t> strides; ///< Per pointer, in elements, as the kernel indexes.
  std::vector<View> views;
};

/// The bits a loaded element has when stored again. Narrow floats pass through a float
/// (docs/semantics.md, "Values and rounding"): an f16 or bf16 NaN keeps its sign and payload
/// but comes out quiet; an fp8 NaN becomes the canonical 0x7F. Everything else is exact.
uint64_t throughComputeRepresentation(DType dtype, uint64_t bits) {
  switch (dtype) {
  case DType::F16:
    return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) ? bits | 0x200 : bits;
  case DType::BF16:
    return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) ? bits | 0x40 : bits;
  case DType::F8E5M2:
    return (bits & 0x7c) == 0x7c && (bits & 0x3) ? 0x7f : bits;
  default:
    return bits;
  }
}

/// The independent model: caller-visible memory as sequential semantics leave it.
class Model {
public:
  Model(std::vector<uint8_t> bytes, uint64_t base) : bytes_(std::move(bytes)), base_(base) {}

  /// Runs `c` with windows [lo, hi) per pointer. Returns the faulting program, if any;
  /// sets `collided` when a store wrote some byte twice (the winner is not specified).
  std::optional<int64_t> run(const LaunchCase &c, const std::vector<ByteRange> &windows,
                             bool &collided) {
    int64_t size = int64_t(byteSize(c.t.dtype));
    int64_t programs = c.grid[0] * c.grid[1] * c.grid[2];
    for (int64_t pid = 0; pid < programs; ++pid) {
      // Addresses of the active lanes through pointer k.
      auto lanes = [&](int k) {
        std::vector<uint64_t> out;
        for (int64_t j = 0; j < c.t.block; ++j) {
          int64_t idx = (pid % c.grid[0]) * c.t.block + j;
          if (idx >= c.n)
            continue;
          int64_t step = (c.t.unit >> k & 1) ? 1 : c.strides[k];
          out.push_back(c.views[k].address + uint64_t(idx * step * size));
        }
        return out;
      };
      auto inside = [&](int k, const std::vector<uint64_t> &addresses) {
        for (uint64_t a : addresses)
          if (a < windows[k].lo || a + uint64_t(size) > windows[k].hi)
            return false;
        return true;
      };
      auto load = [&](int k, std::vector<uint64_t> &values) {
        std::vector<uint64_t> addresses = lanes(k);
        if (!inside(k, addresses))
          return false;
        values.clear();
        for (uint64_t a : addresses)
          values.push_back(read(a, size));
        return true;
      };
      auto store = [&](int k, const std::vector<uint64_t> &values, bool accumulate) {
        std::vector<uint64_t> addresses = lanes(k);
        if (!inside(k, addresses))
          return false;
        std::set<uint64_t> written;
        for (size_t i = 0; i < addresses.size(); ++i) {
          for (int64_t b = 0; b < size; ++b)
            if (!written.insert(addresses[i] + uint64_t(b)).second && !accumulate)
              collided = true;
          write(addresses[i], size, accumulate ? read(addresses[i], size) + values[i] : values[i]);
        }
        return true;
      };
      std::vector<uint64_t> x, y;
      switch (c.t.kind) {
      case Kind::Copy:
        if (!load(0, x))
          return pid;
        for (uint64_t &v : x)
          v = throughComputeRepresentation(c.t.dtype, v);
        if (!store(1, x, false))
          return pid;
        break;
      case Kind::Add:
        if (!load(0, x) || !load(1, y))
          return pid;
        for (size_t i = 0; i < x.size(); ++i)
          x[i] += y[i];
        if (!store(2, x, false))
          return pid;
        break;
      case Kind::Atomic:
        if (!load(0, x) || !store(1, x, true))
          return pid;
        break;
      }
    }
    return std::nullopt;
  }
  const std::vector<uint8_t> &bytes() const { return bytes_; }

private:
  /// Offset of [address, address + size) in the buffer; the windows keep it inside.
  size_t at(uint64_t address, int64_t size) const {
    if (address < base_ || address - base_ + uint64_t(size) > bytes_.size())
      fuzz::invariantBroken("the model left the buffer (a bad window)");
    return size_t(address - base_);
  }
  uint64_t read(uint64_t address, int64_t size) const {
    uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + at(address, size), size_t(size)); // little endian
    return v;
  }
  void write(uint64_t address, int64_t size, uint64_t v) {
    std::memcpy(bytes_.data() + at(address, size), &v, size_t(size));
  }
  std::vector<uint8_t> bytes_;
  uint64_t base_;
};

/// Regions as Session::prepare forms them: byte-sharing extents merged, with the live ones.
std::vector<ByteRange> mergeRegions(std::vector<ByteRange> ranges) {
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                              [](const ByteRange &r) { return r.empty(); }),
               ranges.end());
  std::sort(ranges.begin(), ranges.end(),
            [](const ByteRange &a, const ByteRange &b) { return a.lo < b.lo; });
  std::vector<ByteRange> merged;
  for (const ByteRange &r : ranges)
    if (!merged.empty() && r.lo < merged.back().hi)
      merged.back().hi = std::max(merged.back().hi, r.hi);
    else
      merged.push_back(r);
  return merged;
}

void expectCaller(const fuzz::HostBuffer &buffer, const std::vector<uint8_t> &expected,
                  const char *when) {
  if (!buffer.equals(expected)) {
    size_t at = 0;
    while (at < expected.size() && buffer.data()[at] == expected[at])
      ++at;
    if (verbose)
      for (size_t i = at & ~size_t(15); i < std::min(expected.size(), (at & ~size_t(15)) + 32); ++i)
        std::fprintf(stderr, "  byte %zu: caller %02x, expected %02x%s\n", i, buffer.data()[i],
                     expected[i], buffer.data()[i] == expected[i] ? "" : "  <--");
    fuzz::invariantBroken(when, fmt::format("(first differing byte {})", at).c_str());
  }
}

} // namespace

static std::string t2s(const Template &t) {
  static const char *kinds[] = {"copy", "add", "atomic add"};
  return fmt::format("{} {} block {} unit-indexed mask {}", kinds[int(t.kind)], name(t.dtype),
                     t.block, t.unit);
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Its kernels live for the whole run, so their chains would reach the lanes that start a
  // compiler thread midway: fuzz_ttir covers compiled chains, this target the views.
  interp::setChainCompilation(interp::ChainCompilation::Off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz::ByteReader in(data, size);
  Session::Options options;
  options.bounds = in.flag() ? BoundsMode::Region : BoundsMode::Argument;
  const uint8_t mode = in.byte();
  options.inPlace = (mode & 7) == 0;
  // One case in eight, a buffer past the size where a read-write region is written in place
  // with its chunks saved (or copied in as touched), its first view reaching the end: the
  // caller sees such a region's writes before the step, so only syncs, steps and faults are
  // checked against the caller's bytes.
  const bool large = !options.inPlace && (mode & 0x38) == 0x38;
  size_t bufferBytes = size_t(in.range(1, 64)) * 16 + (large ? size_t(kCopyInOnTouchMinimum) : 0);
  fuzz::HostBuffer buffer(bufferBytes, in.byte());
  Session session(options);
  Model model(buffer.snapshot(), buffer.address());
  std::vector<uint8_t> caller = buffer.snapshot(); // what the caller must see now
  std::vector<ByteRange> live;                      // regions since the last step
  bool valuesKnown = true;

  int launches = int(in.range(1, 3));
  for (int l = 0; l < launches; ++l) {
    LaunchCase c;
    c.t.kind = Kind(in.below(3));
    c.t.dtype = c.t.kind == Kind::Copy ? kCopyTypes[in.below(std::size(kCopyTypes))]
                                       : kIntegerTypes[in.below(std::size(kIntegerTypes))];
    c.t.block = kBlocks[in.below(std::size(kBlocks))];
    c.t.unit = in.byte();
    c.t.unit &= (1u << c.t.pointers()) - 1;
    c.grid[0] = in.range(1, 4);
    // Atomics on misaligned addresses are not a thing kernels do.
    bool misalign = c.t.kind != Kind::Atomic && (in.byte() & 7) == 0;
    for (int k = 0; k < c.t.pointers(); ++k)
      c.views.push_back(makeView(in, buffer.address(), bufferBytes, c.t.dtype, misalign));
    if (large) {
      // From a few elements in to the end: the kernel walks its start (n <= 80 lanes), the
      // other views land anywhere, over it or not.
      View &v = c.views[0];
      const int64_t size = int64_t(byteSize(c.t.dtype)), first = in.range(0, 64);
      v.shape = {int64_t(bufferBytes) / size - first};
      v.strides = {1};
      v.address = buffer.address() + uint64_t(first * size);
    }
    // Mostly the kernel walks each view as its caller laid it out (rank-1 views: stride
    // and length); otherwise anything, often out of bounds.
    bool consistent = in.byte() % 4 != 0;
    c.n = in.range(0, 80);
    for (int k = 0; k < c.t.pointers(); ++k) {
      const View &v = c.views[k];
      c.strides.push_back(in.range(-4, 8));
      if (consistent && v.rank() == 1) {
        c.strides[k] = v.strides[0];
        c.n = std::min(c.n, v.shape[0]);
        if (v.strides[0] != 1)
          c.t.unit &= ~(1u << k);
      }
    }

    if (verbose) {
      std::fprintf(stderr, "launch %d: %s grid %lld n %lld strides [%s]; %s bounds%s\n", l,
                   t2s(c.t).c_str(), (long long)c.grid[0], (long long)c.n,
                   fmt::format("{}", fmt::join(c.strides, ", ")).c_str(),
                   options.bounds == BoundsMode::Region ? "region" : "argument",
                   options.inPlace ? ", in place" : "");
      for (const View &v : c.views)
        std::fprintf(stderr, "  view at +%llu: %s\n",
                     (unsigned long long)(v.address - buffer.address()), v.describe().c_str());
    }
    // (Not the large view: brute force would list its megabyte byte by byte.)
    for (size_t a = large ? 1 : 0; a < c.views.size(); ++a)
      for (size_t b = a + 1; b < c.views.size(); ++b)
        checkOverlap(c.views[a], c.views[b]);

    const interp::Kernel &kernel = kernelFor(c.t);
    std::vector<PointerArgument> pointers;
    std::vector<interp::ArgumentValue> values;
    for (int k = 0; k < c.t.pointers(); ++k) {
      PointerArgument p;
      p.name = fmt::format("p{}", k);
      p.buffer = "buffer";
      p.view = c.views[k];
      pointers.push_back(p);
      interp::ArgumentValue v;
      v.pointerIndex = uint32_t(k);
      values.push_back(v);
    }
    interp::ArgumentValue n;
    n.integer = c.n;
    values.push_back(n);
    for (int64_t s : c.strides) {
      interp::ArgumentValue v;
      v.integer = s;
      values.push_back(v);
    }
    kernel.applyAccess(values, pointers);

    // The windows the model checks against, as the memory model defines them.
    std::vector<ByteRange> extents;
    for (const View &v : c.views)
      extents.push_back(v.extent());
    std::vector<ByteRange> all = live;
    all.insert(all.end(), extents.begin(), extents.end());
    std::vector<ByteRange> regions = mergeRegions(all);
    std::vector<ByteRange> windows;
    for (const ByteRange &e : extents) {
      ByteRange w = e.empty() ? ByteRange{} : e;
      if (options.bounds == BoundsMode::Region && !e.empty())
        for (const ByteRange &r : regions)
          if (r.lo <= e.lo && e.hi <= r.hi)
            w = r;
      windows.push_back(w);
    }

    std::vector<uint8_t> beforeLaunch = buffer.snapshot();
    LaunchMemory memory;
    std::string error;
    if (!session.prepare(pointers, memory, error))
      fuzz::invariantBroken("prepare refused valid views:", error.c_str());
    live = regions;
    interp::LaunchOptions run;
    run.grid = c.grid;
    run.maxSteps = 1000;
    std::optional<interp::Fault> fault = kernel.run(values, memory, run);

    bool collided = false;
    std::optional<int64_t> expectedFault = model.run(c, windows, collided);
    valuesKnown &= !collided;
    if (verbose)
      std::fprintf(stderr, "  ttinterp: %s; model: %s%s\n",
                   fault ? (fault->kind + " in program " + std::to_string(fault->program[0]) +
                            ": " + fault->message)
                               .c_str()
                         : "no fault",
                   expectedFault ? ("fault in program " + std::to_string(*expectedFault)).c_str()
                                 : "no fault",
                   collided ? " (a store wrote a byte twice)" : "");
    if (fault.has_value() != expectedFault.has_value())
      fuzz::invariantBroken(fault ? "ttinterp faulted where the model does not:"
                                  : "the model faults where ttinterp does not",
                            fault ? (fault->kind + ": " + fault->message).c_str() : "");
    if (fault) {
      if (fault->kind != "out_of_bounds" || fault->program[0] != *expectedFault)
        fuzz::invariantBroken("unexpected fault:", (fault->kind + ": " + fault->message).c_str());
      session.abandon();
      if (!options.inPlace)
        // (A large region's earlier writes are put back with the launch's: the committed bytes.)
        expectCaller(buffer, large ? caller : beforeLaunch,
                     "a faulting launch changed caller bytes:");
      if (options.inPlace)
        caller = model.bytes(); // not transactional: the stores before the fault stay
      if (valuesKnown)
        expectCaller(buffer, caller, "caller bytes after a faulting launch:");
      return 0;
    }
    if (options.inPlace) {
      caller = model.bytes();
      if (valuesKnown)
        expectCaller(buffer, caller, "caller bytes after an in-place launch:");
    }

    // Between launches: nothing, a partial sync, or a step.
    unsigned between = in.below(4);
    if (verbose && (between == 1 || between == 2))
      std::fprintf(stderr, "  then %s\n", between == 1 ? "a sync" : "a step");
    switch (between) {
    case 1: {
      uint64_t lo = buffer.address() + in.below(uint32_t(bufferBytes));
      uint64_t hi = lo + in.below(uint32_t(buffer.address() + bufferBytes - lo) + 1);
      if (!session.sync(HostMemory::instance(), {{lo, hi}}, error))
        fuzz::invariantBroken("sync failed:", error.c_str());
      std::copy(model.bytes().begin() + (lo - buffer.address()),
                model.bytes().begin() + (hi - buffer.address()),
                caller.begin() + (lo - buffer.address()));
      if (large && valuesKnown &&
          !std::equal(caller.begin() + (lo - buffer.address()),
                      caller.begin() + (hi - buffer.address()),
                      buffer.data() + (lo - buffer.address())))
        fuzz::invariantBroken("synced bytes differ from the model's");
      break;
    }
    case 2:
      if (!session.step(error))
        fuzz::invariantBroken("step failed:", error.c_str());
      caller = model.bytes();
      live.clear();
      break;
    default:
      break;
    }
    if (valuesKnown && (!large || between == 2))
      expectCaller(buffer, caller, "caller bytes between launches:");
  }
  std::string error;
  if (!session.step(error))
    fuzz::invariantBroken("the final step failed:", error.c_str());
  if (valuesKnown)
    expectCaller(buffer, model.bytes(), "caller bytes after the final step:");
  return 0;
}
