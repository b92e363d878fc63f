//===- RankSteps.cpp - one rank's arguments and steps ---------------------===//
#include "RankSteps.h"
#include "FaultInjection.h"

#include "tprt/Blocks.h"
#include "tprt/DType.h"
#include "tprt/Trace.h"
#include "tprt/Watchdog.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace tprt;

Status tprt::prepareRank(const Manifest &m, int rank,
                         const std::map<std::string, NpyArray> &feeds,
                         const WeightSource &weights,
                         const StepOptions &options, RankState &st) {
  for (const TensorSpec &t : m.arguments) {
    // A pipeline stage that never reads it (another stage's weights).
    if (!m.needsBuffer(t, /*isResult=*/false, rank)) {
      st.args.emplace_back();
      continue;
    }
    st.args.emplace_back(t.localElements() * dtypeSize(t.dtype));
    if (t.kind == "state") {
      continue; // optimizer state starts at zero (the vector is zeroed)
    } else if (t.kind == "param") {
      if (Status s = weights.loadBlock(t, m.mesh, rank, st.args.back().data());
          !s)
        return s;
    } else {
      // A file may hold several batches (one per step), one after another.
      const NpyArray &feed = feeds.at(t.name);
      size_t batchBytes = t.numElements() * dtypeSize(t.dtype);
      size_t count = feed.data.size() / batchBytes;
      st.batches.resize(m.arguments.size());
      for (size_t k = 0; k < count; ++k) {
        std::vector<char> block(st.args.back().size());
        extractBlock(t, m.mesh, rank, feed.data.data() + k * batchBytes,
                     block.data(), dtypeSize(t.dtype));
        if (k == 0)
          st.args.back() = block;
        if (count > 1)
          st.batches[st.args.size() - 1].push_back(std::move(block));
      }
    }
  }
  st.results = makeResultBuffers(m, st.args, rank);
  st.stats.resize(m.collectiveSites.size());
  if (options.traceEvents)
    st.trace = std::make_unique<TraceRecorder>(options.traceEvents);
  return Status::ok();
}

std::vector<std::pair<size_t, size_t>>
tprt::weightFeedback(const Manifest &m) {
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t r = 0; r < m.results.size(); ++r)
    for (size_t a = 0; a < m.arguments.size(); ++a)
      if ((m.arguments[a].kind == "param" || m.arguments[a].kind == "state") &&
          m.arguments[a].name == m.results[r].name)
        pairs.emplace_back(r, a);
  return pairs;
}

int tprt::resultNamed(const Manifest &m, const std::string &name) {
  for (size_t r = 0; r < m.results.size(); ++r)
    if (m.results[r].name == name)
      return int(r);
  return -1;
}

int tprt::stepCount(const Manifest &m, const StepOptions &options) {
  return weightFeedback(m).empty() ? options.repeat
                                   : std::max(options.steps, options.repeat);
}

void tprt::runRank(const Program &program, Communicator &comm,
                   const Manifest &m, const StepOptions &options,
                   RankState &st) {
  if (options.profile)
    st.kernelSeconds.assign(m.kernelSites.size(), 0.0);
  RankContext ctx{&comm, &m.collectiveSites, &st.stats,
                  options.profile ? &st.gemms : nullptr, st.trace.get(),
                  options.profile ? &st.kernelSeconds : nullptr};
  setRankContext(&ctx);
  watchRank(comm.rank());
  std::vector<void *> args, results;
  for (auto &a : st.args)
    args.push_back(a.data());
  for (size_t r = 0; r < st.results.size(); ++r) {
    results.push_back(st.results[r].data());
    if (int a = m.inPlaceArgument(r); a >= 0)
      args[a] = results.back();
  }
  auto feedback = weightFeedback(m);
  int loss = resultNamed(m, "loss");
  // The first rank that holds the loss prints it (a pipeline's last stage).
  int lossRank = 0;
  if (loss >= 0)
    while (lossRank + 1 < m.mesh.numRanks() &&
           !m.holdsResult(m.results[loss], lossRank))
      ++lossRank;
  int iterations = stepCount(m, options);
  for (int k = 0; k < iterations; ++k) {
    for (size_t a = 0; a < st.batches.size(); ++a)
      if (!st.batches[a].empty())
        std::memcpy(st.args[a].data(), st.batches[a][k % st.batches[a].size()].data(),
                    st.args[a].size());
    markProgress(Activity::Code, "", k + 1);
    // Returns only when this rank was made to vanish (TPRT_FAULT=kill:R).
    if (k == 0 && injectFault(comm.rank(), options.threadsBackend))
      return;
    // CUDA: without copying the inputs and weights in and results out.
    resetTemporaryPeak();
    int64_t stepStart = st.trace ? traceClockNs() : 0;
    st.stepSeconds.push_back(program.run(args, results));
    traceStep(k + 1, stepStart);
    st.peakTemporaries = std::max(st.peakTemporaries, temporaryPeak());
    if (feedback.empty())
      continue;
    if (comm.rank() == lossRank && loss >= 0 &&
        m.results[loss].dtype == TPRT_F32 && options.printLoss) {
      float value;
      std::memcpy(&value, st.results[loss].data(), 4);
      llvm::outs() << llvm::format("step %d: loss %.8g\n", k + 1, value);
      llvm::outs().flush();
    }
    // The next step trains the updated weights (same layout, same size;
    // an in-place update wrote them there already).
    if (k + 1 < iterations)
      for (auto [r, a] : feedback)
        if (m.inPlaceArgument(r) < 0 && !st.args[a].empty() &&
            !st.results[r].empty())
          std::memcpy(st.args[a].data(), st.results[r].data(),
                      st.args[a].size());
  }
  markProgress(Activity::Finished);
  setRankContext(nullptr);
}
