//===- CudaRuntime.cpp - devices, streams and MLIR's mgpu* ABI ------------===//
//
// The host side of generated kernels, on the CUDA runtime API (libcudart
// loads without a driver, so tp-run starts on machines without a GPU and
// says why it cannot run a CUDA program). Kernels are loaded with
// cudaLibraryLoadData, which is context-independent: a kernel loaded once
// launches on whichever device the calling rank's thread is bound to.
//
// Every launch waits for its kernel (the lowering synchronizes after each
// gpu.launch_func), so host code, collectives and the allocator never race
// with a kernel.
//
//===----------------------------------------------------------------------===//
#include "CudaInternal.h"
#include "tprt/Cuda.h"
#include "tprt/tprt_cuda.h"

#include <cstdio>
#include <cstdlib>

using namespace tprt;

void cuda::check(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    fatal(std::string(what) + ": " + cudaGetErrorString(error));
}

namespace {
thread_local cudaStream_t threadStream = nullptr;
} // namespace

cudaStream_t cuda::currentStream() {
  if (!threadStream)
    check(cudaStreamCreateWithFlags(&threadStream, cudaStreamNonBlocking),
          "creating a CUDA stream");
  return threadStream;
}

Status cuda::deviceCount(int &count) {
  count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
    return Status::error(
        std::string("no CUDA device: ") + cudaGetErrorString(e) +
        (e == cudaErrorInsufficientDriver
             ? " (no NVIDIA driver is loaded, or it predates CUDA " +
                   std::to_string(CUDART_VERSION / 1000) + ")"
             : ""));
  if (e != cudaSuccess)
    return Status::error(std::string("no CUDA device: ") +
                         cudaGetErrorString(e));
  if (count == 0)
    return Status::error("no CUDA device: the driver reports none");
  return Status::ok();
}

std::string cuda::deviceDescription(int device) {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess)
    return "CUDA device " + std::to_string(device);
  char buf[96];
  std::snprintf(buf, sizeof buf, " (sm_%d%d, %d SMs, %.1f GiB)", p.major,
                p.minor, p.multiProcessorCount,
                double(p.totalGlobalMem) / (1u << 30));
  return std::string(p.name) + buf;
}

Status cuda::setDevice(int device) {
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return Status::error("cannot use CUDA device " + std::to_string(device) +
                         ": " + cudaGetErrorString(e));
  return Status::ok();
}

Status cuda::synchronize() {
  cudaError_t e = cudaStreamSynchronize(currentStream());
  if (e != cudaSuccess)
    return Status::error(std::string("the GPU failed: ") +
                         cudaGetErrorString(e));
  return Status::ok();
}

Status cuda::copy(void *dst, const void *src, size_t bytes) {
  cudaError_t e =
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, currentStream());
  if (e != cudaSuccess)
    return Status::error(std::string("copying to or from the GPU: ") +
                         cudaGetErrorString(e));
  return synchronize();
}

extern "C" {

void *mgpuModuleLoad(void *data, size_t /*size*/) {
  cudaLibrary_t library;
  cuda::check(cudaLibraryLoadData(&library, data, nullptr, nullptr, 0,
                                  nullptr, nullptr, 0),
              "loading the program's kernels");
  return library;
}

void mgpuModuleUnload(void *module) {
  // At exit the CUDA runtime may already be gone; nothing to report then.
  (void)cudaLibraryUnload(static_cast<cudaLibrary_t>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  cudaKernel_t kernel;
  cuda::check(cudaLibraryGetKernel(&kernel,
                                   static_cast<cudaLibrary_t>(module), name),
              (std::string("finding kernel ") + name).c_str());
  return kernel;
}

void *mgpuStreamCreate(void) { return cuda::currentStream(); }

void mgpuStreamDestroy(void * /*stream*/) {
  // The rank's stream lives as long as its thread.
}

void mgpuStreamSynchronize(void *stream) {
  cuda::check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
              "a kernel of the program failed");
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  cuda::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                              static_cast<cudaStream_t>(stream)),
              "copying a constant to the GPU");
}

void mgpuLaunchKernel(void *function, intptr_t grid_x, intptr_t grid_y,
                      intptr_t grid_z, intptr_t block_x, intptr_t block_y,
                      intptr_t block_z, int32_t shared_bytes, void *stream,
                      void **params, void ** /*extra*/,
                      size_t /*num_params*/) {
  // A cudaKernel_t is accepted wherever cudaLaunchKernel takes a function.
  cuda::check(cudaLaunchKernel(function,
                               dim3(unsigned(grid_x), unsigned(grid_y),
                                    unsigned(grid_z)),
                               dim3(unsigned(block_x), unsigned(block_y),
                                    unsigned(block_z)),
                               params, size_t(shared_bytes),
                               static_cast<cudaStream_t>(stream)),
              "launching a kernel");
}

} // extern "C"
