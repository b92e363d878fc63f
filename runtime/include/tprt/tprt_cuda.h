/*===- tprt_cuda.h - what CUDA programs call in libtprt --------------------===
 *
 * Programs built with `tp-compile --target cuda` call these besides tprt.h's
 * tprt_axis_index. Buffers are device memory (from the allocator below);
 * every call is made by one rank on its own CUDA stream and is ordered
 * after the kernels the rank launched before it.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TPRT_TPRT_CUDA_H
#define TPRT_TPRT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* As tprt_all_reduce, tprt_all_gather and tprt_reduce_scatter (tprt.h), on
 * device buffers: NCCL when the rank's communicator is NCCL, else the host
 * communicator on host copies, after the stream is drained. */
void tprt_cuda_all_reduce(int64_t src, int64_t dst, int64_t count,
                          int32_t dtype, int32_t reduction, int64_t axes_mask,
                          int64_t site);
void tprt_cuda_all_gather(int64_t src, int64_t dst, int64_t outer,
                          int64_t chunk, int32_t dtype, int64_t axes_mask,
                          int64_t site);
void tprt_cuda_reduce_scatter(int64_t src, int64_t dst, int64_t outer,
                              int64_t chunk, int32_t dtype, int64_t axes_mask,
                              int64_t site);

/* Row-major C[M,N] += A[M,K] * B[K,N], `batch` times on consecutive
 * matrices, with cuBLAS; dtype TPRT_F32 (TF32 tensor cores only when
 * allowed: tp-run --tf32), TPRT_F16 or TPRT_BF16 (f32 accumulation); with
 * TPRT_F32_PRODUCT in `trans`, C is f32 (mixed precision). */
void tprt_cuda_gemm(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m,
                    int64_t n, int64_t k, int32_t dtype, int32_t trans);

/* MLIR's host-side GPU runtime ABI, which gpu-to-llvm and the gpu.binary
 * translation emit (upstream's libmlir_cuda_runtime, which Debian does not
 * ship), on the CUDA runtime API. Kernels load once per program (global
 * constructors); streams are the calling rank's. */
void *mgpuModuleLoad(void *data, size_t size);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuMemcpy(void *dst, void *src, size_t size, void *stream);
void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t shared_bytes, void *stream,
                      void **params, void **extra, size_t num_params);

#ifdef __cplusplus
}
#endif

#endif /* TPRT_TPRT_CUDA_H */
