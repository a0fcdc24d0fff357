//===- Module.cpp - ttinterp._ttinterp: the C++ launch path, as Python sees it ------===//
//
// Thin bindings over the same entry points the CLI uses: interp::KernelLibrary turns a
// Triton compile's TTIR text into a lowered kernel (once per text), and interp::Launcher
// runs one launch over views of the caller's memory. Python passes plain numbers (host
// addresses, sizes, dtype names); everything about aliasing, bounds, faults and
// write-back happens here in C++, exactly as for `ttinterp run`.
//
//===----------------------------------------------------------------------===//
#include "ttinterp/interp/KernelLibrary.h"
#include "ttinterp/interp/Launch.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace nb = nanobind;
using namespace ttinterp;

namespace {

/// Every kernel a process compiles, lowered once per TTIR text and kept for its lifetime
/// (Triton keeps its compiled kernels for the process's lifetime too).
interp::KernelLibrary &library() {
  static interp::KernelLibrary instance;
  return instance;
}

/// One launch at a time: sessions, plan caches and MLIR's context are not shared across
/// threads (Python threads launching at once take turns here, the GIL released).
std::mutex &launchMutex() {
  static std::mutex m;
  return m;
}

/// A session (and the launcher holding its plan cache) per set of session options. Every
/// launch ends with a step, so no shadow outlives a launch: the caller's tensors hold the
/// results as soon as the call returns, as after a synchronising GPU launch.
struct SessionKey {
  BoundsMode bounds;
  bool inPlace;
  unsigned threads;
  bool operator<(const SessionKey &o) const {
    return std::tie(bounds, inPlace, threads) < std::tie(o.bounds, o.inPlace, o.threads);
  }
};
struct SessionSlot {
  std::unique_ptr<Session> session;
  std::unique_ptr<interp::Launcher> launcher;
};
SessionSlot &sessionFor(const SessionKey &key) {
  static std::map<SessionKey, SessionSlot> slots;
  SessionSlot &slot = slots[key];
  if (!slot.session) {
    Session::Options options;
    options.bounds = key.bounds;
    options.inPlace = key.inPlace;
    options.copyThreads = key.threads;
    slot.session = std::make_unique<Session>(options);
    slot.launcher = std::make_unique<interp::Launcher>(*slot.session);
  }
  return slot;
}

/// Raised for TTIR that does not load or lower: ValueError with the loader's message.
struct KernelError {
  std::string kind, message;
};

class PyKernel {
public:
  PyKernel(const std::string &text, const std::string &name, const std::string &function) {
    std::lock_guard<std::mutex> lock(launchMutex());
    interp::KernelFailure failure;
    std::string error;
    std::optional<interp::KernelLibrary::Entry> entry =
        library().getFromText(text, name, function, failure, error);
    if (!entry) {
      const char *kind = failure == interp::KernelFailure::Load       ? "ttir"
                         : failure == interp::KernelFailure::Function ? "function"
                                                                      : "unsupported";
      throw KernelError{kind, error};
    }
    entry_ = *entry;
  }

  const std::string &name() const { return entry_.function; }
  const std::string &hash() const { return entry_.hash; }

  /// (name, kind, dtype, descriptor rank, access) per parameter; kind is "pointer" or "scalar".
  std::vector<std::tuple<std::string, std::string, std::string, unsigned, std::string>>
  parameters() const {
    std::vector<std::tuple<std::string, std::string, std::string, unsigned, std::string>> out;
    for (const interp::Parameter &p : entry_.kernel->parameters())
      out.emplace_back(p.name, p.isPointer ? "pointer" : "scalar", std::string(ttinterp::name(p.dtype)),
                       p.descriptorRank, p.isPointer ? accessName(p.access) : "");
    return out;
  }

  /// Runs one launch. `pointers`: per pointer parameter (in order) a tuple (kernel address,
  /// storage address, storage bytes, buffer name); the view is the whole storage, typed as the
  /// parameter's pointee when its size divides the storage, else bytes. `scalars`: per scalar
  /// parameter (in order) an int or a float. `padNaN`: per pointer parameter, descriptors'
  /// padding. `reachable`: per tensor the kernel may reach through a pointer table, a tuple
  /// (storage address, storage bytes, name), bound as its whole storage (bytes). `movable`:
  /// per pointer, then per reachable tensor, whether its pages may be exchanged at the
  /// write-back (PointerArgument::exchangePages); missing entries say no.
  /// Returns toResult's None or dict; the Python layer raises a fault.
  nb::object
  launch(std::array<int64_t, 3> grid,
         const std::vector<std::tuple<uint64_t, uint64_t, uint64_t, std::string>> &pointers,
         const std::vector<nb::object> &scalars, const std::vector<bool> &padNaN, unsigned threads,
         bool hazards, const std::string &bounds, uint64_t maxSteps, bool inPlace,
         const std::vector<std::tuple<uint64_t, uint64_t, std::string>> &reachable,
         const std::vector<bool> &movable) const {
    const std::vector<interp::Parameter> &params = entry_.kernel->parameters();
    interp::LaunchRequest request;
    request.kernel = entry_.kernel;
    request.kernelHash = entry_.hash;
    request.values.resize(params.size());
    size_t nextPointer = 0, nextScalar = 0;
    for (size_t p = 0; p < params.size(); ++p) {
      if (params[p].isPointer) {
        if (nextPointer >= pointers.size())
          throw nb::value_error("too few pointer arguments for the kernel's parameters");
        auto [kernelAddress, storage, nbytes, buffer] = pointers[nextPointer];
        PointerArgument arg;
        arg.name = params[p].name;
        arg.buffer = buffer;
        DType dtype = params[p].dtype;
        size_t size = byteSize(dtype);
        // The storage as the pointee type where it tiles evenly, else as bytes: bounds are
        // the storage's bytes either way.
        bool typed = nbytes % size == 0 && storage % size == 0;
        arg.view.address = storage;
        arg.view.dtype = typed ? dtype : DType::I8;
        arg.view.shape = {int64_t(typed ? nbytes / size : nbytes)};
        arg.view.strides = {1};
        arg.kernelAddress = kernelAddress;
        arg.exchangePages = nextPointer < movable.size() && movable[nextPointer];
        request.values[p].pointerIndex = uint32_t(request.pointers.size());
        request.values[p].integer = nextPointer < padNaN.size() && padNaN[nextPointer];
        request.pointers.push_back(std::move(arg));
        ++nextPointer;
        continue;
      }
      if (nextScalar >= scalars.size())
        throw nb::value_error("too few scalar arguments for the kernel's parameters");
      const nb::object &v = scalars[nextScalar++];
      if (isInteger(params[p].dtype)) {
        request.values[p].integer = nb::cast<int64_t>(v);
      } else {
        request.values[p].real = nb::cast<double>(v);
      }
    }
    if (nextPointer != pointers.size() || nextScalar != scalars.size())
      throw nb::value_error("more arguments than the kernel has parameters");
    for (const auto &[storage, nbytes, buffer] : reachable) {
      // No pointee type to go by: the storage's bytes are its bounds.
      PointerArgument arg;
      arg.buffer = buffer;
      arg.view.address = storage;
      arg.view.dtype = DType::I8;
      arg.view.shape = {int64_t(nbytes)};
      arg.view.strides = {1};
      size_t at = pointers.size() + request.reachable.size();
      arg.exchangePages = at < movable.size() && movable[at];
      request.reachable.push_back(std::move(arg));
    }

    request.plan.bounds = bounds == "region" ? BoundsMode::Region : BoundsMode::Argument;
    request.plan.inPlace = inPlace;
    request.plan.hazards = hazards;
    request.plan.threads = threads == 0 ? 1 : threads;
    request.run.grid = grid;
    request.run.maxSteps = maxSteps;
    request.run.printStream = &std::cout;
    request.describe = false; // toResult shows no regions or pairs

    interp::LaunchResult result;
    std::string stepError;
    bool stepped = true;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(launchMutex());
      SessionSlot &slot = sessionFor({request.plan.bounds, inPlace, request.plan.threads});
      result = slot.launcher->launch(request);
      if (result.status == interp::LaunchResult::Status::Ran)
        stepped = slot.session->step(stepError);
      std::cout.flush();
    }
    return toResult(result, stepped, stepError);
  }

private:
  /// None when the launch ran and wrote back with nothing to report (the common case: no
  /// Python objects made per launch); else a dict the Python layer raises or warns from.
  static nb::object toResult(const interp::LaunchResult &result, bool stepped,
                             const std::string &stepError) {
    bool ok = result.status == interp::LaunchResult::Status::Ran && stepped;
    if (ok && result.hazards.empty())
      return nb::none();
    nb::dict d;
    d["status"] = !stepped ? "write_back"
                  : result.status == interp::LaunchResult::Status::Ran     ? "ok"
                  : result.status == interp::LaunchResult::Status::Faulted ? "fault"
                                                                           : "bad_input";
    d["error"] = stepped ? result.error : stepError;
    if (result.fault) {
      nb::dict f;
      f["kind"] = result.fault->kind;
      f["message"] = result.fault->message;
      f["location"] = result.fault->location;
      f["op"] = result.fault->op;
      f["program"] = result.fault->program;
      f["element"] = result.fault->element;
      d["fault"] = f;
    }
    nb::list hazards;
    for (const interp::HazardReport &h : result.hazards) {
      nb::dict hd;
      hd["kind"] = h.kind;
      hd["first_program"] = h.first;
      hd["second_program"] = h.second;
      hd["arguments"] = h.arguments;
      hd["reachable"] = h.reachable;
      hd["bytes"] = h.bytes;
      hd["first_op"] = h.firstOp;
      hd["first_location"] = h.firstLocation;
      hd["second_op"] = h.secondOp;
      hd["second_location"] = h.secondLocation;
      hazards.append(hd);
    }
    d["hazards"] = hazards;
    d["hazard_bytes"] = result.hazardBytes;
    return d;
  }

  interp::KernelLibrary::Entry entry_;
};

} // namespace

NB_MODULE(_ttinterp, m) {
  m.doc() = "ttinterp's C++ launch path (use the ttinterp package, not this module)";
  // Lowered kernels live in a process-wide cache until exit, on purpose: not a leak to report.
  nb::set_leak_warnings(false);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const KernelError &e) {
      // "kind: message": the Python layer splits it into its own exception types.
      PyErr_SetString(PyExc_ValueError, (e.kind + "\n" + e.message).c_str());
    }
  });
  nb::class_<PyKernel>(m, "Kernel")
      .def(nb::init<const std::string &, const std::string &, const std::string &>(),
           nb::arg("ttir"), nb::arg("name"), nb::arg("function") = "")
      .def_prop_ro("name", &PyKernel::name)
      .def_prop_ro("hash", &PyKernel::hash)
      .def_prop_ro("parameters", &PyKernel::parameters)
      .def("launch", &PyKernel::launch, nb::arg("grid"), nb::arg("pointers"), nb::arg("scalars"),
           nb::arg("pad_nan"), nb::arg("threads"), nb::arg("hazards"), nb::arg("bounds"),
           nb::arg("max_steps"), nb::arg("in_place"),
           nb::arg("reachable") = std::vector<std::tuple<uint64_t, uint64_t, std::string>>(),
           nb::arg("movable") = std::vector<bool>());
  // Benchmarks time compiled chains, not the compiler (interp::waitForChainCompilations).
  m.def("wait_for_chain_compilations", &interp::waitForChainCompilations,
        nb::call_guard<nb::gil_scoped_release>());
}
