//===- main.cpp - The ttinterp command line: run, check, hash, info --------===//
#include "Driver.h"
#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/interp/KernelLibrary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace ttinterp;
using namespace ttinterp::driver;

namespace {

constexpr const char *kUsage = R"(usage: ttinterp <command> [options]

Runs Triton kernels' TTIR on the CPU with an alias-aware memory model.

commands:
  run SPEC.json    run the launches of a spec (see 'ttinterp run --help')
  check SPEC.json  run a spec looking for cross-program races (see 'ttinterp check --help')
  hash KERNEL      print a kernel's structural hash
  info KERNEL      print the signature of every function in a TTIR file

options:
  -h, --help       show this help (or a command's, after the command)
  --version        print the version

exit status: 0 success, 1 kernel fault, 2 bad input.
)";

constexpr const char *kRunUsage = R"(usage: ttinterp run SPEC.json [options]

Runs the launches of SPEC.json in order (format: docs/spec.md) and prints a summary:
per launch the regions formed and bytes copied, and at the end each buffer's first values.

options:
  --out DIR          write every buffer's final contents to DIR/NAME.npy (DIR is created)
  --out-buffers A,B  with --out: write only these buffers
  --report FILE      write a JSON report of the run to FILE
  --threads N        worker threads per launch (default 1; 0: one per core)
  --max-steps N      fault a program instance after N executed ops (default 0: no limit)
  --bounds arg|region
                     how far a pointer may stray: inside the extent of the argument it
                     derives from (arg, default) or anywhere in that argument's region
  --hazards          report bytes one program instance reads or writes after another
                     wrote or read them (programs then run one at a time)
  --in-place         no shadows: kernels write the host buffers directly (not
                     transactional: a fault keeps the stores made before it)
  -h, --help         show this help

exit status: 0 success, 1 kernel fault (out-of-bounds access, failed tt.assert, step
limit, use of a donated buffer), 2 bad input (usage, unreadable file, TTIR or spec error,
argument mismatch, unsupported op).
)";

constexpr const char *kCheckUsage = R"(usage: ttinterp check SPEC.json [options]
       ttinterp check SPEC.json --native [--ulp N] [--rtol X] [--atol X] [options]

Runs SPEC.json with hazard tracking (every cross-program read-after-write,
write-after-read and write-after-write on the same bytes is reported, with both program
ids, the arguments, the buffer, the byte range and both ops' source locations), then
runs it again in reversed and in shuffled program order from the same initial data and
lists every buffer whose final contents differ.

With --native, instead runs SPEC.json in the interpreter and again on the GPU, each
launch from its "native" binary (else <kernel>.cubin beside its .ttir), from separate
copies of the same initial data, and compares every buffer: integers bitwise, floats
within a number of ulp (default f64 4, f32 8, f16/bf16 2, fp8 1), listing the first
differing elements with their indices and both values.

options:
  --out DIR, --out-buffers A,B, --report FILE, --max-steps N, --bounds arg|region
                     as for 'run'
                     (with --native, --out also writes the native run to DIR/native)
  --seed N           seed of the shuffled order (default fixed)
  --native           compare the interpreter with the native kernels (needs a GPU)
  --ulp N            with --native: floats of every dtype match within N ulp
  --rtol X, --atol X with --native: floats also match when
                     |a - b| <= atol + rtol * max(|a|, |b|) (default 0)
  -h, --help         show this help

exit status: 0 no hazard and no difference, 1 a hazard, an order-dependent result, a
difference from the native run or a kernel fault (a CUDA error included), 2 bad input
(also: no NVIDIA driver or device for --native).
)";

constexpr const char *kHashUsage = R"(usage: ttinterp hash KERNEL.ttir [--function NAME]

Prints the structural hash of a kernel (lowercase hex SHA-256, one line). The hash ignores
locations and SSA value names, so re-dumps of the same kernel hash equal.

options:
  --function NAME    the function to hash (default: the file's only public function)
  -h, --help         show this help
)";

constexpr const char *kInfoUsage = R"(usage: ttinterp info KERNEL.ttir

Prints the signature of every function in a TTIR file: argument names, types and hints.

options:
  -h, --help         show this help
)";

struct UsageError {
  std::string message;
};

/// Command-line arguments after the command, with options in either "--opt value" or
/// "--opt=value" form, anywhere among the operands.
class Arguments {
public:
  Arguments(int argc, char **argv, int first) {
    for (int i = first; i < argc; ++i)
      items_.emplace_back(argv[i]);
  }

  bool wantsHelp() const {
    for (const std::string &a : items_)
      if (a == "-h" || a == "--help")
        return true;
    return false;
  }

  /// Splits into operands and options, rejecting options not in `known` (which take a
  /// value) or `flags` (which take none).
  void parse(const std::vector<std::string> &known, const std::vector<std::string> &flags = {}) {
    for (size_t i = 0; i < items_.size(); ++i) {
      const std::string &a = items_[i];
      if (a.size() < 2 || a[0] != '-') {
        operands_.push_back(a);
        continue;
      }
      if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
        if (flag(a))
          throw UsageError{fmt::format("option '{}' is given twice", a)};
        flags_.push_back(a);
        continue;
      }
      std::string name = a, value;
      bool hasValue = false;
      if (size_t eq = a.find('='); eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        hasValue = true;
      }
      if (std::find(known.begin(), known.end(), name) == known.end())
        throw UsageError{fmt::format("unknown option '{}'", name)};
      if (!hasValue) {
        if (i + 1 >= items_.size())
          throw UsageError{fmt::format("option '{}' needs a value", name)};
        value = items_[++i];
      }
      for (auto &[n, v] : options_)
        if (n == name)
          throw UsageError{fmt::format("option '{}' is given twice", name)};
      options_.emplace_back(name, value);
    }
  }

  bool flag(const std::string &name) const {
    return std::find(flags_.begin(), flags_.end(), name) != flags_.end();
  }

  std::optional<std::string> option(const std::string &name) const {
    for (auto &[n, v] : options_)
      if (n == name)
        return v;
    return std::nullopt;
  }

  /// The one operand, named `what` in messages.
  std::string single(const char *what) const {
    if (operands_.empty())
      throw UsageError{fmt::format("missing {}", what)};
    if (operands_.size() > 1)
      throw UsageError{fmt::format("unexpected argument '{}'", operands_[1])};
    return operands_[0];
  }

private:
  std::vector<std::string> items_, operands_, flags_;
  std::vector<std::pair<std::string, std::string>> options_;
};

uint64_t number(const std::string &option, const std::string &text, uint64_t max) {
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 20;
  for (char c : text) {
    ok &= c >= '0' && c <= '9';
    if (ok && __builtin_mul_overflow(v, 10, &v))
      ok = false;
    if (ok && __builtin_add_overflow(v, uint64_t(c - '0'), &v))
      ok = false;
  }
  if (!ok || v > max)
    throw UsageError{
        fmt::format("option '{}' expects a whole number up to {}, got '{}'", option, max, text)};
  return v;
}

/// A tolerance: a finite decimal number >= 0.
double tolerance(const std::string &option, const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0)
    throw UsageError{
        fmt::format("option '{}' expects a finite number >= 0, got '{}'", option, text)};
  return v;
}

/// Options shared by run and check.
RunOptions runOptions(Arguments &args) {
  RunOptions options;
  options.outDir = args.option("--out").value_or("");
  if (auto list = args.option("--out-buffers")) {
    if (options.outDir.empty())
      throw UsageError{"option '--out-buffers' needs '--out DIR'"};
    for (size_t at = 0; at <= list->size();) {
      size_t comma = std::min(list->find(',', at), list->size());
      if (comma == at)
        throw UsageError{fmt::format("option '--out-buffers' expects NAME[,NAME...], got '{}'", *list)};
      options.outBuffers.push_back(list->substr(at, comma - at));
      at = comma + 1;
    }
  }
  options.reportPath = args.option("--report").value_or("");
  if (auto t = args.option("--threads")) {
    options.threads = unsigned(number("--threads", *t, 1024));
    if (options.threads == 0)
      options.threads = std::max(1u, std::thread::hardware_concurrency());
  }
  if (auto s = args.option("--max-steps"))
    options.maxSteps = number("--max-steps", *s, UINT64_MAX);
  if (auto b = args.option("--bounds")) {
    if (*b == "arg")
      options.bounds = BoundsMode::Argument;
    else if (*b == "region")
      options.bounds = BoundsMode::Region;
    else
      throw UsageError{fmt::format("option '--bounds' expects 'arg' or 'region', got '{}'", *b)};
  }
  options.hazards = args.flag("--hazards");
  options.inPlace = args.flag("--in-place");
  if (auto s = args.option("--seed"))
    options.shuffleSeed = number("--seed", *s, UINT64_MAX);
  return options;
}

int commandRun(Arguments &args) {
  args.parse({"--out", "--out-buffers", "--report", "--threads", "--max-steps", "--bounds"},
             {"--hazards", "--in-place"});
  std::string spec = args.single("SPEC.json operand");
  return runSpec(spec, runOptions(args), std::cout, std::cerr);
}

int commandCheck(Arguments &args) {
  args.parse(
      {"--out", "--out-buffers", "--report", "--max-steps", "--bounds", "--seed", "--ulp", "--rtol",
       "--atol"},
      {"--native"});
  std::string spec = args.single("SPEC.json operand");
  RunOptions options = runOptions(args);
  if (!args.flag("--native")) {
    for (const char *option : {"--ulp", "--rtol", "--atol"})
      if (args.option(option))
        throw UsageError{fmt::format("option '{}' needs --native", option)};
    return checkSpec(spec, options, std::cout, std::cerr);
  }
  Tolerance t;
  if (auto u = args.option("--ulp"))
    t.ulp = number("--ulp", *u, UINT64_MAX);
  if (auto r = args.option("--rtol"))
    t.rtol = tolerance("--rtol", *r);
  if (auto a = args.option("--atol"))
    t.atol = tolerance("--atol", *a);
  return checkNativeSpec(spec, options, t, std::cout, std::cerr);
}

int commandHash(Arguments &args) {
  args.parse({"--function"});
  std::string path = args.single("KERNEL.ttir operand");
  std::string error;
  std::optional<std::string> hash = interp::hashKernel(path, args.option("--function").value_or(""), error);
  if (!hash) {
    printError(std::cerr, error);
    return kExitBadInput;
  }
  std::cout << *hash << "\n";
  return kExitOk;
}

int commandInfo(Arguments &args) {
  args.parse({});
  std::string path = args.single("KERNEL.ttir operand");
  std::string error;
  std::optional<std::string> text = interp::describeKernels(path, error);
  if (!text) {
    printError(std::cerr, error);
    return kExitBadInput;
  }
  std::cout << *text;
  return kExitOk;
}

int dispatch(int argc, char **argv) {
  if (argc < 2)
    throw UsageError{"missing command"};
  std::string command = argv[1];
  if (command == "-h" || command == "--help") {
    std::cout << kUsage;
    return kExitOk;
  }
  if (command == "--version") {
    std::cout << "ttinterp " << TTINTERP_VERSION << " (vector kernels: "
              << interp::vectorTarget() << ")\n";
    return kExitOk;
  }
  Arguments args(argc, argv, 2);
  struct Command {
    const char *name;
    const char *usage;
    int (*run)(Arguments &);
  };
  static const Command commands[] = {{"run", kRunUsage, commandRun},
                                     {"check", kCheckUsage, commandCheck},
                                     {"hash", kHashUsage, commandHash},
                                     {"info", kInfoUsage, commandInfo}};
  for (const Command &c : commands) {
    if (command != c.name)
      continue;
    if (args.wantsHelp()) {
      std::cout << c.usage;
      return kExitOk;
    }
    return c.run(args);
  }
  throw UsageError{fmt::format("unknown command '{}'", command)};
}

} // namespace

int main(int argc, char **argv) {
  // Nothing may escape as a crash: every failure becomes a message and a status.
  try {
    return dispatch(argc, argv);
  } catch (const UsageError &e) {
    printError(std::cerr, e.message, {"run 'ttinterp --help' for usage"});
    return kExitBadInput;
  } catch (const std::bad_alloc &) {
    printError(std::cerr, "out of memory");
    return kExitBadInput;
  } catch (const std::exception &e) {
    printError(std::cerr, fmt::format("internal error: {}", e.what()));
    return kExitBadInput;
  } catch (...) {
    printError(std::cerr, "internal error: unknown exception");
    return kExitBadInput;
  }
}
