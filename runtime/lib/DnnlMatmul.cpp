//===- DnnlMatmul.cpp - batched f32 and bf16 GEMMs on oneDNN's matmul -----===//
//
// Attention's products are many small GEMMs ([512, 64] x [64, 512] per
// head): OpenBLAS splits each one over the cores and pays its thread
// start-up per GEMM; oneDNN's matmul takes the whole batch as one
// primitive and gives each thread whole GEMMs, 1.5-2x OpenBLAS's loop on
// a 2-core AVX-512 machine. Mixed precision's products (bf16 operands, f32
// C) run here too, on the CPU's bf16 instructions (AVX-512 BF16, AMX):
// OpenBLAS 0.3.21 has no bf16 GEMM that links. A transposed operand is a
// strided view (no copy); accumulating into C is oneDNN's sum post-op.
//
// oneDNN 2.x's API (matmul::desc, removed in 3.0) is used in this file and
// Convolution.cpp only.
//
//===----------------------------------------------------------------------===//
#include "Dnnl.h"
#include "tprt/DType.h"
#include "tprt/Program.h"
#include "tprt/Watchdog.h"
#include "tprt/tprt.h"

#include <array>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <vector>

using namespace tprt;

namespace {

using dnnl::memory;

/// [batch, rows, cols] stored row-major, or (transposed) as [batch, cols,
/// rows]: the same logical shape with swapped strides.
memory::desc batchOf(int64_t batch, int64_t rows, int64_t cols,
                     bool transposed, memory::data_type type) {
  memory::dims strides = transposed ? memory::dims{rows * cols, 1, rows}
                                    : memory::dims{rows * cols, cols, 1};
  return memory::desc({batch, rows, cols}, type, strides);
}

struct Matmul {
  dnnl::matmul primitive;
  memory::desc a, b, c;
  /// oneDNN has no such matmul on this CPU (bf16 without AVX-512).
  bool unsupported = false;
};

Matmul makeMatmul(const dnnl::engine &e, int64_t batch, int64_t m, int64_t n,
                  int64_t k, int32_t trans, memory::data_type operands) {
  Matmul mm;
  mm.a = batchOf(batch, m, k, trans & TPRT_TRANS_A, operands);
  mm.b = batchOf(batch, k, n, trans & TPRT_TRANS_B, operands);
  mm.c = batchOf(batch, m, n, false, memory::data_type::f32);
  dnnl::primitive_attr attr;
  if (!(trans & TPRT_OVERWRITE)) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  try {
    mm.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(
        dnnl::matmul::desc(mm.a, mm.b, mm.c), attr, e));
  } catch (const dnnl::error &err) {
    if (err.status != dnnl_unimplemented)
      throw;
    mm.unsupported = true;
  }
  return mm;
}

/// C (+)= A B on oneDNN; false if it has no such matmul on this CPU.
bool dnnlMatmul(memory::data_type operands, int64_t a, int64_t b, int64_t c,
                int64_t batch, int64_t m, int64_t n, int64_t k,
                int32_t trans) {
  using Key = std::array<int64_t, 6>;
  thread_local std::map<Key, Matmul> matmuls;
  bool ran = false;
  callDnnl("a GEMM", [&](DnnlThread &t) {
    Key key = {int64_t(operands), batch, m, n, k, trans};
    auto it = matmuls.find(key);
    if (it == matmuls.end())
      it = matmuls
               .emplace(key, makeMatmul(t.engine, batch, m, n, k, trans,
                                        operands))
               .first;
    Matmul &mm = it->second;
    if (mm.unsupported)
      return;
    auto buffer = [&](const memory::desc &d, int64_t address) {
      return memory(d, t.engine, reinterpret_cast<void *>(address));
    };
    mm.primitive.execute(t.stream, {{DNNL_ARG_SRC, buffer(mm.a, a)},
                                    {DNNL_ARG_WEIGHTS, buffer(mm.b, b)},
                                    {DNNL_ARG_DST, buffer(mm.c, c)}});
    t.stream.wait();
    ran = true;
  });
  return ran;
}

/// bf16 products on a CPU without them: the operands widened to f32, then
/// OpenBLAS's GEMM (exact products of bf16 values, f32 sums).
void widenedGemm(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m,
                 int64_t n, int64_t k, int32_t trans) {
  sayBf16RunsInF32();
  thread_local std::vector<float> wa, wb;
  auto widen = [](int64_t from, int64_t count, std::vector<float> &to) {
    to.resize(count);
    widenBf16(reinterpret_cast<const uint16_t *>(from), to.data(), count);
  };
  widen(a, batch * m * k, wa);
  widen(b, batch * k * n, wb);
  tprt_sgemm_batched(int64_t(wa.data()), int64_t(wb.data()), c, batch, m, n,
                     k, trans);
}

} // namespace

void tprt::sayBf16RunsInF32() {
  static std::once_flag said;
  std::call_once(said, [] {
    std::cerr << "tprt: this CPU has no bf16 kernels in oneDNN (they need "
                 "AVX-512): the bf16 program's matmuls and convolutions run "
                 "in f32\n";
  });
}

void tprt::batchedSgemm(int64_t a, int64_t b, int64_t c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, int32_t trans) {
  auto start = std::chrono::steady_clock::now();
  markGemm(m, n, k);
  if (!dnnlMatmul(memory::data_type::f32, a, b, c, batch, m, n, k, trans))
    fatal("oneDNN has no f32 matmul on this CPU");
  markProgress(Activity::Code, "after a GEMM");
  recordGemms(m, n, k, batch, start);
}

extern "C" void tprt_gemm_bf16(int64_t a, int64_t b, int64_t c, int64_t batch,
                               int64_t m, int64_t n, int64_t k, int32_t trans) {
  auto start = std::chrono::steady_clock::now();
  markGemm(m, n, k);
  if (!dnnlMatmul(memory::data_type::bf16, a, b, c, batch, m, n, k, trans))
    return widenedGemm(a, b, c, batch, m, n, k, trans); // recorded as f32
  markProgress(Activity::Code, "after a GEMM");
  recordGemms(m, n, k, batch, start);
}
