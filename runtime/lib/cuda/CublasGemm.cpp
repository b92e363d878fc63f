//===- CublasGemm.cpp - tprt_cuda_gemm on cuBLAS --------------------------===//
#include "CudaInternal.h"
#include "tprt/Cuda.h"
#include "tprt/Program.h"
#include "tprt/tprt.h"
#include "tprt/tprt_cuda.h"

#include <atomic>
#include <chrono>
#include <cublas_v2.h>

using namespace tprt;

namespace {

std::atomic<bool> allowTf32{false};

/// The calling thread's handle, bound to its stream.
cublasHandle_t handle() {
  thread_local cublasHandle_t h = nullptr;
  if (!h) {
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
      fatal("cannot create a cuBLAS handle");
    cublasSetStream(h, cuda::currentStream());
  }
  return h;
}

cudaDataType cudaType(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32:
    return CUDA_R_32F;
  case TPRT_F16:
    return CUDA_R_16F;
  case TPRT_BF16:
    return CUDA_R_16BF;
  default:
    fatal("tprt_cuda_gemm: element type code " + std::to_string(dtype) +
                " is not f32, f16 or bf16");
  }
}

} // namespace

void cuda::setAllowTf32(bool allow) { allowTf32 = allow; }

extern "C" void tprt_cuda_gemm(int64_t a, int64_t b, int64_t c, int64_t batch,
                               int64_t m, int64_t n, int64_t k, int32_t dtype,
                               int32_t trans) {
  auto start = std::chrono::steady_clock::now();
  cudaDataType type = cudaType(dtype);
  // Mixed precision: f16 / bf16 operands, an f32 product.
  cudaDataType productType =
      trans & TPRT_F32_PRODUCT ? CUDA_R_32F : type;
  cublasComputeType_t compute = dtype == TPRT_F32 && allowTf32
                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                    : CUBLAS_COMPUTE_32F;
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
  // A row-major [N, K] B (TPRT_TRANS_B) reads as column-major B, so B^T
  // is its transpose; likewise A.
  bool ta = trans & TPRT_TRANS_A, tb = trans & TPRT_TRANS_B;
  cublasStatus_t s = cublasGemmStridedBatchedEx(
      handle(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
      int(n), int(m), int(k), &one, reinterpret_cast<const void *>(b), type,
      int(tb ? k : n), n * k, reinterpret_cast<const void *>(a), type,
      int(ta ? m : k), m * k, trans & TPRT_OVERWRITE ? &zero : &one,
      reinterpret_cast<void *>(c), productType, int(n), m * n, int(batch),
      compute,
      CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS)
    fatal("cuBLAS GEMM " + std::to_string(m) + "x" + std::to_string(n) +
                "x" + std::to_string(k) + " (batch " + std::to_string(batch) +
                ") failed: " + cublasGetStatusString(s));
  // Like every launch of the program, the GEMM is waited for (buffers are
  // freed and reused right after).
  cuda::check(cudaStreamSynchronize(cuda::currentStream()),
              "a cuBLAS GEMM failed");
  recordGemms(m, n, k, batch, start);
}
