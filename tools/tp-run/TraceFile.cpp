//===- TraceFile.cpp - tp-run --trace's file ------------------------------===//
#include "TraceFile.h"

#include "tprt/AtomicFile.h"
#include "tprt/Trace.h"
#include "tprt/Watchdog.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <thread>

using namespace tprt;

static std::vector<const TraceRecorder *>
recorders(const std::vector<RankState> &states) {
  std::vector<const TraceRecorder *> traces;
  for (const RankState &st : states)
    traces.push_back(st.trace.get());
  return traces;
}

Status tprt::writeRunTrace(const std::string &path, const Manifest &m,
                           const std::vector<RankState> &states,
                           const std::vector<int> &ranks,
                           Communicator *gatherOver) {
  return writeChromeTrace(path, m, recorders(states), ranks, gatherOver);
}

namespace {
/// What the end-of-run hook writes (it takes no arguments).
struct EarlyEnd {
  const Manifest *m = nullptr;
  const std::vector<RankState> *states = nullptr;
  std::vector<int> ranks;
  std::string path;
} earlyEnd;

void writeOnEarlyEnd(const char *why) {
  traceFrozen.store(true);
  // Events being appended as the flag went up are complete after this.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::string reason = llvm::StringRef(why).trim().str();
  if (Status s = writeFileAtomically(
          earlyEnd.path, chromeTrace(*earlyEnd.m, recorders(*earlyEnd.states),
                                     earlyEnd.ranks, reason));
      !s)
    llvm::errs() << "tp-run: --trace: " << s.message() << "\n";
  else
    llvm::errs() << "tp-run: the trace up to here is in " << earlyEnd.path
                 << "\n";
}
} // namespace

void tprt::writeTraceIfRunEndsEarly(const std::string &path, const Manifest &m,
                                    const std::vector<RankState> &states,
                                    const std::vector<int> &ranks, bool mpi) {
  earlyEnd = {&m, &states, ranks,
              mpi ? path + ".rank" + std::to_string(ranks.front()) : path};
  setEndOfRunHook(writeOnEarlyEnd);
}
