//===- CudaInternal.h - shared by the runtime's CUDA sources --------------===//
#ifndef TPRT_LIB_CUDA_CUDAINTERNAL_H
#define TPRT_LIB_CUDA_CUDAINTERNAL_H

#include "../Fatal.h"

#include <cuda_runtime.h>
#include <string>

namespace tprt::cuda {

/// tprt::fatal() with `what` and CUDA's reason unless `error` is
/// cudaSuccess.
void check(cudaError_t error, const char *what);
/// The calling thread's stream, created on first use.
cudaStream_t currentStream();

} // namespace tprt::cuda

#endif // TPRT_LIB_CUDA_CUDAINTERNAL_H
