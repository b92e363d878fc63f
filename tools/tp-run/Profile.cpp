//===- Profile.cpp - tp-run --profile's report ----------------------------===//
#include "Profile.h"

#include "tprt/Program.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace tprt;

namespace {

/// --profile, pipelines: per stage (its first rank, where this process
/// runs it) the temporaries at their peak against the plan, and the time
/// spent waiting in recvs, the schedule's bubble, against its prediction
/// (p - 1) / (m + p - 1).
void printStages(const Manifest &m, const std::vector<RankState> &states) {
  if (m.stageAxis < 0)
    return;
  int64_t stages = m.mesh.sizes[m.stageAxis], mask = int64_t(1) << m.stageAxis;
  double predicted = double(stages - 1) / double(m.microbatches + stages - 1);
  for (int64_t s = 0; s < stages; ++s) {
    int rank = 0;
    while (rank < m.mesh.numRanks() && m.mesh.indexAlong(rank, mask) != s)
      ++rank;
    // Threads: every rank's state; MPI and NCCL: this process's rank.
    if (states.size() == 1 ? s != 0 : rank >= int(states.size()))
      continue;
    const RankState &st = states[states.size() == 1 ? 0 : rank];
    double waited = 0, step = 0;
    for (size_t i = 0; i < m.collectiveSites.size(); ++i)
      if (llvm::StringRef(m.collectiveSites[i]).starts_with("recv from stage"))
        waited += st.stats[i].seconds;
    for (double t : st.stepSeconds)
      step += t;
    llvm::outs() << llvm::format(
        "  stage %lld (rank %d): temporaries %lld bytes at their peak",
        (long long)s, rank, (long long)st.peakTemporaries);
    if (s < int64_t(m.stagePeakBytes.size()))
      llvm::outs() << llvm::format(" (planned %lld bytes)",
                                   (long long)m.stagePeakBytes[s]);
    llvm::outs() << llvm::format(
        "; waited %.3f ms in recvs, %.1f%% of its steps (%s, %lld "
        "microbatches: bubble (p-1)/(m+p-1) = %.1f%%)\n",
        waited * 1e3, step > 0 ? 100 * waited / step : 0.0,
        m.schedule.c_str(), (long long)m.microbatches, 100 * predicted);
  }
}

/// --profile: where rank 0's steps went, per step, by kernel family
/// (tp-trace-kernel-sites' classes), collectives, and the rest (the
/// runtime's own work between kernels: allocation, argument setup).
void printKernelFamilies(const Manifest &m, const RankState &st) {
  if (m.kernelFamilies.size() != st.kernelSeconds.size() ||
      st.stepSeconds.empty())
    return;
  double steps = double(st.stepSeconds.size()), total = 0;
  for (double t : st.stepSeconds)
    total += t;
  // In this order, those the program has.
  std::vector<std::pair<std::string, double>> families;
  for (const char *family :
       {"gemm", "convolution", "reduction", "elementwise", "copy"})
    if (llvm::is_contained(m.kernelFamilies, family))
      families.push_back({family, 0});
  auto add = [&](const std::string &family, double seconds) {
    for (auto &[name, sum] : families)
      if (name == family) {
        sum += seconds;
        return;
      }
    families.push_back({family, seconds});
  };
  for (size_t i = 0; i < st.kernelSeconds.size(); ++i)
    add(m.kernelFamilies[i], st.kernelSeconds[i]);
  for (const SiteStats &c : st.stats)
    add("collectives", c.seconds);
  double accounted = 0;
  for (const auto &[name, sum] : families)
    accounted += sum;
  families.push_back({"other", std::max(0.0, total - accounted)});
  llvm::outs() << "  time by kernel family (rank 0, per step):\n";
  for (const auto &[name, sum] : families)
    llvm::outs() << llvm::format("    %-12s %10.3f ms %5.1f%%\n", name.c_str(),
                                 sum / steps * 1e3,
                                 total > 0 ? 100 * sum / total : 0.0);
}

} // namespace

void tprt::printProfile(const Manifest &m, const std::vector<RankState> &states,
                        int numRanks, const std::string &backend) {
  std::vector<double> steps = states[0].stepSeconds;
  double best = *std::min_element(steps.begin(), steps.end()), sum = 0;
  for (double s : steps)
    sum += s;
  llvm::outs() << llvm::format(
      "profile: %d step(s) on %d rank(s) (%s backend): best %.3f ms, mean "
      "%.3f ms per step\n",
      int(steps.size()), numRanks, backend.c_str(), best * 1e3,
      sum / steps.size() * 1e3);
  // What each buffer of rank 0 holds: its share of the arguments and
  // results (buffers tp-run gives the program), and the temporaries the
  // program allocated, against tp-plan-peak-memory's plan.
  int64_t argBytes = 0, resultBytes = 0;
  for (const auto &a : states[0].args)
    argBytes += int64_t(a.size());
  for (const auto &r : states[0].results)
    resultBytes += int64_t(r.size());
  llvm::outs() << llvm::format(
      "  memory (rank 0): arguments %lld bytes, results %lld bytes, "
      "temporaries %lld bytes at their peak",
      (long long)argBytes, (long long)resultBytes,
      (long long)states[0].peakTemporaries);
  if (m.peakTemporaryBytes >= 0)
    llvm::outs() << llvm::format(" (planned %lld bytes)",
                                 (long long)m.peakTemporaryBytes);
  llvm::outs() << llvm::format(
      "; the allocator holds %lld bytes for the program's buffers (in use "
      "or cached for reuse, all ranks of this process)\n",
      (long long)reservedProgramBytes());
  // oneDNN's reordered operands and scratchpad: beside the plan, kept
  // between steps.
  if (size_t workspace = convolutionWorkspaceBytes())
    llvm::outs() << llvm::format(
        "  convolution workspace (oneDNN): %lld bytes per rank thread\n",
        (long long)workspace);
  printKernelFamilies(m, states[0]);
  printStages(m, states);
  // A pipeline's every microbatch has its own send and recv sites: one
  // line per name, and only rank 0's stage's.
  std::vector<std::pair<std::string, SiteStats>> sites;
  llvm::StringMap<size_t> line;
  for (size_t i = 0; i < m.collectiveSites.size(); ++i) {
    const SiteStats &st = states[0].stats[i];
    if (m.stageAxis < 0) {
      sites.push_back({m.collectiveSites[i], st});
      continue;
    }
    if (st.calls == 0)
      continue;
    auto [it, added] = line.try_emplace(m.collectiveSites[i], sites.size());
    if (added)
      sites.push_back({m.collectiveSites[i], SiteStats()});
    SiteStats &sum = sites[it->second].second;
    sum.calls += st.calls;
    sum.bytes += st.bytes;
    sum.seconds += st.seconds;
  }
  for (const auto &[name, st] : sites)
    llvm::outs() << llvm::format(
        "  %-40s %4lld call(s) %10lld bytes/rank %8.3f ms (rank 0)\n",
        name.c_str(), (long long)st.calls, (long long)st.bytes,
        st.seconds * 1e3);
  // GEMMs on OpenBLAS, per shape (rank 0, all steps).
  for (const auto &[shape, st] : states[0].gemms) {
    double flops = 2.0 * shape[0] * shape[1] * shape[2] * st.calls;
    llvm::outs() << llvm::format(
        "  gemm %lldx%lldx%lld (m x n x k) %6lld call(s) %10.3f ms %8.2f "
        "GFLOP/s (rank 0)\n",
        (long long)shape[0], (long long)shape[1], (long long)shape[2],
        (long long)st.calls, st.seconds * 1e3,
        st.seconds > 0 ? flops / st.seconds / 1e9 : 0.0);
  }
}
