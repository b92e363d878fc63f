//===- RankState.h - what tp-run holds per rank -----------------*- C++ -*-===//
#ifndef TP_RUN_RANKSTATE_H
#define TP_RUN_RANKSTATE_H

#include "tprt/Program.h"
#include "tprt/Trace.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace tprt {

/// One rank's buffers, per-step batches and what --profile reports of it.
struct RankState {
  std::vector<std::vector<char>> args, results;
  /// Per argument: the rank's block of every step's batch, when the input
  /// file holds one batch per step (empty otherwise).
  std::vector<std::vector<std::vector<char>>> batches;
  std::vector<SiteStats> stats;
  std::map<std::array<int64_t, 3>, SiteStats> gemms;
  /// With --profile: seconds in each kernel site, all steps.
  std::vector<double> kernelSeconds;
  std::vector<double> stepSeconds;
  /// The most bytes of temporaries the program held at once in a step.
  int64_t peakTemporaries = 0;
  /// With --trace: the rank's timeline.
  std::unique_ptr<TraceRecorder> trace;
};

} // namespace tprt

#endif // TP_RUN_RANKSTATE_H
