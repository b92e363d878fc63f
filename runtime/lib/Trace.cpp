//===- Trace.cpp - recording a rank's timeline and writing it -------------===//
#include "tprt/Trace.h"

#include "tprt/AtomicFile.h"
#include "tprt/Communicator.h"
#include "tprt/Manifest.h"
#include "tprt/Program.h"
#include "tprt/tprt.h"


#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>

using namespace tprt;

int64_t tprt::traceClockNs() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

TraceRecorder *tprt::currentTrace() {
  RankContext *ctx = currentRankContext();
  return ctx ? ctx->trace : nullptr;
}

void tprt::traceStep(int64_t step, int64_t startNs) {
  if (TraceRecorder *t = currentTrace())
    t->add({TraceEvent::Step, int32_t(step), startNs,
            traceClockNs() - startNs});
}

// Kernel sites do not nest: one start per rank thread is enough.
static thread_local int64_t kernelStartNs = 0;

extern "C" {

void tprt_kernel_begin(int64_t) {
  RankContext *ctx = currentRankContext();
  if (ctx && (ctx->trace || ctx->kernelSeconds))
    kernelStartNs = traceClockNs();
}

void tprt_kernel_end(int64_t site) {
  RankContext *ctx = currentRankContext();
  if (!ctx || !(ctx->trace || ctx->kernelSeconds))
    return;
  int64_t duration = traceClockNs() - kernelStartNs;
  if (ctx->trace)
    ctx->trace->add({TraceEvent::Kernel, int32_t(site), kernelStartNs,
                     duration});
  if (ctx->kernelSeconds && site >= 0 &&
      size_t(site) < ctx->kernelSeconds->size())
    (*ctx->kernelSeconds)[site] += double(duration) * 1e-9;
}

} // extern "C"

namespace {

// Threads of work in each rank's process.
enum Track { ProgramTrack = 1, CommunicationTrack = 2 };

/// The event's per-call figures that need every rank: for a collective,
/// how long this rank waited for its group's last member and how long the
/// data took after that.
struct CollectiveTiming {
  double waitUs = -1, moveUs = -1;
};

std::string siteName(const std::vector<std::string> &sites, int64_t id,
                     const char *fallback) {
  return id >= 0 && id < int64_t(sites.size()) ? sites[id]
                                                : fallback + std::to_string(id);
}

bool pointToPoint(const std::string &name) {
  return name.rfind("send", 0) == 0 || name.rfind("recv", 0) == 0;
}

std::string axesOf(const Mesh &mesh, int64_t mask) {
  std::string axes;
  for (size_t a = 0; a < mesh.names.size(); ++a)
    if (mask & (int64_t(1) << a))
      axes += (axes.empty() ? "" : ",") + mesh.names[a];
  return axes;
}

/// Per rank and event index, the timing of each collective call: the
/// k-th call of a site on a rank meets the k-th call of the same site on
/// every member of its group.
std::vector<std::vector<CollectiveTiming>>
collectiveTimings(const Manifest &m,
                  const std::vector<const TraceRecorder *> &ranks,
                  const std::vector<int> &worldRanks) {
  // (world rank, site) -> the indices of its calls, in order.
  std::map<std::pair<int, int32_t>, std::vector<size_t>> calls;
  std::map<int, size_t> slot;
  for (size_t r = 0; r < ranks.size(); ++r) {
    slot[worldRanks[r]] = r;
    for (size_t i = 0; i < ranks[r]->events.size(); ++i)
      if (ranks[r]->events[i].kind == TraceEvent::Collective)
        calls[{worldRanks[r], ranks[r]->events[i].id}].push_back(i);
  }
  std::vector<std::vector<CollectiveTiming>> timings(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    timings[r].resize(ranks[r]->events.size());
    std::map<int32_t, size_t> seen;
    for (size_t i = 0; i < ranks[r]->events.size(); ++i) {
      const TraceEvent &e = ranks[r]->events[i];
      if (e.kind != TraceEvent::Collective ||
          pointToPoint(siteName(m.collectiveSites, e.id, "")))
        continue;
      size_t k = seen[e.id]++;
      int64_t lastArrival = e.startNs;
      bool complete = true;
      for (int member : m.mesh.group(worldRanks[r], e.b)) {
        auto it = calls.find({member, e.id});
        auto s = slot.find(member);
        if (it == calls.end() || s == slot.end() || k >= it->second.size()) {
          complete = false;
          break;
        }
        lastArrival = std::max(
            lastArrival, ranks[s->second]->events[it->second[k]].startNs);
      }
      if (!complete)
        continue;
      int64_t end = e.startNs + e.durationNs;
      timings[r][i].waitUs = double(std::min(lastArrival, end) - e.startNs) / 1e3;
      timings[r][i].moveUs = double(end - std::min(lastArrival, end)) / 1e3;
    }
  }
  return timings;
}

/// A span enclosing events of one rank: a step's phases (forward, loss,
/// backward, update) and a pipeline stage's microbatches.
struct Span {
  std::string name, category;
  int64_t startNs, endNs;
};

/// Within each step, the runs of kernels of one phase (and microbatch), as
/// the sites say; a GEMM, which has no site, belongs to the run around it.
std::vector<Span> phaseSpans(const Manifest &m, const TraceRecorder &r) {
  std::vector<Span> spans;
  if (m.kernelPhases.empty())
    return spans;
  std::vector<const TraceEvent *> work, steps;
  for (const TraceEvent &e : r.events) {
    if (e.kind == TraceEvent::Step)
      steps.push_back(&e);
    else if (e.kind == TraceEvent::Kernel || e.kind == TraceEvent::Gemm)
      work.push_back(&e);
  }
  std::sort(work.begin(), work.end(),
            [](const TraceEvent *a, const TraceEvent *b) {
              return a->startNs < b->startNs;
            });
  struct Label {
    std::string phase;
    int64_t microbatch = -1;
    bool operator==(const Label &o) const {
      return phase == o.phase && microbatch == o.microbatch;
    }
  };
  auto labelOf = [&](const TraceEvent &e) -> std::optional<Label> {
    if (e.kind != TraceEvent::Kernel || e.id < 0 ||
        size_t(e.id) >= m.kernelPhases.size())
      return std::nullopt;
    int64_t mb = size_t(e.id) < m.kernelMicrobatches.size()
                     ? m.kernelMicrobatches[e.id]
                     : -1;
    return Label{m.kernelPhases[e.id], mb};
  };
  for (const TraceEvent *step : steps) {
    int64_t end = step->startNs + step->durationNs;
    // The step's events with their labels (a GEMM takes the one before it,
    // or the first one after it at the step's start).
    std::vector<std::pair<const TraceEvent *, Label>> labelled;
    std::optional<Label> current;
    std::vector<const TraceEvent *> pending;
    for (const TraceEvent *e : work) {
      if (e->startNs < step->startNs || e->startNs >= end)
        continue;
      if (auto l = labelOf(*e)) {
        // Work shared by the microbatches (a weight's transpose, made on
        // first use) shows inside the microbatch it ran in.
        if (l->microbatch < 0 && current && current->phase == l->phase)
          l->microbatch = current->microbatch;
        current = l;
      }
      if (!current) {
        pending.push_back(e);
        continue;
      }
      for (const TraceEvent *p : pending)
        labelled.push_back({p, *current});
      pending.clear();
      labelled.push_back({e, *current});
    }
    // Runs of one label, and of one microbatch around them.
    auto emitRuns = [&](auto sameRun, auto nameOf, const char *category) {
      for (size_t i = 0; i < labelled.size();) {
        size_t j = i;
        int64_t last = 0;
        while (j < labelled.size() && sameRun(labelled[i].second, labelled[j].second)) {
          last = std::max(last, labelled[j].first->startNs +
                                    labelled[j].first->durationNs);
          ++j;
        }
        std::string name = nameOf(labelled[i].second);
        if (!name.empty())
          spans.push_back({name, category, labelled[i].first->startNs, last});
        i = j;
      }
    };
    emitRuns([](const Label &a, const Label &b) { return a.microbatch == b.microbatch; },
             [](const Label &l) {
               return l.microbatch < 0
                          ? std::string()
                          : "microbatch " + std::to_string(l.microbatch);
             },
             "microbatch");
    emitRuns([](const Label &a, const Label &b) { return a == b; },
             [](const Label &l) { return l.phase; }, "phase");
  }
  return spans;
}

} // namespace

std::atomic<bool> tprt::traceFrozen{false};

std::string tprt::chromeTrace(const Manifest &m,
                              const std::vector<const TraceRecorder *> &ranks,
                              const std::vector<int> &worldRanks,
                              const std::string &ending) {
  int64_t origin = INT64_MAX;
  int64_t dropped = 0;
  for (const TraceRecorder *r : ranks) {
    for (const TraceEvent &e : r->events)
      origin = std::min(origin, e.startNs);
    dropped += r->dropped;
  }
  if (origin == INT64_MAX)
    origin = 0;
  auto timings = collectiveTimings(m, ranks, worldRanks);
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  // Microseconds with the nanoseconds as 3 decimals (a double would print
  // 17 digits).
  auto us = [&](const char *key, int64_t ns) {
    char text[32];
    std::snprintf(text, sizeof text, "%lld.%03lld", (long long)(ns / 1000),
                  (long long)(ns % 1000));
    j.attributeBegin(key);
    j.rawValue(text);
    j.attributeEnd();
  };
  j.object([&] {
    j.attributeArray("traceEvents", [&] {
      for (size_t r = 0; r < ranks.size(); ++r) {
        int pid = worldRanks[r];
        auto meta = [&](const char *what, int tid, const char *key,
                        llvm::json::Value value) {
          j.object([&] {
            j.attribute("name", what);
            j.attribute("ph", "M");
            j.attribute("pid", pid);
            j.attribute("tid", tid);
            j.attributeObject("args", [&] { j.attribute(key, value); });
          });
        };
        meta("process_name", 0, "name", "rank " + std::to_string(pid));
        meta("process_sort_index", 0, "sort_index", pid);
        meta("thread_name", ProgramTrack, "name",
             "program (steps, kernels, GEMMs)");
        meta("thread_name", CommunicationTrack, "name",
             "collectives, send / recv");
        // The plan's peak of program buffers beside the measured counter
        // (tp-free-after-last-use; a pipeline: per stage).
        int64_t planned = m.peakTemporaryBytes;
        if (m.stageAxis >= 0) {
          int64_t stage = m.mesh.indexAlong(pid, int64_t(1) << m.stageAxis);
          planned = stage < int64_t(m.stagePeakBytes.size())
                        ? m.stagePeakBytes[stage]
                        : -1;
        }
        int64_t last = origin;
        for (const TraceEvent &e : ranks[r]->events)
          last = std::max(last, e.startNs + e.durationNs);
        if (planned >= 0 && !ranks[r]->events.empty())
          for (int64_t at : {origin, last})
            j.object([&] {
              j.attribute("name", "planned peak of program buffers");
              j.attribute("ph", "C");
              us("ts", at - origin);
              j.attribute("pid", pid);
              j.attribute("tid", 0);
              j.attributeObject("args", [&] { j.attribute("bytes", planned); });
            });
        if (!ending.empty())
          j.object([&] {
            j.attribute("name", "run ended: " + ending);
            j.attribute("cat", "end");
            j.attribute("ph", "i");
            j.attribute("s", "p");
            us("ts", last - origin);
            j.attribute("pid", pid);
            j.attribute("tid", int(ProgramTrack));
          });
        for (const Span &span : phaseSpans(m, *ranks[r]))
          j.object([&] {
            j.attribute("name", span.name);
            j.attribute("cat", span.category);
            j.attribute("ph", "X");
            us("ts", span.startNs - origin);
            us("dur", span.endNs - span.startNs);
            j.attribute("pid", pid);
            j.attribute("tid", int(ProgramTrack));
          });
        for (size_t i = 0; i < ranks[r]->events.size(); ++i) {
          const TraceEvent &e = ranks[r]->events[i];
          if (e.kind == TraceEvent::Memory) {
            j.object([&] {
              j.attribute("name", "program buffers in use");
              j.attribute("ph", "C");
              us("ts", e.startNs - origin);
              j.attribute("pid", pid);
              j.attribute("tid", 0);
              j.attributeObject("args", [&] { j.attribute("bytes", e.a); });
            });
            continue;
          }
          j.object([&] {
            int tid = ProgramTrack;
            switch (e.kind) {
            case TraceEvent::Step:
              j.attribute("name", "step " + std::to_string(e.id));
              j.attribute("cat", "step");
              break;
            case TraceEvent::Gemm:
              j.attribute("name", "GEMM " + std::to_string(e.a) + "x" +
                                      std::to_string(e.b) + "x" +
                                      std::to_string(e.c));
              j.attribute("cat", "gemm");
              break;
            case TraceEvent::Kernel:
              j.attribute("name", siteName(m.kernelSites, e.id, "kernel "));
              j.attribute("cat", "kernel");
              break;
            case TraceEvent::Collective:
              j.attribute("name", siteName(m.collectiveSites, e.id, "site "));
              j.attribute("cat", "collective");
              tid = CommunicationTrack;
              break;
            case TraceEvent::Memory:
              break;
            }
            j.attribute("ph", "X");
            us("ts", e.startNs - origin);
            us("dur", e.durationNs);
            j.attribute("pid", pid);
            j.attribute("tid", tid);
            if (e.kind == TraceEvent::Gemm) {
              double flops = 2.0 * double(e.a) * double(e.b) * double(e.c) *
                             double(std::max<int32_t>(e.id, 1));
              j.attributeObject("args", [&] {
                j.attribute("m", e.a);
                j.attribute("n", e.b);
                j.attribute("k", e.c);
                j.attribute("count", e.id);
                if (e.durationNs > 0)
                  j.attribute("GFLOP/s", flops / double(e.durationNs));
              });
            } else if (e.kind == TraceEvent::Collective) {
              j.attributeObject("args", [&] {
                j.attribute("site", e.id);
                j.attribute("bytes", e.a);
                j.attribute("axes", axesOf(m.mesh, e.b));
                if (e.id >= 0 && size_t(e.id) < m.collectivePhases.size())
                  j.attribute("phase", m.collectivePhases[e.id]);
                if (e.id >= 0 && size_t(e.id) < m.collectiveMicrobatches.size() &&
                    m.collectiveMicrobatches[e.id] >= 0)
                  j.attribute("microbatch", m.collectiveMicrobatches[e.id]);
                if (timings[r][i].waitUs >= 0) {
                  j.attribute("waiting_for_peers_us", timings[r][i].waitUs);
                  j.attribute("moving_data_us", timings[r][i].moveUs);
                }
              });
            } else if (e.kind == TraceEvent::Kernel) {
              j.attributeObject("args", [&] {
                j.attribute("site", e.id);
                if (e.id >= 0 && size_t(e.id) < m.kernelFamilies.size())
                  j.attribute("family", m.kernelFamilies[e.id]);
              });
            }
          });
        }
      }
    });
    j.attribute("displayTimeUnit", "ms");
    j.attributeObject("otherData", [&] {
      j.attribute("program", m.dir);
      j.attribute("mesh", m.mesh.describe());
      j.attribute("dropped_events", dropped);
    });
  });
  os.flush();
  return text;
}

Status tprt::writeChromeTrace(const std::string &path, const Manifest &m,
                              const std::vector<const TraceRecorder *> &ranks,
                              const std::vector<int> &worldRanks,
                              Communicator *gatherOver) {
  if (!gatherOver)
    return writeFileAtomically(path, chromeTrace(m, ranks, worldRanks));
  // One rank per process: every rank's events go to rank 0, as bytes (the
  // events are plain data), after their sizes.
  Communicator &c = *gatherOver;
  int64_t world = (int64_t(1) << m.mesh.names.size()) - 1;
  const TraceRecorder &mine = *ranks.front();
  int64_t bytes = int64_t(mine.events.size() * sizeof(TraceEvent));
  std::vector<int64_t> sizes(m.mesh.numRanks());
  if (Status s = c.allGather(&bytes, sizes.data(), 1, 1, TPRT_I64, world,
                             "gathering the trace's sizes");
      !s)
    return s;
  int64_t total = 0;
  for (int64_t n : sizes)
    total += n;
  std::vector<char> all(size_t(total) + 1);
  if (Status s = c.allGatherV(mine.events.data(), all.data(), sizes, TPRT_I8,
                              world, "gathering the trace's events");
      !s)
    return s;
  if (c.rank() != 0)
    return Status::ok();
  std::vector<TraceRecorder> gathered(sizes.size(), TraceRecorder(0));
  std::vector<const TraceRecorder *> pointers;
  std::vector<int> order;
  size_t at = 0;
  for (size_t r = 0; r < sizes.size(); ++r) {
    gathered[r].events.resize(size_t(sizes[r]) / sizeof(TraceEvent));
    std::memcpy(gathered[r].events.data(), all.data() + at, size_t(sizes[r]));
    at += size_t(sizes[r]);
    pointers.push_back(&gathered[r]);
    order.push_back(int(r));
  }
  gathered[0].dropped = mine.dropped;
  return writeFileAtomically(path, chromeTrace(m, pointers, order));
}
