//===- FaultInjection.cpp - faults for the tests of timeouts --------------===//
#include "FaultInjection.h"

#include "tprt/Watchdog.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace {
struct Fault {
  enum Kind { None, Freeze, Stop, Kill } kind = None;
  int rank = -1;
};

Fault faultFromEnvironment() {
  const char *env = std::getenv("TPRT_FAULT");
  Fault f;
  if (!env)
    return f;
  auto [kind, rank] = llvm::StringRef(env).split(':');
  if (!rank.getAsInteger(10, f.rank))
    f.kind = kind == "freeze" ? Fault::Freeze
             : kind == "stop" ? Fault::Stop
             : kind == "kill" ? Fault::Kill
                              : Fault::None;
  return f;
}
} // namespace

bool tprt::injectFault(int rank, bool threadsBackend) {
  static const Fault fault = faultFromEnvironment();
  if (fault.kind == Fault::None || fault.rank != rank)
    return false;
  if (fault.kind == Fault::Stop && !threadsBackend)
    raise(SIGSTOP);
  if (fault.kind == Fault::Freeze || fault.kind == Fault::Stop)
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
  markProgress(Activity::Gone);
  if (!threadsBackend)
    raise(SIGKILL);
  return true;
}
