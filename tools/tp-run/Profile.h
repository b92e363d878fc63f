//===- Profile.h - tp-run --profile's report --------------------*- C++ -*-===//
#ifndef TP_RUN_PROFILE_H
#define TP_RUN_PROFILE_H

#include "RankState.h"

#include "tprt/Manifest.h"

#include <string>
#include <vector>

namespace tprt {

/// Prints --profile's report: step times, rank 0's memory against the
/// plan, per pipeline stage its peak and its waiting, per collective site
/// and per GEMM shape, calls and time.
void printProfile(const Manifest &m, const std::vector<RankState> &states,
                  int numRanks, const std::string &backend);

} // namespace tprt

#endif // TP_RUN_PROFILE_H
