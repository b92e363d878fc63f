//===- PrepareGpuBuffers.cpp - buffers and copies for the CUDA target -----===//
//
// Before linalg becomes parallel loops and kernels: what a kernel reads
// must be device memory (allocations come from the runtime's allocator;
// globals are host memory), copies should be kernels, and parallel dims
// should be the outer loops so that one kernel covers them.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPPREPAREGPUBUFFERS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Old dims in the new loop order: parallel dims first, each group in its
/// original order; empty when already so.
SmallVector<unsigned> parallelFirst(linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (it == utils::IteratorType::parallel ? parallel : reduction).push_back(d);
  SmallVector<unsigned> order = parallel;
  llvm::append_range(order, reduction);
  for (unsigned i = 0; i < order.size(); ++i)
    if (order[i] != i)
      return order;
  return {};
}

struct TPPrepareGpuBuffersPass
    : tp::impl::TPPrepareGpuBuffersBase<TPPrepareGpuBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(module.getContext());

    SmallVector<memref::CopyOp> copies;
    module.walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                  op.getTarget());
    }

    SmallVector<std::pair<linalg::GenericOp, SmallVector<unsigned>>> generics;
    module.walk([&](linalg::GenericOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (SmallVector<unsigned> order = parallelFirst(op); !order.empty())
        generics.push_back({op, std::move(order)});
    });
    for (auto &[op, order] : generics) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitOpError("cannot interchange its loops for the GPU");
        return signalPassFailure();
      }
    }

    // A device copy of each global use, freed at the end of its block; the
    // host-to-device copy stays a memref.copy (the runtime's allocator
    // gives memory the host can write).
    SmallVector<memref::GetGlobalOp> globals;
    module.walk([&](memref::GetGlobalOp op) { globals.push_back(op); });
    for (memref::GetGlobalOp op : globals) {
      Location loc = op.getLoc();
      auto type = cast<MemRefType>(op.getType());
      rewriter.setInsertionPointAfter(op);
      Value device = memref::AllocOp::create(
          rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
      auto copy = memref::CopyOp::create(rewriter, loc, op.getResult(), device);
      rewriter.replaceAllUsesExcept(op.getResult(), device, copy);
      rewriter.setInsertionPoint(op->getBlock()->getTerminator());
      memref::DeallocOp::create(rewriter, loc, device);
    }
  }
};

} // namespace
