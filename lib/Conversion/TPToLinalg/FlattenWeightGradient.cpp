//===- FlattenWeightGradient.cpp - one GEMM for a batch-summed product ----===//
//
// The gradient of a Linear's weight on [B, S, K] activations is
// sum_b x_b^T dy_b: tp-autodiff writes it as a batched matmul of
// transpose(x) and dy, reduced over the batch (it runs before the plan, so
// it cannot know that flattening B and S would not split a sharded dim).
// After partitioning every shape is local, and the sum of B products is
// one product over B*S: x flattened to [B*S, K], transposed (a BLAS flag),
// times dy flattened to [B*S, N]. One GEMM with a B times longer inner
// dim, and no [B, K, N] partial products to write and sum.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include "tp/Dialect/TP/IR/TPOps.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

/// reduce_sum(matmul(transpose(a), g)) over all the batch dims, where the
/// transpose swaps a's last two dims and a and g have the same batch dims.
struct FlattenWeightGradient : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumOp sum,
                                PatternRewriter &rewriter) const override {
    auto mm = sum.getInput().getDefiningOp<MatMulOp>();
    if (!mm || !mm->hasOneUse())
      return failure();
    auto transpose = mm.getLhs().getDefiningOp<TransposeOp>();
    if (!transpose)
      return failure();
    Value a = transpose.getInput(), g = mm.getRhs();
    auto aType = cast<RankedTensorType>(a.getType());
    auto gType = cast<RankedTensorType>(g.getType());
    int64_t rank = aType.getRank();
    if (rank < 3 || gType.getRank() != rank ||
        aType.getShape().drop_back(2) != gType.getShape().drop_back(2))
      return failure();
    if (transpose.getPerm() != ArrayRef(swapLastTwo(rank)) ||
        sum.getAxes() != ArrayRef<int64_t>(llvm::to_vector(
                             llvm::seq<int64_t>(0, rank - 2))))
      return failure();

    Location loc = sum.getLoc();
    Type element = aType.getElementType();
    int64_t rows = aType.getNumElements() / aType.getShape().back();
    int64_t m = aType.getShape().back(), n = gType.getShape().back();
    Value a2 = ReshapeOp::create(rewriter, loc, tensorOf({rows, m}, element), a);
    Value g2 = ReshapeOp::create(rewriter, loc, tensorOf({rows, n}, element), g);
    Value at = TransposeOp::create(rewriter, loc, tensorOf({m, rows}, element),
                                   a2, rewriter.getDenseI64ArrayAttr({1, 0}));
    // The product's own element type (f32 for bf16 operands).
    Value product = MatMulOp::create(
        rewriter, loc, tensorOf({m, n}, mm.getType().getElementType()), at, g2);
    rewriter.replaceOpWithNewOp<ReshapeOp>(sum, sum.getType(), product);
    rewriter.eraseOp(mm);
    if (transpose->use_empty())
      rewriter.eraseOp(transpose);
    return success();
  }
};

} // namespace

void tp::populateFlattenWeightGradientPatterns(RewritePatternSet &patterns) {
  patterns.add<FlattenWeightGradient>(patterns.getContext());
}
