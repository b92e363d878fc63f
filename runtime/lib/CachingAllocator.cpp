//===- CachingAllocator.cpp - freed blocks kept for reuse, by size --------===//
#include "CachingAllocator.h"
#include "Fatal.h"

using namespace tprt;

void *CachingAllocator::allocate(size_t bytes) {
  size_t size = ((bytes ? bytes : 1) + granule - 1) / granule * granule;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cached.lower_bound(size);
  if (it != cached.end() && it->first <= 2 * size) {
    void *block = it->second;
    cached.erase(it);
    return block;
  }
  std::string why;
  void *block = obtain(size, why);
  if (!block && !cached.empty()) {
    giveBackCached();
    block = obtain(size, why);
  }
  if (!block)
    fatal("cannot allocate " + std::to_string(size) + " bytes of " + memory +
         " memory (" + std::to_string(reserved) +
         " held by the program): " + why);
  sizes[block] = size;
  reserved += size;
  return block;
}

void *CachingAllocator::allocateAligned(size_t alignment, size_t bytes) {
  if (alignment > granule)
    fatal("the program asks for " + std::to_string(alignment) +
         "-byte aligned memory; the " + memory + " allocator gives " +
         std::to_string(granule));
  return allocate(bytes);
}

void CachingAllocator::release(void *block) {
  if (!block)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = sizes.find(block);
  if (it == sizes.end())
    fatal(std::string("freeing memory the ") + memory +
         " allocator did not hand out");
  cached.emplace(it->second, block);
}

size_t CachingAllocator::reservedBytes() {
  std::lock_guard<std::mutex> lock(mutex);
  return reserved;
}

void CachingAllocator::giveBackCached() {
  for (auto [size, block] : cached) {
    give(block);
    sizes.erase(block);
    reserved -= size;
  }
  cached.clear();
}
