//===- Elementwise.cpp - lower tp elementwise ops to linalg.generic -------===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "tp/Dialect/TP/IR/TPOps.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Lowers a broadcasting binary tp op to a linalg.generic whose body is
/// FloatOp for float element types and IntOp for integers.
template <typename TPOp, typename FloatOp, typename IntOp>
struct BinaryLowering : OpRewritePattern<TPOp> {
  using OpRewritePattern<TPOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(TPOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    bool isFloat = isa<FloatType>(type.getElementType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, {op.getLhs(), op.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          if (isFloat)
            return FloatOp::create(b, loc, args[0], args[1]);
          return IntOp::create(b, loc, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ReluLowering : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReluOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, op.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Type elemType = args[0].getType();
          Value zero = arith::ConstantOp::create(b, loc, elemType,
                                                 b.getZeroAttr(elemType));
          return arith::MaximumFOp::create(b, loc, args[0], zero);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tp::populateElementwiseLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<BinaryLowering<AddOp, arith::AddFOp, arith::AddIOp>,
               BinaryLowering<SubOp, arith::SubFOp, arith::SubIOp>,
               BinaryLowering<MulOp, arith::MulFOp, arith::MulIOp>,
               BinaryLowering<DivOp, arith::DivFOp, arith::DivSIOp>,
               ReluLowering>(patterns.getContext());
}
