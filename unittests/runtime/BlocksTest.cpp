//===- BlocksTest.cpp - ranks' blocks of global tensors, .npy -------------===//
#include "tprt/Blocks.h"
#include "tprt/DType.h"
#include "tprt/Npy.h"

#include <gtest/gtest.h>
#include <numeric>

using namespace tprt;

TEST(Blocks, SplitsAndReassemblesOnA2DMesh) {
  Mesh m;
  m.names = {"dp", "tp"};
  m.sizes = {2, 2};
  // [4, 6] split: dim 0 over dp, dim 1 over tp.
  TensorSpec t;
  t.dtype = TPRT_F32;
  t.shape = {4, 6};
  t.localShape = {2, 3};
  t.sharding = {{0}, {1}};
  std::vector<float> global(24), back(24, -1);
  std::iota(global.begin(), global.end(), 0);
  for (int r = 0; r < 4; ++r) {
    std::vector<float> local(6);
    extractBlock(t, m, r, global.data(), local.data(), 4);
    std::vector<int64_t> c = m.coords(r);
    EXPECT_EQ(local[0], float(c[0] * 2 * 6 + c[1] * 3)) << "rank " << r;
    insertBlock(t, m, r, local.data(), back.data(), 4);
  }
  EXPECT_EQ(back, global);
}

TEST(Blocks, TwoAxesOnOneDim) {
  Mesh m;
  m.names = {"dp", "tp"};
  m.sizes = {2, 2};
  TensorSpec t;
  t.dtype = TPRT_F32;
  t.shape = {8};
  t.localShape = {2};
  t.sharding = {{0, 1}}; // dp major, tp minor
  std::vector<float> global(8), local(2);
  std::iota(global.begin(), global.end(), 0);
  extractBlock(t, m, /*rank (dp=1, tp=0)=*/2, global.data(), local.data(), 4);
  EXPECT_EQ(local, (std::vector<float>{4, 5}));
}

// An uneven split: [5, 3] over 4 ranks on dim 0 is torch.chunk's 2, 2, 1
// and 0 rows in blocks of 2; a block's padding reads as zeros and is never
// written back.
TEST(Blocks, UnevenBlocksArePadded) {
  Mesh m;
  m.names = {"dp"};
  m.sizes = {4};
  TensorSpec t;
  t.dtype = TPRT_F32;
  t.shape = {5, 3};
  t.localShape = {2, 3};
  t.sharding = {{0}, {}};
  std::vector<float> global(15), back(15, -1);
  std::iota(global.begin(), global.end(), 1);
  for (int r = 0; r < 4; ++r) {
    std::vector<float> local(6, -7);
    extractBlock(t, m, r, global.data(), local.data(), 4);
    for (int i = 0; i < 6; ++i) {
      int row = r * 2 + i / 3;
      EXPECT_EQ(local[i], row < 5 ? global[row * 3 + i % 3] : 0.0f)
          << "rank " << r << " element " << i;
    }
    std::fill(local.begin() + (r == 2 ? 3 : 6), local.end(), 99.0f);
    insertBlock(t, m, r, local.data(), back.data(), 4);
  }
  EXPECT_EQ(back, global);
  int64_t runs = 0;
  forEachBlockRun(t, m, 3, [&](int64_t, int64_t, int64_t) { ++runs; });
  EXPECT_EQ(runs, 0) << "the last rank holds no row";
}

TEST(Npy, RoundTrip) {
  NpyArray a;
  a.dtype = TPRT_F32;
  a.shape = {2, 3};
  a.data.resize(24);
  for (int i = 0; i < 6; ++i)
    reinterpret_cast<float *>(a.data.data())[i] = i * 0.5f;
  std::string path = ::testing::TempDir() + "/tprt-npy-roundtrip.npy";
  ASSERT_TRUE(writeNpy(path, a));
  NpyArray b;
  ASSERT_TRUE(readNpy(path, b));
  EXPECT_EQ(b.dtype, a.dtype);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.data, a.data);
}
