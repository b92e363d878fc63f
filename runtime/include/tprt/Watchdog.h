//===- Watchdog.h - end a run whose ranks stop making progress --*- C++ -*-===//
//
// The communicators time out a collective whose group never assembles, but
// a rank can also stop outside any collective: spinning in OpenBLAS's
// allocator under a memory limit, in an endless kernel, frozen by a
// debugger or SIGSTOP. Each rank marks its progress (every step, runtime
// call and GEMM) in a slot of its own; one watchdog thread per process
// ends the run when a busy rank's slot has not moved for the timeout,
// naming the rank, its step and what it was doing. The same thread takes
// SIGINT / SIGTERM (through a pipe their handler writes), so Ctrl-C stops
// all ranks at once and says which step it interrupted.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_WATCHDOG_H
#define TPRT_WATCHDOG_H

#include <chrono>
#include <cstdint>
#include <string>

namespace tprt {

/// What a rank is doing; `detail` (a site name, a GEMM shape) is copied.
enum class Activity { Idle, Preparing, Code, Collective, Gemm, Finished, Gone };

/// Starts the watchdog for the ranks [firstRank, firstRank + count) of this
/// process and takes over SIGINT and SIGTERM. `steps`: how many steps each
/// rank will run (for messages).
void startWatchdog(int firstRank, int count, std::chrono::milliseconds timeout,
                   int steps);

/// The calling thread is `rank` from now on (its marks go to its slot).
void watchRank(int rank);

/// Marks progress on the calling rank: now in `activity` of step `step`
/// (0: keep the current step).
void markProgress(Activity activity, const char *detail = "", int step = 0);

/// Marks progress on the calling rank: now in a GEMM of m x n x k.
void markGemm(int64_t m, int64_t n, int64_t k);

/// "step 2 of 3, in all_reduce at /fc2/Gemm" for a rank of this process
/// ("" for ranks it does not watch): what timeout messages say of a rank.
std::string describeRank(int rank);

/// Called once, before the process ends a run abnormally (a timeout, a
/// failed collective, Ctrl-C), with what it said; the trace's writer
/// (tp-run --trace). Threads that end the run meanwhile wait for it (at most
/// 10 s). With no hook set, nothing happens.
void setEndOfRunHook(void (*hook)(const char *why));
void runEndOfRunHook(const char *why);

} // namespace tprt

#endif // TPRT_WATCHDOG_H
