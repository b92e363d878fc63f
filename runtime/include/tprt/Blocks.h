//===- Blocks.h - a rank's block of a global tensor ------------*- C++ -*-===//
#ifndef TPRT_BLOCKS_H
#define TPRT_BLOCKS_H

#include "tprt/Manifest.h"

#include <functional>

namespace tprt {

/// Visits the contiguous runs of `rank`'s block of `t` (row-major):
/// `fn(globalOffset, localOffset, elements)`, offsets in elements. A block
/// of an uneven split (local_shape is ceil(shape / blocks)) ends where the
/// tensor does: only its real elements are visited, at their places in the
/// padded local buffer; a block past the end has none.
void forEachBlockRun(const TensorSpec &t, const Mesh &mesh, int rank,
                     const std::function<void(int64_t, int64_t, int64_t)> &fn);

/// Copies `rank`'s block out of a whole tensor (zeros in its padding), or
/// its real elements back into one.
void extractBlock(const TensorSpec &t, const Mesh &mesh, int rank,
                  const void *global, void *local, size_t elementSize);
void insertBlock(const TensorSpec &t, const Mesh &mesh, int rank,
                 const void *local, void *global, size_t elementSize);

} // namespace tprt

#endif // TPRT_BLOCKS_H
