//===- Workers.h - Running one job on the calling thread and helpers -*- C++ -*-===//
//
// Launches and the copies around them split work the same way: the calling
// thread works too, and only threads - 1 more are started. On a machine with
// as many cores as threads, an idle caller would share a core with a worker,
// and the last worker started would begin late. `work` claims its own pieces
// (an atomic counter), so a thread the machine slows down simply takes fewer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <system_error>
#include <thread>
#include <vector>

namespace ttinterp {

/// Runs work() on the calling thread and on up to threads - 1 new ones (fewer
/// when the system has no more to give), and returns when every call has.
template <class Work> void runOnThreads(unsigned threads, Work &work) {
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

} // namespace ttinterp
