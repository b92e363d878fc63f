//===- ProgramOnGpu.cpp - run a CUDA program on the rank's GPU ------------===//
#include "../ProgramMemory.h"
#include "tprt/Cuda.h"
#include "tprt/DType.h"
#include "tprt/Program.h"

#include <cstdio>
#include <cstdlib>

using namespace tprt;

static void orExit(Status s) {
  if (!s) {
    std::fprintf(stderr, "tp-run: error: %s\n", s.message().c_str());
    std::_Exit(1);
  }
}

static size_t localBytes(const TensorSpec &t) {
  return size_t(t.localElements()) * dtypeSize(t.dtype);
}

/// Inputs and weights go to GPU buffers, the program runs and is waited
/// for (the seconds returned), results come back; the buffers return to
/// the caching allocator.
double Program::runOnGpu(const std::vector<void *> &args,
                         const std::vector<void *> &results) const {
  std::vector<void *> deviceArgs, deviceResults;
  for (size_t i = 0; i < args.size(); ++i) {
    size_t bytes = localBytes(manifest.arguments[i]);
    deviceArgs.push_back(cuda::allocate(bytes));
    orExit(cuda::copy(deviceArgs[i], args[i], bytes));
  }
  for (size_t i = 0; i < results.size(); ++i)
    deviceResults.push_back(cuda::allocate(localBytes(manifest.results[i])));
  auto start = std::chrono::steady_clock::now();
  {
    GpuProgramMemory gpuBuffers;
    call(deviceArgs, deviceResults);
  }
  orExit(cuda::synchronize());
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  for (size_t i = 0; i < results.size(); ++i)
    orExit(cuda::copy(results[i], deviceResults[i],
                      localBytes(manifest.results[i])));
  for (void *p : deviceArgs)
    cuda::release(p);
  for (void *p : deviceResults)
    cuda::release(p);
  return seconds;
}
