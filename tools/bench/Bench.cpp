//===- Bench.cpp - ttinterp's speed against plain C++ and Eigen -----------===//
//
// Runs the examples' kernels at realistic sizes through the C++ API (load,
// lower once, then per repeat: a session, the launch, the write-back) and the
// same computation as plain optimised C++ (Eigen's GEMM for matmul) and, where
// there is one, as Highway vector code (VectorControls.h), and prints median
// times and ratios. Not a test: speed targets are read off its
// output (docs/performance.md), never asserted.
//
// Usage: ttinterp-bench [--repeats N] [--threads N] [--only NAME] [--hazards] [--phases]
//                       [--interpreted-only] [--memory | --memory-in-place | --gemm | --tiny]
//   --only     one case (vector_add, softmax, matmul_ieee, matmul_tf32, layernorm16, layernorm);
//              only its inputs are made, and an unknown name is an error (exit code 2)
//   --hazards  also time each kernel with cross-program hazard tracking on
//   --phases   also split each interpreted launch into prepare, run and write-back
//   --interpreted-only  only the interpreted launches, on --threads threads (for profilers)
//   --memory   peak resident memory of 8 overlapping views of one 1 GiB buffer
//   --memory-in-place  the same without shadows
//   --gemm     tt.dot's micro-kernel against Eigen and OpenBLAS (GFLOP/s, one thread)
//   --tiny     a cached one-program launch (1,024-element vector add) through one session,
//              as the Python package and a test suite make them: microseconds per launch
//
//===----------------------------------------------------------------------===//
#include "ttinterp/frontend/Frontend.h"
#include "ttinterp/interp/Interpreter.h"
#include "ttinterp/interp/Launch.h"
#include "ttinterp/memory/Session.h"

// The micro-kernel itself, from interp's private sources: what --gemm measures.
#include "simd/Simd.h"

#include "VectorControls.h"

#include <Eigen/Core>
#ifdef TTINTERP_BENCH_OPENBLAS
#include <cblas.h>
#endif
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

using namespace ttinterp;

namespace {

double seconds(const std::function<void()> &fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<float> randomVector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

View viewOf(std::vector<float> &v) {
  return View{reinterpret_cast<uint64_t>(v.data()), DType::F32, {int64_t(v.size())}, {1}};
}

struct Kernel {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<interp::Kernel> kernel;
  std::string hash;
};

Kernel load(const std::string &name) {
  Kernel k;
  std::string error;
  k.context = frontend::makeContext();
  std::string path = std::string(TTINTERP_SOURCE_DIR) + "/tools/bench/kernels/" + name + ".ttir";
  k.module = frontend::loadTTIRFile(*k.context, path, error);
  mlir::FunctionOpInterface fn = k.module ? frontend::findFunction(*k.module, "", error) : nullptr;
  if (fn) {
    k.kernel = interp::Kernel::lower(fn, error);
    k.hash = frontend::structuralHash(fn);
  }
  if (!k.kernel) {
    fmt::print(stderr, "ttinterp-bench: {}\n", error);
    std::exit(2);
  }
  return k;
}

/// Where one interpreted launch spent its time, in seconds.
struct Phases {
  double prepare = 0; ///< Grouping into regions, shadows, copy-in.
  double run = 0;     ///< Kernel::run over the grid.
  double writeBack = 0;
};

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Whether launches let whole written pages be exchanged at write-back (PageExchange.h), as the
/// CLI and the Python package do; --copy-back says no, to measure what it saves.
bool exchangePagesAtStep = true;

/// A launch of `kernel` on whole `buffers` (its pointer parameters, in order) and then `scalars`.
interp::LaunchRequest requestFor(const Kernel &kernel, const std::vector<std::vector<float> *> &buffers,
                                 std::vector<interp::ArgumentValue> scalars,
                                 std::array<int64_t, 3> grid) {
  interp::LaunchRequest request;
  request.kernel = kernel.kernel.get();
  request.kernelHash = kernel.hash;
  for (size_t i = 0; i < buffers.size(); ++i) {
    request.pointers.push_back(
        {fmt::format("arg{}", i), fmt::format("buf{}", i), viewOf(*buffers[i])});
    request.pointers.back().exchangePages = exchangePagesAtStep;
    interp::ArgumentValue v;
    v.pointerIndex = uint32_t(i);
    request.values.push_back(v);
  }
  request.values.insert(request.values.end(), scalars.begin(), scalars.end());
  request.run.grid = grid;
  return request;
}

/// One interpreted launch, as a user runs it: session, launch (through the launch layer every
/// front end uses), write-back.
Phases launch(const Kernel &kernel, std::vector<std::vector<float> *> buffers,
              std::vector<interp::ArgumentValue> scalars, std::array<int64_t, 3> grid,
              unsigned threads, bool hazards = false) {
  Session::Options sessionOptions;
  sessionOptions.copyThreads = threads;
  Session session(sessionOptions);
  interp::Launcher launcher(session);
  interp::LaunchRequest request = requestFor(kernel, buffers, std::move(scalars), grid);
  request.plan.threads = threads;
  request.plan.hazards = hazards;
  Phases phases;
  auto t0 = std::chrono::steady_clock::now();
  auto prepared = t0;
  interp::LaunchResult result = launcher.launch(request, [&](const interp::LaunchResult &) {
    prepared = std::chrono::steady_clock::now();
  });
  if (result.status == interp::LaunchResult::Status::BadInput) {
    fmt::print(stderr, "ttinterp-bench: {}\n", result.error);
    std::exit(2);
  }
  if (result.fault) {
    fmt::print(stderr, "ttinterp-bench: fault: {}\n", result.fault->message);
    std::exit(1);
  }
  phases.prepare = std::chrono::duration<double>(prepared - t0).count();
  phases.run = since(prepared);
  auto t1 = std::chrono::steady_clock::now();
  std::string error;
  if (!session.step(error)) {
    fmt::print(stderr, "ttinterp-bench: {}\n", error);
    std::exit(2);
  }
  phases.writeBack = since(t1);
  return phases;
}

interp::ArgumentValue i32(int64_t v) {
  interp::ArgumentValue a;
  a.integer = v;
  return a;
}

/// The fixed cost of a launch: what a test suite's many small launches pay each time. One
/// session and launcher live across launches (their plan cache warm), as in the Python
/// package; each launch is the launch and its step, and the phases are timed apart.
int tinyLaunchBenchmark(int launches) {
  Kernel add = load("vector_add");
  constexpr int64_t n = 1024;
  std::vector<float> x = randomVector(n, 1), y = randomVector(n, 2), out(n);
  Session session;
  interp::Launcher launcher(session);
  interp::LaunchRequest request = requestFor(add, {&x, &y, &out}, {i32(n)}, {1, 1, 1});
  request.describe = false; // as the Python package launches
  std::vector<double> total, launchOnly, step;
  for (int r = -launches / 10; r < launches; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    interp::LaunchResult result = launcher.launch(request);
    auto t1 = std::chrono::steady_clock::now();
    std::string error;
    if (result.status != interp::LaunchResult::Status::Ran || !session.step(error)) {
      fmt::print(stderr, "ttinterp-bench: the tiny launch failed: {}{}\n", result.error, error);
      return 1;
    }
    if (r < 0)
      continue; // warm-up
    launchOnly.push_back(std::chrono::duration<double>(t1 - t0).count());
    step.push_back(since(t1));
    total.push_back(since(t0));
  }
  for (int64_t i = 0; i < n; ++i)
    if (out[size_t(i)] != x[size_t(i)] + y[size_t(i)]) {
      fmt::print(stderr, "ttinterp-bench: the tiny launch gave a wrong sum at {}\n", i);
      return 1;
    }
  fmt::print("tiny cached launch (1 program, 1,024-element f32 vector add), medians of {} "
             "launches:\n  launch + step {:.2f} us (launch {:.2f}, step {:.2f})\n",
             launches, median(total) * 1e6, median(launchOnly) * 1e6, median(step) * 1e6);
  return 0;
}
interp::ArgumentValue f32(double v) {
  interp::ArgumentValue a;
  a.real = v;
  return a;
}

/// Layer norm of rows [first, last) of `x` (rows of `cols`), as the benchmark's kernel computes it.
void layerNormRows(const std::vector<float> &x, std::vector<float> &y, const std::vector<float> &w,
                   const std::vector<float> &bias, std::vector<float> &mean,
                   std::vector<float> &rstd, int64_t cols, int64_t first, int64_t last) {
  for (int64_t r = first; r < last; ++r) {
    const float *in = &x[r * cols];
    float *o = &y[r * cols];
    float s = 0;
    for (int64_t k = 0; k < cols; ++k)
      s += in[k];
    float mu = s / float(cols), v = 0;
    for (int64_t k = 0; k < cols; ++k)
      v += (in[k] - mu) * (in[k] - mu);
    float rs = 1.0f / std::sqrt(v / float(cols) + 1e-5f);
    for (int64_t k = 0; k < cols; ++k)
      o[k] = (in[k] - mu) * rs * w[k] + bias[k];
    mean[r] = mu;
    rstd[r] = rs;
  }
}

struct Case {
  std::string name;
  std::string what;
  std::function<Phases(unsigned threads, bool hazards)> interpreted;
  /// The plain C++ computation of rows [part * n / parts, (part + 1) * n / parts);
  /// (0, 1) is the whole single-threaded reference.
  std::function<void(int64_t part, int64_t parts)> native;
  /// The same with the vector units at full speed (VectorControls.h), or empty: how much
  /// more threads give a computation that runs at memory speed.
  std::function<void(int64_t part, int64_t parts)> vector;
};

/// A control split over `threads` std::threads: how much this machine gives two threads
/// at all (the control for the interpreter's speedup).
void onThreads(const std::function<void(int64_t, int64_t)> &control, unsigned threads) {
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back([&control, t, threads] { control(t, threads); });
  control(0, threads);
  for (std::thread &w : workers)
    w.join();
}

long peakResidentKiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

/// k overlapping views of one N-byte buffer must cost about N bytes of shadow, not k x N.
int memoryBenchmark(bool inPlace) {
  const size_t bytes = size_t(1) << 30, views = 8, shift = 4096;
  std::vector<float> buffer(bytes / 4 + views * shift / 4, 1.0f); // touched: resident
  long base = peakResidentKiB();
  Kernel add = load("vector_add");
  long loaded = peakResidentKiB();
  Session::Options sessionOptions;
  sessionOptions.inPlace = inPlace;
  Session session(sessionOptions);
  std::vector<PointerArgument> pointers;
  int64_t n = int64_t(bytes / 4);
  for (size_t v = 0; v < views; ++v)
    pointers.push_back(
        {fmt::format("v{}", v), "buffer",
         View{reinterpret_cast<uint64_t>(buffer.data()) + v * shift, DType::F32, {n}, {1}}});
  LaunchMemory memory;
  std::string error;
  if (!session.prepare(pointers, memory, error)) {
    fmt::print(stderr, "ttinterp-bench: {}\n", error);
    return 2;
  }
  // out = view 2 = view 0 + view 1, over the whole GiB.
  std::vector<interp::ArgumentValue> args(4);
  args[0].pointerIndex = 0;
  args[1].pointerIndex = 1;
  args[2].pointerIndex = 2;
  args[3].integer = n;
  interp::LaunchOptions options;
  options.grid = {n / 1024, 1, 1};
  if (auto fault = add.kernel->run(args, memory, options)) {
    fmt::print(stderr, "ttinterp-bench: fault: {}\n", fault->message);
    return 1;
  }
  size_t regions = memory.regions().size();
  session.step(error);
  long peak = peakResidentKiB();
  fmt::print("memory ({}): {} overlapping views of a {} MiB buffer: {} region(s)\n",
             inPlace ? "in place" : "shadowed", views, bytes >> 20, regions);
  fmt::print("  peak RSS: buffer alone {} MiB, with the kernel loaded {} MiB, after the launch {} "
             "MiB\n",
             base >> 10, loaded >> 10, peak >> 10);
  fmt::print("  cost of the launch: {} MiB for {} MiB of views\n", (peak - loaded) >> 10,
             (views * bytes) >> 20);
  return 0;
}

/// GFLOP/s of out = c + a * b on m x k, k x n f32 blocks, best of a few timed batches.
double gemmRate(int64_t m, int64_t n, int64_t k, const std::function<void()> &once) {
  double flops = 2.0 * double(m) * double(n) * double(k), best = 0;
  int64_t per = std::max<int64_t>(1, int64_t(2e8 / flops)); // ~0.2 GFLOP per batch
  once();                                                   // warm caches and dispatch
  for (int batch = 0; batch < 5; ++batch) {
    double t = seconds([&] {
      for (int64_t i = 0; i < per; ++i)
        once();
    });
    best = std::max(best, flops * double(per) / t / 1e9);
  }
  return best;
}

/// tt.dot's micro-kernel against Eigen (as built here) and OpenBLAS's sgemm (when the build
/// found it), one thread, on the tile sizes Triton kernels use and on a whole 512^3 product.
int gemmBenchmark() {
#ifdef TTINTERP_BENCH_OPENBLAS
  openblas_set_num_threads(1);
#endif
  fmt::print("vector kernels: {}\n", interp::vectorTarget());
  fmt::print("{:<16} {:>14} {:>14} {:>16} {:>12}\n", "m x n x k", "ttinterp GF/s", "Eigen GF/s",
             "OpenBLAS GF/s", "ttinterp/BLAS");
  const int64_t shapes[][3] = {{16, 16, 16},   {32, 32, 32},    {64, 64, 32},   {64, 64, 64},
                               {128, 128, 32}, {128, 128, 64},  {128, 256, 64}, {256, 256, 64},
                               {512, 512, 512}};
  for (const auto &shape : shapes) {
    int64_t m = shape[0], n = shape[1], k = shape[2];
    std::vector<float> a = randomVector(m * k, 7), b = randomVector(k * n, 8), c(size_t(m * n));
    double ours = gemmRate(m, n, k, [&] { interp::simd::gemm(a.data(), b.data(), c.data(), c.data(), m, n, k); });
    using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const M> A(a.data(), m, k), B(b.data(), k, n);
    Eigen::Map<M> C(c.data(), m, n);
    double eigen = gemmRate(m, n, k, [&] { C.noalias() += A * B; });
    double blas = 0;
#ifdef TTINTERP_BENCH_OPENBLAS
    blas = gemmRate(m, n, k, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f,
                  a.data(), int(k), b.data(), int(n), 1.0f, c.data(), int(n));
    });
#endif
    fmt::print("{:<16} {:>14.1f} {:>14.1f} {:>16} {:>12}\n", fmt::format("{}x{}x{}", m, n, k), ours,
               eigen, blas > 0 ? fmt::format("{:.1f}", blas) : "(not built)",
               blas > 0 ? fmt::format("{:.2f}", ours / blas) : "-");
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int repeats = 5;
  unsigned threads = 2;
  bool hazards = false, phases = false, interpretedOnly = false, tiny = false, repeatsGiven = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
      repeatsGiven = true;
    }
    else if (a == "--threads" && i + 1 < argc)
      threads = unsigned(std::max(1, std::atoi(argv[++i])));
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--hazards")
      hazards = true;
    else if (a == "--phases")
      phases = true;
    else if (a == "--interpreted-only")
      interpretedOnly = true;
    else if (a == "--copy-back")
      exchangePagesAtStep = false;
    else if (a == "--memory")
      return memoryBenchmark(false);
    else if (a == "--memory-in-place")
      return memoryBenchmark(true);
    else if (a == "--gemm")
      return gemmBenchmark();
    else if (a == "--tiny")
      tiny = true;
    else {
      fmt::print(stderr,
                 "usage: ttinterp-bench [--repeats N] [--threads N] [--only NAME] "
                 "[--hazards] [--phases] [--interpreted-only] [--copy-back] [--memory | "
                 "--memory-in-place | --gemm | --tiny]\n");
      return 2;
    }
  }
  if (tiny)
    return tinyLaunchBenchmark(repeatsGiven ? repeats : 5000);

  std::vector<Case> cases;
  // Inputs are made only for the cases that run (--only): generating all of them takes longer
  // than a profiled case's launches, and would be most of its profile.
  auto inputElements = [&](int64_t elements,
                           std::initializer_list<const char *> names) -> int64_t {
    if (only.empty())
      return elements;
    for (const char *name : names)
      if (only == name)
        return elements;
    return 0;
  };

  // vector add, 2^24 f32
  const int64_t n = int64_t(1) << 24;
  const int64_t addSize = inputElements(n, {"vector_add"});
  std::vector<float> x = randomVector(addSize, 1), y = randomVector(addSize, 2), out(addSize);
  Kernel add = load("vector_add");
  cases.push_back({"vector_add", "2^24 f32",
                   [&](unsigned t, bool h) {
                     return launch(add, {&x, &y, &out}, {i32(n)}, {n / 1024, 1, 1}, t, h);
                   },
                   [&](int64_t part, int64_t parts) {
                     for (int64_t i = part * n / parts; i < (part + 1) * n / parts; ++i)
                       out[i] = x[i] + y[i];
                   },
                   [&](int64_t part, int64_t parts) {
                     bench::vectorAdd(x.data(), y.data(), out.data(), part * n / parts,
                                      (part + 1) * n / parts);
                   }});

  // softmax, 4096 x 1024 f32
  const int64_t rows = 4096, cols = 1024;
  const int64_t softmaxSize = inputElements(rows * cols, {"softmax"});
  std::vector<float> sin = randomVector(softmaxSize, 3), sout(softmaxSize);
  Kernel softmax = load("softmax_1024");
  cases.push_back({"softmax", "4096x1024 f32",
                   [&](unsigned t, bool h) {
                     return launch(softmax, {&sout, &sin},
                                   {i32(cols), i32(cols), i32(cols)}, {rows, 1, 1}, t, h);
                   },
                   [&](int64_t part, int64_t parts) {
                     for (int64_t r = part * rows / parts; r < (part + 1) * rows / parts; ++r) {
                       const float *in = &sin[r * cols];
                       float *o = &sout[r * cols];
                       float m = -INFINITY;
                       for (int64_t c = 0; c < cols; ++c)
                         m = std::max(m, in[c]);
                       float s = 0;
                       for (int64_t c = 0; c < cols; ++c)
                         s += (o[c] = std::exp(in[c] - m));
                       for (int64_t c = 0; c < cols; ++c)
                         o[c] /= s;
                     }
                   },
                   [&](int64_t part, int64_t parts) {
                     bench::softmaxRows(sin.data(), sout.data(), cols, part * rows / parts,
                                        (part + 1) * rows / parts);
                   }});

  // matmul, 512^3 f32 (ieee and tf32)
  const int64_t m = 512;
  const int64_t matrixSize = inputElements(m * m, {"matmul_ieee", "matmul_tf32"});
  std::vector<float> a = randomVector(matrixSize, 4), b = randomVector(matrixSize, 5),
                     c(matrixSize);
  Kernel mmIeee = load("matmul_ieee"), mmTf32 = load("matmul_tf32");
  auto gemm = [&](int64_t part, int64_t parts) {
    // Row blocks of C = A B: each part multiplies its rows of A by all of B.
    using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    int64_t lo = part * m / parts, hi = (part + 1) * m / parts;
    Eigen::Map<const M> A(a.data() + lo * m, hi - lo, m), B(b.data(), m, m);
    Eigen::Map<M> C(c.data() + lo * m, hi - lo, m);
    C.noalias() = A * B;
  };
  std::vector<interp::ArgumentValue> mmArgs{i32(m), i32(m), i32(m), i32(m), i32(m), i32(m)};
  cases.push_back({"matmul_ieee",
                   "512^3 f32",
                   [&](unsigned t, bool h) {
                     return launch(mmIeee, {&a, &b, &c}, mmArgs, {m / 64, m / 64, 1}, t, h);
                   },
                   gemm,
                   {}});
  cases.push_back({"matmul_tf32",
                   "512^3 f32",
                   [&](unsigned t, bool h) {
                     return launch(mmTf32, {&a, &b, &c}, mmArgs, {m / 64, m / 64, 1}, t, h);
                   },
                   gemm,
                   {}});

  // layernorm forward, 4096 x 16: the same program on rows of 16, so that what each program
  // costs beyond its data (the interpreter's steps) is most of the time.
  constexpr int64_t narrowCols = 16;
  const int64_t narrowRows = inputElements(rows, {"layernorm16"});
  std::vector<float> nx = randomVector(narrowRows * narrowCols, 9), ny(narrowRows * narrowCols),
                     nw = randomVector(narrowCols, 10), nbias = randomVector(narrowCols, 11),
                     nmean(narrowRows), nrstd(narrowRows);
  Kernel layernormNarrow = load("layernorm_narrow");
  cases.push_back({"layernorm16", "4096x16 f32",
                   [&](unsigned t, bool h) {
                     return launch(layernormNarrow, {&nx, &ny, &nw, &nbias, &nmean, &nrstd},
                                   {i32(narrowCols), i32(narrowCols), f32(1e-5)}, {rows, 1, 1}, t,
                                   h);
                   },
                   [&](int64_t part, int64_t parts) {
                     layerNormRows(nx, ny, nw, nbias, nmean, nrstd, narrowCols, part * rows / parts,
                                   (part + 1) * rows / parts);
                   },
                   [&](int64_t part, int64_t parts) {
                     bench::layerNormRows(nx.data(), ny.data(), nw.data(), nbias.data(),
                                          nmean.data(), nrstd.data(), narrowCols,
                                          part * rows / parts, (part + 1) * rows / parts);
                   }});

  // layernorm forward, 4096 x 1024
  const int64_t layernormRows = inputElements(rows, {"layernorm"});
  std::vector<float> lx = randomVector(layernormRows * cols, 6), ly(layernormRows * cols),
                     w = randomVector(cols, 7), bias = randomVector(cols, 8), mean(layernormRows),
                     rstd(layernormRows);
  Kernel layernorm = load("layernorm");
  cases.push_back({"layernorm", "4096x1024 f32",
                   [&](unsigned t, bool h) {
                     return launch(layernorm, {&lx, &ly, &w, &bias, &mean, &rstd},
                                   {i32(cols), i32(cols), f32(1e-5)}, {rows, 1, 1}, t, h);
                   },
                   [&](int64_t part, int64_t parts) {
                     layerNormRows(lx, ly, w, bias, mean, rstd, cols, part * rows / parts,
                                   (part + 1) * rows / parts);
                   },
                   [&](int64_t part, int64_t parts) {
                     bench::layerNormRows(lx.data(), ly.data(), w.data(), bias.data(), mean.data(),
                                          rstd.data(), cols, part * rows / parts,
                                          (part + 1) * rows / parts);
                   }});

  if (!only.empty() &&
      std::none_of(cases.begin(), cases.end(), [&](const Case &cs) { return cs.name == only; })) {
    std::string names;
    for (const Case &cs : cases)
      names += fmt::format("{}{}", names.empty() ? "" : ", ", cs.name);
    fmt::print(stderr, "ttinterp-bench: no case named '{}' (cases: {})\n", only, names);
    return 2;
  }
  if (!interpretedOnly)
    fmt::print("vector kernels: {}; vector controls: {}\n", interp::vectorTarget(),
               bench::vectorControlTarget());
  if (!interpretedOnly)
    fmt::print("{:<12} {:<14} {:>11} {:>11} {:>9} {:>11} {:>9} {:>11} {:>11} {:>11}{}\n", "kernel",
               "size", "native ms", "interp ms", "ratio", fmt::format("interp {}t", threads),
               "speedup", fmt::format("native {}t", threads), "vector ms",
               fmt::format("vector {}t", threads), hazards ? "  hazards ms  cost" : "");
  for (const Case &cs : cases) {
    if (!only.empty() && cs.name != only)
      continue;
    std::vector<double> native, nativeMany, vector, vectorMany, one, many, tracked;
    std::vector<Phases> onePhases, manyPhases;
    cs.native(0, 1); // warm up caches and pages
    if (cs.vector)
      cs.vector(0, 1);
    cs.interpreted(1, false);
    // The warm-up ran enough lanes to ask for the kernel's chains to be compiled: time the
    // compiled loops (TTINTERP_JIT=off times the interpreter alone).
    interp::waitForChainCompilations();
    if (interpretedOnly) {
      std::vector<double> times;
      for (int r = 0; r < repeats; ++r)
        times.push_back(seconds([&] { cs.interpreted(threads, false); }));
      fmt::print("{:<12} {:<14} interpreted on {} thread(s): {:.2f} ms\n", cs.name, cs.what,
                 threads, median(times) * 1e3);
      continue;
    }
    for (int r = 0; r < repeats; ++r) {
      native.push_back(seconds([&] { cs.native(0, 1); }));
      nativeMany.push_back(seconds([&] { onThreads(cs.native, threads); }));
      if (cs.vector) {
        vector.push_back(seconds([&] { cs.vector(0, 1); }));
        vectorMany.push_back(seconds([&] { onThreads(cs.vector, threads); }));
      }
      one.push_back(seconds([&] { onePhases.push_back(cs.interpreted(1, false)); }));
      many.push_back(seconds([&] { manyPhases.push_back(cs.interpreted(threads, false)); }));
      if (hazards)
        tracked.push_back(seconds([&] { cs.interpreted(1, true); }));
    }
    // Ratios pair the runs of one repeat, which ran back to back: this
    // machine's speed drifts between repeats, much less within one.
    auto pairedRatio = [&](const std::vector<double> &num, const std::vector<double> &den) {
      std::vector<double> r;
      for (size_t i = 0; i < num.size(); ++i)
        r.push_back(num[i] / den[i]);
      return median(r);
    };
    double tn = median(native), t1 = median(one), tt = median(many);
    std::string extra = hazards ? fmt::format(" {:>11.2f} {:>5.2f}x", median(tracked) * 1e3,
                                              pairedRatio(tracked, one))
                                : "";
    std::string vectorColumns = cs.vector
                                    ? fmt::format("{:>11.2f} {:>10.2f}x", median(vector) * 1e3,
                                                  pairedRatio(vector, vectorMany))
                                    : fmt::format("{:>11} {:>11}", "-", "-");
    fmt::print("{:<12} {:<14} {:>11.2f} {:>11.2f} {:>9.3f} {:>11.2f} {:>8.2f}x {:>10.2f}x {}{}\n",
               cs.name, cs.what, tn * 1e3, t1 * 1e3, pairedRatio(native, one), tt * 1e3,
               pairedRatio(one, many), pairedRatio(native, nativeMany), vectorColumns, extra);
    if (phases)
      for (double Phases::*phase : {&Phases::prepare, &Phases::run, &Phases::writeBack}) {
        std::vector<double> a, b;
        for (int r = 0; r < repeats; ++r) {
          a.push_back(onePhases[size_t(r)].*phase);
          b.push_back(manyPhases[size_t(r)].*phase);
        }
        const char *name = phase == &Phases::prepare ? "prepare"
                           : phase == &Phases::run   ? "run"
                                                     : "write-back";
        fmt::print("  {:<25} {:>11} {:>11.2f} {:>9} {:>11.2f} {:>8.2f}x\n", name, "",
                   median(a) * 1e3, "", median(b) * 1e3, pairedRatio(a, b));
      }
  }
  if (interpretedOnly)
    return 0;
  fmt::print("times are medians; ratio = native time / interpreted time (1 thread); speedup = 1 "
             "thread / {0} threads;\n"
             "native {0}t = the plain C++ split over {0} threads, the speedup this machine gives "
             "at all;\n"
             "vector ms / {0}t = the same in Highway vectors on 1 thread / its speedup on {0} "
             "threads: what the machine gives memory-speed code;\n"
             "ratios and speedups are medians over repeats of each repeat's own ratio\n",
             threads);
  return 0;
}
