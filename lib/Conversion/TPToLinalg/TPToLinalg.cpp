//===- TPToLinalg.cpp - the tp-lower-to-linalg pass -----------------------===//
#include "tp/Conversion/TPToLinalg.h"
#include "Patterns.h"
#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPLOWERTOLINALG
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct ConstantLowering : OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

struct TPLowerToLinalgPass
    : tp::impl::TPLowerToLinalgBase<TPLowerToLinalgPass> {
  void runOnOperation() override {
    // Only the batch-summed products are rewritten (no folding elsewhere).
    GreedyRewriteConfig onlyThese;
    onlyThese.setStrictness(GreedyRewriteStrictness::ExistingOps);
    onlyThese.enableFolding(false);
    onlyThese.enableConstantCSE(false);
    SmallVector<Operation *> sums;
    getOperation()->walk([&](ReduceSumOp op) { sums.push_back(op); });
    RewritePatternSet flatten(&getContext());
    populateFlattenWeightGradientPatterns(flatten);
    (void)applyOpPatternsGreedily(sums, std::move(flatten), onlyThese);

    ConversionTarget target(getContext());
    target.addIllegalDialect<TPDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateTPToLinalgPatterns(patterns);
    // Partial conversion reports the first tp op left without a lowering
    // ("failed to legalize operation 'tp.x'") at its ONNX location.
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();

    // Folded again into the GEMM it makes: the backward pass's transpose
    // of a weight that the model transposed is read as the weight.
    SmallVector<Operation *> gemms;
    getOperation()->walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        gemms.push_back(op);
    });
    GreedyRewriteConfig andNew = onlyThese;
    andNew.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    RewritePatternSet folds(&getContext());
    populateFoldTransposeIntoMatmulPatterns(folds);
    (void)applyOpPatternsGreedily(gemms, std::move(folds), andNew);

    // A transpose of a transpose is one (or none): a filter's gradient is
    // computed as [C, M, K...] and turned to [M, C, K...], which undoes
    // the [M, N, ...] -> [N, M, ...] move of its conv's GEMM product.
    // Then a transpose of a GEMM's product (a weight's gradient computed
    // as [in, out] for a weight stored [out, in]) is the GEMM's own.
    SmallVector<Operation *> transposes;
    getOperation()->walk(
        [&](linalg::TransposeOp op) { transposes.push_back(op); });
    RewritePatternSet composed(&getContext());
    linalg::TransposeOp::getCanonicalizationPatterns(composed, &getContext());
    populateFoldTransposeOfMatmulPatterns(composed);
    GreedyRewriteConfig transposesOnly;
    transposesOnly.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    transposesOnly.enableConstantCSE(false);
    (void)applyOpPatternsGreedily(transposes, std::move(composed),
                                  transposesOnly);
  }
};

} // namespace

void tp::populateTPToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ConstantLowering>(patterns.getContext());
  populateElementwiseLoweringPatterns(patterns);
  populateContractionLoweringPatterns(patterns);
  populateNormalizationLoweringPatterns(patterns);
  populateDataMovementLoweringPatterns(patterns);
  populateConvolutionLoweringPatterns(patterns);
  populateDropoutLoweringPatterns(patterns);
}
