//===- CudaTest.cpp - the runtime's CUDA side on a real GPU ---------------===//
//
// Skipped (with the reason) where there is no GPU: gtest reports them as
// skipped, and so does lit.
//
//===----------------------------------------------------------------------===//
#include "tprt/Cuda.h"
#include "tprt/tprt.h"
#include "tprt/tprt_cuda.h"

#include <gtest/gtest.h>
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

TEST(Cuda, GemmMatchesHostLoops) {
  REQUIRE_GPU();
  const int64_t batch = 2, m = 3, n = 5, k = 4;
  auto *a = static_cast<float *>(cuda::allocate(batch * m * k * 4));
  auto *b = static_cast<float *>(cuda::allocate(batch * k * n * 4));
  auto *c = static_cast<float *>(cuda::allocate(batch * m * n * 4));
  std::vector<float> ref(batch * m * n, 0.5f);
  for (int64_t i = 0; i < batch * m * k; ++i)
    a[i] = float(i % 7) - 3;
  for (int64_t i = 0; i < batch * k * n; ++i)
    b[i] = float(i % 5) * 0.25f;
  for (int64_t i = 0; i < batch * m * n; ++i)
    c[i] = 0.5f; // the GEMM accumulates: C += A B
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          ref[(p * m + i) * n + j] +=
              a[(p * m + i) * k + l] * b[(p * k + l) * n + j];
  tprt_cuda_gemm(int64_t(a), int64_t(b), int64_t(c), batch, m, n, k, TPRT_F32);
  ASSERT_TRUE(bool(cuda::synchronize()));
  for (int64_t i = 0; i < batch * m * n; ++i)
    EXPECT_NEAR(c[i], ref[i], 1e-5) << "element " << i;
  cuda::release(a);
  cuda::release(b);
  cuda::release(c);
}

TEST(Cuda, NcclOneRankAllReduceAndGather) {
  REQUIRE_GPU();
  Mesh mesh{{"tp"}, {1}};
  cuda::NcclId id;
  ASSERT_TRUE(bool(cuda::makeNcclId(id)));
  std::string error;
  auto comm = cuda::createNcclCommunicator(mesh, {1}, 0, id, error);
  ASSERT_TRUE(comm) << error;
  auto *src = static_cast<float *>(cuda::allocate(6 * 4));
  auto *dst = static_cast<float *>(cuda::allocate(6 * 4));
  for (int i = 0; i < 6; ++i)
    src[i] = float(i);
  ASSERT_TRUE(bool(comm->allReduce(src, dst, 6, TPRT_F32, TPRT_SUM, 1, "test")));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(dst[i], float(i));
  // Blocked gather (3 outer blocks of 2): with one member, a copy.
  ASSERT_TRUE(bool(comm->allGather(src, dst, 3, 2, TPRT_F32, 1, "test")));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(dst[i], float(i));
  cuda::release(src);
  cuda::release(dst);
}
