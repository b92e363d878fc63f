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
#include "tprt/Program.h"
#include "tprt/Trace.h"
#include "tprt/tprt.h"

#ifdef TPRT_HAVE_CUDA
#include "tprt/Cuda.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

using namespace tprt;

static thread_local bool gpuMemory = false;

// The calling rank's program buffers: bytes in use, the peak, and each
// live block's size (what the allocator rounded it to).
static thread_local int64_t liveBytes = 0, peakBytes = 0;
static thread_local std::unordered_map<void *, int64_t> liveBlocks;

/// With --trace: the bytes in use from now on, on the rank's counter track.
static void traceLiveBytes() {
  if (TraceRecorder *t = currentTrace())
    t->add({TraceEvent::Memory, 0, traceClockNs(), 0, liveBytes});
}

static void *counted(void *block, size_t bytes) {
  int64_t rounded = int64_t((bytes + 63) / 64 * 64);
  liveBlocks[block] = rounded;
  liveBytes += rounded;
  peakBytes = std::max(peakBytes, liveBytes);
  traceLiveBytes();
  return block;
}

static void uncounted(void *block) {
  auto it = liveBlocks.find(block);
  if (it == liveBlocks.end())
    return;
  liveBytes -= it->second;
  liveBlocks.erase(it);
  traceLiveBytes();
}

void tprt::resetTemporaryPeak() { peakBytes = liveBytes; }
int64_t tprt::temporaryPeak() { return peakBytes; }

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

int64_t tprt::reservedProgramBytes() {
  return int64_t(hostAllocator().reservedBytes());
}

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) {
#ifdef TPRT_HAVE_CUDA
  if (gpuMemory)
    return counted(cuda::cudaApi()->allocate(size), size);
#endif
  return counted(hostAllocator().allocate(size), size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
#ifdef TPRT_HAVE_CUDA
  if (gpuMemory)
    return counted(cuda::cudaApi()->allocateAligned(alignment, size), size);
#endif
  return counted(hostAllocator().allocateAligned(alignment, size), size);
}

void _mlir_memref_to_llvm_free(void *ptr) {
  uncounted(ptr);
#ifdef TPRT_HAVE_CUDA
  if (gpuMemory)
    return cuda::cudaApi()->release(ptr);
#endif
  hostAllocator().release(ptr);
}

} // extern "C"
