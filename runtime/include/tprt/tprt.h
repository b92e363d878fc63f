/*===- tprt.h - the C ABI between generated programs and libtprt -----------===
 *
 * Generated code calls these; it never knows which communicator backend
 * (threads, mpi) runs it. Buffers are passed as addresses with element
 * counts; mesh axes as a bit mask (bit a = mesh axis a), resolved by the
 * runtime to the group of ranks that differ only along those axes; `site`
 * numbers the collective in the program's manifest, for error messages.
 * Every call is made by one rank (a thread or a process) of the mesh.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TPRT_TPRT_H
#define TPRT_TPRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. */
enum {
  TPRT_F32 = 0,
  TPRT_F16 = 1,
  TPRT_BF16 = 2,
  TPRT_I64 = 3,
  TPRT_F64 = 4,
  TPRT_I32 = 5,
  TPRT_BOOL = 6, /* one byte, 0 or 1 (MLIR i1 in memory) */
  TPRT_I8 = 7,
  TPRT_I16 = 8,
};

/* Reductions. */
enum { TPRT_SUM = 0, TPRT_MAX = 1 };

/* dst[i] = reduce over the group of src[i], i < count. */
void tprt_all_reduce(int64_t src, int64_t dst, int64_t count, int32_t dtype,
                     int32_t reduction, int64_t axes_mask, int64_t site);

/* src holds `outer` blocks of `chunk` elements; dst holds, for each outer
 * index, the group's blocks in group order (outer * chunk * group size). */
void tprt_all_gather(int64_t src, int64_t dst, int64_t outer, int64_t chunk,
                     int32_t dtype, int64_t axes_mask, int64_t site);

/* src holds, for each outer index, one block of `chunk` elements per group
 * member; dst gets, for each outer index, the sum over the group of the
 * block for this rank (outer * chunk). */
void tprt_reduce_scatter(int64_t src, int64_t dst, int64_t outer,
                         int64_t chunk, int32_t dtype, int64_t axes_mask,
                         int64_t site);

/* Point to point between pipeline stages: the peer is member `peer_index`
 * of this rank's group along `axes_mask` (the stage axis). tprt_send
 * returns once src is copied out; tprt_recv waits for the peer's next
 * message, of `count` elements. */
void tprt_send(int64_t src, int64_t count, int32_t dtype, int64_t axes_mask,
               int64_t peer_index, int64_t site);
void tprt_recv(int64_t dst, int64_t count, int32_t dtype, int64_t axes_mask,
               int64_t peer_index, int64_t site);

/* Which GEMM operands are stored transposed: A as [K,M], B as [N,K]; and
 * TPRT_OVERWRITE: C = A * B, C's contents not read (BLAS's beta 0), for a
 * product into a buffer that would otherwise be zero-filled first. */
enum { TPRT_TRANS_A = 1, TPRT_TRANS_B = 2, TPRT_OVERWRITE = 4 };
/* And for mixed precision: C is f32 while A and B are 16-bit floats
 * (tprt_gemm_bf16 always; tprt_cuda_gemm when set). */
enum { TPRT_F32_PRODUCT = 8 };

/* Row-major f32 GEMM, accumulating: C[M,N] += A[M,K] * B[K,N] (or = with
 * TPRT_OVERWRITE), with A or B read transposed as `trans` (TPRT_TRANS_*)
 * says; the batched form does `batch` such products on consecutive
 * matrices. */
void tprt_sgemm(int64_t a, int64_t b, int64_t c, int64_t m, int64_t n,
                int64_t k, int32_t trans);
void tprt_sgemm_batched(int64_t a, int64_t b, int64_t c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, int32_t trans);
/* Mixed precision's GEMM: as tprt_sgemm_batched with bf16 A and B and an
 * f32 C (the products summed in f32), on oneDNN's bf16 kernels (AVX-512
 * BF16, AMX). On a CPU where oneDNN has none (no AVX-512) the operands
 * are widened to f32 and multiplied as f32, which stderr says once. */
void tprt_gemm_bf16(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m,
                    int64_t n, int64_t k, int32_t trans);

/* Convolutions, f32, on plain layouts: activations [N, C, S...], filters
 * [M, C/group, K...], 1 to 3 spatial dims (oneDNN). `shape` is the address
 * of TPRT_CONV_SHAPE_SIZE int64s, laid out as the TPRT_CONV_* indices say
 * (three entries per spatial field, the unused ones ignored; dilations
 * count from 1 as ONNX's). `kind`:
 *   TPRT_CONV_FORWARD: out [N, M, O...] = conv(a = input, b = filter);
 *   TPRT_CONV_INPUT_GRAD: out [N, C, S...] = the input's gradient, from
 *     a = the output's gradient and b = the filter;
 *   TPRT_CONV_FILTER_GRAD: out [M, C/group, K...] = the filter's gradient,
 *     from a = the input and b = the output's gradient.
 * `out` is overwritten. */
enum {
  TPRT_CONV_FORWARD = 0,
  TPRT_CONV_INPUT_GRAD = 1,
  TPRT_CONV_FILTER_GRAD = 2
};
/* Or'd into `kind`: a and b are bf16, out is f32 (mixed precision; on a CPU
 * without oneDNN's bf16 kernels a and b are widened and the f32
 * convolution runs, which stderr says once). */
enum { TPRT_CONV_BF16 = 8 };
enum {
  TPRT_CONV_RANK = 0,
  TPRT_CONV_GROUP = 1,
  TPRT_CONV_N = 2,
  TPRT_CONV_C = 3,
  TPRT_CONV_M = 4,
  TPRT_CONV_SPATIAL = 5,
  TPRT_CONV_KERNEL = 8,
  TPRT_CONV_OUTPUT = 11,
  TPRT_CONV_STRIDES = 14,
  TPRT_CONV_DILATIONS = 17,
  TPRT_CONV_PADS_BEGIN = 20,
  TPRT_CONV_PADS_END = 23,
  TPRT_CONV_SHAPE_SIZE = 26
};
void tprt_conv(int32_t kind, int64_t a, int64_t b, int64_t out, int64_t shape);

/* Around each loop nest's call (tp-trace-kernel-sites): with tp-run --trace
 * the nest's time is recorded under kernel site `site`; otherwise nothing. */
void tprt_kernel_begin(int64_t site);
void tprt_kernel_end(int64_t site);

/* How many threads the calling rank's parallel loop nests may use (the
 * OpenMP team each splits its range over): the rank's share of the cores. */
int64_t tprt_loop_threads(void);

/* This rank's index within its group along `axes_mask` (major axis first). */
int64_t tprt_axis_index(int64_t axes_mask);

/* The program's buffers (finalize-memref-to-llvm{use-generic-functions}),
 * from the runtime's caching allocators: host memory for CPU programs, GPU
 * memory for CUDA programs (which host code never dereferences). */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* TPRT_TPRT_H */
