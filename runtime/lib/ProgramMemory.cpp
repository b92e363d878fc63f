//===- ProgramMemory.cpp - the buffers generated code allocates -----------===//
//
// Host buffers come from a CachingAllocator as well: a step's temporaries
// are tens of MiB each, which malloc takes from fresh mmap'd pages and
// returns on free, so every step paid for faulting and zeroing them again
// (a third of a transformer forward's time on 2 cores).
//
//===----------------------------------------------------------------------===//
#include "ProgramMemory.h"
#include "CachingAllocator.h"
#include "tprt/tprt.h"

#ifdef TPRT_HAVE_CUDA
#include "tprt/Cuda.h"
#endif

#include <cstdlib>

using namespace tprt;

static thread_local bool gpuMemory = false;

GpuProgramMemory::GpuProgramMemory() : previous(gpuMemory) {
  gpuMemory = true;
}
GpuProgramMemory::~GpuProgramMemory() { gpuMemory = previous; }

// Cache lines, and what one-shot-bufferize asks for.
static constexpr size_t kHostAlignment = 64;

static void *hostObtain(size_t bytes, std::string &why) {
  void *block = std::aligned_alloc(kHostAlignment, bytes);
  if (!block)
    why = "out of memory";
  return block;
}

static CachingAllocator &hostAllocator() {
  // Never destroyed: blocks may be freed by static destructors at exit.
  static auto *a =
      new CachingAllocator("host", kHostAlignment, hostObtain, std::free);
  return *a;
}

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) {
#ifdef TPRT_HAVE_CUDA
  if (gpuMemory)
    return cuda::cudaApi()->allocate(size);
#endif
  return hostAllocator().allocate(size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
#ifdef TPRT_HAVE_CUDA
  if (gpuMemory)
    return cuda::cudaApi()->allocateAligned(alignment, size);
#endif
  return hostAllocator().allocateAligned(alignment, size);
}

void _mlir_memref_to_llvm_free(void *ptr) {
#ifdef TPRT_HAVE_CUDA
  if (gpuMemory)
    return cuda::cudaApi()->release(ptr);
#endif
  hostAllocator().release(ptr);
}

} // extern "C"
