//===- BatchedGemm.cpp - batched f32 GEMMs on oneDNN's matmul -------------===//
//
// Attention's products are many small GEMMs ([512, 64] x [64, 512] per
// head): OpenBLAS splits each one over the cores and pays its thread
// start-up per GEMM; oneDNN's matmul takes the whole batch as one
// primitive and gives each thread whole GEMMs, 1.5-2x OpenBLAS's loop on
// a 2-core AVX-512 machine. A transposed operand is a strided view (no
// copy); accumulating into C is oneDNN's sum post-op.
//
//===----------------------------------------------------------------------===//
#include "Dnnl.h"
#include "tprt/Program.h"
#include "tprt/Watchdog.h"
#include "tprt/tprt.h"

#include <array>
#include <chrono>
#include <map>

using namespace tprt;

namespace {

using dnnl::memory;

/// [batch, rows, cols] stored row-major, or (transposed) as [batch, cols,
/// rows]: the same logical shape with swapped strides.
memory::desc batchOf(int64_t batch, int64_t rows, int64_t cols,
                     bool transposed) {
  memory::dims strides = transposed ? memory::dims{rows * cols, 1, rows}
                                    : memory::dims{rows * cols, cols, 1};
  return memory::desc({batch, rows, cols}, memory::data_type::f32, strides);
}

struct Matmul {
  dnnl::matmul primitive;
  memory::desc a, b, c;
};

Matmul makeMatmul(const dnnl::engine &e, int64_t batch, int64_t m, int64_t n,
                  int64_t k, int32_t trans) {
  Matmul mm;
  mm.a = batchOf(batch, m, k, trans & TPRT_TRANS_A);
  mm.b = batchOf(batch, k, n, trans & TPRT_TRANS_B);
  mm.c = batchOf(batch, m, n, false);
  dnnl::primitive_attr attr;
  if (!(trans & TPRT_OVERWRITE)) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  mm.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(mm.a, mm.b, mm.c), attr, e));
  return mm;
}

} // namespace

void tprt::batchedSgemm(int64_t a, int64_t b, int64_t c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, int32_t trans) {
  auto start = std::chrono::steady_clock::now();
  markGemm(m, n, k);
  thread_local std::map<std::array<int64_t, 5>, Matmul> matmuls;
  callDnnl("a batched GEMM", [&](DnnlThread &t) {
    std::array<int64_t, 5> key = {batch, m, n, k, trans};
    auto it = matmuls.find(key);
    if (it == matmuls.end())
      it = matmuls.emplace(key, makeMatmul(t.engine, batch, m, n, k, trans))
               .first;
    Matmul &mm = it->second;
    auto buffer = [&](const memory::desc &d, int64_t address) {
      return memory(d, t.engine, reinterpret_cast<void *>(address));
    };
    mm.primitive.execute(t.stream, {{DNNL_ARG_SRC, buffer(mm.a, a)},
                                    {DNNL_ARG_WEIGHTS, buffer(mm.b, b)},
                                    {DNNL_ARG_DST, buffer(mm.c, c)}});
    t.stream.wait();
  });
  markProgress(Activity::Code, "after a GEMM");
  recordGemms(m, n, k, batch, start);
}
