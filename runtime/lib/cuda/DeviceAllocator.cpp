//===- DeviceAllocator.cpp - caching allocator of GPU memory --------------===//
//
// Programs allocate and free their temporaries on every step; cudaMalloc
// synchronizes the device and costs far more than a kernel, so freed
// blocks are kept, by size, and handed out again (what PyTorch's caching
// allocator does). Plain device memory, not managed memory: generated host
// code never dereferences a buffer (tp-prepare-gpu-buffers makes copies
// kernels and global uploads gpu.memcpy), host collectives stage through
// host copies, and managed memory past the GPU's free memory pages instead
// of failing, which can hang the device.
//
//===----------------------------------------------------------------------===//
#include "CudaInternal.h"
#include "tprt/Cuda.h"
#include "tprt/tprt_cuda.h"

#include <map>
#include <mutex>
#include <unordered_map>

using namespace tprt;

namespace {

class CachingAllocator {
public:
  void *allocate(size_t bytes) {
    // 512-byte granules; a cached block at most twice the request is used.
    size_t size = ((bytes ? bytes : 1) + 511) / 512 * 512;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cached.lower_bound(size);
    if (it != cached.end() && it->first <= 2 * size) {
      void *p = it->second;
      cached.erase(it);
      return p;
    }
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, size);
    if (e == cudaErrorMemoryAllocation && !cached.empty()) {
      (void)cudaGetLastError();
      freeCached();
      e = cudaMalloc(&p, size);
    }
    if (e != cudaSuccess)
      cuda::fatal("cannot allocate " + std::to_string(size) +
                  " bytes of GPU memory (" + std::to_string(reserved) +
                  " held by the program): " + cudaGetErrorString(e));
    sizes[p] = size;
    reserved += size;
    return p;
  }

  void release(void *p) {
    if (!p)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = sizes.find(p);
    if (it == sizes.end())
      cuda::fatal("freeing memory the CUDA allocator did not hand out");
    cached.emplace(it->second, p);
  }

private:
  void freeCached() {
    for (auto [size, p] : cached) {
      cudaFree(p);
      sizes.erase(p);
      reserved -= size;
    }
    cached.clear();
  }

  std::mutex mutex;
  std::multimap<size_t, void *> cached;
  std::unordered_map<void *, size_t> sizes;
  size_t reserved = 0;
};

CachingAllocator &allocator() {
  // Never destroyed: blocks may be freed by static destructors at exit.
  static CachingAllocator *a = new CachingAllocator;
  return *a;
}

} // namespace

void *cuda::allocate(size_t bytes) { return allocator().allocate(bytes); }
void cuda::release(void *ptr) { allocator().release(ptr); }

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) {
  return allocator().allocate(size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // cudaMalloc aligns to at least 256 bytes.
  if (alignment > 256)
    cuda::fatal("the program asks for " + std::to_string(alignment) +
                "-byte aligned memory; the CUDA allocator gives 256");
  return allocator().allocate(size);
}

void _mlir_memref_to_llvm_free(void *ptr) { allocator().release(ptr); }

} // extern "C"
