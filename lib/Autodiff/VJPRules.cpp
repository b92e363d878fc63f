//===- VJPRules.cpp - the VJP of every differentiable tp op ---------------===//
//
// Each rule builds the operands' gradients with tp ops, so that the backward
// pass is sharded and lowered like the forward pass.
//
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"

#include "tp/Autodiff/Autodiff.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tp;

#include "tp/Autodiff/VJPInterface.cpp.inc"

namespace {

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

/// The same mask scales the gradient: the op again, with the same key,
/// draws it instead of a stored one.
LogicalResult dropoutRule(Operation *op, Grad &gb, Value g,
                          SmallVectorImpl<Value> &grads) {
  auto drop = cast<DropoutOp>(op);
  grads.push_back(DropoutOp::create(
      gb.b, gb.loc, g.getType(), g, drop.getStep(), drop.getOffsets(),
      drop.getRatioAttr(), drop.getSeedAttr(), drop.getSiteAttr(),
      drop.getGlobalShapeAttr()));
  grads.append(op->getNumOperands() - 1, Value());
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

LogicalResult sinRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0);
  grads.push_back(gb.mul(g, CosOp::create(gb.b, gb.loc, x)));
  return success();
}

LogicalResult cosRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  Value x = op->getOperand(0);
  Value s = SinOp::create(gb.b, gb.loc, x);
  grads.push_back(gb.mul(g, NegOp::create(gb.b, gb.loc, s)));
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
/// Mixed precision (bf16 A and B, f32 C): the gradient products take dC in
/// bf16 and sum in f32, as the forward; each operand's gradient is summed
/// over the batch dims in f32, then rounded to the operand's type (the cast
/// VJP of an autocast operand reads the f32 value before that rounding).
LogicalResult matmulRule(Operation *op, Grad &gb, Value g,
                         SmallVectorImpl<Value> &grads) {
  Value a = op->getOperand(0), bm = op->getOperand(1);
  Type in = gb.typeOf(a).getElementType();
  Type out = gb.typeOf(g).getElementType();
  Value gIn = gb.castTo(g, in);
  Value da = MatMulOp::create(gb.b, gb.loc, gIn, gb.transposeLast2(bm), out);
  Value db = MatMulOp::create(gb.b, gb.loc, gb.transposeLast2(a), gIn, out);
  grads.push_back(
      gb.castTo(gb.unbroadcast(da, gb.typeOf(a).clone(out)), in));
  grads.push_back(
      gb.castTo(gb.unbroadcast(db, gb.typeOf(bm).clone(out)), in));
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

/// `g` before it was rounded from `wide` elements: the cast's input, or
/// the same transposes and reshapes applied to it; null if `g` was not
/// rounded so.
Value beforeRounding(Grad &gb, Value g, Type wide) {
  Operation *def = g.getDefiningOp();
  if (auto rounded = dyn_cast_or_null<CastOp>(def))
    return getElementTypeOrSelf(rounded.getInput()) == wide
               ? rounded.getInput()
               : Value();
  if (!isa_and_nonnull<TransposeOp, ReshapeOp>(def))
    return Value();
  Value in = beforeRounding(gb, def->getOperand(0), wide);
  if (!in)
    return Value();
  // Right after its input, as the rounded one was (a weight's gradient is
  // computed long before the weight's cast is differentiated, at the end):
  // a transpose next to the product it reads folds into the GEMM.
  OpBuilder::InsertionGuard guard(gb.b);
  gb.b.setInsertionPointAfterValue(in);
  return moveOnto(gb.b, def, in);
}

LogicalResult castRule(Operation *op, Grad &gb, Value g,
                       SmallVectorImpl<Value> &grads) {
  Type from = cast<RankedTensorType>(op->getOperand(0).getType()).getElementType();
  if (!isa<FloatType>(from)) {
    grads.push_back(Value());
    return success();
  }
  // The gradient of a narrowing cast (an autocast operand) that was itself
  // rounded from the source's type: the value before the rounding (moved
  // by the same transposes and reshapes, as a weight's gradient is).
  if (Value unrounded = beforeRounding(gb, g, from)) {
    grads.push_back(unrounded);
    return success();
  }
  grads.push_back(CastOp::create(gb.b, gb.loc, op->getOperand(0).getType(), g));
  return success();
}

/// y = log_softmax(x): dx = dy - softmax(x) * sum(dy) along the axis.
LogicalResult logSoftmaxRule(Operation *op, Grad &gb, Value g,
                             SmallVectorImpl<Value> &grads) {
  auto lsm = cast<LogSoftmaxOp>(op);
  auto t = gb.typeOf(g);
  SmallVector<int64_t> rowShape(t.getShape());
  rowShape[lsm.getAxis()] = 1;
  Value sum = ReduceSumOp::create(
      gb.b, gb.loc, RankedTensorType::get(rowShape, t.getElementType()), g,
      gb.b.getDenseI64ArrayAttr({int64_t(lsm.getAxis())}),
      gb.b.getBoolAttr(true));
  Value softmax = ExpOp::create(gb.b, gb.loc, lsm.getResult());
  grads.push_back(gb.sub(g, gb.mul(softmax, sum)));
  return success();
}

/// `g` where `mask` holds (or, with `invert`, where it does not), else 0.
Value select(Grad &gb, Value mask, Value g, bool invert) {
  Value zero = gb.scalar(g, 0.0);
  return WhereOp::create(gb.b, gb.loc, gb.typeOf(g), mask, invert ? zero : g,
                         invert ? g : zero);
}

LogicalResult whereRule(Operation *op, Grad &gb, Value g,
                        SmallVectorImpl<Value> &grads) {
  auto w = cast<WhereOp>(op);
  grads.push_back(Value()); // the condition
  grads.push_back(gb.unbroadcast(select(gb, w.getCondition(), g, false),
                                 w.getLhs().getType()));
  grads.push_back(gb.unbroadcast(select(gb, w.getCondition(), g, true),
                                 w.getRhs().getType()));
  return success();
}

/// Max / Min: the gradient goes to the operand that was chosen (ties to
/// the second one).
template <bool IsMax>
LogicalResult maxMinRule(Operation *op, Grad &gb, Value g,
                         SmallVectorImpl<Value> &grads) {
  Value a = op->getOperand(0), bv = op->getOperand(1);
  auto maskType =
      RankedTensorType::get(gb.typeOf(g).getShape(), gb.b.getI1Type());
  Value aGreater = GreaterOp::create(gb.b, gb.loc, maskType, a, bv);
  grads.push_back(gb.unbroadcast(select(gb, aGreater, g, !IsMax), a.getType()));
  grads.push_back(gb.unbroadcast(select(gb, aGreater, g, IsMax), bv.getType()));
  return success();
}

/// Concat: each input's gradient is its slice of the output's.
LogicalResult concatRule(Operation *op, Grad &gb, Value g,
                         SmallVectorImpl<Value> &grads) {
  auto concat = cast<ConcatOp>(op);
  int64_t axis = concat.getAxis(), offset = 0;
  auto t = gb.typeOf(g);
  for (Value in : concat.getInputs()) {
    auto inType = gb.typeOf(in);
    SmallVector<int64_t> starts(t.getRank(), 0), limits(t.getShape()),
        steps(t.getRank(), 1);
    starts[axis] = offset;
    limits[axis] = offset + inType.getDimSize(axis);
    offset = limits[axis];
    grads.push_back(
        SliceOp::create(gb.b, gb.loc, inType, g, starts, limits, steps));
  }
  return success();
}

/// Slice (unit steps): the output's gradient padded with zeros back to the
/// input's shape, one sliced dim at a time.
LogicalResult sliceRule(Operation *op, Grad &gb, Value g,
                        SmallVectorImpl<Value> &grads) {
  auto slice = cast<SliceOp>(op);
  if (llvm::any_of(slice.getSteps(), [](int64_t s) { return s != 1; }))
    return op->emitError("no VJP rule for a strided slice (steps ")
           << slice.getSteps() << ") at ONNX node '" << onnxNodeOf(op) << "'";
  auto in = gb.typeOf(slice.getInput());
  Value cur = g;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    auto t = gb.typeOf(cur);
    int64_t start = slice.getStarts()[d];
    int64_t end = start + t.getDimSize(d);
    if (start == 0 && end == in.getDimSize(d))
      continue;
    SmallVector<Value> parts;
    auto zeros = [&](int64_t n) {
      SmallVector<int64_t> shape(t.getShape());
      shape[d] = n;
      auto zt = RankedTensorType::get(shape, t.getElementType());
      parts.push_back(ConstantOp::create(
          gb.b, gb.loc,
          DenseElementsAttr::get(zt, gb.b.getFloatAttr(zt.getElementType(), 0.0))));
    };
    if (start > 0)
      zeros(start);
    parts.push_back(cur);
    if (end < in.getDimSize(d))
      zeros(in.getDimSize(d) - end);
    SmallVector<int64_t> shape(t.getShape());
    shape[d] = in.getDimSize(d);
    cur = ConcatOp::create(gb.b, gb.loc,
                           RankedTensorType::get(shape, t.getElementType()),
                           parts, d);
  }
  grads.push_back(cur);
  return success();
}

/// Gather along axis 0 (an embedding lookup): the table's gradient sums the
/// rows of dy by id, written as onehot(ids)^T dy, a matmul that tp shards
/// like the lookup (a vocab-split table gets its slice's rows, no
/// communication).
/// result = data with its `axis` replaced by the indices' dims (an
/// embedding lookup on axis 0; `x[:, 0]` on axis 1). d data sums dy over
/// the positions that read each row: with the indices' dims moved first and
/// everything else flattened, onehot(ids)^T @ dy, then the gathered axis
/// moved back into place.
LogicalResult gatherRule(Operation *op, Grad &gb, Value g,
                         SmallVectorImpl<Value> &grads) {
  auto gather = cast<GatherOp>(op);
  auto data = gb.typeOf(gather.getData());
  auto ids = cast<RankedTensorType>(gather.getIndices().getType());
  int64_t r = data.getRank(), k = ids.getRank();
  int64_t a = gather.getAxis() < 0 ? gather.getAxis() + r : gather.getAxis();
  int64_t n = ids.getNumElements(), vocab = data.getDimSize(a);
  int64_t rest = data.getNumElements() / vocab;
  Type f = data.getElementType();
  // dy is [pre, ids, post]: move the indices' dims first.
  SmallVector<int64_t> toFront;
  for (int64_t d = a; d < a + k; ++d)
    toFront.push_back(d);
  for (int64_t d = 0; d < a; ++d)
    toFront.push_back(d);
  for (int64_t d = a + k; d < a + k + r - a - 1; ++d)
    toFront.push_back(d);
  Value dy = gb.permute(g, toFront);
  SmallVector<int64_t> ohShape(ids.getShape());
  ohShape.push_back(vocab);
  // Negative indices count from the end, as in the forward gather.
  Value wrapped =
      wrapNegativeIndices(gb.b, gb.loc, gather.getIndices(), vocab);
  Value oneHot = buildOneHot(gb.b, gb.loc, RankedTensorType::get(ohShape, f),
                             wrapped);
  Value ohFlat = ReshapeOp::create(gb.b, gb.loc,
                                   RankedTensorType::get({n, vocab}, f), oneHot);
  Value gFlat =
      ReshapeOp::create(gb.b, gb.loc, RankedTensorType::get({n, rest}, f), dy);
  Value table = MatMulOp::create(gb.b, gb.loc,
                                 RankedTensorType::get({vocab, rest}, f),
                                 gb.transposeLast2(ohFlat), gFlat);
  // [vocab, pre, post] -> data's layout.
  SmallVector<int64_t> tableShape{vocab};
  SmallVector<int64_t> back;
  for (int64_t d = 0; d < r; ++d) {
    if (d != a)
      tableShape.push_back(data.getDimSize(d));
    back.push_back(d < a ? d + 1 : d == a ? 0 : d);
  }
  Value shaped = ReshapeOp::create(
      gb.b, gb.loc, RankedTensorType::get(tableShape, f), table);
  grads.push_back(gb.permute(shaped, back));
  grads.push_back(Value()); // the ids
  return success();
}

/// result = data with the axis coordinate taken from the indices: d data
/// scatters dy back, written as the one-hot of the (wrapped) indices on a
/// new last dim times dy, summed over the indices' axis, that last dim then
/// moved into the axis' place.
LogicalResult gatherElementsRule(Operation *op, Grad &gb, Value g,
                                 SmallVectorImpl<Value> &grads) {
  auto gather = cast<GatherElementsOp>(op);
  RankedTensorType data = gb.typeOf(gather.getData());
  auto ids = cast<RankedTensorType>(gather.getIndices().getType());
  int64_t rank = data.getRank();
  int64_t axis = gather.getAxis() < 0 ? gather.getAxis() + rank
                                      : gather.getAxis();
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && ids.getDimSize(d) != data.getDimSize(d))
      return op->emitError("no VJP rule for a GatherElements whose indices "
                           "are smaller than the data off the axis (dim ")
             << d << ": " << ids.getDimSize(d) << " of "
             << data.getDimSize(d) << ") at ONNX node '" << onnxNodeOf(op)
             << "'";
  int64_t n = data.getDimSize(axis);
  Type f = data.getElementType();
  // Indices in [-n, n) as [0, n): (i + n) rem n.
  auto idScalar = RankedTensorType::get({}, ids.getElementType());
  Value depth = ConstantOp::create(
      gb.b, gb.loc,
      DenseElementsAttr::get(idScalar,
                             gb.b.getIntegerAttr(ids.getElementType(), n)
                                 .getValue()));
  Value wrapped = RemOp::create(
      gb.b, gb.loc, ids, AddOp::create(gb.b, gb.loc, ids, gather.getIndices(),
                                       depth),
      depth);
  SmallVector<int64_t> ohShape(ids.getShape());
  ohShape.push_back(n);
  Value oneHot = buildOneHot(gb.b, gb.loc, RankedTensorType::get(ohShape, f),
                             wrapped);
  SmallVector<int64_t> gShape(ids.getShape());
  gShape.push_back(1);
  Value weighted = gb.mul(
      oneHot,
      ReshapeOp::create(gb.b, gb.loc, RankedTensorType::get(gShape, f), g));
  SmallVector<int64_t> kept(ohShape);
  kept[axis] = 1;
  Value summed = ReduceSumOp::create(
      gb.b, gb.loc, RankedTensorType::get(kept, f), weighted,
      gb.b.getDenseI64ArrayAttr({axis}), gb.b.getBoolAttr(true));
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank + 1));
  std::swap(perm[axis], perm[rank]);
  std::swap(kept[axis], kept[rank]);
  Value moved = TransposeOp::create(gb.b, gb.loc, RankedTensorType::get(kept, f),
                                    summed, gb.b.getDenseI64ArrayAttr(perm));
  grads.push_back(ReshapeOp::create(gb.b, gb.loc, data, moved));
  grads.push_back(Value()); // the indices
  return success();
}

/// r = a - trunc(a / b) b: dr/da = 1, dr/db = -trunc(a / b) = (r - a) / b.
LogicalResult remRule(Operation *op, Grad &gb, Value g,
                      SmallVectorImpl<Value> &grads) {
  Value a = op->getOperand(0), b = op->getOperand(1), r = op->getResult(0);
  grads.push_back(gb.unbroadcast(g, a.getType()));
  grads.push_back(
      gb.unbroadcast(gb.mul(g, gb.div(gb.sub(r, a), b)), b.getType()));
  return success();
}

} // namespace

std::string tp::onnxNodeOf(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return "";
}

Value tp::buildOneHot(OpBuilder &b, Location loc, RankedTensorType type,
                      Value labels) {
  Value zero = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                             b.getI64IntegerAttr(0).getValue()));
  return OneHotOp::create(b, loc, type, labels, zero);
}

void tp::registerVJPInterfaceExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TPDialect *) {
    attach<AddOp, addRule>(ctx);
    attach<SubOp, subRule>(ctx);
    attach<MulOp, mulRule>(ctx);
    attach<DivOp, divRule>(ctx);
    attach<PowOp, powRule>(ctx);
    attach<NegOp, negRule>(ctx);
    attach<ReluOp, reluRule>(ctx);
    attach<DropoutOp, dropoutRule>(ctx);
    attach<SqrtOp, sqrtRule>(ctx);
    attach<ErfOp, erfRule>(ctx);
    attach<TanhOp, tanhRule>(ctx);
    attach<SinOp, sinRule>(ctx);
    attach<CosOp, cosRule>(ctx);
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
    attach<LogSoftmaxOp, logSoftmaxRule>(ctx);
    attach<WhereOp, whereRule>(ctx);
    attach<MaxOp, maxMinRule<true>>(ctx);
    attach<MinOp, maxMinRule<false>>(ctx);
    attach<ConcatOp, concatRule>(ctx);
    attach<SliceOp, sliceRule>(ctx);
    attach<GatherOp, gatherRule>(ctx);
    attach<GatherElementsOp, gatherElementsRule>(ctx);
    attach<RemOp, remRule>(ctx);
    attachConvVJPRules(ctx);
  });
}
