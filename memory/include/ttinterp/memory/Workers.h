//===- Workers.h - Running one job on the calling thread and helpers -*- C++ -*-===//
//
// Launches and the copies around them split work the same way: the calling
// thread works too, and only threads - 1 helpers join it. On a machine with
// as many cores as threads, an idle caller would share a core with a worker,
// and the last worker started would begin late. `work` claims its own pieces
// (an atomic counter), so a thread the machine slows down simply takes fewer.
//
// The helpers are the process's own pool, started once and kept: starting a
// thread costs about 30 us here, and a Python launch asks for every core twice
// (its programs, then its write-back), so a 64-core machine paid milliseconds
// per launch in thread starts alone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>

namespace ttinterp {

/// Runs work() on the calling thread and on up to threads - 1 helpers (fewer
/// when the system has no more to give), and returns when every call has.
/// Helpers that had not started by the time the caller's own call returned are
/// not started at all (the work was done). Safe from several threads at once,
/// and from inside work(): one job at a time uses the pool, others start
/// threads of their own for the call.
void runOnThreads(unsigned threads, const std::function<void()> &work);

/// Runs piece(from, to) over [lo, hi) cut at the multiples of `step`, the pieces claimed as up
/// to `threads` threads (runOnThreads) get to them.
void runOnPieces(unsigned threads, uint64_t lo, uint64_t hi, uint64_t step,
                 const std::function<void(uint64_t, uint64_t)> &piece);

} // namespace ttinterp
