//===- PrepareGpuBuffers.cpp - buffers and copies for the CUDA target -----===//
//
// Before linalg becomes parallel loops and kernels: what a kernel reads
// must be device memory (allocations come from the runtime's allocator;
// globals are host memory, uploaded with gpu.memcpy), copies should be
// kernels (host code never touches a buffer), and parallel dims should be
// the outer loops so that one kernel covers them.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
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

/// A linalg op without a parallel loop (a full reduction, a 0-d op) would
/// become host loops over device memory. One more loop of one iteration,
/// over a unit dim added in front of its first output, makes it a kernel of
/// one thread.
LogicalResult addUnitParallelLoop(RewriterBase &rewriter, linalg::LinalgOp op) {
  rewriter.setInsertionPoint(op);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return failure();
    generic = *generalized;
  }
  Location loc = generic.getLoc();
  OpOperand *firstInit = generic.getDpsInitOperand(0);
  auto initType = cast<MemRefType>(firstInit->get().getType());
  SmallVector<int64_t> shape{1};
  llvm::append_range(shape, initType.getShape());
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < initType.getRank(); ++d)
    reassociation.push_back(d == 0 ? ReassociationIndices{0, 1}
                                   : ReassociationIndices{d + 1});
  Value unitFirst = memref::ExpandShapeOp::create(
      rewriter, loc, shape, firstInit->get(), reassociation);

  SmallVector<AffineMap> maps;
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand).shiftDims(1);
    if (&operand == firstInit)
      map = map.insertResult(rewriter.getAffineDimExpr(0), 0);
    maps.push_back(map);
  }
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
  llvm::append_range(iterators, generic.getIteratorTypesArray());
  SmallVector<Value> inits = generic.getDpsInits();
  inits[0] = unitFirst;
  auto widened = linalg::GenericOp::create(rewriter, loc, TypeRange(),
                                           generic.getDpsInputs(), inits,
                                           maps, iterators);
  rewriter.inlineRegionBefore(generic.getRegion(), widened.getRegion(),
                              widened.getRegion().end());
  widened.walk([](linalg::IndexOp index) { index.setDim(index.getDim() + 1); });
  rewriter.eraseOp(generic);
  return success();
}

struct TPPrepareGpuBuffersPass
    : tp::impl::TPPrepareGpuBuffersBase<TPPrepareGpuBuffersPass> {
  using Base::Base;
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

    SmallVector<linalg::LinalgOp> serial;
    module.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumParallelLoops() == 0)
        serial.push_back(op);
    });
    for (linalg::LinalgOp op : serial)
      if (failed(addUnitParallelLoop(rewriter, op))) {
        op->emitOpError("cannot be given a parallel loop for the GPU");
        return signalPassFailure();
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

    // A device copy of each global use, freed at the end of its block,
    // filled by gpu.memcpy (host code never dereferences device memory).
    SmallVector<memref::GetGlobalOp> globals;
    module.walk([&](memref::GetGlobalOp op) { globals.push_back(op); });
    for (memref::GetGlobalOp op : globals) {
      Location loc = op.getLoc();
      auto type = cast<MemRefType>(op.getType());
      rewriter.setInsertionPointAfter(op);
      Value device = memref::AllocOp::create(
          rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
      Operation *copy;
      if (hostUpload) {
        copy = memref::CopyOp::create(rewriter, loc, op.getResult(), device);
      } else {
        Type token = gpu::AsyncTokenType::get(rewriter.getContext());
        Value ready = gpu::WaitOp::create(rewriter, loc, token, ValueRange())
                          .getAsyncToken();
        auto upload = gpu::MemcpyOp::create(rewriter, loc, token,
                                            ValueRange{ready}, device,
                                            op.getResult());
        gpu::WaitOp::create(rewriter, loc, Type(),
                            ValueRange{upload.getAsyncToken()});
        copy = upload;
      }
      rewriter.replaceAllUsesExcept(op.getResult(), device, copy);
      rewriter.setInsertionPoint(op->getBlock()->getTerminator());
      memref::DeallocOp::create(rewriter, loc, device);
    }
  }
};

} // namespace
