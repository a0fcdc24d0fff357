//===- fuzz_ttir.cpp - libFuzzer target: TTIR text through load, lower and run ----===//
//
// The input is a .ttir file. It goes the way `ttinterp run` takes it (frontend::parseTTIR,
// findFunction's public functions, Kernel::lower, Session::prepare, Kernel::run, step or
// abandon) in a context shared with the inputs before it, with every pointer parameter bound
// to a small host buffer of its own (or, for some inputs, all to one buffer, so the alias
// paths run too), scalars set to small values and a step limit so that loops end; one input in
// eight compiles its element-wise chains (ChainCompiler.h), one in four tracks hazards
// (with the happens-before of its atomics, memory/Hazards.h). Beyond "no
// crash, no sanitizer report", it checks the memory model's promise to the caller: a launch
// that faults leaves every caller byte as it was.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "ttinterp/frontend/Frontend.h"
#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/memory/Hazards.h"
#include "ttinterp/memory/Session.h"

#include <array>
#include <memory>
#include <new>
#include <string>
#include <vector>

using namespace ttinterp;

namespace {

/// Bytes behind each pointer argument: room for 64x64 elements of 8 bytes, so kernels
/// sized by an `n` of 64 (vector ops, 64x64 matmuls) stay in bounds.
constexpr size_t kBufferBytes = 64 * 64 * 8;
/// Integer scalars (sizes, strides): 64 keeps the usual "offsets < n" masks in bounds.
constexpr int64_t kIntegerScalar = 64;
/// Ops per program before a step_limit fault: enough for the examples' loops at these sizes.
constexpr uint64_t kMaxSteps = 20000;
/// Public functions run per input (a file of many copies of one kernel adds nothing).
constexpr int kMaxFunctions = 4;

void runFunction(mlir::FunctionOpInterface fn, uint64_t choice) {
  // One input in eight has its element-wise chains compiled at their first run (the IR
  // built from whatever chain the input spells, LLVM's compilation, the loop's run); the
  // rest interpret them, with no compiler thread: the same results, and each distinct chain
  // compiled stays for the process, so compiling all of them would only fill memory.
  interp::setChainCompilation((choice >> 6) % 8 == 0 ? interp::ChainCompilation::Eager
                                                     : interp::ChainCompilation::Off);
  std::string error;
  std::unique_ptr<interp::Kernel> kernel = interp::Kernel::lower(fn, error);
  if (!kernel)
    return;
  const std::vector<interp::Parameter> &params = kernel->parameters();
  const bool shareOneBuffer = choice & 1;

  // One buffer per pointer parameter (or one for all), filled before the views are made.
  std::vector<std::unique_ptr<fuzz::HostBuffer>> buffers;
  std::vector<PointerArgument> pointers;
  std::vector<interp::ArgumentValue> values(params.size());
  for (size_t p = 0; p < params.size(); ++p) {
    values[p].integer = params[p].dtype == DType::I1 ? 1 : kIntegerScalar;
    values[p].real = 1.5;
  }
  for (size_t p = 0; p < params.size(); ++p) {
    const interp::Parameter &param = params[p];
    if (!param.isPointer)
      continue;
    values[p].integer = 0; // a descriptor's padding: zeros
    if (buffers.empty() || !shareOneBuffer)
      buffers.push_back(std::make_unique<fuzz::HostBuffer>(kBufferBytes, uint8_t(p)));
    fuzz::HostBuffer &buffer = *buffers.back();
    PointerArgument arg;
    arg.name = param.name;
    arg.buffer = "b" + std::to_string(buffers.size() - 1);
    arg.view.address = buffer.address();
    arg.view.dtype = param.dtype;
    int64_t elements = int64_t(kBufferBytes / byteSize(param.dtype));
    if (param.descriptorRank == 0) {
      arg.view.shape = {elements};
      arg.view.strides = {1};
    } else {
      // A C-contiguous box inside the buffer: 64 per dimension up to rank 2, 8 beyond
      // (8^8 elements would not fit). Triton passes its shape and strides right after.
      unsigned rank = param.descriptorRank;
      int64_t side = rank <= 2 ? 64 : 8;
      arg.view.shape.assign(rank, side);
      arg.view.strides.assign(rank, 1);
      for (int d = int(rank) - 2; d >= 0; --d)
        arg.view.strides[d] = arg.view.strides[d + 1] * side;
      if (rank > 4) // 8^5 elements would overrun the buffer: keep the leading ones size 1
        for (unsigned d = 0; d + 4 < rank; ++d)
          arg.view.shape[d] = 1;
      for (unsigned d = 0; d < rank && p + 1 + rank + d < params.size(); ++d) {
        values[p + 1 + d].integer = arg.view.shape[d];
        values[p + 1 + rank + d].integer = arg.view.strides[d];
      }
    }
    values[p].pointerIndex = uint32_t(pointers.size());
    pointers.push_back(std::move(arg));
  }
  // A pointer table (pointers to pointers) holds the other buffers' addresses, as a
  // real caller's would, so loaded pointers reach memory the launch knows.
  for (size_t a = 0; a < pointers.size(); ++a) {
    if (pointers[a].view.dtype != DType::Ptr || shareOneBuffer)
      continue;
    fuzz::HostBuffer &table = *buffers[a];
    for (size_t i = 0; i * 8 + 8 <= table.size(); ++i) {
      uint64_t target = buffers[i % buffers.size()]->address();
      std::memcpy(table.data() + i * 8, &target, 8);
    }
  }
  kernel->applyAccess(values, pointers);

  std::vector<std::vector<uint8_t>> before;
  for (const auto &b : buffers)
    before.push_back(b->snapshot());

  Session session;
  LaunchMemory memory;
  if (!session.prepare(pointers, memory, error))
    return;
  fuzz::NullStream printed;
  interp::LaunchOptions options;
  options.grid = {int64_t(1 + (choice >> 1) % 3), int64_t(1 + (choice >> 3) % 2), 1};
  options.maxSteps = kMaxSteps;
  options.printStream = &printed;
  HazardTracker hazards;
  if ((choice >> 9) % 4 == 0)
    memory.setHazardTracker(&hazards);
  std::optional<interp::Fault> fault = kernel->run(values, memory, options);
  // Reporting walks what was found: the conflicts' ranges must be well formed.
  for (const Hazard &h : hazards.hazards())
    if (h.lo >= h.hi || h.firstProgram == h.secondProgram)
      fuzz::invariantBroken("a malformed hazard:", name(h.kind).data());
  if (fault) {
    session.abandon();
    for (size_t b = 0; b < buffers.size(); ++b)
      if (!buffers[b]->equals(before[b]))
        fuzz::invariantBroken("a faulting launch changed caller bytes:", fault->kind.c_str());
    return;
  }
  session.step(error);
}

/// Inputs parsed in one context before it is replaced: what the parses leave uniqued in it
/// (types, attributes, names) grows with every input.
constexpr int kInputsPerContext = 1000;

/// One context for many inputs, as the kernel library and the Python module keep one for
/// every kernel they load. Making and destroying one per input was three quarters of the time
/// of an input (docs/reliability.md).
mlir::MLIRContext &sharedContext() {
  static std::unique_ptr<mlir::MLIRContext> context;
  static int inputs = 0;
  if (!context || ++inputs % kInputsPerContext == 0)
    context = frontend::makeContext();
  return *context;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  uint64_t choice = fuzz::hashBytes(data, size);
  // As the CLI does: running out of memory is reported, not a crash (tools/main.cpp).
  try {
    std::string error;
    mlir::OwningOpRef<mlir::ModuleOp> module = frontend::parseTTIR(
        sharedContext(), llvm::StringRef(text.data(), text.size()), "fuzz.ttir", error);
    if (!module)
      return 0;
    (void)frontend::formatSignatures(frontend::signatures(*module));
    int ran = 0;
    module->walk([&](mlir::FunctionOpInterface fn) {
      if (!fn.isPublic() || fn.isExternal() || ran >= kMaxFunctions)
        return;
      ++ran;
      (void)frontend::structuralHash(fn);
      runFunction(fn, choice);
    });
  } catch (const std::bad_alloc &) {
  }
  return 0;
}
