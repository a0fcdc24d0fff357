//===- WorkersTest.cpp - The helper pool: every piece done, helpers kept, callers at once -===//
#include "ttinterp/memory/Workers.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using namespace ttinterp;

namespace {

/// Pieces 0..n-1 claimed through a counter, as launches and write-backs claim theirs; each
/// piece adds its index, so the total is n(n-1)/2 exactly when each ran once.
uint64_t sumOfPieces(unsigned threads, uint64_t n) {
  std::atomic<uint64_t> next{0}, total{0};
  runOnThreads(threads, [&] {
    for (uint64_t k; (k = next.fetch_add(1)) < n;)
      total.fetch_add(k);
  });
  return total.load();
}

/// Waits until `want` threads are inside the same job, so that helpers really take part however
/// fast the caller is. Returns how many arrived. The limit is only there so that a broken pool
/// fails instead of hanging: on a loaded shared machine a helper can wait a second for a core.
unsigned meet(std::atomic<unsigned> &arrived, unsigned want) {
  arrived.fetch_add(1);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (arrived.load() < want && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  return arrived.load();
}

thread_local unsigned jobsOnThisThread = 0;

/// The `Threads:` line of /proc/self/status: helpers started and still waiting count too.
unsigned threadsOfThisProcess() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0)
      return static_cast<unsigned>(std::stoul(line.substr(8)));
  return 0;
}

} // namespace

TEST_CASE("every piece of a job runs exactly once, on any number of threads") {
  for (unsigned threads : {1u, 2u, 3u, 8u})
    for (uint64_t n : {0u, 1u, 7u, 10000u})
      CHECK(sumOfPieces(threads, n) == n * (n - (n ? 1 : 0)) / 2);
}

TEST_CASE("runOnPieces cuts a range at the multiples of its step and runs each piece once") {
  // [10, 45) with step 16: [10, 16), [16, 32), [32, 45). [32, 48) with step 16: one piece.
  for (unsigned threads : {1u, 2u, 8u}) {
    CAPTURE(threads);
    std::mutex m;
    std::vector<std::pair<uint64_t, uint64_t>> got;
    auto record = [&](uint64_t from, uint64_t to) {
      std::lock_guard<std::mutex> lock(m);
      got.emplace_back(from, to);
    };
    runOnPieces(threads, 10, 45, 16, record);
    std::sort(got.begin(), got.end());
    CHECK(got == std::vector<std::pair<uint64_t, uint64_t>>{{10, 16}, {16, 32}, {32, 45}});
    got.clear();
    runOnPieces(threads, 32, 48, 16, record);
    CHECK(got == std::vector<std::pair<uint64_t, uint64_t>>{{32, 48}});
    got.clear();
    runOnPieces(threads, 7, 7, 16, record);
    CHECK(got.empty());
  }
}

TEST_CASE("helpers are kept from one job to the next") {
  // Three threads meet in each of 40 jobs: 80 turns for helpers. Threads started per job would
  // each take one turn in their life; the pool's (fewer than 80, however many earlier tests
  // asked for) take several each.
  unsigned most = 0;
  for (int job = 0; job < 40; ++job) {
    std::atomic<unsigned> arrived{0};
    std::atomic<unsigned> mostHere{0};
    std::thread::id caller = std::this_thread::get_id();
    runOnThreads(3, [&] {
      meet(arrived, 3);
      if (std::this_thread::get_id() != caller) {
        unsigned n = ++jobsOnThisThread;
        for (unsigned m = mostHere.load(); n > m && !mostHere.compare_exchange_weak(m, n);) {
        }
      }
    });
    CHECK(arrived.load() == 3);
    most = std::max(most, mostHere.load());
  }
  CHECK(most >= 2);
}

TEST_CASE("callers on several threads at once, and a job inside a job, all finish") {
  std::vector<std::thread> callers;
  std::atomic<int> right{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int r = 0; r < 20; ++r)
        right += sumOfPieces(3, 1000) == 1000u * 999u / 2;
    });
  for (std::thread &t : callers)
    t.join();
  CHECK(right.load() == 80);

  std::atomic<uint64_t> inner{0};
  runOnThreads(2, [&] { inner += sumOfPieces(2, 100); });
  // Each of the outer job's threads ran one inner job of its own.
  CHECK((inner.load() == 4950 || inner.load() == 2 * 4950));
}

TEST_CASE("a forked child runs jobs with helpers of its own") {
  CHECK(sumOfPieces(3, 100) == 4950); // the parent's pool is up
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The parent's helpers did not come along: a pool that waited for them would hang here.
    std::atomic<unsigned> arrived{0};
    runOnThreads(3, [&] { meet(arrived, 3); });
    bool sumRight = sumOfPieces(3, 1000) == 499500;
    // Each failed condition has its own bit, so that a failure says which one it was.
    _exit((sumRight ? 0 : 1) | (arrived.load() == 3 ? 0 : 2) |
          (threadsOfThisProcess() >= 3 ? 0 : 4));
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  int failed = WEXITSTATUS(status);
  CHECK_MESSAGE((failed & 1) == 0, "the child's pieces did not sum right");
  CHECK_MESSAGE((failed & 2) == 0, "the child's helpers did not all take part in its job");
  CHECK_MESSAGE((failed & 4) == 0, "the child started no helpers of its own");
}
