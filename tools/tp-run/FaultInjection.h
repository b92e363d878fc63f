//===- FaultInjection.h - faults for the tests of timeouts -----*- C++ -*-===//
//
// TPRT_FAULT=freeze:R makes rank R stop making progress at its first step
// (as a rank stuck in a kernel or an allocation), stop:R stops its process
// (SIGSTOP, as a debugger or an overloaded host would; MPI backends), kill:R
// makes it vanish there (its process is killed under MPI; its thread
// returns under the threads backend). test/e2e/faults.test and
// mpi-faults.test use it; without the variable nothing happens.
//
//===----------------------------------------------------------------------===//
#ifndef TP_TOOLS_TP_RUN_FAULTINJECTION_H
#define TP_TOOLS_TP_RUN_FAULTINJECTION_H

namespace tprt {

/// Applies TPRT_FAULT to `rank` at its first step: never returns for
/// freeze and stop, true when the rank must end now (kill under threads),
/// false when no fault names this rank.
bool injectFault(int rank, bool threadsBackend);

} // namespace tprt

#endif // TP_TOOLS_TP_RUN_FAULTINJECTION_H
