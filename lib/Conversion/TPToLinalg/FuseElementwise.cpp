//===- FuseElementwise.cpp - the tp-fuse-elementwise pass ------------------===//
//
// The pattern set of upstream's linalg-fuse-elementwise-ops, with a control
// function that keeps named GEMMs (matmul, batch_matmul) out of every fusion,
// so that tp-lower-matmul-to-blas still finds them after bufferization.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFUSEELEMENTWISE
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

bool isGemm(Operation *op) {
  return isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(op);
}

struct TPFuseElementwisePass
    : tp::impl::TPFuseElementwiseBase<TPFuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() && !isGemm(producer) &&
             !isGemm(fused->getOwner());
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    linalg::FillOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    // The function is one block, and a linalg body has one block: region
    // simplification finds nothing, and walked the whole function on every
    // sweep (a quarter of the pass on a 96-layer training step).
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
  }
};

} // namespace
