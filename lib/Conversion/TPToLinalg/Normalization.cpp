//===- Normalization.cpp - lower softmax, layer norm, reductions ----------===//
//
// All of these become reductions (linalg.generic with reduction iterators)
// followed by elementwise generics that read the reduced values back through
// maps that drop the reduced dims.
//
//===----------------------------------------------------------------------===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "tp/Dialect/TP/IR/TPOps.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// softmax(x) = exp(x - max) / sum(exp(x - max)); log_softmax(x) =
/// (x - max) - log(sum(exp(x - max))). The max keeps exp from overflowing.
template <typename TPOp, bool IsLog>
struct SoftmaxLowering : OpRewritePattern<TPOp> {
  using OpRewritePattern<TPOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(TPOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    MLIRContext *ctx = rewriter.getContext();
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap reduced = dropDimsMap(rank, {axis}, ctx);

    Value x = op.getInput();
    // A row with a NaN comes out all NaN with either max (the NaN's own
    // exp makes the sum NaN); the max of the numbers vectorizes.
    Value max =
        buildReduction(rewriter, loc, x, {axis}, ReductionKind::MaxNum);
    Value shifted = buildParallelGeneric(
        rewriter, loc, type, {x, max}, {id, reduced},
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::SubFOp::create(b, l, a[0], a[1]);
        });
    Value exp = buildElementwise(
        rewriter, loc, type, shifted,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return math::ExpOp::create(b, l, a[0]);
        });
    Value sum = buildReduction(rewriter, loc, exp, {axis}, ReductionKind::Sum);
    Value result;
    if (IsLog)
      result = buildParallelGeneric(
          rewriter, loc, type, {shifted, sum}, {id, reduced},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::SubFOp::create(b, l, a[0],
                                         math::LogOp::create(b, l, a[1]));
          });
    else
      result = buildParallelGeneric(
          rewriter, loc, type, {exp, sum}, {id, reduced},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::DivFOp::create(b, l, a[0], a[1]);
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// y = (x - mean) / sqrt(var + eps) * scale + bias over dims [axis, rank).
struct LayerNormLowering : OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elemType = type.getElementType();
    int64_t rank = type.getRank(), axis = op.getAxis();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq(axis, rank));
    int64_t count = reducedCount(type.getShape(), axes);
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    AffineMap reduced = dropDimsMap(rank, axes, ctx);
    AffineMap normalized =
        dropDimsMap(rank, llvm::to_vector(llvm::seq<int64_t>(0, axis)), ctx);
    Value invCount = buildScalar(rewriter, loc, elemType, 1.0 / count);
    Value eps =
        buildScalar(rewriter, loc, elemType, op.getEpsilon().convertToDouble());

    Value x = op.getInput();
    Value sum = buildReduction(rewriter, loc, x, axes, ReductionKind::Sum);
    Value centered = buildParallelGeneric(
        rewriter, loc, type, {x, sum}, {id, reduced},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value mean = arith::MulFOp::create(b, l, a[1], invCount);
          return arith::SubFOp::create(b, l, a[0], mean);
        });
    Value squared = buildElementwise(
        rewriter, loc, type, centered,
        [](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::MulFOp::create(b, l, a[0], a[0]);
        });
    Value sumSq =
        buildReduction(rewriter, loc, squared, axes, ReductionKind::Sum);
    Value result = buildParallelGeneric(
        rewriter, loc, type, {centered, sumSq, op.getScale(), op.getBias()},
        {id, reduced, normalized, normalized},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value var = arith::MulFOp::create(b, l, a[1], invCount);
          Value inv = math::RsqrtOp::create(
              b, l, arith::AddFOp::create(b, l, var, eps));
          Value norm = arith::MulFOp::create(b, l, a[0], inv);
          return arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, norm, a[2]), a[3]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// ReduceSum / ReduceMean / ReduceMax / ReduceProd; keepdims is a reshape
/// afterwards.
template <typename TPOp, ReductionKind Kind, bool IsMean>
struct ReduceLowering : OpRewritePattern<TPOp> {
  using OpRewritePattern<TPOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(TPOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    ArrayRef<int64_t> axes = op.getAxes();
    Value result = buildReduction(rewriter, loc, op.getInput(), axes, Kind);
    if (IsMean) {
      int64_t count = reducedCount(inType.getShape(), axes);
      auto reducedType = cast<RankedTensorType>(result.getType());
      Type elemType = type.getElementType();
      result = buildElementwise(
          rewriter, loc, reducedType, result,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            if (isa<FloatType>(elemType))
              return arith::MulFOp::create(
                  b, l, a[0], buildScalar(b, l, elemType, 1.0 / count));
            return arith::DivSIOp::create(b, l, a[0],
                                          buildScalar(b, l, elemType, count));
          });
    }
    rewriter.replaceOp(op, buildReshape(rewriter, loc, result, type));
    return success();
  }
};

/// ArgMax / ArgMin: one reduction carrying (extreme, index); a strictly
/// better element replaces the pair (or an equal one too, for the last
/// index).
struct ArgReduceLowering : OpRewritePattern<ArgReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ArgReduceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    Type elem = inType.getElementType();
    int64_t rank = inType.getRank(), axis = op.getAxis();
    bool isMax = op.getKind() == "max", last = op.getSelectLastIndex();
    bool isFloat = isa<FloatType>(elem);
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        shape.push_back(inType.getDimSize(d));
    TypedAttr init;
    if (isFloat)
      init = rewriter.getFloatAttr(
          elem, APFloat::getInf(cast<FloatType>(elem).getFloatSemantics(),
                                /*Negative=*/isMax));
    else
      init = rewriter.getIntegerAttr(
          elem, isMax ? APInt::getSignedMinValue(elem.getIntOrFloatBitWidth())
                      : APInt::getSignedMaxValue(elem.getIntOrFloatBitWidth()));
    auto fill = [&](Type t, TypedAttr v) {
      return buildFilled(rewriter, loc, RankedTensorType::get(shape, t),
                         arith::ConstantOp::create(rewriter, loc, t, v));
    };
    Type i64 = rewriter.getI64Type();
    Value values = fill(elem, init);
    Value indices = fill(i64, rewriter.getI64IntegerAttr(0));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators[axis] = utils::IteratorType::reduction;
    AffineMap reduced = dropDimsMap(rank, {axis}, getContext());
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   reduced, reduced};
    auto generic = linalg::GenericOp::create(
        rewriter, loc,
        TypeRange{RankedTensorType::get(shape, elem),
                  RankedTensorType::get(shape, i64)},
        op.getInput(), ValueRange{values, indices}, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value better;
          if (isFloat)
            better = arith::CmpFOp::create(
                b, l,
                isMax ? (last ? arith::CmpFPredicate::OGE
                              : arith::CmpFPredicate::OGT)
                      : (last ? arith::CmpFPredicate::OLE
                              : arith::CmpFPredicate::OLT),
                a[0], a[1]);
          else
            better = arith::CmpIOp::create(
                b, l,
                isMax ? (last ? arith::CmpIPredicate::sge
                              : arith::CmpIPredicate::sgt)
                      : (last ? arith::CmpIPredicate::sle
                              : arith::CmpIPredicate::slt),
                a[0], a[1]);
          Value idx = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, better, a[0], a[1]),
                         arith::SelectOp::create(b, l, better, idx, a[2])});
        });
    rewriter.replaceOp(op, buildReshape(rewriter, loc, generic.getResult(1),
                                        op.getType()));
    return success();
  }
};

} // namespace

void tp::populateNormalizationLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering<SoftmaxOp, false>,
               SoftmaxLowering<LogSoftmaxOp, true>, LayerNormLowering,
               ReduceLowering<ReduceSumOp, ReductionKind::Sum, false>,
               ReduceLowering<ReduceMeanOp, ReductionKind::Sum, true>,
               ReduceLowering<ReduceMaxOp, ReductionKind::Max, false>,
               ReduceLowering<ReduceProdOp, ReductionKind::Prod, false>,
               ArgReduceLowering>(patterns.getContext());
}
