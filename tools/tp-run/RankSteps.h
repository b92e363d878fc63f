//===- RankSteps.h - one rank's arguments and steps -------------*- C++ -*-===//
//
// What every rank of tp-run does, whatever the backend: its blocks of the
// inputs and weights, then the steps, each training step on the weights
// the previous one updated.
//
//===----------------------------------------------------------------------===//
#ifndef TP_RUN_RANKSTEPS_H
#define TP_RUN_RANKSTEPS_H

#include "RankState.h"

#include "tprt/Communicator.h"
#include "tprt/Manifest.h"
#include "tprt/Npy.h"
#include "tprt/Program.h"
#include "tprt/Status.h"
#include "tprt/WeightLoader.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tprt {

/// The command line's say on the steps.
struct StepOptions {
  /// --repeat, and --steps with whether it was given (a training step's
  /// loss is printed then).
  int repeat = 1, steps = 1;
  bool printLoss = false;
  /// --profile: time the GEMMs and kernel sites too.
  bool profile = false;
  /// --backend threads: a killed rank's thread stops instead of its process.
  bool threadsBackend = false;
  /// --trace: the events each rank keeps; 0 without --trace.
  unsigned traceEvents = 0;
};

/// Fills one rank's local arguments: input blocks and weight blocks.
Status prepareRank(const Manifest &m, int rank,
                   const std::map<std::string, NpyArray> &feeds,
                   const WeightSource &weights, const StepOptions &options,
                   RankState &st);

/// (result index, argument index) of every weight a training step updates:
/// a result named like a weight argument.
std::vector<std::pair<size_t, size_t>> weightFeedback(const Manifest &m);

/// The index of the result named `name`, or -1.
int resultNamed(const Manifest &m, const std::string &name);

/// Steps every rank runs (what runRank loops over).
int stepCount(const Manifest &m, const StepOptions &options);

/// Runs the rank's steps on `comm`, feeding each training step the weights
/// the previous one updated.
void runRank(const Program &program, Communicator &comm, const Manifest &m,
             const StepOptions &options, RankState &st);

} // namespace tprt

#endif // TP_RUN_RANKSTEPS_H
