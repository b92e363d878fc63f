//===- Gemm.cpp - the GEMMs generated code calls, on OpenBLAS -------------===//
#include "tprt/Program.h"
#include "tprt/Trace.h"
#include "tprt/tprt.h"
#include "tprt/Watchdog.h"

#include <algorithm>
#include <atomic>
#include <cblas.h>
#include <chrono>

using namespace tprt;

extern "C" {

void tprt_sgemm(int64_t a, int64_t b, int64_t c, int64_t m, int64_t n,
                int64_t k, int32_t trans) {
  auto start = std::chrono::steady_clock::now();
  markGemm(m, n, k);
  bool ta = trans & TPRT_TRANS_A, tb = trans & TPRT_TRANS_B;
  float beta = trans & TPRT_OVERWRITE ? 0.0f : 1.0f;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), 1.0f,
              reinterpret_cast<const float *>(a), int(ta ? m : k),
              reinterpret_cast<const float *>(b), int(tb ? k : n), beta,
              reinterpret_cast<float *>(c), int(n));
  markProgress(Activity::Code, "after a GEMM");
  recordGemms(m, n, k, 1, start);
}

// A batch of one is a plain GEMM; more go to oneDNN's batched matmul
// (DnnlMatmul.cpp), which gives each thread whole products.
void tprt_sgemm_batched(int64_t a, int64_t b, int64_t c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, int32_t trans) {
  if (batch == 1)
    return tprt_sgemm(a, b, c, m, n, k, trans);
  batchedSgemm(a, b, c, batch, m, n, k, trans);
}

} // extern "C"

void tprt::recordGemms(int64_t m, int64_t n, int64_t k, int64_t count,
                       std::chrono::steady_clock::time_point start) {
  RankContext *ctx = currentRankContext();
  if (!ctx || (!ctx->gemms && !ctx->trace))
    return;
  auto now = std::chrono::steady_clock::now();
  if (ctx->trace) {
    // The trace's clock is another: the GEMM ended now on both.
    int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
    ctx->trace->add({TraceEvent::Gemm, int32_t(count), traceClockNs() - ns, ns,
                     m, n, k});
  }
  if (!ctx->gemms)
    return;
  SiteStats &st = (*ctx->gemms)[{m, n, k}];
  st.calls += count;
  st.seconds += std::chrono::duration<double>(now - start).count();
}

// 0 until setRankThreads: then as many as OpenBLAS uses (its own
// OPENBLAS_NUM_THREADS or the machine's cores), as an MPI rank does.
static std::atomic<int> rankThreads{0};

void tprt::setRankThreads(int threads, int gemmThreads) {
  if (threads <= 0)
    threads = std::max(1, openblas_get_num_threads());
  openblas_set_num_threads(gemmThreads > 0 ? gemmThreads : threads);
  rankThreads.store(threads, std::memory_order_relaxed);
}

int tprt::libraryThreads() { return std::max(1, openblas_get_num_threads()); }

extern "C" int64_t tprt_loop_threads() {
  int threads = rankThreads.load(std::memory_order_relaxed);
  return threads > 0 ? threads : std::max(1, openblas_get_num_threads());
}
