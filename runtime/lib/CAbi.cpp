//===- CAbi.cpp - tprt.h, the calls generated code makes ------------------===//
//
// Generated code cannot handle errors, so a failed collective ends the
// process with the message (every rank's thread, or this rank's process,
// stops: nobody is left waiting).
//
//===----------------------------------------------------------------------===//
#include "Fatal.h"
#include "tprt/DType.h"
#include "tprt/Program.h"
#include "tprt/Trace.h"
#include "tprt/Watchdog.h"
#include "tprt/tprt.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace tprt;

static thread_local RankContext *current = nullptr;

void tprt::setRankContext(RankContext *context) { current = context; }
RankContext *tprt::currentRankContext() { return current; }

void tprt::fatal(const std::string &message) {
  std::fprintf(stderr, "tprt: error: %s\n", message.c_str());
  std::fflush(stderr);
  runEndOfRunHook(message.c_str());
  std::_Exit(1);
}

static RankContext &context() {
  if (!current)
    fatal("a program called the runtime from a thread that is not a rank");
  return *current;
}

static std::string siteName(int64_t site) {
  const auto *sites = context().sites;
  std::string name = sites && site >= 0 && site < int64_t(sites->size())
                         ? (*sites)[site]
                         : "collective";
  return name + " (site " + std::to_string(site) + ")";
}

template <typename Fn>
static void collective(int64_t site, int64_t bytes, int64_t mask, Fn fn) {
  RankContext &ctx = context();
  auto start = std::chrono::steady_clock::now();
  int64_t traceStart = ctx.trace ? traceClockNs() : 0;
  std::string name = siteName(site);
  markProgress(Activity::Collective, name.c_str());
  Status s = fn(*ctx.comm, name);
  markProgress(Activity::Code, ("after " + name).c_str());
  if (!s) {
    std::fprintf(stderr, "tp-run: error: %s\n", s.message().c_str());
    std::fflush(stderr);
    runEndOfRunHook(s.message().c_str());
    std::_Exit(1);
  }
  if (ctx.trace)
    ctx.trace->add({TraceEvent::Collective, int32_t(site), traceStart,
                    traceClockNs() - traceStart, bytes, mask});
  if (ctx.stats && site >= 0 && site < int64_t(ctx.stats->size())) {
    SiteStats &st = (*ctx.stats)[site];
    ++st.calls;
    st.bytes += bytes;
    st.seconds += std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  }
}

extern "C" {

void tprt_all_reduce(int64_t src, int64_t dst, int64_t count, int32_t dtype,
                     int32_t reduction, int64_t mask, int64_t site) {
  collective(site, count * dtypeSize(dtype), mask,
             [&](Communicator &c, const std::string &what) {
               return c.allReduce(reinterpret_cast<const void *>(src),
                                  reinterpret_cast<void *>(dst), count, dtype,
                                  reduction, mask, what);
             });
}

void tprt_all_gather(int64_t src, int64_t dst, int64_t outer, int64_t chunk,
                     int32_t dtype, int64_t mask, int64_t site) {
  collective(site, outer * chunk * dtypeSize(dtype), mask,
             [&](Communicator &c, const std::string &what) {
               return c.allGather(reinterpret_cast<const void *>(src),
                                  reinterpret_cast<void *>(dst), outer, chunk,
                                  dtype, mask, what);
             });
}

void tprt_reduce_scatter(int64_t src, int64_t dst, int64_t outer,
                         int64_t chunk, int32_t dtype, int64_t mask,
                         int64_t site) {
  int64_t n = context().comm->groupSize(mask);
  collective(site, outer * chunk * n * dtypeSize(dtype), mask,
             [&](Communicator &c, const std::string &what) {
               return c.reduceScatter(reinterpret_cast<const void *>(src),
                                      reinterpret_cast<void *>(dst), outer,
                                      chunk, dtype, mask, what);
             });
}

/// The world rank of member `index` of this rank's group along `mask`.
static int peerRank(int64_t mask, int64_t index, const std::string &what) {
  Communicator &c = *context().comm;
  std::vector<int> group = c.mesh().group(c.rank(), mask);
  if (index < 0 || index >= int64_t(group.size()))
    fatal("rank " + std::to_string(c.rank()) + ": " + what + ": no member " +
          std::to_string(index) + " in a group of " +
          std::to_string(group.size()));
  return group[index];
}

void tprt_send(int64_t src, int64_t count, int32_t dtype, int64_t mask,
               int64_t peer, int64_t site) {
  collective(site, count * dtypeSize(dtype), mask,
             [&](Communicator &c, const std::string &what) {
               return c.send(reinterpret_cast<const void *>(src), count, dtype,
                             peerRank(mask, peer, what), what);
             });
}

void tprt_recv(int64_t dst, int64_t count, int32_t dtype, int64_t mask,
               int64_t peer, int64_t site) {
  collective(site, count * dtypeSize(dtype), mask,
             [&](Communicator &c, const std::string &what) {
               return c.recv(reinterpret_cast<void *>(dst), count, dtype,
                             peerRank(mask, peer, what), what);
             });
}

int64_t tprt_axis_index(int64_t mask) {
  Communicator &c = *context().comm;
  return c.mesh().indexAlong(c.rank(), mask);
}

} // extern "C"
