//===- CudaApi.cpp - libtprt_cuda's entry points for libtprt and tp-run ---===//
#include "tprt/Cuda.h"
#include "tprt/Program.h"

using namespace tprt;

static double runProgram(const Program &program,
                         const std::vector<void *> &args,
                         const std::vector<void *> &results) {
  return program.runOnGpu(args, results);
}

extern "C" const cuda::CudaApi *tprt_cuda_api() {
  static const cuda::CudaApi api = {
      cuda::deviceCount,  cuda::deviceDescription, cuda::setDevice,
      cuda::allocate,     cuda::allocateAligned,   cuda::release,
      cuda::setAllowTf32, cuda::makeNcclId,        cuda::createNcclCommunicator,
      runProgram};
  return &api;
}
