//===- Blocks.cpp - a rank's block of a global tensor ---------------------===//
#include "tprt/Blocks.h"

#include <cstring>

using namespace tprt;

void tprt::forEachBlockRun(
    const TensorSpec &t, const Mesh &mesh, int rank,
    const std::function<void(int64_t, int64_t, int64_t)> &fn) {
  size_t rank_ = t.shape.size();
  if (rank_ == 0) {
    fn(0, 0, 1);
    return;
  }
  std::vector<int64_t> block = t.blockOf(mesh, rank);
  // Row-major strides of the global tensor.
  std::vector<int64_t> stride(rank_, 1);
  for (int d = int(rank_) - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * t.shape[d + 1];
  int64_t run = t.localShape.back();
  std::vector<int64_t> idx(rank_, 0); // local index over all dims but last
  int64_t local = 0;
  while (true) {
    int64_t global = 0;
    for (size_t d = 0; d < rank_; ++d)
      global += (block[d] * t.localShape[d] + idx[d]) * stride[d];
    fn(global, local, run);
    local += run;
    int d = int(rank_) - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < t.localShape[d])
        break;
      idx[d] = 0;
    }
    if (d < 0)
      return;
  }
}

void tprt::extractBlock(const TensorSpec &t, const Mesh &mesh, int rank,
                        const void *global, void *local, size_t es) {
  // A tensor with no elements may have no buffer at all (null), which
  // memcpy must not be given even for 0 bytes.
  forEachBlockRun(t, mesh, rank, [&](int64_t g, int64_t l, int64_t n) {
    if (n)
      std::memcpy(static_cast<char *>(local) + l * es,
                  static_cast<const char *>(global) + g * es, n * es);
  });
}

void tprt::insertBlock(const TensorSpec &t, const Mesh &mesh, int rank,
                       const void *local, void *global, size_t es) {
  forEachBlockRun(t, mesh, rank, [&](int64_t g, int64_t l, int64_t n) {
    if (n)
      std::memcpy(static_cast<char *>(global) + g * es,
                  static_cast<const char *>(local) + l * es, n * es);
  });
}
