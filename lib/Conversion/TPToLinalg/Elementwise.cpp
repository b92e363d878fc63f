//===- Elementwise.cpp - lower tp elementwise ops to linalg.generic -------===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "tp/Dialect/TP/IR/TPOps.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

using ScalarFn = Value (*)(OpBuilder &, Location, ValueRange);

template <typename FloatOp, typename IntOp>
Value floatOrInt(OpBuilder &b, Location loc, ValueRange args) {
  if (isa<FloatType>(args[0].getType()))
    return FloatOp::create(b, loc, args[0], args[1]);
  return IntOp::create(b, loc, args[0], args[1]);
}

template <typename FloatOp>
Value unaryFloat(OpBuilder &b, Location loc, ValueRange args) {
  return FloatOp::create(b, loc, args[0]);
}

Value powf(OpBuilder &b, Location loc, ValueRange args) {
  return math::PowFOp::create(b, loc, args[0], args[1]);
}

Value relu(OpBuilder &b, Location loc, ValueRange args) {
  Value zero = buildScalar(b, loc, args[0].getType(), 0.0);
  return arith::MaximumFOp::create(b, loc, args[0], zero);
}

Value sigmoid(OpBuilder &b, Location loc, ValueRange args) {
  // 1 / (1 + exp(-x))
  Value one = buildScalar(b, loc, args[0].getType(), 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, args[0]));
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

Value reciprocal(OpBuilder &b, Location loc, ValueRange args) {
  Value one = buildScalar(b, loc, args[0].getType(), 1.0);
  return arith::DivFOp::create(b, loc, one, args[0]);
}

Value select(OpBuilder &b, Location loc, ValueRange args) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

Value identity(OpBuilder &, Location, ValueRange args) { return args[0]; }

template <arith::CmpFPredicate FloatPred, arith::CmpIPredicate IntPred>
Value compare(OpBuilder &b, Location loc, ValueRange args) {
  if (isa<FloatType>(args[0].getType()))
    return arith::CmpFOp::create(b, loc, FloatPred, args[0], args[1]);
  return arith::CmpIOp::create(b, loc, IntPred, args[0], args[1]);
}

template <typename IntOp>
Value binaryInt(OpBuilder &b, Location loc, ValueRange args) {
  return IntOp::create(b, loc, args[0], args[1]);
}

Value logicalNot(OpBuilder &b, Location loc, ValueRange args) {
  Value one = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
  return arith::XOrIOp::create(b, loc, args[0], one);
}

/// Lowers an elementwise tp op (any arity, ONNX broadcasting) to one
/// linalg.generic whose body is `Fn` of the operand scalars. Integer Pow has
/// no body and stays illegal (reported by the conversion).
template <typename TPOp, ScalarFn Fn>
struct ElementwiseLowering : OpRewritePattern<TPOp> {
  using OpRewritePattern<TPOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(TPOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (std::is_same_v<TPOp, PowOp> && !isa<FloatType>(type.getElementType()))
      return rewriter.notifyMatchFailure(op, "integer Pow is not lowered");
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, op->getOperands(),
        [](OpBuilder &b, Location loc, ValueRange args) {
          return Fn(b, loc, args);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The arith op converting a scalar of type `from` to `to`, as ONNX Cast
/// does: bool (i1) is unsigned, floats to ints truncate toward zero.
Value castScalar(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromInt = dyn_cast<IntegerType>(from);
  auto toInt = dyn_cast<IntegerType>(to);
  if (fromInt && toInt) {
    if (toInt.getWidth() < fromInt.getWidth()) {
      if (toInt.getWidth() == 1) // nonzero -> true
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                     buildScalar(b, loc, from, 0));
      return arith::TruncIOp::create(b, loc, to, v);
    }
    if (fromInt.getWidth() == 1)
      return arith::ExtUIOp::create(b, loc, to, v);
    return arith::ExtSIOp::create(b, loc, to, v);
  }
  if (fromInt) // int -> float
    return fromInt.getWidth() == 1
               ? Value(arith::UIToFPOp::create(b, loc, to, v))
               : Value(arith::SIToFPOp::create(b, loc, to, v));
  if (toInt) { // float -> int
    if (toInt.getWidth() == 1)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   buildScalar(b, loc, from, 0.0));
    return arith::FPToSIOp::create(b, loc, to, v);
  }
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

struct CastLowering : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, op.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return castScalar(b, loc, args[0], type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tp::populateElementwiseLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<
      ElementwiseLowering<AddOp, floatOrInt<arith::AddFOp, arith::AddIOp>>,
      ElementwiseLowering<SubOp, floatOrInt<arith::SubFOp, arith::SubIOp>>,
      ElementwiseLowering<MulOp, floatOrInt<arith::MulFOp, arith::MulIOp>>,
      ElementwiseLowering<DivOp, floatOrInt<arith::DivFOp, arith::DivSIOp>>,
      ElementwiseLowering<MaxOp,
                          floatOrInt<arith::MaximumFOp, arith::MaxSIOp>>,
      ElementwiseLowering<MinOp,
                          floatOrInt<arith::MinimumFOp, arith::MinSIOp>>,
      ElementwiseLowering<PowOp, powf>,
      ElementwiseLowering<RemOp, floatOrInt<arith::RemFOp, arith::RemSIOp>>,
      ElementwiseLowering<ReluOp, relu>,
      ElementwiseLowering<NegOp, unaryFloat<arith::NegFOp>>,
      ElementwiseLowering<SqrtOp, unaryFloat<math::SqrtOp>>,
      ElementwiseLowering<ErfOp, unaryFloat<math::ErfOp>>,
      ElementwiseLowering<TanhOp, unaryFloat<math::TanhOp>>,
      ElementwiseLowering<SigmoidOp, sigmoid>,
      ElementwiseLowering<ExpOp, unaryFloat<math::ExpOp>>,
      ElementwiseLowering<LogOp, unaryFloat<math::LogOp>>,
      ElementwiseLowering<ReciprocalOp, reciprocal>,
      ElementwiseLowering<WhereOp, select>,
      ElementwiseLowering<ExpandOp, identity>,
      ElementwiseLowering<AbsOp, unaryFloat<math::AbsFOp>>,
      ElementwiseLowering<CeilOp, unaryFloat<math::CeilOp>>,
      ElementwiseLowering<FloorOp, unaryFloat<math::FloorOp>>,
      ElementwiseLowering<RoundOp, unaryFloat<math::RoundEvenOp>>,
      ElementwiseLowering<CosOp, unaryFloat<math::CosOp>>,
      ElementwiseLowering<SinOp, unaryFloat<math::SinOp>>,
      ElementwiseLowering<GreaterOp, compare<arith::CmpFPredicate::OGT,
                                             arith::CmpIPredicate::sgt>>,
      ElementwiseLowering<LessOp, compare<arith::CmpFPredicate::OLT,
                                          arith::CmpIPredicate::slt>>,
      ElementwiseLowering<EqualOp, compare<arith::CmpFPredicate::OEQ,
                                           arith::CmpIPredicate::eq>>,
      ElementwiseLowering<GreaterEqualOp, compare<arith::CmpFPredicate::OGE,
                                                  arith::CmpIPredicate::sge>>,
      ElementwiseLowering<LessEqualOp, compare<arith::CmpFPredicate::OLE,
                                               arith::CmpIPredicate::sle>>,
      ElementwiseLowering<AndOp, binaryInt<arith::AndIOp>>,
      ElementwiseLowering<OrOp, binaryInt<arith::OrIOp>>,
      ElementwiseLowering<XorOp, binaryInt<arith::XOrIOp>>,
      ElementwiseLowering<NotOp, logicalNot>, CastLowering>(
      patterns.getContext());
}
