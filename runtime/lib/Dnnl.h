//===- Dnnl.h - the calling thread's oneDNN engine and stream ---*- C++ -*-===//
#ifndef TPRT_LIB_DNNL_H
#define TPRT_LIB_DNNL_H

#include "Fatal.h"
#include "tprt/Program.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <string>

// OpenMP's API (libomp serves it; see runtime/CMakeLists.txt), declared
// here: clang has no omp.h without LLVM's OpenMP headers.
extern "C" void omp_set_num_threads(int threads);

namespace tprt {

/// oneDNN's CPU engine and an in-order stream, one per thread (a rank's
/// primitives run on its own thread; oneDNN's OpenMP team is sized from
/// it, with omp_set_num_threads, before each call).
struct DnnlThread {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

inline DnnlThread &dnnlThread() {
  thread_local DnnlThread thread;
  return thread;
}

/// Runs `f(dnnlThread())` with oneDNN's OpenMP team as large as the rank's
/// GEMMs' (its sums, like OpenBLAS's, may change order with the count); an
/// error of oneDNN's ends the process naming `what` (generated code cannot
/// handle it).
template <typename F> void callDnnl(const char *what, F &&f) {
  omp_set_num_threads(libraryThreads());
  try {
    f(dnnlThread());
  } catch (const dnnl::error &e) {
    fatal(std::string(what) + " failed in oneDNN: " + e.what());
  }
}

/// Says once, on stderr, that this CPU has no bf16 kernels in oneDNN and
/// the bf16 program's products run in f32 (its operands widened).
void sayBf16RunsInF32();

} // namespace tprt

#endif // TPRT_LIB_DNNL_H
