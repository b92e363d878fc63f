//===- CudaCollectives.cpp - tprt_cuda_* collectives ----------------------===//
//
// The rank's stream is drained first, so that a host communicator (threads,
// MPI) can work on the managed buffers directly and NCCL's own stream sees
// finished inputs; then the collective is tprt.h's, on whichever
// communicator the rank has.
//
//===----------------------------------------------------------------------===//
#include "CudaInternal.h"
#include "tprt/tprt.h"
#include "tprt/tprt_cuda.h"

using namespace tprt;

static void drain() {
  cuda::check(cudaStreamSynchronize(cuda::currentStream()),
              "a kernel before a collective failed");
}

extern "C" {

void tprt_cuda_all_reduce(int64_t src, int64_t dst, int64_t count,
                          int32_t dtype, int32_t reduction, int64_t mask,
                          int64_t site) {
  drain();
  tprt_all_reduce(src, dst, count, dtype, reduction, mask, site);
}

void tprt_cuda_all_gather(int64_t src, int64_t dst, int64_t outer,
                          int64_t chunk, int32_t dtype, int64_t mask,
                          int64_t site) {
  drain();
  tprt_all_gather(src, dst, outer, chunk, dtype, mask, site);
}

void tprt_cuda_reduce_scatter(int64_t src, int64_t dst, int64_t outer,
                              int64_t chunk, int32_t dtype, int64_t mask,
                              int64_t site) {
  drain();
  tprt_reduce_scatter(src, dst, outer, chunk, dtype, mask, site);
}

} // extern "C"
