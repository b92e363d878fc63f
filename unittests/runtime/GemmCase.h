//===- GemmCase.h - GEMM operands and the result computed by loops -*- C++ -*-===//
#ifndef TPRT_UNITTESTS_GEMMCASE_H
#define TPRT_UNITTESTS_GEMMCASE_H

#include "tprt/tprt.h"

#include <cstdint>
#include <vector>

/// `batch` products C += A B of [M,K] by [K,N], A and B stored as `trans`
/// (TPRT_TRANS_*) says, and the expected C, computed by loops.
struct GemmCase {
  GemmCase(int64_t batch, int64_t m, int64_t n, int64_t k, int32_t trans)
      : batch(batch), m(m), n(n), k(k), trans(trans), a(batch * m * k),
        b(batch * k * n), c(batch * m * n, 0.5f) {
    bool ta = trans & TPRT_TRANS_A, tb = trans & TPRT_TRANS_B;
    auto aAt = [&](int64_t p, int64_t i, int64_t l) -> float & {
      return a[ta ? (p * k + l) * m + i : (p * m + i) * k + l];
    };
    auto bAt = [&](int64_t p, int64_t l, int64_t j) -> float & {
      return b[tb ? (p * n + j) * k + l : (p * k + l) * n + j];
    };
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t l = 0; l < k; ++l) {
        for (int64_t i = 0; i < m; ++i)
          aAt(p, i, l) = float((p * m + i) * k + l) * 0.5f - 3;
        for (int64_t j = 0; j < n; ++j)
          bAt(p, l, j) = float((p * k + l * 3 + j) % 5) * 0.25f;
      }
    expected = c;
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t l = 0; l < k; ++l)
            expected[(p * m + i) * n + j] += aAt(p, i, l) * bAt(p, l, j);
  }

  int64_t batch, m, n, k;
  int32_t trans;
  std::vector<float> a, b, c, expected;
};

#endif // TPRT_UNITTESTS_GEMMCASE_H
