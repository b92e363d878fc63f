//===- LinalgToLoops.cpp - the tp-linalg-to-loops pass --------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPLINALGTOLOOPS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// A linalg op on buffers becomes its scf.for nest.
struct LinalgOpToLoops : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not on buffers");
    if (failed(linalg::linalgOpToLoops(rewriter, op)))
      return rewriter.notifyMatchFailure(op, "no loop nest");
    rewriter.eraseOp(op);
    return success();
  }
};

/// A copy between strided views (a slice written into or read out of a
/// bigger buffer) as a linalg.copy, so that it becomes a loop nest too:
/// finalize-memref-to-llvm would call the C runner's memrefCopy, which
/// walks such a view an element at a time with its index arithmetic (a
/// tenth of a CNN's training step). Contiguous copies stay memcpys.
static void stridedCopiesToLinalg(Operation *root) {
  auto contiguous = [](Value v) {
    auto type = cast<MemRefType>(v.getType());
    return type.getLayout().isIdentity() ||
           memref::isStaticShapeAndContiguousRowMajor(type);
  };
  SmallVector<memref::CopyOp> copies;
  root->walk([&](memref::CopyOp copy) {
    if (!contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
}

struct TPLinalgToLoopsPass
    : tp::impl::TPLinalgToLoopsBase<TPLinalgToLoopsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    stridedCopiesToLinalg(getOperation());
    // Upstream's convert-linalg-to-loops with the same patterns, applied
    // to the linalg ops and what they create rather than to every op of
    // the function, and without region simplification: on a deep
    // training step both are linear passes over tens of thousands of ops
    // that do not change.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    RewritePatternSet patterns(ctx);
    patterns.add<LinalgOpToLoops>(ctx);
    memref::DimOp::getCanonicalizationPatterns(patterns, ctx);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
    WalkResult left = getOperation()->walk([](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return WalkResult::advance();
      op.emitError("tp-linalg-to-loops: no loop nest for this op");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
