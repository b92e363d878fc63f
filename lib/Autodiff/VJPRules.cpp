//===- VJPRules.cpp - the VJP of every differentiable tp op ---------------===//
//
// Each rule builds the operands' gradients with tp ops, so that the backward
// pass is sharded and lowered like the forward pass.
//
//===----------------------------------------------------------------------===//
#include "tp/Autodiff/Autodiff.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tp;

#include "tp/Autodiff/VJPInterface.cpp.inc"

namespace {

/// Small tp-op builder for gradient formulas.
struct Grad {
  OpBuilder &b;
  Location loc;

  RankedTensorType typeOf(Value v) const {
    return cast<RankedTensorType>(v.getType());
  }
  Value scalar(Value like, double v) {
    auto t = RankedTensorType::get({}, typeOf(like).getElementType());
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value mulScalar(Value x, double v) { return mul(x, scalar(x, v)); }

  /// Sums a gradient of the broadcast result shape back to `target`'s shape
  /// (the dims broadcasting added or stretched).
  Value unbroadcast(Value g, Type target) {
    auto t = cast<RankedTensorType>(target);
    ArrayRef<int64_t> res = typeOf(g).getShape(), shape = t.getShape();
    if (res == shape)
      return g;
    int64_t offset = res.size() - shape.size();
    SmallVector<int64_t> axes;
    for (int64_t i = 0; i < offset; ++i)
      axes.push_back(i);
    for (int64_t i = 0; i < int64_t(shape.size()); ++i)
      if (shape[i] == 1 && res[offset + i] != 1)
        axes.push_back(offset + i);
    SmallVector<int64_t> kept(res);
    for (int64_t a : axes)
      kept[a] = 1;
    Value summed = ReduceSumOp::create(
        b, loc, RankedTensorType::get(kept, t.getElementType()), g,
        b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
    return ReshapeOp::create(b, loc, t, summed);
  }

  /// A reduced value (keepdims or not) broadcast back to `shape`.
  Value expandBack(Value g, ArrayRef<int64_t> axes, RankedTensorType input) {
    SmallVector<int64_t> kept(input.getShape());
    for (int64_t a : axes)
      kept[a] = 1;
    Value k = ReshapeOp::create(
        b, loc, RankedTensorType::get(kept, input.getElementType()), g);
    return ExpandOp::create(b, loc, input, k);
  }

  /// Swaps the last two dims (matmul's transposed operand).
  Value transposeLast2(Value v) {
    auto t = typeOf(v);
    int64_t r = t.getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    std::swap(perm[r - 1], perm[r - 2]);
    SmallVector<int64_t> shape(t.getShape());
    std::swap(shape[r - 1], shape[r - 2]);
    return TransposeOp::create(
        b, loc, RankedTensorType::get(shape, t.getElementType()), v,
        b.getDenseI64ArrayAttr(perm));
  }
};

using Rule = LogicalResult (*)(Operation *, Grad &, Value,
                               SmallVectorImpl<Value> &);

template <typename OpTy, Rule rule>
struct VJPModel
    : public VJPOpInterface::ExternalModel<VJPModel<OpTy, rule>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, Value g,
                         SmallVectorImpl<Value> &grads) const {
    Grad gb{b, op->getLoc()};
    return rule(op, gb, g, grads);
  }
};

LogicalResult addRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  grads.push_back(gb.unbroadcast(g, op->getOperand(0).getType()));
  grads.push_back(gb.unbroadcast(g, op->getOperand(1).getType()));
  return success();
}

LogicalResult subRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  grads.push_back(gb.unbroadcast(g, op->getOperand(0).getType()));
  grads.push_back(gb.unbroadcast(NegOp::create(gb.b, gb.loc, g),
                                 op->getOperand(1).getType()));
  return success();
}

LogicalResult mulRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0), y = op->getOperand(1);
  grads.push_back(gb.unbroadcast(gb.mul(g, y), x.getType()));
  grads.push_back(gb.unbroadcast(gb.mul(g, x), y.getType()));
  return success();
}

LogicalResult divRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0), y = op->getOperand(1);
  grads.push_back(gb.unbroadcast(gb.div(g, y), x.getType()));
  // d(x/y)/dy = -x / y^2 = -(x/y) / y
  Value q = gb.div(op->getResult(0), y);
  grads.push_back(gb.unbroadcast(
      NegOp::create(gb.b, gb.loc, gb.mul(g, q)), y.getType()));
  return success();
}

/// x^c: the exponent is treated as a constant (ONNX exports use constants).
LogicalResult powRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0), c = op->getOperand(1);
  Value cm1 = gb.sub(c, gb.scalar(c, 1.0));
  Value d = gb.mul(c, PowOp::create(gb.b, gb.loc, x, cm1));
  grads.push_back(gb.unbroadcast(gb.mul(g, d), x.getType()));
  grads.push_back(Value());
  return success();
}

LogicalResult negRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  grads.push_back(NegOp::create(gb.b, gb.loc, g));
  return success();
}

LogicalResult reluRule(Operation *op, Grad &gb, Value g,
                       SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0);
  auto maskType =
      RankedTensorType::get(gb.typeOf(x).getShape(), gb.b.getI1Type());
  Value positive =
      GreaterOp::create(gb.b, gb.loc, maskType, x, gb.scalar(x, 0.0));
  grads.push_back(WhereOp::create(gb.b, gb.loc, gb.typeOf(g), positive, g,
                                  gb.scalar(g, 0.0)));
  return success();
}

LogicalResult sqrtRule(Operation *op, Grad &gb, Value g,
                       SmallVectorImpl<Value> &grads) {
  // d sqrt(x) = 1 / (2 sqrt(x))
  grads.push_back(gb.div(gb.mulScalar(g, 0.5), op->getResult(0)));
  return success();
}

LogicalResult erfRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0);
  Value e = ExpOp::create(gb.b, gb.loc, NegOp::create(gb.b, gb.loc, gb.mul(x, x)));
  grads.push_back(gb.mul(g, gb.mulScalar(e, 2.0 / std::sqrt(M_PI))));
  return success();
}

LogicalResult tanhRule(Operation *op, Grad &gb, Value g,
                       SmallVectorImpl<Value> &grads) {
  Value y = op->getResult(0);
  grads.push_back(gb.mul(g, gb.sub(gb.scalar(y, 1.0), gb.mul(y, y))));
  return success();
}

LogicalResult sigmoidRule(Operation *op, Grad &gb, Value g,
                          SmallVectorImpl<Value> &grads) {
  Value y = op->getResult(0);
  grads.push_back(gb.mul(g, gb.mul(y, gb.sub(gb.scalar(y, 1.0), y))));
  return success();
}

LogicalResult expRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  grads.push_back(gb.mul(g, op->getResult(0)));
  return success();
}

LogicalResult logRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  grads.push_back(gb.div(g, op->getOperand(0)));
  return success();
}

LogicalResult reciprocalRule(Operation *op, Grad &gb, Value g,
                             SmallVectorImpl<Value> &grads) {
  Value y = op->getResult(0);
  grads.push_back(NegOp::create(gb.b, gb.loc, gb.mul(g, gb.mul(y, y))));
  return success();
}

/// C = A B: dA = dC B^T, dB = A^T dC, each summed over broadcast batch dims.
LogicalResult matmulRule(Operation *op, Grad &gb, Value g,
                         SmallVectorImpl<Value> &grads) {
  Value a = op->getOperand(0), bm = op->getOperand(1);
  Value da = MatMulOp::create(gb.b, gb.loc, g, gb.transposeLast2(bm));
  Value db = MatMulOp::create(gb.b, gb.loc, gb.transposeLast2(a), g);
  grads.push_back(gb.unbroadcast(da, a.getType()));
  grads.push_back(gb.unbroadcast(db, bm.getType()));
  return success();
}

LogicalResult transposeRule(Operation *op, Grad &gb, Value g,
                            SmallVectorImpl<Value> &grads) {
  auto t = cast<TransposeOp>(op);
  SmallVector<int64_t> inverse(t.getPerm().size());
  for (auto [i, p] : llvm::enumerate(t.getPerm()))
    inverse[p] = i;
  grads.push_back(TransposeOp::create(gb.b, gb.loc, t.getInput().getType(), g,
                                      gb.b.getDenseI64ArrayAttr(inverse)));
  return success();
}

LogicalResult reshapeRule(Operation *op, Grad &gb, Value g,
                          SmallVectorImpl<Value> &grads) {
  grads.push_back(
      ReshapeOp::create(gb.b, gb.loc, op->getOperand(0).getType(), g));
  return success();
}

LogicalResult expandRule(Operation *op, Grad &gb, Value g,
                         SmallVectorImpl<Value> &grads) {
  grads.push_back(gb.unbroadcast(g, op->getOperand(0).getType()));
  return success();
}

template <bool Mean>
LogicalResult reduceRule(Operation *op, Grad &gb, Value g,
                         SmallVectorImpl<Value> &grads) {
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  Value back = gb.expandBack(g, axes, input);
  if (Mean)
    back = gb.mulScalar(back, 1.0 / reducedCount(input.getShape(), axes));
  grads.push_back(back);
  return success();
}

/// y = softmax(x): dx = y * (dy - sum(dy * y)) along the axis.
LogicalResult softmaxRule(Operation *op, Grad &gb, Value g,
                          SmallVectorImpl<Value> &grads) {
  auto sm = cast<SoftmaxOp>(op);
  Value y = sm.getResult();
  auto t = gb.typeOf(y);
  SmallVector<int64_t> rowShape(t.getShape());
  rowShape[sm.getAxis()] = 1;
  Value dot = ReduceSumOp::create(
      gb.b, gb.loc, RankedTensorType::get(rowShape, t.getElementType()),
      gb.mul(g, y), gb.b.getDenseI64ArrayAttr({int64_t(sm.getAxis())}),
      gb.b.getBoolAttr(true));
  grads.push_back(gb.mul(y, gb.sub(g, dot)));
  return success();
}

/// LayerNorm, with x^ = (x - mean) / sigma over the normalized dims:
/// dx = (dy g - mean(dy g) - x^ mean(dy g x^)) / sigma,
/// dscale = sum over the other dims of dy x^, dbias = sum of dy.
LogicalResult layerNormRule(Operation *op, Grad &gb, Value g,
                            SmallVectorImpl<Value> &grads) {
  auto ln = cast<LayerNormOp>(op);
  Value x = ln.getInput();
  auto t = gb.typeOf(x);
  int64_t rank = t.getRank(), axis = ln.getAxis();
  SmallVector<int64_t> normAxes = llvm::to_vector(llvm::seq(axis, rank));
  SmallVector<int64_t> outerAxes = llvm::to_vector(llvm::seq<int64_t>(0, axis));
  SmallVector<int64_t> rowShape(t.getShape());
  for (int64_t a : normAxes)
    rowShape[a] = 1;
  auto rowType = RankedTensorType::get(rowShape, t.getElementType());
  auto mean = [&](Value v) -> Value {
    return ReduceMeanOp::create(gb.b, gb.loc, rowType, v,
                                gb.b.getDenseI64ArrayAttr(normAxes),
                                gb.b.getBoolAttr(true));
  };
  Value centered = gb.sub(x, mean(x));
  Value var = mean(gb.mul(centered, centered));
  Value invStd = ReciprocalOp::create(
      gb.b, gb.loc,
      SqrtOp::create(gb.b, gb.loc,
                     gb.add(var, gb.scalar(var, ln.getEpsilon().convertToDouble()))));
  Value xhat = gb.mul(centered, invStd);
  Value gs = gb.mul(g, ln.getScale());
  Value dx = gb.mul(gb.sub(gb.sub(gs, mean(gs)), gb.mul(xhat, mean(gb.mul(gs, xhat)))),
                    invStd);
  auto paramType = cast<RankedTensorType>(ln.getScale().getType());
  auto sumOuter = [&](Value v) -> Value {
    if (outerAxes.empty())
      return v;
    return ReduceSumOp::create(gb.b, gb.loc, paramType, v,
                               gb.b.getDenseI64ArrayAttr(outerAxes),
                               gb.b.getBoolAttr(false));
  };
  grads.push_back(dx);
  grads.push_back(sumOuter(gb.mul(g, xhat)));
  grads.push_back(sumOuter(g));
  return success();
}

LogicalResult castRule(Operation *op, Grad &gb, Value g,
                       SmallVectorImpl<Value> &grads) {
  Type from = cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  if (!isa<FloatType>(from)) {
    grads.push_back(Value());
    return success();
  }
  grads.push_back(CastOp::create(gb.b, gb.loc, op->getOperand(0).getType(), g));
  return success();
}

template <typename OpTy, Rule rule>
void attach(MLIRContext *ctx) {
  OpTy::template attachInterface<VJPModel<OpTy, rule>>(*ctx);
}

} // namespace

void tp::registerVJPInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TPDialect *) {
    attach<AddOp, addRule>(ctx);
    attach<SubOp, subRule>(ctx);
    attach<MulOp, mulRule>(ctx);
    attach<DivOp, divRule>(ctx);
    attach<PowOp, powRule>(ctx);
    attach<NegOp, negRule>(ctx);
    attach<ReluOp, reluRule>(ctx);
    attach<SqrtOp, sqrtRule>(ctx);
    attach<ErfOp, erfRule>(ctx);
    attach<TanhOp, tanhRule>(ctx);
    attach<SigmoidOp, sigmoidRule>(ctx);
    attach<ExpOp, expRule>(ctx);
    attach<LogOp, logRule>(ctx);
    attach<ReciprocalOp, reciprocalRule>(ctx);
    attach<MatMulOp, matmulRule>(ctx);
    attach<TransposeOp, transposeRule>(ctx);
    attach<ReshapeOp, reshapeRule>(ctx);
    attach<ExpandOp, expandRule>(ctx);
    attach<ReduceSumOp, reduceRule<false>>(ctx);
    attach<ReduceMeanOp, reduceRule<true>>(ctx);
    attach<SoftmaxOp, softmaxRule>(ctx);
    attach<LayerNormOp, layerNormRule>(ctx);
    attach<CastOp, castRule>(ctx);
  });
}
