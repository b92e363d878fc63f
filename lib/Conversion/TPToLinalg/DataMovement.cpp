//===- DataMovement.cpp - lower reshape, transpose, concat, slice, gather -===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "tp/Dialect/TP/IR/TPOps.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildReshape(rewriter, op.getLoc(), op.getInput(),
                                        op.getType()));
    return success();
  }
};

struct TransposeLowering : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                         type.getElementType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, op.getLoc(), op.getInput(), init, op.getPerm());
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(op, op.getType(),
                                                  op.getAxis(), op.getInputs());
    return success();
  }
};

struct SliceLowering : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, op.getType(), op.getInput(), ValueRange{}, ValueRange{},
        ValueRange{}, op.getStarts(), op.getType().getShape(), op.getSteps());
    return success();
  }
};

/// out[pre..., idx..., post...] = data[pre..., indices[idx...], post...],
/// with negative indices counted from the end as in ONNX. For
/// tp.masked_gather, `data` is the slice starting at global row `offset`;
/// ids outside it read row 0 and yield zero. For tp.gather_elements,
/// out[i...] = data[i...] with the axis coordinate indices[i...].
template <typename GatherLikeOp>
struct GatherLowering : OpRewritePattern<GatherLikeOp> {
  using OpRewritePattern<GatherLikeOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherLikeOp op,
                                PatternRewriter &rewriter) const override {
    constexpr bool masked = std::is_same_v<GatherLikeOp, MaskedGatherOp>;
    constexpr bool elements = std::is_same_v<GatherLikeOp, GatherElementsOp>;
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    auto dataType = cast<RankedTensorType>(op.getData().getType());
    auto idxType = cast<RankedTensorType>(op.getIndices().getType());
    int64_t axis = op.getAxis(), idxRank = idxType.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t i = 0; i < idxRank; ++i)
      idxExprs.push_back(getAffineDimExpr(elements ? i : axis + i, ctx));
    AffineMap idxMap = AffineMap::get(type.getRank(), 0, idxExprs, ctx);
    Value data = op.getData();
    Value offset;
    if constexpr (masked)
      offset = arith::IndexCastOp::create(
          rewriter, loc, rewriter.getIndexType(),
          tensor::ExtractOp::create(rewriter, loc, op.getOffset(),
                                    ValueRange{}));
    Value result = buildParallelGeneric(
        rewriter, loc, type, op.getIndices(), idxMap,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value idx = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
          Value size = arith::ConstantIndexOp::create(
              b, l, dataType.getDimSize(axis));
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value inRange;
          if constexpr (masked) {
            idx = arith::SubIOp::create(b, l, idx, offset);
            inRange = arith::AndIOp::create(
                b, l,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, idx,
                                      zero),
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, idx,
                                      size));
            idx = arith::SelectOp::create(b, l, inRange, idx, zero);
          } else {
            Value negative = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::slt, idx, zero);
            idx = arith::SelectOp::create(
                b, l, negative, arith::AddIOp::create(b, l, idx, size), idx);
          }
          SmallVector<Value> coords;
          for (int64_t d = 0; d < dataType.getRank(); ++d) {
            if (d != axis && elements)
              coords.push_back(linalg::IndexOp::create(b, l, d));
            else if (d < axis)
              coords.push_back(linalg::IndexOp::create(b, l, d));
            else if (d == axis)
              coords.push_back(idx);
            else
              coords.push_back(linalg::IndexOp::create(b, l, d - 1 + idxRank));
          }
          Value v = tensor::ExtractOp::create(b, l, data, coords);
          if constexpr (masked)
            v = arith::SelectOp::create(
                b, l, inRange, v,
                buildScalar(b, l, type.getElementType(), 0.0));
          return v;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A gather whose indices are a constant progression start + step * i (a
/// flip: n - 1 - i, a negative-step slice) reads its data through an
/// affine map: a plain copy the loop vectorizer sees, instead of an index
/// loaded and checked per element.
struct ProgressionGatherLowering : OpRewritePattern<GatherOp> {
  ProgressionGatherLowering(MLIRContext *ctx)
      : OpRewritePattern<GatherOp>(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    DenseIntElementsAttr indices;
    if (!matchPattern(op.getIndices(), m_Constant(&indices)) ||
        indices.getType().getRank() != 1 || indices.getNumElements() == 0)
      return rewriter.notifyMatchFailure(op, "not 1-D constant indices");
    auto dataType = cast<RankedTensorType>(op.getData().getType());
    int64_t axis = op.getAxis(), size = dataType.getDimSize(axis);
    SmallVector<int64_t> ids;
    for (const APInt &v : indices.getValues<APInt>()) {
      int64_t id = v.getSExtValue();
      ids.push_back(id < 0 ? id + size : id);
    }
    int64_t start = ids.front(), step = ids.size() > 1 ? ids[1] - ids[0] : 0;
    for (auto [i, id] : llvm::enumerate(ids))
      if (id != start + step * static_cast<int64_t>(i) || id < 0 ||
          id >= size)
        return rewriter.notifyMatchFailure(op, "not a progression");
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < dataType.getRank(); ++d)
      exprs.push_back(d == axis ? start + step * getAffineDimExpr(d, ctx)
                                : getAffineDimExpr(d, ctx));
    RankedTensorType type = op.getType();
    rewriter.replaceOp(
        op, buildParallelGeneric(
                rewriter, op.getLoc(), type, op.getData(),
                AffineMap::get(type.getRank(), 0, exprs, ctx),
                [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

/// out[i..., c] = indices[i...] == c + offset ? 1 : 0.
struct OneHotLowering : OpRewritePattern<OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OneHotOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    Value offset = tensor::ExtractOp::create(rewriter, loc, op.getOffset(),
                                             ValueRange{});
    AffineMap idxMap =
        dropDimsMap(rank, {rank - 1}, rewriter.getContext());
    Value result = buildParallelGeneric(
        rewriter, loc, type, op.getIndices(), idxMap,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value id = a[0];
          if (id.getType() != b.getI64Type())
            id = arith::ExtSIOp::create(b, l, b.getI64Type(), id);
          Value c = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, rank - 1));
          Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, id,
                                            arith::AddIOp::create(b, l, c, offset));
          return arith::SelectOp::create(
              b, l, hit, buildScalar(b, l, type.getElementType(), 1.0),
              buildScalar(b, l, type.getElementType(), 0.0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tp::populateDataMovementLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, TransposeLowering, ConcatLowering,
               SliceLowering, GatherLowering<GatherOp>,
               GatherLowering<GatherElementsOp>,
               GatherLowering<MaskedGatherOp>, OneHotLowering,
               ProgressionGatherLowering>(patterns.getContext());
}
