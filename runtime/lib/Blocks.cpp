//===- Blocks.cpp - a rank's block of a global tensor ---------------------===//
#include "tprt/Blocks.h"

#include <algorithm>
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
  // Row-major strides of the global tensor, and the real extent of the
  // block in each dim.
  std::vector<int64_t> stride(rank_, 1), extent(rank_);
  for (int d = int(rank_) - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * t.shape[d + 1];
  for (size_t d = 0; d < rank_; ++d) {
    extent[d] = std::clamp<int64_t>(t.shape[d] - block[d] * t.localShape[d],
                                    0, t.localShape[d]);
    if (extent[d] == 0)
      return;
  }
  int64_t run = extent.back();
  std::vector<int64_t> idx(rank_, 0); // local index over all dims but last
  while (true) {
    int64_t global = 0, local = 0;
    for (size_t d = 0; d < rank_; ++d) {
      global += (block[d] * t.localShape[d] + idx[d]) * stride[d];
      local = local * t.localShape[d] + idx[d];
    }
    fn(global, local, run);
    int d = int(rank_) - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < extent[d])
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
  // The padding of a block of an uneven split reads as zeros.
  int64_t real = 0;
  forEachBlockRun(t, mesh, rank, [&](int64_t, int64_t, int64_t n) { real += n; });
  if (real < t.localElements())
    std::memset(local, 0, t.localElements() * es);
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
