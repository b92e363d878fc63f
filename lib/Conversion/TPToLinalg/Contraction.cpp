//===- Contraction.cpp - lower tp.matmul to linalg ------------------------===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "tp/Dialect/TP/IR/TPOps.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// numpy matmul with broadcast batch dims as one linalg.generic: loops are
/// the result dims (batch..., M, N) plus the reduction dim K.
Value buildGenericMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         RankedTensorType resultType, Value init) {
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> res = resultType.getShape();
  unsigned rank = res.size(), numLoops = rank + 1;
  AffineExpr m = b.getAffineDimExpr(rank - 2), n = b.getAffineDimExpr(rank - 1),
             k = b.getAffineDimExpr(rank);

  // Batch dims of one operand, broadcast against the result's batch dims.
  auto operandMap = [&](Value v, AffineExpr row, AffineExpr col) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
    AffineMap batch = broadcastIndexingMap(shape.drop_back(2),
                                           res.drop_back(2), ctx);
    SmallVector<AffineExpr> exprs(batch.getResults());
    exprs.append({row, col});
    return AffineMap::get(numLoops, 0, exprs, ctx);
  };
  SmallVector<AffineExpr> outExprs;
  for (unsigned i = 0; i < rank; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  SmallVector<AffineMap> maps = {operandMap(lhs, m, k), operandMap(rhs, k, n),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);

  bool isFloat = isa<FloatType>(resultType.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, ValueRange{lhs, rhs}, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value prod, sum;
        if (isFloat) {
          prod = arith::MulFOp::create(nb, nloc, args[0], args[1]);
          sum = arith::AddFOp::create(nb, nloc, args[2], prod);
        } else {
          prod = arith::MulIOp::create(nb, nloc, args[0], args[1]);
          sum = arith::AddIOp::create(nb, nloc, args[2], prod);
        }
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return generic.getResult(0);
}

/// tp.matmul -> linalg.matmul (2-D), linalg.batch_matmul (3-D, same batch),
/// else a generic contraction. Named ops are kept where they fit because
/// later stages map them to BLAS calls.
struct MatMulLowering : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
    Value init = buildZeroFilled(rewriter, loc, type);
    Value result;
    if (lhsType.getRank() == 2 && rhsType.getRank() == 2) {
      result = linalg::MatmulOp::create(rewriter, loc, TypeRange{type},
                                        ValueRange{op.getLhs(), op.getRhs()},
                                        init)
                   .getResult(0);
    } else if (lhsType.getRank() == 3 && rhsType.getRank() == 3 &&
               lhsType.getDimSize(0) == rhsType.getDimSize(0)) {
      result = linalg::BatchMatmulOp::create(
                   rewriter, loc, TypeRange{type},
                   ValueRange{op.getLhs(), op.getRhs()}, init)
                   .getResult(0);
    } else {
      result = buildGenericMatmul(rewriter, loc, op.getLhs(), op.getRhs(),
                                  type, init);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tp::populateContractionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulLowering>(patterns.getContext());
}
