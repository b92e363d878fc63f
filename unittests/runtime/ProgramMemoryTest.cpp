//===- ProgramMemoryTest.cpp - the caching allocators of program buffers --===//
#include "CachingAllocator.h"
#include "tprt/tprt.h"

#include <gtest/gtest.h>
#include <map>
#include <vector>

using namespace tprt;

namespace {
// A fake memory of `limit` bytes that counts what it hands out.
size_t limit, inUse, obtained;
// Every block the fake memory handed out, never freed (tests compare the
// addresses given back); never destroyed, so that the blocks stay
// reachable for LeakSanitizer at exit.
std::map<void *, size_t> &blockSizes = *new std::map<void *, size_t>;
void *fakeObtain(size_t bytes, std::string &why) {
  if (inUse + bytes > limit) {
    why = "the fake memory is full";
    return nullptr;
  }
  inUse += bytes;
  ++obtained;
  void *block = new char[bytes];
  blockSizes[block] = bytes;
  return block;
}
std::vector<void *> givenBack;
void fakeGive(void *block) {
  givenBack.push_back(block);
  inUse -= blockSizes[block];
}

CachingAllocator fakeAllocator(size_t bytes) {
  // libtprt starts threads (OpenBLAS): death tests re-execute the binary.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  limit = bytes;
  inUse = obtained = 0;
  givenBack.clear();
  return CachingAllocator("fake", 64, fakeObtain, fakeGive);
}
} // namespace

TEST(CachingAllocator, ReusesAFreedBlockUpToTwiceTheRequest) {
  CachingAllocator a = fakeAllocator(1 << 20);
  void *big = a.allocate(4096);
  a.release(big);
  EXPECT_EQ(a.allocate(2048), big); // at most twice: reused
  a.release(big);
  void *small = a.allocate(1000); // 1024 after rounding: 4096 is too big
  EXPECT_NE(small, big);
  EXPECT_EQ(obtained, 2u);
  EXPECT_EQ(a.reservedBytes(), 4096u + 1024u);
}

TEST(CachingAllocator, RoundsToTheGranule) {
  CachingAllocator a = fakeAllocator(1 << 20);
  a.allocate(1);
  a.allocate(0);
  a.allocate(65);
  EXPECT_EQ(a.reservedBytes(), 64u + 64u + 128u);
}

TEST(CachingAllocator, GivesCachedBlocksBackWhenMemoryRunsOut) {
  CachingAllocator a = fakeAllocator(8192);
  void *first = a.allocate(4096);
  a.release(first);
  // 8192 does not fit beside the cached 4096 block: it is given back.
  a.allocate(8192);
  EXPECT_EQ(givenBack, std::vector<void *>{first});
  EXPECT_EQ(a.reservedBytes(), 8192u);
}

TEST(CachingAllocatorDeathTest, SaysWhenMemoryIsExhausted) {
  CachingAllocator a = fakeAllocator(4096);
  a.allocate(4096);
  EXPECT_DEATH(a.allocate(64),
               "tprt: error: cannot allocate 64 bytes of fake memory \\(4096 "
               "held by the program\\): the fake memory is full");
}

TEST(CachingAllocatorDeathTest, RefusesAPointerItDidNotHandOut) {
  CachingAllocator a = fakeAllocator(4096);
  int x;
  EXPECT_DEATH(a.release(&x),
               "freeing memory the fake allocator did not hand out");
}

TEST(CachingAllocatorDeathTest, RefusesAlignmentAboveTheGranule) {
  CachingAllocator a = fakeAllocator(4096);
  EXPECT_NE(a.allocateAligned(64, 10), nullptr);
  EXPECT_DEATH(a.allocateAligned(128, 10),
               "the program asks for 128-byte aligned memory; the fake "
               "allocator gives 64");
}

// What generated CPU code calls: 64-byte aligned host blocks, reused.
TEST(ProgramMemory, HostBuffersAreAlignedAndReused) {
  void *a = _mlir_memref_to_llvm_aligned_alloc(64, 3 << 20);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  static_cast<char *>(a)[(3 << 20) - 1] = 1; // writable to its end
  _mlir_memref_to_llvm_free(a);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(2 << 20), a);
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(nullptr);
}
