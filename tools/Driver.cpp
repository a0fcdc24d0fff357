//===- Driver.cpp - Running a spec against one memory session --------------===//
#include "Driver.h"

#include "Buffers.h"
#include "Compare.h"
#include "Elements.h"
#include "Npy.h"
#include "Report.h"
#include "Spec.h"

#include "ttinterp/cuda/Driver.h"
#include "ttinterp/cuda/NativeKernel.h"
#include "ttinterp/interp/Caches.h"
#include "ttinterp/interp/KernelLibrary.h"
#include "ttinterp/interp/Launch.h"
#include "ttinterp/memory/Hazards.h"
#include "ttinterp/memory/Overlap.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>

namespace ttinterp::driver {

void printError(std::ostream &err, std::string_view message,
                const std::vector<std::string> &notes) {
  bool first = true;
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string_view::npos)
      end = message.size();
    std::string_view line = message.substr(start, end - start);
    start = end + 1;
    if (line.empty())
      continue;
    // "FILE:L:C: error: M" -> "FILE:L:C: M" under our own prefix.
    std::string text(line);
    for (std::string_view tag : {": error: ", ": note: "}) {
      size_t at = text.find(tag);
      if (at != std::string::npos) {
        text = text.substr(0, at) + ": " + text.substr(at + tag.size());
        break;
      }
    }
    err << (first ? "ttinterp: error: " : "note: ") << text << "\n";
    first = false;
  }
  if (first)
    err << "ttinterp: error: unknown error\n";
  for (const std::string &note : notes)
    err << "note: " << note << "\n";
  err.flush();
}

namespace {

std::string shortHash(const std::string &hash) { return hash.substr(0, 12); }

std::string bytes(uint64_t n) { return fmt::format("{} B", n); }

/// Whether a launch has a region in `state`.
bool hasRegion(const LaunchReport &rep, ShadowState state) {
  return std::any_of(rep.regions.begin(), rep.regions.end(),
                     [state](const RegionReport &r) { return r.shadow == shadowStateName(state); });
}

/// Bad input found by a SpecAdjuster: an error kind of the report and its message.
struct SpecError {
  std::string kind, message;
};
/// Rewrites a spec once it is loaded, before anything else looks at it: check --native runs
/// two variants of one spec file.
using SpecAdjuster = std::function<std::optional<SpecError>(Spec &)>;

/// One spec run; members hold what the error paths need to finish the report.
class Run {
public:
  Run(const RunOptions &options, std::ostream &out, std::ostream &err, SpecAdjuster adjust = {})
      : options_(options), out_(options.quiet ? quiet_ : out), err_(err),
        adjust_(std::move(adjust)) {}

  int execute(const std::string &specPath);

private:
  int badInput(const std::string &kind, const std::string &message,
               std::optional<size_t> launch = std::nullopt,
               const std::vector<std::string> &notes = {});
  /// A sync or step entry, the final step (no entry), or the step before a native launch.
  int syncPoint(std::optional<size_t> index, const LaunchSpec *entry, Session &session,
                bool beforeNative = false);
  int launch(size_t index, const LaunchSpec &l, const interp::KernelLibrary::Entry &k);
  int nativeLaunch(size_t index, const LaunchSpec &l, const interp::KernelLibrary::Entry &k,
                   cuda::NativeKernel &native, Session &session);
  /// Loads launch `index`'s cubin or PTX with its metadata (before anything runs).
  int loadNative(size_t index, const LaunchSpec &l);
  int fault(size_t index, const LaunchSpec &l, const interp::KernelLibrary::Entry &k,
            const interp::Fault &f,
            const std::vector<std::pair<std::string, uint64_t>> &droppedBytes);
  /// A sync entry naming a buffer a donation gave up: a kernel fault, as a launch using it is.
  int releasedFault(size_t index, const std::string &where, size_t buffer);
  /// Every spec buffer, for the launch layer's reports.
  std::vector<interp::NamedBuffer> namedBuffers();
  /// --out, buffer summary and --report: what every ending after buffers exist shares.
  int finish(int code);
  void printBuffers();
  /// Spec errors in `donate` that need addresses: a donated buffer sharing bytes with
  /// another argument of its launch.
  void printHazards(const interp::LaunchResult &result, LaunchReport &rep);
  int checkDonations(size_t index, const LaunchSpec &l, const std::vector<interp::Parameter> &params);

  const RunOptions &options_;
  std::ostream quiet_{nullptr}; // a stream with no buffer: discards everything
  std::ostream &out_;
  std::ostream &err_;
  SpecAdjuster adjust_;
  Spec spec_;
  bool buffersReady_ = false;
  HostBuffers buffers_;
  interp::KernelLibrary kernels_;
  /// Per spec entry: the loaded binary of a native launch.
  std::vector<std::unique_ptr<cuda::NativeKernel>> natives_;
  RunReport report_;
  std::optional<interp::Launcher> launcher_;
  /// Per spec buffer: the donated buffer whose release gave it up (absent from --out), or
  /// nothing.
  std::vector<std::optional<std::string>> released_;
  /// Writes of the launches that ran, for hazard totals.
  uint64_t hazardBytes_ = 0;
  /// The report entry of the latest launch (write-backs after it are counted there).
  std::optional<size_t> lastLaunch_;
};

int Run::badInput(const std::string &kind, const std::string &message, std::optional<size_t> launch,
                  const std::vector<std::string> &notes) {
  printError(err_, message, notes);
  ErrorReport e;
  e.kind = kind;
  // The report holds one line: drop the front end's "error:" tag as printError does.
  std::string first = message.substr(0, message.find('\n'));
  size_t tag = first.find(": error: ");
  e.message =
      tag == std::string::npos ? first : first.substr(0, tag) + ": " + first.substr(tag + 9);
  e.launch = launch;
  report_.error = e;
  if (!options_.reportPath.empty()) {
    std::string error;
    if (!writeReport(options_.reportPath, report_, error))
      printError(err_, error);
  }
  return kExitBadInput;
}

int Run::execute(const std::string &specPath) {
  std::string error;
  std::optional<Spec> parsed = loadSpec(specPath, error);
  if (!parsed)
    return badInput("spec", error);
  spec_ = std::move(*parsed);
  if (adjust_)
    if (std::optional<SpecError> e = adjust_(spec_))
      return badInput(e->kind, e->message);
  // Checked again: check --native moves every buffer to the device after parsing.
  if (std::string e = addressInitError(spec_); !e.empty())
    return badInput("spec", fmt::format("{}: {}", spec_.file, e));

  // Shadow-free mode would have kernels dereference device addresses on the host.
  if (options_.inPlace)
    for (const BufferSpec &b : spec_.buffers)
      if (b.device && !b.aliasOf)
        return badInput("spec", fmt::format("{}: {}.device: --in-place needs host buffers, but "
                                            "buffer '{}' is on the CUDA device",
                                            spec_.file, b.path, b.name));
  // A missing driver is reported once, up front, rather than as a failure of the first use.
  if (std::string use = spec_.firstCudaUse(); !use.empty()) {
    std::string why;
    if (!cuda::available(why))
      return badInput("cuda", fmt::format("{}: {} asks for CUDA, which needs the NVIDIA driver "
                                          "(libcuda.so.1) and a CUDA device: {}",
                                          spec_.file, use, why));
  }

  if (!options_.outDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.outDir, ec);
    if (ec || !std::filesystem::is_directory(options_.outDir))
      return badInput("io", fmt::format("cannot create output folder '{}': {}", options_.outDir,
                                        ec ? ec.message() : "not a folder"));
  }
  for (const std::string &name : options_.outBuffers)
    if (std::none_of(spec_.buffers.begin(), spec_.buffers.end(),
                     [&](const BufferSpec &b) { return b.name == name; }))
      return badInput("spec", fmt::format("--out-buffers names '{}', which is not a buffer of {}",
                                           name, spec_.file));
  if (!buffers_.create(spec_, error))
    return badInput("spec", error);
  if (spec_.usesCuda() && !buffers_.createDevice(spec_, error))
    return badInput("cuda", error);
  buffersReady_ = true;
  natives_.resize(spec_.launches.size());

  // Every kernel is loaded, lowered and type-checked before the first launch runs.
  std::vector<std::optional<interp::KernelLibrary::Entry>> kernels(spec_.launches.size());
  for (size_t i = 0; i < spec_.launches.size(); ++i) {
    LaunchSpec &l = spec_.launches[i];
    if (l.kind != StepKind::Launch)
      continue;
    interp::KernelFailure failure;
    kernels[i] = kernels_.get(l.kernelPath, l.function, failure, error);
    if (!kernels[i]) {
      std::string where = fmt::format("in {} of {} (kernel '{}')", l.path, spec_.file, l.kernel);
      switch (failure) {
      case interp::KernelFailure::Load:
        return badInput("ttir", error, i, {where});
      case interp::KernelFailure::Function:
        return badInput("spec",
                        fmt::format("{}: {}: {}: {}", spec_.file,
                                    l.function.empty() ? l.path : l.path + ".function", l.kernel,
                                    error),
                        i);
      case interp::KernelFailure::Unsupported:
        return badInput("unsupported", error, i, {where});
      }
    }
    if (!bindArguments(spec_, l, kernels[i]->function, kernels[i]->kernel->parameters(), error))
      return badInput("spec", error, i);
    if (int code = checkDonations(i, l, kernels[i]->kernel->parameters()); code != kExitOk)
      return code;
    if (!l.native.empty()) {
      for (const interp::Parameter &p : kernels[i]->kernel->parameters())
        if (p.descriptorRank)
          return badInput("spec",
                          fmt::format("{}: {}.native: parameter '{}' is a tensor descriptor; "
                                      "native launches pass pointers and scalars only (a "
                                      "CUtensorMap is not built yet)",
                                      spec_.file, l.path, p.name),
                          i);
      if (int code = loadNative(i, l); code != kExitOk)
        return code;
    }
  }
  released_.assign(spec_.buffers.size(), std::nullopt);

  Session::Options sessionOptions;
  sessionOptions.bounds = options_.bounds;
  sessionOptions.inPlace = options_.inPlace;
  sessionOptions.copyThreads = options_.threads;
  Session session(sessionOptions);
  launcher_.emplace(session);
  for (size_t i = 0; i < spec_.launches.size(); ++i) {
    const LaunchSpec &l = spec_.launches[i];
    int code = l.kind != StepKind::Launch ? syncPoint(i, &l, session)
               : natives_[i]              ? nativeLaunch(i, l, *kernels[i], *natives_[i], session)
                                          : launch(i, l, *kernels[i]);
    if (code != kExitOk)
      return code;
  }
  // The end of the spec is an implicit step: everything pending goes back.
  int code = syncPoint(std::nullopt, nullptr, session);
  if (code != kExitOk)
    return code;
  return finish(kExitOk);
}

void Run::printHazards(const interp::LaunchResult &result, LaunchReport &rep) {
  rep.hazards = result.hazards;
  rep.hazardBytes = result.hazardBytes;
  hazardBytes_ += rep.hazardBytes;
  for (const HazardReport &h : rep.hazards) {
    std::vector<std::string> through = h.arguments;
    for (const std::string &b : h.reachable)
      through.push_back("reachable " + b);
    fmt::print(out_,
               "  hazard: {} on {} bytes {}..{} of buffer '{}' ({}): program ({}, {}, {}) at {} "
               "then program ({}, {}, {}) at {}\n",
               h.kind, h.bytes, h.offset, h.offset + h.bytes, h.buffer, fmt::join(through, ", "),
               h.first[0], h.first[1], h.first[2], h.firstLocation, h.second[0], h.second[1],
               h.second[2], h.secondLocation);
  }
  if (rep.hazardBytes)
    fmt::print(out_, "  hazards: {} conflicting bytes\n", rep.hazardBytes);
}

/// What every launch's report says of it before it runs.
LaunchReport launchHeader(size_t index, const LaunchSpec &l, const interp::KernelLibrary::Entry &k) {
  LaunchReport rep;
  rep.index = index;
  rep.function = k.function;
  rep.kernel = l.kernel;
  rep.kernelHash = k.hash;
  rep.kernelCached = k.cached;
  rep.grid = l.grid;
  return rep;
}

int Run::checkDonations(size_t index, const LaunchSpec &l,
                        const std::vector<interp::Parameter> &params) {
  for (size_t d : l.donate) {
    ByteRange donated = buffers_.range(d);
    for (size_t p = 0; p < params.size(); ++p) {
      if (!params[p].isPointer)
        continue;
      const ArgSpec &a = l.args[p];
      if (a.buffer == d)
        continue;
      const BufferSpec &b = spec_.buffers[a.buffer];
      View v{buffers_.address(a.buffer) + uint64_t(a.offset) * uint64_t(byteSize(b.dtype)),
             b.dtype, a.shape, a.strides};
      if (v.extent().overlaps(donated))
        return badInput("spec",
                        fmt::format("{}: {}.donate: buffer '{}' shares memory with argument '{}' "
                                    "(buffer '{}') of the same launch; a donated buffer must not "
                                    "overlap the launch's other arguments",
                                    spec_.file, l.path, spec_.buffers[d].name, params[p].name,
                                    b.name),
                        index);
    }
    for (size_t r : l.reachable)
      if (r != d && buffers_.range(r).overlaps(donated))
        return badInput("spec",
                        fmt::format("{}: {}.donate: buffer '{}' shares memory with reachable "
                                    "buffer '{}' of the same launch; a donated buffer must not "
                                    "overlap the launch's other buffers",
                                    spec_.file, l.path, spec_.buffers[d].name,
                                    spec_.buffers[r].name),
                        index);
  }
  return kExitOk;
}

int Run::loadNative(size_t index, const LaunchSpec &l) {
  // Missing files are the spec's fault; anything the driver says after that is CUDA's.
  for (auto [path, key] :
       {std::pair{l.nativePath, l.path + ".native"}, std::pair{l.metadataPath, l.metadataKey}}) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return badInput(
          "spec",
          fmt::format("{}: {}: cannot read '{}': {}", spec_.file, key, path, std::strerror(errno)),
          index);
  }
  std::string error;
  natives_[index] = cuda::NativeKernel::load(l.nativePath, l.metadataPath, error);
  if (!natives_[index])
    return badInput("cuda", fmt::format("{}: {}.native: {}", spec_.file, l.path, error), index);
  return kExitOk;
}

int Run::releasedFault(size_t index, const std::string &where, size_t buffer) {
  interp::Fault f;
  f.kind = "donated_buffer";
  f.message = fmt::format("{}: buffer '{}' {}; a step released it", where,
                          spec_.buffers[buffer].name,
                          *released_[buffer] == spec_.buffers[buffer].name
                              ? std::string("was donated")
                              : fmt::format("shares memory with donated buffer '{}'",
                                            *released_[buffer]));
  ErrorReport e;
  e.kind = f.kind;
  e.message = f.message;
  e.launch = index;
  report_.error = e;
  printError(err_, fmt::format("donated_buffer: {}", f.message),
             {fmt::format("{} of {}", where, spec_.file)});
  return finish(kExitFault);
}

int Run::syncPoint(std::optional<size_t> index, const LaunchSpec *entry, Session &session,
                   bool beforeNative) {
  SyncReport s;
  s.index = index;
  uint64_t before = session.stats().bytesOut;
  std::string error;
  bool ok;
  if (entry && entry->kind == StepKind::Sync) {
    s.kind = "sync";
    // One sync per memory: a range means nothing outside the memory it lies in.
    std::map<CallerMemory *, std::vector<ByteRange>> ranges;
    for (size_t b : entry->sync)
      if (released_[b])
        return releasedFault(*index, entry->path, b);
    for (size_t b : entry->sync) {
      ranges[&buffers_.memory(b)].push_back(buffers_.range(b));
      s.buffers.push_back(spec_.buffers[b].name);
    }
    ok = true;
    for (auto &[memory, list] : ranges)
      ok = ok && session.sync(*memory, list, error);
  } else {
    s.kind = beforeNative ? "native_step" : entry ? "step" : "final_step";
    // Every buffer sharing a byte with a donated one is given up with it: an alias inside
    // it (or around it) would otherwise be read back with bytes the step never wrote.
    for (const Session::Donation &d : session.pendingDonations())
      for (size_t b = 0; b < spec_.buffers.size(); ++b)
        if (&buffers_.memory(b) == d.memory && buffers_.range(b).overlaps(d.range) &&
            !released_[b])
          released_[b] = d.buffer;
    ok = session.step(error);
  }
  s.bytesOut = session.stats().bytesOut - before;
  report_.syncs.push_back(s);
  if (lastLaunch_)
    report_.launches[*lastLaunch_].bytesOut += s.bytesOut;
  if (!ok)
    return badInput("memory",
                    fmt::format("{}: {}: write-back failed: {}", spec_.file,
                                entry ? entry->path : "end of spec", error),
                    index);
  if (entry && entry->kind == StepKind::Sync)
    fmt::print(out_, "{}: sync {}: wrote back {}\n", entry->path, fmt::join(s.buffers, ", "),
               bytes(s.bytesOut));
  else if (beforeNative)
    fmt::print(out_, "{}: step before the native launch: wrote back {}\n", entry->path,
               bytes(s.bytesOut));
  else if (entry)
    fmt::print(out_, "{}: step: wrote back {}\n", entry->path, bytes(s.bytesOut));
  else
    fmt::print(out_, "end: wrote back {}\n", bytes(s.bytesOut));
  return kExitOk;
}

std::vector<interp::NamedBuffer> Run::namedBuffers() {
  std::vector<interp::NamedBuffer> named;
  for (size_t b = 0; b < spec_.buffers.size(); ++b)
    named.push_back({spec_.buffers[b].name, &buffers_.memory(b), buffers_.range(b),
                     spec_.buffers[b].aliasOf.has_value()});
  return named;
}

int Run::launch(size_t index, const LaunchSpec &l, const interp::KernelLibrary::Entry &k) {
  const std::vector<interp::Parameter> &params = k.kernel->parameters();
  interp::LaunchRequest request;
  request.kernel = k.kernel;
  request.kernelHash = k.hash;
  request.values.resize(params.size());
  std::vector<size_t> pointerParam; // parameter index of each pointer argument
  for (size_t p = 0; p < params.size(); ++p) {
    const ArgSpec &a = l.args[p];
    if (params[p].isPointer) {
      const BufferSpec &b = spec_.buffers[a.buffer];
      PointerArgument arg;
      arg.name = params[p].name;
      arg.buffer = b.name;
      arg.memory = &buffers_.memory(a.buffer);
      arg.exchangePages = true; // our own allocations, which no device reads by page
      arg.view.address =
          buffers_.address(a.buffer) + uint64_t(a.offset) * uint64_t(byteSize(b.dtype));
      arg.view.dtype = b.dtype;
      arg.view.shape = a.shape;
      arg.view.strides = a.strides;
      request.values[p].pointerIndex = uint32_t(request.pointers.size());
      request.values[p].integer = a.padNaN;
      for (size_t d : l.donate)
        if (spec_.buffers[d].name == b.name)
          request.donors.push_back(uint32_t(request.pointers.size()));
      request.pointers.push_back(std::move(arg));
      pointerParam.push_back(p);
    } else {
      request.values[p].integer = a.scalar.integer;
      request.values[p].real = a.scalar.real;
    }
  }
  // A reachable buffer is all of its buffer, C-contiguous: the allocation a table's
  // addresses point into.
  for (size_t r : l.reachable) {
    const BufferSpec &b = spec_.buffers[r];
    PointerArgument arg;
    arg.buffer = b.name;
    arg.memory = &buffers_.memory(r);
    arg.exchangePages = true;
    arg.view.address = buffers_.address(r);
    arg.view.dtype = b.dtype;
    arg.view.shape = b.shape;
    arg.view.strides = contiguousStrides(b.shape);
    if (std::find(l.donate.begin(), l.donate.end(), r) != l.donate.end())
      request.donors.push_back(uint32_t(request.pointers.size() + request.reachable.size()));
    request.reachable.push_back(std::move(arg));
  }
  for (size_t d : l.donate)
    request.donations.push_back(
        {&buffers_.memory(d), buffers_.range(d), spec_.buffers[d].name, l.path});
  request.plan.bounds = options_.bounds;
  request.plan.inPlace = options_.inPlace;
  request.plan.hazards = options_.hazards;
  request.plan.threads = options_.threads;
  request.run.grid = l.grid;
  request.run.maxSteps = options_.maxSteps;
  request.run.printStream = &out_;
  request.run.order = options_.order;
  request.run.shuffleSeed = options_.shuffleSeed + index;
  request.buffers = namedBuffers();

  // The summary is printed before running, so tt.print output follows its launch.
  auto printSummary = [&](const interp::LaunchResult &r) {
    LaunchReport rep = launchHeader(index, l, k);
    rep.bytesIn = r.bytesIn;
    rep.regions = r.regions;
    rep.planKey = r.planKey;
    rep.planCached = r.planCached;
    rep.pairs = r.pairs;
    fmt::print(out_, "{}: {} ({}) grid {}x{}x{}\n", l.path, k.function, l.kernel, l.grid[0],
               l.grid[1], l.grid[2]);
    fmt::print(out_, "  kernel {} ({})  plan {} ({})\n", shortHash(k.hash),
               k.cached ? "cached" : "lowered", shortHash(rep.planKey),
               rep.planCached ? "seen" : "new");
    const std::vector<PointerArgument> &pointers = request.pointers;
    for (size_t n = 0; n < rep.regions.size(); ++n) {
      std::vector<std::string> args;
      for (size_t a = 0; a < pointers.size(); ++a) {
        if (r.regionOfPointer[a] != n)
          continue;
        const ArgSpec &spec = l.args[pointerParam[a]];
        std::string target = pointers[a].buffer;
        if (spec.kind == ArgKind::View || spec.kind == ArgKind::Descriptor)
          target = fmt::format("{}{}{{offset {}, shape [{}], strides [{}]{}}}",
                               spec.kind == ArgKind::Descriptor ? "tensordesc " : "", target,
                               spec.offset, fmt::join(spec.shape, ", "),
                               fmt::join(spec.strides, ", "), spec.padNaN ? ", padding nan" : "");
        args.push_back(fmt::format("{}={} ({})", pointers[a].name, target, accessName(r.access[a])));
      }
      for (size_t k = 0; k < request.reachable.size(); ++k)
        if (r.regionOfPointer[pointers.size() + k] == n)
          args.push_back(fmt::format("reachable {} ({})", request.reachable[k].buffer,
                                     accessName(r.access[pointers.size() + k])));
      fmt::print(out_, "  region {}: {:>8}  {}; {}\n", n, bytes(rep.regions[n].bytes),
                 fmt::join(args, ", "), rep.regions[n].shadow);
    }
    for (size_t a = 0; a < pointers.size(); ++a)
      if (r.regionOfPointer[a] == interp::LaunchResult::kNoRegion)
        fmt::print(out_, "  no bytes: {}={} ({})\n", pointers[a].name, pointers[a].buffer,
                   accessName(r.access[a]));
    for (size_t k = 0; k < request.reachable.size(); ++k)
      if (r.regionOfPointer[pointers.size() + k] == interp::LaunchResult::kNoRegion)
        fmt::print(out_, "  no bytes: reachable {} ({})\n", request.reachable[k].buffer,
                   accessName(r.access[pointers.size() + k]));
    for (const PairReport &p : rep.pairs)
      if (p.overlap != "disjoint")
        fmt::print(out_, "  {} ~ {}: {}\n", p.a, p.b, p.overlap);
    if (!l.donate.empty()) {
      std::vector<std::string> names;
      for (size_t d : l.donate)
        names.push_back(spec_.buffers[d].name);
      fmt::print(out_, "  donate {} (released at the next step)\n", fmt::join(names, ", "));
    }
    fmt::print(out_, "  copied in {}{}\n", bytes(rep.bytesIn),
               hasRegion(rep, ShadowState::OnTouch)
                   ? " before the run, the rest as the programs touch it"
               : hasRegion(rep, ShadowState::SavedInPlace)
                   ? " before the run; written chunks are saved as the programs first write them"
                   : "");
    out_.flush();
    report_.launches.push_back(std::move(rep));
    lastLaunch_ = report_.launches.size() - 1;
  };

  bool started = false;
  interp::LaunchResult result = launcher_->launch(request, [&](const interp::LaunchResult &r) {
    printSummary(r);
    started = true;
  });
  if (result.status == interp::LaunchResult::Status::BadInput)
    return badInput("memory", fmt::format("{}: {}: {}", spec_.file, l.path, result.error), index);
  if (started && options_.hazards)
    printHazards(result, report_.launches.back());
  if (result.status == interp::LaunchResult::Status::Faulted)
    return fault(index, l, k, *result.fault, result.droppedBytes);
  LaunchReport &rep = report_.launches.back();
  if (hasRegion(rep, ShadowState::OnTouch))
    fmt::print(out_, "  copied in as touched: {}\n", bytes(result.bytesIn - rep.bytesIn));
  else if (hasRegion(rep, ShadowState::SavedInPlace))
    fmt::print(out_, "  saved as first written: {}\n", bytes(result.bytesIn - rep.bytesIn));
  rep.bytesIn = result.bytesIn; // with what was copied in as touched
  report_.launches.back().donated = [&] {
    std::vector<std::string> names;
    for (size_t d : l.donate)
      names.push_back(spec_.buffers[d].name);
    return names;
  }();
  return kExitOk;
}

int Run::nativeLaunch(size_t index, const LaunchSpec &l, const interp::KernelLibrary::Entry &k,
                      cuda::NativeKernel &native, Session &session) {
  // The GPU works on device memory directly: every pending interpreted write must reach it
  // first, and no shadow may outlive this launch, or a later interpreted launch would read a
  // stale copy. A full step does both; afterwards nothing is pending and no shadow is live, so
  // the next interpreted launch copies its inputs in afresh and sees the native results.
  if (int code = syncPoint(index, &l, session, /*beforeNative=*/true); code != kExitOk)
    return code;

  const std::vector<interp::Parameter> &params = k.kernel->parameters();
  std::vector<cuda::KernelArg> args;
  for (size_t p = 0; p < params.size(); ++p) {
    const ArgSpec &a = l.args[p];
    if (!params[p].isPointer) {
      args.push_back(isInteger(params[p].dtype)
                         ? cuda::KernelArg::integer(params[p].dtype, a.scalar.integer)
                         : cuda::KernelArg::real(params[p].dtype, a.scalar.real));
      continue;
    }
    const BufferSpec &b = spec_.buffers[a.buffer];
    View view{buffers_.address(a.buffer) + uint64_t(a.offset) * uint64_t(byteSize(b.dtype)),
              b.dtype, a.shape, a.strides};
    if (const Session::Donation *d = session.released(buffers_.memory(a.buffer), view.extent())) {
      interp::Fault f;
      f.kind = "donated_buffer";
      f.message = fmt::format("argument '{}' (buffer '{}') uses memory of buffer '{}', which {} "
                              "donated and a step released",
                              params[p].name, b.name, d->buffer, d->donor);
      interp::LaunchResult failed = launcher_->fail(f, namedBuffers());
      return fault(index, l, k, *failed.fault, failed.droppedBytes);
    }
    args.push_back(cuda::KernelArg::pointer(view.address));
  }

  LaunchReport rep = launchHeader(index, l, k);
  rep.native = l.native;
  report_.launches.push_back(std::move(rep));
  lastLaunch_ = report_.launches.size() - 1;
  fmt::print(out_, "{}: {} ({}) grid {}x{}x{}\n  native {} on cuda:0\n", l.path, k.function,
             l.kernel, l.grid[0], l.grid[1], l.grid[2], l.native);
  out_.flush();

  std::string error;
  std::array<uint32_t, 3> grid = {uint32_t(l.grid[0]), uint32_t(l.grid[1]), uint32_t(l.grid[2])};
  if (native.launch(grid, args, error))
    return kExitOk;
  // A fault on the GPU: nothing is pending (the step above wrote it all back), and what the
  // kernel stored before faulting is in device memory already.
  session.abandon();
  ErrorReport e;
  e.kind = "cuda";
  e.message = error;
  e.launch = index;
  for (const BufferSpec &b : spec_.buffers)
    e.pendingBytes.push_back({b.name, 0});
  report_.error = e;
  printError(err_, fmt::format("cuda in {} (native '{}'): {}", k.function, l.native, error),
             {fmt::format("{} of {} (kernel '{}')", l.path, spec_.file, l.kernel)});
  return finish(kExitFault);
}

int Run::fault(size_t index, const LaunchSpec &l, const interp::KernelLibrary::Entry &k,
               const interp::Fault &f,
               const std::vector<std::pair<std::string, uint64_t>> &droppedBytes) {
  ErrorReport e;
  e.kind = f.kind;
  e.message = f.message;
  e.launch = index;
  e.program = f.program;
  e.location = f.location;
  e.op = f.op;
  e.element = f.element;
  e.pendingBytes = droppedBytes;
  std::vector<std::string> dropped;
  for (const auto &[name, n] : droppedBytes)
    if (n)
      dropped.push_back(fmt::format("{} ({})", name, bytes(n)));
  report_.error = e;

  std::vector<std::string> notes;
  std::string at = f.op.empty() ? "" : fmt::format(" at {}", f.op);
  if (f.element)
    at += fmt::format(", element {}", *f.element);
  notes.push_back(fmt::format("{} of {} (kernel '{}'){}", l.path, spec_.file, l.kernel, at));
  notes.push_back(dropped.empty() ? std::string("no pending bytes were dropped")
                                  : fmt::format("pending bytes not written back: {}",
                                                fmt::join(dropped, ", ")));
  printError(err_,
             fmt::format("{} in {} at {}, program ({}, {}, {}): {}", f.kind, k.function,
                         f.location.empty() ? "unknown location" : f.location, f.program[0],
                         f.program[1], f.program[2], f.message),
             notes);
  return finish(kExitFault);
}

void Run::printBuffers() {
  if (spec_.buffers.empty())
    return;
  size_t width = 0;
  for (const BufferSpec &b : spec_.buffers)
    width = std::max(width, b.name.size());
  fmt::print(out_, "buffers:\n");
  constexpr int64_t kShown = 8;
  for (size_t i = 0; i < spec_.buffers.size(); ++i) {
    const BufferSpec &b = spec_.buffers[i];
    std::vector<std::string> values;
    for (int64_t e = 0; e < std::min(b.numElements, kShown); ++e)
      values.push_back(formatElement(b.dtype, buffers_.data(i) + e * byteSize(b.dtype)));
    std::string type = fmt::format("{}[{}]", name(b.dtype), fmt::join(b.shape, "x"));
    fmt::print(out_, "  {:<{}}  {:<14} {}{}\n", b.name, width, type, fmt::join(values, " "),
               b.numElements > kShown ? " ..." : "");
  }
  out_.flush();
}

int Run::finish(int code) {
  // Device buffers are shown, written and compared through their host copies.
  if (buffersReady_) {
    std::string error;
    if (!buffers_.download(error)) {
      printError(err_, fmt::format("cannot read the device buffers back: {}", error));
      if (!report_.error) {
        report_.error = ErrorReport();
        report_.error->kind = "cuda";
        report_.error->message = error;
      }
      if (code == kExitOk)
        code = kExitFault;
    }
  }
  if (buffersReady_ && !options_.outDir.empty()) {
    for (size_t i = 0; i < spec_.buffers.size(); ++i) {
      const BufferSpec &b = spec_.buffers[i];
      if (!options_.outBuffers.empty() &&
          std::find(options_.outBuffers.begin(), options_.outBuffers.end(), b.name) ==
              options_.outBuffers.end())
        continue;
      if (i < released_.size() && released_[i]) {
        // A donated buffer's contents are given up; say so rather than leave the file out
        // silently (or write an alias's stale bytes).
        fmt::print(out_, "out: {}.npy not written: {}\n", b.name,
                   *released_[i] == b.name
                       ? std::string("the buffer was donated")
                       : fmt::format("it shares memory with donated buffer '{}'", *released_[i]));
        continue;
      }
      std::string path = (std::filesystem::path(options_.outDir) / (b.name + ".npy")).string();
      std::string error;
      if (!writeNpy(path, b.dtype, b.shape, buffers_.data(i), error)) {
        printError(err_, error);
        code = kExitBadInput;
        break;
      }
    }
  }
  if (buffersReady_)
    printBuffers();
  if (buffersReady_ && options_.finalBuffers)
    for (size_t i = 0; i < spec_.buffers.size(); ++i) {
      const BufferSpec &b = spec_.buffers[i];
      size_t size = buffers_.range(i).size();
      options_.finalBuffers->push_back(
          {b.name, b.dtype, b.shape,
           std::vector<uint8_t>(buffers_.data(i), buffers_.data(i) + size),
           i < released_.size() && released_[i].has_value(), b.init == InitKind::Addresses});
    }
  if (options_.hazardBytes)
    *options_.hazardBytes = hazardBytes_;
  report_.bytesIn = 0;
  report_.bytesOut = 0;
  for (const LaunchReport &l : report_.launches)
    report_.bytesIn += l.bytesIn;
  for (const SyncReport &s : report_.syncs)
    report_.bytesOut += s.bytesOut;
  if (!options_.reportPath.empty()) {
    std::string error;
    if (!writeReport(options_.reportPath, report_, error)) {
      printError(err_, error);
      if (code == kExitOk)
        code = kExitBadInput;
    }
  }
  return code;
}

} // namespace

int runSpec(const std::string &specPath, const RunOptions &options, std::ostream &out,
            std::ostream &err) {
  Run run(options, out, err);
  return run.execute(specPath);
}

namespace {
/// Prints the first elements where two runs' copies of one buffer differ: their indices, both
/// values (first run's first) and, for floats compared within a tolerance, the ulp distance.
void printDifferences(std::ostream &out, const BufferComparison &c, const char *indent) {
  for (const BufferComparison::Element &e : c.first)
    fmt::print(out, "{}[{}]: {} vs {}{}\n", indent, fmt::join(e.index, ", "), e.a, e.b,
               e.ulp ? fmt::format(" ({} ulp)", *e.ulp) : "");
}
} // namespace

int checkSpec(const std::string &specPath, const RunOptions &options, std::ostream &out,
              std::ostream &err) {
  // 1. In program order, with hazard tracking: this run's summary is what the user sees.
  std::vector<RunOptions::FinalBuffer> reference;
  uint64_t hazardBytes = 0;
  RunOptions first = options;
  first.hazards = true;
  first.finalBuffers = &reference;
  first.hazardBytes = &hazardBytes;
  int code = runSpec(specPath, first, out, err);
  if (code != kExitOk)
    return code;

  // 2. Reversed and shuffled program orders, from the same initial data (fresh buffers).
  bool differs = false;
  struct Variant {
    const char *name;
    interp::LaunchOptions::Order order;
  };
  for (Variant v : {Variant{"reversed", interp::LaunchOptions::Order::Reverse},
                    Variant{"shuffled", interp::LaunchOptions::Order::Shuffled}}) {
    std::vector<RunOptions::FinalBuffer> result;
    RunOptions again = options;
    again.order = v.order;
    again.shuffleSeed = options.shuffleSeed ? options.shuffleSeed : 0x7717;
    again.threads = 1;
    again.quiet = true;
    again.outDir.clear();
    again.reportPath.clear();
    again.finalBuffers = &result;
    std::ostringstream discard;
    if (int c = runSpec(specPath, again, discard, err); c != kExitOk) {
      fmt::print(out, "check: the {} program order ends differently (exit {})\n", v.name, c);
      differs = true;
      continue;
    }
    for (size_t b = 0; b < reference.size() && b < result.size(); ++b) {
      if (reference[b].donated || reference[b].addresses || reference[b].bytes == result[b].bytes)
        continue;
      differs = true;
      fmt::print(out, "check: buffer '{}' differs with the {} program order:\n", reference[b].name,
                 v.name);
      Tolerance exact;
      exact.bitwise = true;
      printDifferences(out,
                       compareBuffers(reference[b].dtype, reference[b].shape,
                                      reference[b].bytes.data(), result[b].bytes.data(), exact, 5),
                       "  ");
    }
  }
  if (hazardBytes)
    fmt::print(out, "check: {} bytes with cross-program hazards\n", hazardBytes);
  if (!differs && !hazardBytes) {
    fmt::print(out, "check: no hazards; results identical in forward, reversed and shuffled "
                    "program order\n");
    return kExitOk;
  }
  printError(err, fmt::format("check found {}{}{}", hazardBytes ? "hazards" : "",
                              hazardBytes && differs ? " and " : "",
                              differs ? "order-dependent results" : ""));
  return kExitFault;
}

namespace {

/// Gives launch `l` the binary check --native runs natively: its own "native" field, else
/// <kernel stem>.cubin beside its .ttir (with <kernel stem>.json), as examples/ keeps Triton's
/// outputs. Returns false when there is neither.
bool findNativeBinary(LaunchSpec &l) {
  if (!l.native.empty())
    return true;
  std::filesystem::path cubin = std::filesystem::path(l.kernelPath).replace_extension(".cubin");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(cubin, ec))
    return false;
  l.native = std::filesystem::path(l.kernel).replace_extension(".cubin").string();
  l.nativePath = cubin.string();
  l.metadataPath = std::filesystem::path(cubin).replace_extension(".json").string();
  l.metadataKey = l.path + ".kernel"; // the metadata's name comes from the kernel's
  return true;
}

/// The interpreter's side of check --native: every launch interpreted, every buffer on the host.
void interpretEverything(Spec &spec) {
  for (BufferSpec &b : spec.buffers)
    b.device = false;
  for (LaunchSpec &l : spec.launches) {
    l.native.clear();
    l.nativePath.clear();
    l.metadataPath.clear();
    l.metadataKey.clear();
  }
}

/// The GPU's side: every buffer on the device, every launch with a binary run natively (a native
/// launch cannot donate: its buffers are simply not compared when the interpreted run donates).
void runNatively(Spec &spec) {
  for (BufferSpec &b : spec.buffers)
    b.device = true;
  for (LaunchSpec &l : spec.launches)
    if (l.kind == StepKind::Launch && findNativeBinary(l)) {
      l.donate.clear();
      l.reachable.clear();
    }
}

} // namespace

int checkNativeSpec(const std::string &specPath, const RunOptions &options,
                    const Tolerance &tolerance, std::ostream &out, std::ostream &err) {
  // The spec as written, for the launches' binaries and the buffers' aliases.
  Spec original;
  auto interpreted = [&](Spec &spec) -> std::optional<SpecError> {
    // Both checks come before anything runs, so the interpreted run reports them (--report too).
    std::string why;
    if (!cuda::available(why))
      return SpecError{"cuda", fmt::format("check --native runs kernels on the GPU, which needs "
                                           "the NVIDIA driver (libcuda.so.1) and a CUDA device: {}",
                                           why)};
    original = spec;
    size_t natives = 0;
    for (LaunchSpec &l : original.launches)
      natives += l.kind == StepKind::Launch && findNativeBinary(l);
    if (natives == 0)
      return SpecError{"spec", fmt::format("{}: no launch has a native binary: give launches a "
                                           "\"native\" field, or put <kernel>.cubin and its "
                                           "<kernel>.json beside the kernel's .ttir",
                                           spec.file)};
    interpretEverything(spec);
    return std::nullopt;
  };
  auto native = [](Spec &spec) -> std::optional<SpecError> {
    runNatively(spec);
    return std::nullopt;
  };

  // 1. The interpreter, from the spec's initial data: its summary, --out and --report are the
  //    ones the user sees.
  std::vector<RunOptions::FinalBuffer> reference, result;
  RunOptions first = options;
  first.finalBuffers = &reference;
  int interpretedCode = Run(first, out, err, interpreted).execute(specPath);
  if (interpretedCode == kExitBadInput)
    return kExitBadInput;
  for (const LaunchSpec &l : original.launches)
    if (l.kind == StepKind::Launch)
      fmt::print(out, "check: {} ({}) {}\n", l.path, l.kernel,
                 l.native.empty() ? std::string("has no native binary: interpreted in both runs")
                                  : fmt::format("runs natively from {} on cuda:0", l.native));

  // 2. The native kernels, from fresh copies of the same initial data on the device. It runs
  //    even when the interpreter faulted: how the GPU takes the same input is worth seeing (an
  //    out-of-bounds access is a CUDA error there, reported on stderr).
  RunOptions second = options;
  second.quiet = true;
  second.reportPath.clear();
  if (!options.outDir.empty())
    second.outDir = (std::filesystem::path(options.outDir) / "native").string();
  second.finalBuffers = &result;
  int nativeCode = Run(second, out, err, native).execute(specPath);
  if (nativeCode == kExitBadInput)
    return kExitBadInput;
  if (interpretedCode != kExitOk || nativeCode != kExitOk) {
    const char *failed = nativeCode == kExitOk        ? "the interpreted run"
                         : interpretedCode == kExitOk ? "the native run"
                                                      : "both runs";
    printError(err,
               fmt::format("check --native: {} failed, so there is nothing to compare", failed));
    return kExitFault;
  }

  // 3. Every buffer, each element under the dtype of the innermost buffer declaring it.
  constexpr size_t kListed = 10;
  size_t width = 0;
  for (const RunOptions::FinalBuffer &b : reference)
    width = std::max(width, b.name.size());
  size_t differing = 0;
  fmt::print(out, "check: the interpreter vs the native run:\n");
  for (size_t i = 0; i < reference.size() && i < result.size(); ++i) {
    const RunOptions::FinalBuffer &a = reference[i], &b = result[i];
    std::string type = fmt::format("{}[{}]", name(a.dtype), fmt::join(a.shape, "x"));
    if (a.donated || b.donated) {
      fmt::print(out, "  {:<{}}  {:<14} donated: not compared\n", a.name, width, type);
      continue;
    }
    std::vector<std::pair<uint64_t, uint64_t>> aliases;
    for (const BufferSpec &child : original.buffers)
      if (child.aliasOf == i)
        aliases.push_back({child.byteOffset, child.byteOffset + child.byteSize});
    BufferComparison c = compareBuffers(a.dtype, a.shape, a.bytes.data(), b.bytes.data(), tolerance,
                                        kListed, aliases);
    std::string ulps = isFloat(a.dtype) && (c.inexact || c.differing)
                           ? fmt::format("; largest difference {} ulp", c.maxUlp)
                           : "";
    if (c.differing == 0) {
      std::string verdict = "identical";
      if (c.elements == 0 && !aliases.empty())
        verdict = "compared through its aliases";
      else if (c.inexact)
        verdict = fmt::format("match: {} of {} elements differ within the tolerance ({}{})",
                              c.inexact, c.elements, tolerance.describe(a.dtype), ulps);
      fmt::print(out, "  {:<{}}  {:<14} {}\n", a.name, width, type, verdict);
      continue;
    }
    ++differing;
    fmt::print(out,
               "  {:<{}}  {:<14} DIFFER: {} of {} elements differ beyond the tolerance "
               "({}{}); interpreter vs native:\n",
               a.name, width, type, c.differing, c.elements, tolerance.describe(a.dtype), ulps);
    printDifferences(out, c, "    ");
    if (c.differing > int64_t(c.first.size()))
      fmt::print(out, "    ... {} more\n", c.differing - int64_t(c.first.size()));
  }
  if (differing == 0) {
    fmt::print(out, "check: the interpreter and the native run agree\n");
    return kExitOk;
  }
  printError(err, fmt::format("check --native found {} buffer{} where the interpreter and the "
                              "native run differ",
                              differing, differing == 1 ? "" : "s"));
  return kExitFault;
}

} // namespace ttinterp::driver
