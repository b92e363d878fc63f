//===- GemmTest.cpp - tprt_sgemm on OpenBLAS, operands transposed or not --===//
#include "GemmCase.h"
#include "tprt/DType.h"

#include <gtest/gtest.h>

class Gemm : public testing::TestWithParam<int32_t> {};

TEST_P(Gemm, MatchesLoops) {
  GemmCase g(1, 3, 5, 4, GetParam());
  tprt_sgemm(int64_t(g.a.data()), int64_t(g.b.data()), int64_t(g.c.data()),
             g.m, g.n, g.k, g.trans);
  for (size_t i = 0; i < g.c.size(); ++i)
    EXPECT_NEAR(g.c[i], g.expected[i], 1e-5) << "element " << i;
}

TEST_P(Gemm, BatchedMatchesLoops) {
  GemmCase g(3, 4, 2, 5, GetParam());
  tprt_sgemm_batched(int64_t(g.a.data()), int64_t(g.b.data()),
                     int64_t(g.c.data()), g.batch, g.m, g.n, g.k, g.trans);
  for (size_t i = 0; i < g.c.size(); ++i)
    EXPECT_NEAR(g.c[i], g.expected[i], 1e-5) << "element " << i;
}

// C = A B, C's contents not read (it holds 0.5 before).
TEST_P(Gemm, BatchedOverwrites) {
  GemmCase g(3, 4, 2, 5, GetParam());
  std::vector<float> expected = g.expected;
  for (float &e : expected)
    e -= 0.5f;
  tprt_sgemm_batched(int64_t(g.a.data()), int64_t(g.b.data()),
                     int64_t(g.c.data()), g.batch, g.m, g.n, g.k,
                     g.trans | TPRT_OVERWRITE);
  for (size_t i = 0; i < g.c.size(); ++i)
    EXPECT_NEAR(g.c[i], expected[i], 1e-5) << "element " << i;
}

// Mixed precision: bf16 A and B (GemmCase's values are exact in bf16:
// multiples of 0.25 below 256), products summed into the f32 C.
TEST_P(Gemm, Bf16IntoF32) {
  GemmCase g(3, 4, 2, 5, GetParam());
  std::vector<uint16_t> a, b;
  for (float v : g.a)
    a.push_back(tprt::floatToBf16(v));
  for (float v : g.b)
    b.push_back(tprt::floatToBf16(v));
  tprt_gemm_bf16(int64_t(a.data()), int64_t(b.data()), int64_t(g.c.data()),
                 g.batch, g.m, g.n, g.k, g.trans | TPRT_F32_PRODUCT);
  for (size_t i = 0; i < g.c.size(); ++i)
    EXPECT_NEAR(g.c[i], g.expected[i], 1e-5) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Transposes, Gemm,
                         testing::Values(0, TPRT_TRANS_A, TPRT_TRANS_B,
                                         TPRT_TRANS_A | TPRT_TRANS_B));
