//===- Contraction.cpp - lower tp.matmul to linalg ------------------------===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
          // Mixed precision: bf16 / f16 operands, summed in the f32 result.
          Type acc = args[2].getType();
          auto widen = [&](Value v) -> Value {
            return v.getType() == acc ? v
                                      : arith::ExtFOp::create(nb, nloc, acc, v);
          };
          prod = arith::MulFOp::create(nb, nloc, widen(args[0]), widen(args[1]));
          sum = arith::AddFOp::create(nb, nloc, args[2], prod);
        } else {
          prod = arith::MulIOp::create(nb, nloc, args[0], args[1]);
          sum = arith::AddIOp::create(nb, nloc, args[2], prod);
        }
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return generic.getResult(0);
}

/// Collapses the leading dims of `v` ([d0, ..., dk, rest...]) into one,
/// keeping the last `keep` dims.
static Value collapseLeading(OpBuilder &b, Location loc, Value v,
                             unsigned keep) {
  auto t = cast<RankedTensorType>(v.getType());
  int64_t rank = t.getRank();
  SmallVector<ReassociationIndices> groups(1);
  int64_t lead = 1;
  for (int64_t d = 0; d < rank - keep; ++d) {
    groups[0].push_back(d);
    lead *= t.getDimSize(d);
  }
  groups[0].push_back(rank - keep);
  lead *= t.getDimSize(rank - keep);
  SmallVector<int64_t> shape = {lead};
  for (int64_t d = rank - keep + 1; d < rank; ++d) {
    groups.push_back({d});
    shape.push_back(t.getDimSize(d));
  }
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, groups);
}

/// tp.matmul -> linalg.matmul / linalg.batch_matmul wherever the operands
/// can be viewed as 2-D or 3-D (a Linear on [B, S, D] is one [B*S, D] GEMM;
/// attention's [B, H, S, S] products are one batch of B*H), else a generic
/// contraction. Named ops are what the CPU back end maps to BLAS calls.
struct MatMulLowering : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
    Value result;
    if (lhsType.getRank() == 2 && rhsType.getRank() == 2) {
      result = linalg::MatmulOp::create(rewriter, loc, TypeRange{type},
                                        ValueRange{op.getLhs(), op.getRhs()},
                                        buildZeroFilled(rewriter, loc, type))
                   .getResult(0);
    } else if (rhsType.getRank() == 2) {
      // [b..., M, K] x [K, N]: one GEMM on [b*...*M, K].
      Value lhs = collapseLeading(rewriter, loc, op.getLhs(), 2);
      auto flatType = RankedTensorType::get(
          {cast<RankedTensorType>(lhs.getType()).getDimSize(0),
           type.getShape().back()},
          type.getElementType());
      Value mm = linalg::MatmulOp::create(
                     rewriter, loc, TypeRange{flatType},
                     ValueRange{lhs, op.getRhs()},
                     buildZeroFilled(rewriter, loc, flatType))
                     .getResult(0);
      result = buildReshape(rewriter, loc, mm, type);
    } else if (lhsType.getRank() == rhsType.getRank() &&
               lhsType.getShape().drop_back(2) ==
                   rhsType.getShape().drop_back(2)) {
      // Equal batch dims: one batch_matmul over their product.
      Value lhs = lhsType.getRank() == 3
                      ? op.getLhs()
                      : collapseLeading(rewriter, loc, op.getLhs(), 3);
      Value rhs = rhsType.getRank() == 3
                      ? op.getRhs()
                      : collapseLeading(rewriter, loc, op.getRhs(), 3);
      int64_t batch = cast<RankedTensorType>(lhs.getType()).getDimSize(0);
      auto flatType = RankedTensorType::get(
          {batch, type.getShape()[type.getRank() - 2], type.getShape().back()},
          type.getElementType());
      Value bmm = linalg::BatchMatmulOp::create(
                      rewriter, loc, TypeRange{flatType}, ValueRange{lhs, rhs},
                      buildZeroFilled(rewriter, loc, flatType))
                      .getResult(0);
      result = buildReshape(rewriter, loc, bmm, type);
    } else {
      result = buildGenericMatmul(rewriter, loc, op.getLhs(), op.getRhs(),
                                  type, buildZeroFilled(rewriter, loc, type));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tp::populateContractionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulLowering>(patterns.getContext());
}
