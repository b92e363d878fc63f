//===- Fatal.h - ending the process from inside a program's call -*- C++ -*-===//
#ifndef TPRT_LIB_FATAL_H
#define TPRT_LIB_FATAL_H

#include <string>

namespace tprt {

/// Generated code cannot handle errors: prints `tprt: error: <message>` and
/// ends the process (every rank thread with it; MPI ranks see this one
/// vanish and time out).
[[noreturn]] void fatal(const std::string &message);

} // namespace tprt

#endif // TPRT_LIB_FATAL_H
