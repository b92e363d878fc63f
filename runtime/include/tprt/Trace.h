//===- Trace.h - a rank's timeline, written as a Chrome trace -*- C++ -*-===//
//
// tp-run --trace (and Python's trace=) records, per rank, every GEMM, loop
// nest (kernel site), collective and send / recv, each step, and the bytes
// of program buffers in use, into a buffer reserved before the first step:
// recording appends a fixed-size event and allocates nothing. With no
// recorder bound to the rank (the default) each hook is one test of a
// thread-local pointer.
//
// The ranks' events become one file in the Chrome trace event format
// (what Perfetto and chrome://tracing open): one process per rank, one
// thread per stream of work (the program's kernels and GEMMs, its
// collectives, its memory counter). Timestamps come from CLOCK_REALTIME,
// which the processes of one machine share: MPI ranks send their events
// to rank 0, which writes the file (ranks on several machines rely on
// their clocks being synchronized, as NTP keeps them).
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_TRACE_H
#define TPRT_TRACE_H

#include "tprt/Status.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tprt {

class Communicator;
struct Manifest;

struct TraceEvent {
  enum Kind : int32_t {
    Step,       // id: the step's number (from 1)
    Gemm,       // a, b, c: m, n, k; id: how many (batched)
    Kernel,     // id: the kernel site
    Collective, // id: the collective site; a: bytes; b: axes mask; c: peer
    Memory,     // a: bytes of program buffers in use (a counter)
  };
  Kind kind;
  int32_t id;
  int64_t startNs, durationNs;
  int64_t a = 0, b = 0, c = 0;
};

/// Set when the run ends abnormally: recorders take no more events while
/// the trace is written.
extern std::atomic<bool> traceFrozen;

/// One rank's events, in the order they ended.
class TraceRecorder {
public:
  explicit TraceRecorder(size_t capacity = 1 << 20) { events.reserve(capacity); }
  /// Appends `e`; past the reserved capacity it is counted, not kept.
  void add(const TraceEvent &e) {
    if (traceFrozen.load(std::memory_order_relaxed))
      return;
    if (events.size() < events.capacity())
      events.push_back(e);
    else
      ++dropped;
  }
  std::vector<TraceEvent> events;
  int64_t dropped = 0;
};

/// Nanoseconds on the clock every rank of a machine shares.
int64_t traceClockNs();

/// The calling rank's recorder, or null when it records nothing.
TraceRecorder *currentTrace();

/// Records a step of the calling rank from `startNs` until now.
void traceStep(int64_t step, int64_t startNs);

/// The ranks' events as one Chrome trace (JSON). `ranks[i]` holds the
/// events of world rank `worldRanks[i]`. Collectives get, per call, the
/// time the rank waited for the last member of its group to arrive and
/// the time after it (moving the data); the program's results do not
/// depend on any of it.
/// `ending`: why the run ended early (an instant event on every rank).
std::string chromeTrace(const Manifest &m,
                        const std::vector<const TraceRecorder *> &ranks,
                        const std::vector<int> &worldRanks,
                        const std::string &ending = "");

/// Writes the trace of every rank of `m` to `path` (atomically). Threads:
/// `ranks` holds every rank; MPI: each process passes its own and its
/// communicator, and rank 0 gathers the others' events and writes.
Status writeChromeTrace(const std::string &path, const Manifest &m,
                        const std::vector<const TraceRecorder *> &ranks,
                        const std::vector<int> &worldRanks,
                        Communicator *gatherOver);

} // namespace tprt

#endif // TPRT_TRACE_H
