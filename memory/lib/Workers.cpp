//===- Workers.cpp - The process's helper threads --------------------------===//
#include "ttinterp/memory/Workers.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__unix__)
#include <pthread.h>
#endif

namespace ttinterp {
namespace {

/// Helpers wait here between jobs. Never destroyed: detached helpers may still wait on it
/// while the process exits, and a forked child replaces it (its helpers did not survive the fork).
struct Pool {
  std::mutex jobLock; ///< Held by the one caller whose job uses the pool.
  std::mutex m;
  std::condition_variable wake, finished;
  const std::function<void()> *job = nullptr;
  uint64_t generation = 0;
  unsigned unclaimed = 0; ///< Helpers the current job still takes.
  unsigned running = 0;   ///< Helpers inside the current job.
  unsigned helpers = 0;   ///< Threads started.
  unsigned settled = 0;   ///< Of those, the ones that reached helperLoop.
};

Pool *pool = nullptr;
std::once_flag poolOnce;

/// `seen`: the last job the helper is not to take (one started for a job takes that job).
void helperLoop(Pool *p, uint64_t seen) {
  std::unique_lock<std::mutex> lock(p->m);
  ++p->settled;
  p->finished.notify_all();
  for (;;) {
    p->wake.wait(lock, [&] { return p->generation != seen; });
    seen = p->generation;
    if (p->unclaimed == 0)
      continue; // enough helpers took it, or the caller finished first
    --p->unclaimed;
    ++p->running;
    const std::function<void()> *job = p->job;
    lock.unlock();
    (*job)();
    lock.lock();
    if (--p->running == 0)
      p->finished.notify_all();
  }
}

Pool &thePool() {
  std::call_once(poolOnce, [] {
    pool = new Pool();
#if defined(__unix__)
    // The child of a fork has no helpers, and the fork may have copied a lock held by one.
    pthread_atfork(nullptr, nullptr, [] { pool = new Pool(); });
#endif
  });
  return *pool;
}

/// Without the pool (it is busy with another job): threads of the call's own.
void runOnNewThreads(unsigned threads, const std::function<void()> &work) {
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back([&work] { work(); });
    } catch (const std::system_error &) {
      break; // The threads running share what is left.
    }
  }
  work();
  for (std::thread &helper : helpers)
    helper.join();
}

} // namespace

void runOnThreads(unsigned threads, const std::function<void()> &work) {
  if (threads <= 1) {
    work();
    return;
  }
  Pool &p = thePool();
  std::unique_lock<std::mutex> job(p.jobLock, std::try_to_lock);
  if (!job.owns_lock()) {
    runOnNewThreads(threads, work);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(p.m);
    while (p.helpers < threads - 1) {
      try {
        std::thread(helperLoop, &p, p.generation).detach();
      } catch (const std::system_error &) {
        break; // The threads running share what is left.
      }
      ++p.helpers;
    }
    p.job = &work;
    p.unclaimed = std::min(threads - 1, p.helpers);
    ++p.generation;
  }
  p.wake.notify_all();
  work();
  std::unique_lock<std::mutex> lock(p.m);
  p.unclaimed = 0; // whoever has not started finds the work done
  // A thread still starting may hold the allocator's locks (the C library's or a sanitizer's);
  // a fork then would copy them held into a child that can never take them. So no call returns
  // while one of its helpers is still starting: after it, a fork finds them all idle.
  p.finished.wait(lock, [&] { return p.running == 0 && p.settled == p.helpers; });
  p.job = nullptr;
}

void runOnPieces(unsigned threads, uint64_t lo, uint64_t hi, uint64_t step,
                 const std::function<void(uint64_t, uint64_t)> &piece) {
  if (lo >= hi)
    return;
  const uint64_t first = lo / step, pieces = (hi - 1) / step - first + 1;
  std::atomic<uint64_t> next{0};
  runOnThreads(unsigned(std::min<uint64_t>(threads, pieces)), [&] {
    for (uint64_t k; (k = next.fetch_add(1)) < pieces;)
      piece(std::max(lo, (first + k) * step), std::min(hi, (first + k + 1) * step));
  });
}

} // namespace ttinterp
