//===- TileParallelLoopsForGpu.cpp - scf.parallel -> blocks x threads -----===//
//
// gpu-map-parallel-loops maps a loop nest's first level to blocks and the
// second to threads. A loop of any rank is first collapsed to one dim, then
// tiled by the block size (with an in-bounds guard, no min/max bounds), so
// every kernel runs `block-size` threads per block over its elements.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace mlir::tp {
#define GEN_PASS_DEF_TPTILEPARALLELLOOPSFORGPU
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct TPTileParallelLoopsForGpuPass
    : tp::impl::TPTileParallelLoopsForGpuBase<TPTileParallelLoopsForGpuPass> {
  using Base::Base;
  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("tp-tile-parallel-loops-for-gpu: block-size ")
          << int64_t(blockSize) << " is not in 1..1024 (CUDA's threads per block)";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        loops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops) {
      if (loop.getNumLoops() > 1) {
        // The collapsed loop replaces `loop` right before the op after it.
        Operation *next = loop->getNextNode();
        std::vector<unsigned> all(loop.getNumLoops());
        std::iota(all.begin(), all.end(), 0u);
        rewriter.setInsertionPoint(loop);
        collapseParallelLoops(rewriter, loop, {all});
        loop = cast<scf::ParallelOp>(next->getPrevNode());
      }
      scf::tileParallelLoop(loop, {int64_t(blockSize)},
                            /*noMinMaxBounds=*/true);
    }
  }
};

} // namespace
