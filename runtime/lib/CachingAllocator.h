//===- CachingAllocator.h - freed blocks kept for reuse, by size -*- C++ -*-===//
//
// Programs allocate and free the same temporaries on every step. Getting
// them fresh each time costs more than the work on them: cudaMalloc
// synchronizes the GPU, and large host blocks come from mmap, whose pages
// the kernel faults in and zeroes again on every step. So freed blocks are
// kept, by size, and handed out again (what PyTorch's caching allocator
// does); they go back only when a fresh block cannot be had.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_CACHINGALLOCATOR_H
#define TPRT_CACHINGALLOCATOR_H

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tprt {

class CachingAllocator {
public:
  /// A fresh block of `bytes` aligned to the granule, or null with `why`.
  using Obtain = void *(*)(size_t bytes, std::string &why);
  using Give = void (*)(void *block);

  /// `memory` names the memory in messages ("host", "GPU").
  CachingAllocator(const char *memory, size_t granule, Obtain obtain,
                   Give give)
      : memory(memory), granule(granule), obtain(obtain), give(give) {}

  /// Sizes round up to the granule; a cached block of at most twice the
  /// request is reused. Ends the process (fatal) when no memory is left.
  void *allocate(size_t bytes);
  /// Keeps the block for reuse; ends the process for a pointer it did not
  /// hand out.
  void release(void *block);
  /// allocate() for `alignment` (a power of two) up to the granule.
  void *allocateAligned(size_t alignment, size_t bytes);

  /// Bytes of blocks obtained and not given back (in use or cached).
  size_t reservedBytes();

private:
  void giveBackCached();

  const char *memory;
  size_t granule;
  Obtain obtain;
  Give give;
  std::mutex mutex;
  std::multimap<size_t, void *> cached;
  std::unordered_map<void *, size_t> sizes;
  size_t reserved = 0;
};

} // namespace tprt

#endif // TPRT_CACHINGALLOCATOR_H
