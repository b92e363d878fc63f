//===- Dnnl.h - the calling thread's oneDNN engine and stream ---*- C++ -*-===//
#ifndef TPRT_LIB_DNNL_H
#define TPRT_LIB_DNNL_H

#include <oneapi/dnnl/dnnl.hpp>

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

} // namespace tprt

#endif // TPRT_LIB_DNNL_H
