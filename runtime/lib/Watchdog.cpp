//===- Watchdog.cpp - end a run whose ranks stop making progress ----------===//
//
// Slots are written by their rank (relaxed atomics, and a fixed buffer the
// watchdog may read torn: it only prints it), and the watchdog must not
// allocate (it runs when memory may be what is stuck), so messages are
// formatted with snprintf into stack buffers and written with write(2).
//
//===----------------------------------------------------------------------===//
#include "tprt/Watchdog.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <poll.h>
#include <thread>
#include <unistd.h>

using namespace tprt;

namespace {
struct Slot {
  std::atomic<int64_t> lastNs{0};
  std::atomic<int> activity{int(Activity::Idle)};
  std::atomic<int> step{0};
  /// Activity::Gemm: the shape, formatted only when a message needs it
  /// (GEMMs are the hot path).
  std::atomic<int64_t> gemm[3] = {0, 0, 0};
  char detail[160] = {0};
};

struct WatchdogState {
  int firstRank = 0, count = 0, steps = 0;
  std::chrono::milliseconds timeout{0};
  std::unique_ptr<Slot[]> slots;
};

WatchdogState *state = nullptr;
thread_local Slot *mySlot = nullptr;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char *activityText(Activity a) {
  switch (a) {
  case Activity::Idle:
    return "not started";
  case Activity::Preparing:
    return "preparing its buffers";
  case Activity::Code:
    return "in the program's code";
  case Activity::Collective:
    return "in";
  case Activity::Gemm:
    return "in a GEMM";
  case Activity::Finished:
    return "finished";
  case Activity::Gone:
    return "gone (its thread ended)";
  }
  return "";
}

/// Into `buf`: "step S of N, <activity> <detail>".
void describeSlot(const Slot &s, char *buf, size_t size) {
  Activity a = Activity(s.activity.load(std::memory_order_relaxed));
  int step = s.step.load(std::memory_order_relaxed);
  char detail[sizeof(s.detail)];
  if (a == Activity::Gemm) {
    std::snprintf(detail, sizeof(detail),
                  "%lldx%lldx%lld (m x n x k, OpenBLAS)",
                  (long long)s.gemm[0].load(std::memory_order_relaxed),
                  (long long)s.gemm[1].load(std::memory_order_relaxed),
                  (long long)s.gemm[2].load(std::memory_order_relaxed));
  } else {
    std::memcpy(detail, s.detail, sizeof(detail));
    detail[sizeof(detail) - 1] = 0;
  }
  if (step > 0)
    std::snprintf(buf, size, "step %d of %d, %s%s%s", step, state->steps,
                  activityText(a), detail[0] ? " " : "", detail);
  else
    std::snprintf(buf, size, "%s%s%s", activityText(a), detail[0] ? " " : "",
                  detail);
}

void say(const char *text) {
  ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

[[noreturn]] void endRun(int code, const char *why) {
  runEndOfRunHook(why);
  // Whatever the ranks hold (MPI, BLAS threads) is left to the OS: a clean
  // shutdown could wait on the very thing that is stuck. Under mpirun, a
  // process that exits non-zero ends the job.
  std::fflush(stdout);
  _exit(code);
}

/// SIGINT and SIGTERM reach any thread (OpenBLAS starts its own before
/// main): the handler only writes the signal to a pipe the watchdog polls.
int signalPipe[2] = {-1, -1};
void onSignal(int sig) {
  char c = char(sig);
  ssize_t ignored = write(signalPipe[1], &c, 1);
  (void)ignored;
}

void watch() {
  // A collective waits for its group up to the timeout and reports missing
  // ranks itself, which names more; the watchdog steps in after a margin.
  int64_t timeoutNs = int64_t(state->timeout.count()) * 1000000;
  int64_t collectiveNs = timeoutNs + std::max<int64_t>(timeoutNs / 2, 2000000000);
  int64_t pollNs = std::min<int64_t>(std::max<int64_t>(timeoutNs / 10, 10000000),
                                     250000000);
  char line[512], what[256];
  for (;;) {
    pollfd fd{signalPipe[0], POLLIN, 0};
    char c = 0;
    int sig = 0;
    if (poll(&fd, 1, int(pollNs / 1000000)) == 1 && read(signalPipe[0], &c, 1) == 1)
      sig = c;
    if (sig == SIGINT || sig == SIGTERM) {
      std::snprintf(line, sizeof(line), "\ntp-run: %s: stopping every rank\n",
                    sig == SIGINT ? "interrupted (Ctrl-C)" : "terminated");
      say(line);
      for (int i = 0; i < state->count; ++i) {
        describeSlot(state->slots[i], what, sizeof(what));
        std::snprintf(line, sizeof(line), "  rank %d: %s\n",
                      state->firstRank + i, what);
        say(line);
      }
      endRun(128 + sig, sig == SIGINT ? "interrupted (Ctrl-C)" : "terminated");
    }
    int64_t now = nowNs();
    for (int i = 0; i < state->count; ++i) {
      const Slot &s = state->slots[i];
      Activity a = Activity(s.activity.load(std::memory_order_relaxed));
      if (a == Activity::Idle || a == Activity::Finished || a == Activity::Gone)
        continue;
      int64_t quiet = now - s.lastNs.load(std::memory_order_relaxed);
      if (quiet <= (a == Activity::Collective ? collectiveNs : timeoutNs))
        continue;
      describeSlot(s, what, sizeof(what));
      std::snprintf(line, sizeof(line),
                    "tp-run: error: rank %d made no progress for %.3g s "
                    "(--timeout %.3g s): %s; ending the run\n",
                    state->firstRank + i, double(quiet) / 1e9,
                    double(timeoutNs) / 1e9, what);
      say(line);
      endRun(1, line);
    }
  }
}
} // namespace

void tprt::startWatchdog(int firstRank, int count,
                         std::chrono::milliseconds timeout, int steps) {
  if (pipe(signalPipe) == 0) {
    struct sigaction action = {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
  }
  state = new WatchdogState{firstRank, count, steps, timeout,
                            std::make_unique<Slot[]>(size_t(count))};
  std::thread(watch).detach();
}

void tprt::watchRank(int rank) {
  mySlot = state && rank >= state->firstRank &&
                   rank < state->firstRank + state->count
               ? &state->slots[rank - state->firstRank]
               : nullptr;
}

void tprt::markProgress(Activity activity, const char *detail, int step) {
  Slot *s = mySlot;
  if (!s)
    return;
  if (step > 0)
    s->step.store(step, std::memory_order_relaxed);
  // Not strncpy, which would zero the rest of the buffer on every call.
  size_t length = strnlen(detail, sizeof(s->detail) - 1);
  std::memcpy(s->detail, detail, length);
  s->detail[length] = 0;
  s->activity.store(int(activity), std::memory_order_relaxed);
  s->lastNs.store(nowNs(), std::memory_order_relaxed);
}

std::string tprt::describeRank(int rank) {
  if (!state || rank < state->firstRank ||
      rank >= state->firstRank + state->count)
    return "";
  char buf[256];
  describeSlot(state->slots[rank - state->firstRank], buf, sizeof(buf));
  return buf;
}

void tprt::markGemm(int64_t m, int64_t n, int64_t k) {
  Slot *s = mySlot;
  if (!s)
    return;
  s->gemm[0].store(m, std::memory_order_relaxed);
  s->gemm[1].store(n, std::memory_order_relaxed);
  s->gemm[2].store(k, std::memory_order_relaxed);
  s->activity.store(int(Activity::Gemm), std::memory_order_relaxed);
  s->lastNs.store(nowNs(), std::memory_order_relaxed);
}

static std::atomic<void (*)(const char *)> endOfRunHook{nullptr};
static std::atomic<int> endOfRunState{0}; // 0 idle, 1 running, 2 done

void tprt::setEndOfRunHook(void (*hook)(const char *why)) {
  endOfRunHook.store(hook);
}

void tprt::runEndOfRunHook(const char *why) {
  void (*hook)(const char *) = endOfRunHook.load();
  if (!hook)
    return;
  int idle = 0;
  if (endOfRunState.compare_exchange_strong(idle, 1)) {
    hook(why);
    endOfRunState.store(2);
    return;
  }
  // Another thread writes: the process must not end under it.
  for (int i = 0; i < 1000 && endOfRunState.load() != 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}
