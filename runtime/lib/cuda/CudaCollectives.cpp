//===- CudaCollectives.cpp - tprt_cuda_* collectives ----------------------===//
//
// The rank's stream is drained first, so that the collective sees finished
// inputs. NCCL then works on the device buffers themselves; a host
// communicator (threads, MPI: several ranks sharing a GPU) gets host copies
// of them, and the result is copied back.
//
//===----------------------------------------------------------------------===//
#include "CudaInternal.h"
#include "tprt/DType.h"
#include "tprt/Program.h"
#include "tprt/tprt.h"
#include "tprt/tprt_cuda.h"

#include <vector>

using namespace tprt;

namespace {

/// Runs `collective(src, dst)` on addresses the rank's communicator takes:
/// the device buffers for NCCL, else a host copy of src's `srcBytes` and a
/// host buffer of `dstBytes` (the collectives write all of dst).
template <typename Fn>
void onCommunicatorMemory(int64_t src, int64_t dst, size_t srcBytes,
                          size_t dstBytes, Fn collective) {
  cuda::check(cudaStreamSynchronize(cuda::currentStream()),
              "a kernel before a collective failed");
  RankContext *ctx = currentRankContext();
  if (!ctx || !ctx->comm || ctx->comm->takesDeviceBuffers())
    return collective(src, dst); // tprt.h reports a missing rank context
  std::vector<char> hostSrc(srcBytes), hostDst(dstBytes);
  auto *devSrc = reinterpret_cast<const void *>(src);
  auto *devDst = reinterpret_cast<void *>(dst);
  cuda::check(cudaMemcpy(hostSrc.data(), devSrc, srcBytes, cudaMemcpyDefault),
              "copying a collective's input from the GPU");
  collective(int64_t(hostSrc.data()), int64_t(hostDst.data()));
  cuda::check(cudaMemcpy(devDst, hostDst.data(), dstBytes, cudaMemcpyDefault),
              "copying a collective's result to the GPU");
}

/// Members of the rank's group along `mask` (1 outside a rank, where
/// tprt.h reports the missing rank context).
int64_t groupSize(int64_t mask) {
  RankContext *ctx = currentRankContext();
  return ctx && ctx->comm ? ctx->comm->groupSize(mask) : 1;
}

} // namespace

extern "C" {

void tprt_cuda_all_reduce(int64_t src, int64_t dst, int64_t count,
                          int32_t dtype, int32_t reduction, int64_t mask,
                          int64_t site) {
  size_t bytes = size_t(count) * dtypeSize(dtype);
  onCommunicatorMemory(src, dst, bytes, bytes, [&](int64_t s, int64_t d) {
    tprt_all_reduce(s, d, count, dtype, reduction, mask, site);
  });
}

void tprt_cuda_all_gather(int64_t src, int64_t dst, int64_t outer,
                          int64_t chunk, int32_t dtype, int64_t mask,
                          int64_t site) {
  size_t block = size_t(outer * chunk) * dtypeSize(dtype);
  onCommunicatorMemory(src, dst, block, block * groupSize(mask),
                       [&](int64_t s, int64_t d) {
                         tprt_all_gather(s, d, outer, chunk, dtype, mask, site);
                       });
}

void tprt_cuda_reduce_scatter(int64_t src, int64_t dst, int64_t outer,
                              int64_t chunk, int32_t dtype, int64_t mask,
                              int64_t site) {
  size_t block = size_t(outer * chunk) * dtypeSize(dtype);
  onCommunicatorMemory(src, dst, block * groupSize(mask), block,
                       [&](int64_t s, int64_t d) {
                         tprt_reduce_scatter(s, d, outer, chunk, dtype, mask,
                                             site);
                       });
}

} // extern "C"
