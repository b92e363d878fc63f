//===- CudaTest.cpp - the runtime's CUDA side on a real GPU ---------------===//
//
// Skipped (with the reason) where there is no GPU: gtest reports them as
// skipped, and so does lit.
//
//===----------------------------------------------------------------------===//
#include "GemmCase.h"
#include "tprt/Cuda.h"
#include "tprt/tprt.h"
#include "tprt/tprt_cuda.h"

#include "tprt/Program.h"

#include <gtest/gtest.h>
#include <thread>
#include <vector>

using namespace tprt;

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    int devices;                                                               \
    if (Status s = cuda::deviceCount(devices); !s)                             \
      GTEST_SKIP() << s.message();                                             \
  } while (0)

TEST(Cuda, AllocatorHandsBackFreedBlocks) {
  REQUIRE_GPU();
  void *a = cuda::allocate(1000);
  ASSERT_NE(a, nullptr);
  cuda::release(a);
  // 900 bytes round to the same 1024-byte block, which is reused.
  void *b = cuda::allocate(900);
  EXPECT_EQ(a, b);
  cuda::release(b);
}

/// A GPU buffer holding `host` (the host never dereferences GPU memory).
template <typename T> T *onGpu(const std::vector<T> &host) {
  auto *p = static_cast<T *>(cuda::allocate(host.size() * sizeof(T)));
  EXPECT_TRUE(bool(cuda::copy(p, host.data(), host.size() * sizeof(T))));
  return p;
}

template <typename T> std::vector<T> fromGpu(const T *p, size_t n) {
  std::vector<T> host(n);
  EXPECT_TRUE(bool(cuda::copy(host.data(), p, n * sizeof(T))));
  return host;
}

TEST(Cuda, GemmMatchesHostLoops) {
  REQUIRE_GPU();
  for (int32_t trans : {0, int(TPRT_TRANS_A), int(TPRT_TRANS_B),
                        TPRT_TRANS_A | TPRT_TRANS_B}) {
    GemmCase g(2, 3, 5, 4, trans);
    float *da = onGpu(g.a), *db = onGpu(g.b), *dc = onGpu(g.c);
    tprt_cuda_gemm(int64_t(da), int64_t(db), int64_t(dc), g.batch, g.m, g.n,
                   g.k, TPRT_F32, trans);
    ASSERT_TRUE(bool(cuda::synchronize()));
    std::vector<float> got = fromGpu(dc, g.c.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], g.expected[i], 1e-5)
          << "element " << i << ", trans " << trans;
    cuda::release(da);
    cuda::release(db);
    cuda::release(dc);
  }
}

TEST(Cuda, NcclOneRankAllReduceAndGather) {
  REQUIRE_GPU();
  Mesh mesh{{"tp"}, {1}};
  cuda::NcclId id;
  ASSERT_TRUE(bool(cuda::makeNcclId(id)));
  std::string error;
  auto comm = cuda::createNcclCommunicator(mesh, {1}, 0, id, error);
  ASSERT_TRUE(comm) << error;
  ASSERT_TRUE(comm->takesDeviceBuffers());
  std::vector<float> values = {0, 1, 2, 3, 4, 5};
  float *src = onGpu(values);
  auto *dst = static_cast<float *>(cuda::allocate(6 * 4));
  ASSERT_TRUE(bool(comm->allReduce(src, dst, 6, TPRT_F32, TPRT_SUM, 1, "test")));
  EXPECT_EQ(fromGpu(dst, 6), values);
  // Blocked gather (3 outer blocks of 2): with one member, a copy.
  ASSERT_TRUE(bool(cuda::copy(dst, std::vector<float>(6, -1).data(), 24)));
  ASSERT_TRUE(bool(comm->allGather(src, dst, 3, 2, TPRT_F32, 1, "test")));
  EXPECT_EQ(fromGpu(dst, 6), values);
  cuda::release(src);
  cuda::release(dst);
}

// send / recv on NCCL, one rank sending to itself: the held send and the
// recv go out in one group; the source may change once send returned.
TEST(Cuda, NcclOneRankSendRecvToItself) {
  REQUIRE_GPU();
  Mesh mesh{{"pp"}, {1}};
  cuda::NcclId id;
  ASSERT_TRUE(bool(cuda::makeNcclId(id)));
  std::string error;
  auto comm = cuda::createNcclCommunicator(mesh, {1}, 0, id, error);
  ASSERT_TRUE(comm) << error;
  std::vector<float> values = {0, 1, 2, 3, 4, 5};
  float *src = onGpu(values);
  auto *dst = static_cast<float *>(cuda::allocate(6 * 4));
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(bool(comm->send(src, 6, TPRT_F32, 0, "test send")));
    ASSERT_TRUE(bool(cuda::copy(src, std::vector<float>(6, -1).data(), 24)));
    ASSERT_TRUE(bool(comm->recv(dst, 6, TPRT_F32, 0, "test recv")));
    EXPECT_EQ(fromGpu(dst, 6), values);
    ASSERT_TRUE(bool(cuda::copy(src, values.data(), 24)));
  }
  EXPECT_TRUE(bool(comm->finishSends()));
  cuda::release(src);
  cuda::release(dst);
}

// Unequal blocks on NCCL pad and pack in GPU memory; with one member, the
// block is the whole tensor, or nothing.
TEST(Cuda, NcclOneRankUnevenBlocks) {
  REQUIRE_GPU();
  Mesh mesh{{"tp"}, {1}};
  cuda::NcclId id;
  ASSERT_TRUE(bool(cuda::makeNcclId(id)));
  std::string error;
  auto comm = cuda::createNcclCommunicator(mesh, {1}, 0, id, error);
  ASSERT_TRUE(comm) << error;
  std::vector<float> values = {0, 1, 2, 3, 4};
  float *src = onGpu(values);
  auto *dst = static_cast<float *>(cuda::allocate(5 * 4));
  ASSERT_TRUE(bool(comm->allGatherV(src, dst, {5}, TPRT_F32, 1, "test")));
  EXPECT_EQ(fromGpu(dst, 5), values);
  ASSERT_TRUE(bool(cuda::copy(dst, std::vector<float>(5, -1).data(), 20)));
  ASSERT_TRUE(bool(comm->reduceScatterV(src, dst, {5}, TPRT_F32, 1, "test")));
  EXPECT_EQ(fromGpu(dst, 5), values);
  ASSERT_TRUE(bool(comm->allGatherV(src, dst, {0}, TPRT_F32, 1, "test")));
  cuda::release(src);
  cuda::release(dst);
}

// Two ranks as threads sharing the GPU: the host communicator works on host
// copies of the device buffers (tprt_cuda_* stage them).
TEST(Cuda, ThreadRanksStageCollectivesThroughHost) {
  REQUIRE_GPU();
  Mesh mesh{{"tp"}, {2}};
  auto world = createThreadsWorld(mesh);
  std::vector<std::vector<float>> reduced(2), gathered(2), scattered(2);
  auto rank = [&](int r) {
    auto comm = createThreadsCommunicator(world, r);
    ASSERT_FALSE(comm->takesDeviceBuffers());
    RankContext context;
    context.comm = comm.get();
    setRankContext(&context);
    ASSERT_TRUE(bool(cuda::setDevice(0)));
    // Rank r holds {r*10, r*10+1, r*10+2, r*10+3}.
    std::vector<float> mine(4);
    for (int i = 0; i < 4; ++i)
      mine[i] = float(r * 10 + i);
    float *src = onGpu(mine);
    auto *big = static_cast<float *>(cuda::allocate(8 * 4));
    auto *small = static_cast<float *>(cuda::allocate(2 * 4));
    tprt_cuda_all_reduce(int64_t(src), int64_t(big), 4, TPRT_F32, TPRT_SUM, 1,
                         0);
    reduced[r] = fromGpu(big, 4);
    tprt_cuda_all_gather(int64_t(src), int64_t(big), 1, 4, TPRT_F32, 1, 0);
    gathered[r] = fromGpu(big, 8);
    tprt_cuda_reduce_scatter(int64_t(src), int64_t(small), 1, 2, TPRT_F32, 1,
                             0);
    scattered[r] = fromGpu(small, 2);
    cuda::release(src);
    cuda::release(big);
    cuda::release(small);
    setRankContext(nullptr);
  };
  std::thread other(rank, 1);
  rank(0);
  other.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(reduced[r], (std::vector<float>{10, 12, 14, 16})) << "rank " << r;
    EXPECT_EQ(gathered[r], (std::vector<float>{0, 1, 2, 3, 10, 11, 12, 13}))
        << "rank " << r;
  }
  EXPECT_EQ(scattered[0], (std::vector<float>{10, 12}));
  EXPECT_EQ(scattered[1], (std::vector<float>{14, 16}));
}
