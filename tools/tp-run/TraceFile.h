//===- TraceFile.h - tp-run --trace's file ----------------------*- C++ -*-===//
#ifndef TP_RUN_TRACEFILE_H
#define TP_RUN_TRACEFILE_H

#include "RankState.h"

#include "tprt/Communicator.h"
#include "tprt/Manifest.h"
#include "tprt/Status.h"

#include <string>
#include <vector>

namespace tprt {

/// Writes the timeline of this process's ranks (`states[i]` is world rank
/// `ranks[i]`) to `path`; under MPI, over `gatherOver`, rank 0 writes every
/// rank's.
Status writeRunTrace(const std::string &path, const Manifest &m,
                     const std::vector<RankState> &states,
                     const std::vector<int> &ranks, Communicator *gatherOver);

/// If the run ends early (a timeout, a failed collective, Ctrl-C), the
/// events so far go to `path` with why it ended; under MPI the other ranks
/// may be gone, so each process writes its own part to `path`.rank<N>.
void writeTraceIfRunEndsEarly(const std::string &path, const Manifest &m,
                              const std::vector<RankState> &states,
                              const std::vector<int> &ranks, bool mpi);

} // namespace tprt

#endif // TP_RUN_TRACEFILE_H
