//===- DeviceAllocator.cpp - caching allocator of GPU memory --------------===//
//
// cudaMalloc synchronizes the device and costs far more than a kernel, so
// freed blocks are cached (CachingAllocator.h). Plain device memory, not
// managed memory: generated host code never dereferences a buffer
// (tp-prepare-gpu-buffers makes copies kernels and global uploads
// gpu.memcpy), host collectives stage through host copies, and managed
// memory past the GPU's free memory pages instead of failing, which can
// hang the device.
//
//===----------------------------------------------------------------------===//
#include "../CachingAllocator.h"
#include "CudaInternal.h"
#include "tprt/Cuda.h"

using namespace tprt;

static void *cudaObtain(size_t bytes, std::string &why) {
  void *block = nullptr;
  cudaError_t e = cudaMalloc(&block, bytes);
  if (e == cudaSuccess)
    return block;
  (void)cudaGetLastError();
  why = cudaGetErrorString(e);
  return nullptr;
}

static void cudaGive(void *block) { cudaFree(block); }

static CachingAllocator &allocator() {
  // Never destroyed: blocks may be freed by static destructors at exit.
  // cudaMalloc aligns to at least 256 bytes.
  static auto *a = new CachingAllocator("GPU", 256, cudaObtain, cudaGive);
  return *a;
}

void *cuda::allocate(size_t bytes) { return allocator().allocate(bytes); }
void *cuda::allocateAligned(size_t alignment, size_t bytes) {
  return allocator().allocateAligned(alignment, bytes);
}
void cuda::release(void *ptr) { allocator().release(ptr); }
