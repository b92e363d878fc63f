//===- TPOps.cpp - tp dialect operations ----------------------------------===//
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tp;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Checks that `op`'s result has `shape` and `elemType`, naming both if not.
static LogicalResult verifyResult(Operation *op, ArrayRef<int64_t> shape,
                                  Type elemType) {
  auto expected = RankedTensorType::get(shape, elemType);
  if (op->getResult(0).getType() != expected)
    return op->emitOpError("result type ")
           << op->getResult(0).getType() << " does not match " << expected
           << ", the type its operands give";
  return success();
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank
           << " (expected 0 <= axis < " << rank << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Constant, cast, where
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult CastOp::verify() {
  if (tensorType(getInput()).getShape() != getType().getShape())
    return emitOpError("changes the shape: ")
           << getInput().getType() << " -> " << getType();
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto attr = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!attr)
    return {};
  Type from = attr.getElementType(), to = getType().getElementType();
  auto toInt = dyn_cast<IntegerType>(to);
  auto toFloat = dyn_cast<FloatType>(to);
  if (isa<IntegerType>(from)) {
    if (toInt)
      return attr.mapValues(to, [&](const APInt &v) {
        return v.sextOrTrunc(toInt.getWidth());
      });
    if (toFloat)
      return attr.mapValues(to, [&](const APInt &v) {
        APFloat f(toFloat.getFloatSemantics());
        f.convertFromAPInt(v, /*isSigned=*/v.getBitWidth() > 1,
                           APFloat::rmNearestTiesToEven);
        return f.bitcastToAPInt();
      });
  } else if (isa<FloatType>(from)) {
    if (toInt)
      return attr.mapValues(to, [&](const APFloat &v) {
        APSInt i(toInt.getWidth(), /*isUnsigned=*/toInt.getWidth() == 1);
        bool exact;
        v.convertToInteger(i, APFloat::rmTowardZero, &exact);
        return APInt(i);
      });
    if (toFloat)
      return attr.mapValues(to, [&](const APFloat &v) {
        APFloat f = v;
        bool lost;
        f.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
        return f.bitcastToAPInt();
      });
  }
  return {};
}

/// Comparisons and logical ops: an i1 result of the broadcast shape.
static LogicalResult verifyBooleanResult(Operation *op, Value lhs, Value rhs,
                                         Value result) {
  std::string why;
  RankedTensorType inferred =
      inferBinaryOpType(lhs.getType(), rhs.getType(), broadcastShapes, why);
  if (!inferred)
    return op->emitOpError(why);
  return verifyResult(op, inferred.getShape(),
                      IntegerType::get(op->getContext(), 1));
}

#define TP_BOOLEAN_VERIFIER(Op)                                                \
  LogicalResult Op::verify() {                                                 \
    return verifyBooleanResult(*this, getLhs(), getRhs(), getResult());        \
  }
TP_BOOLEAN_VERIFIER(GreaterOp)
TP_BOOLEAN_VERIFIER(LessOp)
TP_BOOLEAN_VERIFIER(EqualOp)
TP_BOOLEAN_VERIFIER(GreaterEqualOp)
TP_BOOLEAN_VERIFIER(LessEqualOp)
TP_BOOLEAN_VERIFIER(AndOp)
TP_BOOLEAN_VERIFIER(OrOp)
TP_BOOLEAN_VERIFIER(XorOp)
#undef TP_BOOLEAN_VERIFIER

LogicalResult WhereOp::verify() {
  std::string why;
  auto shape = broadcastShapes(tensorType(getCondition()).getShape(),
                               tensorType(getLhs()).getShape(), why);
  if (shape)
    shape = broadcastShapes(*shape, tensorType(getRhs()).getShape(), why);
  if (!shape)
    return emitOpError(why);
  Type elemType = tensorType(getLhs()).getElementType();
  if (elemType != tensorType(getRhs()).getElementType())
    return emitOpError("branch element types differ: ")
           << getLhs().getType() << " vs " << getRhs().getType();
  return verifyResult(*this, *shape, elemType);
}

//===----------------------------------------------------------------------===//
// Contractions, normalizations, reductions
//===----------------------------------------------------------------------===//

/// Whether a contraction of `operand` elements may write `result` elements:
/// the same type, or (mixed precision) bf16 / f16 products summed in f32.
static bool isContractionResultType(Type operand, Type result) {
  return operand == result ||
         ((operand.isBF16() || operand.isF16()) && result.isF32());
}

LogicalResult MatMulOp::verify() {
  std::string why;
  RankedTensorType inferred = inferBinaryOpType(
      getLhs().getType(), getRhs().getType(), matmulShape, why);
  if (!inferred)
    return emitOpError(why);
  Type in = inferred.getElementType(), out = getType().getElementType();
  return verifyResult(*this, inferred.getShape(),
                      isContractionResultType(in, out) ? out : in);
}

static LogicalResult verifySoftmaxLike(Operation *op, int64_t axis) {
  return verifyAxis(op, axis, tensorType(op->getOperand(0)).getRank());
}
LogicalResult SoftmaxOp::verify() { return verifySoftmaxLike(*this, getAxis()); }
LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmaxLike(*this, getAxis());
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = in.getShape().drop_front(getAxis());
  for (Value v : {getScale(), getBias()}) {
    RankedTensorType t = tensorType(v);
    if (t.getShape() != normalized || t.getElementType() != in.getElementType())
      return emitOpError("scale and bias must be ")
             << RankedTensorType::get(normalized, in.getElementType())
             << " (the normalized dims of " << in << "), got " << t;
  }
  return verifyResult(*this, in.getShape(), in.getElementType());
}

static LogicalResult verifyReduce(Operation *op, ArrayRef<int64_t> axes,
                                  bool keepdims) {
  RankedTensorType in = tensorType(op->getOperand(0));
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (failed(verifyAxis(op, a, in.getRank())))
      return failure();
    if (i > 0 && axes[i - 1] >= a)
      return op->emitOpError("axes must be sorted and unique, got [")
             << axes << "]";
  }
  return verifyResult(op, reducedShape(in.getShape(), axes, keepdims),
                      in.getElementType());
}
LogicalResult ReduceSumOp::verify() {
  return verifyReduce(*this, getAxes(), getKeepdims());
}
LogicalResult ReduceMeanOp::verify() {
  return verifyReduce(*this, getAxes(), getKeepdims());
}
LogicalResult ReduceMaxOp::verify() {
  return verifyReduce(*this, getAxes(), getKeepdims());
}
LogicalResult ReduceProdOp::verify() {
  return verifyReduce(*this, getAxes(), getKeepdims());
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = tensorType(getInput()), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type: ") << in << " -> " << out;
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("changes the number of elements: ")
           << formatShape(in.getShape()) << " has " << in.getNumElements()
           << ", " << formatShape(out.getShape()) << " has "
           << out.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  // reshape(reshape(x)) -> reshape(x), which may then be the identity.
  bool changed = false;
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    changed = true;
  }
  if (getInput().getType() == getType())
    return getInput();
  if (auto attr = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return attr.reshape(getType());
  return changed ? getResult() : OpFoldResult();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType in = tensorType(getInput());
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<bool> seen(in.getRank(), false);
  bool valid = int64_t(perm.size()) == in.getRank();
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < in.getRank() && !seen[p];
    if (valid)
      seen[p] = true;
  }
  if (!valid)
    return emitOpError("perm [") << perm << "] is not a permutation of the "
                                 << in.getRank() << " dims of " << in;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.getDimSize(p));
  return verifyResult(*this, shape, in.getElementType());
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  RankedTensorType first = tensorType(getInputs().front());
  if (failed(verifyAxis(*this, getAxis(), first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : getInputs().drop_front()) {
    RankedTensorType t = tensorType(v);
    bool compatible = t.getRank() == first.getRank() &&
                      t.getElementType() == first.getElementType();
    for (int64_t d = 0; compatible && d < t.getRank(); ++d)
      compatible = d == getAxis() || t.getDimSize(d) == first.getDimSize(d);
    if (!compatible)
      return emitOpError("input ")
             << t << " does not match " << first << " outside axis "
             << getAxis();
    shape[getAxis()] += t.getDimSize(getAxis());
  }
  return verifyResult(*this, shape, first.getElementType());
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return foldConcat(*this, adaptor.getInputs());
}

LogicalResult SliceOp::verify() {
  RankedTensorType in = tensorType(getInput());
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits(),
                    steps = getSteps();
  int64_t rank = in.getRank();
  if (int64_t(starts.size()) != rank || int64_t(limits.size()) != rank ||
      int64_t(steps.size()) != rank)
    return emitOpError("needs one start, limit and step per dim of ") << in;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (steps[d] <= 0 || starts[d] < 0 || starts[d] > limits[d] ||
        limits[d] > in.getDimSize(d))
      return emitOpError("dim ")
             << d << ": start " << starts[d] << ", limit " << limits[d]
             << ", step " << steps[d] << " is not a valid slice of size "
             << in.getDimSize(d)
             << " (expected 0 <= start <= limit <= size, step > 0)";
    shape.push_back((limits[d] - starts[d] + steps[d] - 1) / steps[d]);
  }
  return verifyResult(*this, shape, in.getElementType());
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return foldSlice(*this, adaptor.getInput());
}

/// Shared by gather and masked_gather: the result is
/// data[:axis] + indices + data[axis+1:].
static LogicalResult verifyGatherShape(Operation *op, Value dataValue,
                                       Value indices, int64_t axis) {
  RankedTensorType data = tensorType(dataValue);
  if (failed(verifyAxis(op, axis, data.getRank())))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, tensorType(indices).getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  return verifyResult(op, shape, data.getElementType());
}

/// The output shape [N, M, O...] of a conv of `in` [N, C, S...] with `w`
/// [M, C/group, K...], or an error on `op`.
static FailureOr<SmallVector<int64_t>>
convOutputShape(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> w,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                ArrayRef<int64_t> pads, int64_t group) {
  if (in.size() < 3 || w.size() != in.size())
    return op->emitOpError("expects input [N, C, S...] and filter [M, C/group, "
                           "K...] of the same rank (3 or more), got ")
           << formatShape(in) << " and " << formatShape(w);
  if (group <= 0 || in[1] % group || w[0] % group || w[1] * group != in[1])
    return op->emitOpError("input channels ")
           << in[1] << " and filter " << formatShape(w) << " do not match group "
           << group;
  std::string why;
  auto spatial = windowOutputShape(in.drop_front(2), w.drop_front(2), strides,
                                   dilations, pads, why);
  if (!spatial)
    return op->emitOpError(why);
  SmallVector<int64_t> shape = {in[0], w[0]};
  llvm::append_range(shape, *spatial);
  return shape;
}

LogicalResult ConvOp::verify() {
  auto shape = convOutputShape(*this, getInput().getType().getShape(),
                               getFilter().getType().getShape(), getStrides(),
                               getDilations(), getPads(), getGroup());
  if (failed(shape))
    return failure();
  Type in = getInput().getType().getElementType();
  if (getFilter().getType().getElementType() != in)
    return emitOpError("expects input and filter of one element type, got ")
           << getInput().getType() << " and " << getFilter().getType();
  Type out = getType().getElementType();
  return verifyResult(*this, *shape,
                      isContractionResultType(in, out) ? out : in);
}

/// A conv gradient's operands and result: the conv of `in` and `w` must
/// give the output gradient's shape.
static LogicalResult verifyConvGrad(Operation *op, ArrayRef<int64_t> in,
                                    ArrayRef<int64_t> w, Value outputGrad,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> dilations,
                                    ArrayRef<int64_t> pads, int64_t group) {
  auto shape = convOutputShape(op, in, w, strides, dilations, pads, group);
  if (failed(shape))
    return failure();
  RankedTensorType g = tensorType(outputGrad);
  if (g.getShape() != ArrayRef<int64_t>(*shape))
    return op->emitOpError("output gradient ")
           << g << " does not match the conv's output " << formatShape(*shape);
  Type operand = tensorType(op->getOperand(0)).getElementType();
  if (tensorType(op->getOperand(1)).getElementType() != operand ||
      !isContractionResultType(operand,
                               tensorType(op->getResult(0)).getElementType()))
    return op->emitOpError("expects operands of one element type and a result "
                           "of that type (or f32 for bf16 / f16 operands)");
  return success();
}

LogicalResult ConvInputGradOp::verify() {
  return verifyConvGrad(*this, tensorType(getResult()).getShape(),
                        tensorType(getFilter()).getShape(), getOutputGrad(),
                        getStrides(), getDilations(), getPads(), getGroup());
}

LogicalResult ConvFilterGradOp::verify() {
  return verifyConvGrad(*this, tensorType(getInput()).getShape(),
                        tensorType(getResult()).getShape(), getOutputGrad(),
                        getStrides(), getDilations(), getPads(), getGroup());
}

LogicalResult PoolOp::verify() {
  if (getKind() != "max" && getKind() != "avg")
    return emitOpError("kind must be max or avg, got '") << getKind() << "'";
  ArrayRef<int64_t> in = getInput().getType().getShape();
  if (in.size() < 3)
    return emitOpError("expects an input [N, C, S...], got ")
           << getInput().getType();
  std::string why;
  auto spatial = windowOutputShape(in.drop_front(2), getKernel(), getStrides(),
                                   getDilations(), getPads(), why);
  if (!spatial)
    return emitOpError(why);
  SmallVector<int64_t> shape(in.take_front(2));
  llvm::append_range(shape, *spatial);
  return verifyResult(*this, shape, getInput().getType().getElementType());
}

LogicalResult ArgReduceOp::verify() {
  if (getKind() != "max" && getKind() != "min")
    return emitOpError("kind must be max or min, got '") << getKind() << "'";
  auto type = tensorType(getInput());
  if (failed(verifyAxis(*this, getAxis(), type.getRank())))
    return failure();
  return verifyResult(*this,
                      reducedShape(type.getShape(), {int64_t(getAxis())}, getKeepdims()),
                      IntegerType::get(getContext(), 64));
}

LogicalResult OneHotOp::verify() {
  ArrayRef<int64_t> ids = getIndices().getType().getShape(),
                    out = getType().getShape();
  if (out.size() != ids.size() + 1 || out.drop_back() != ids)
    return emitOpError("result shape must be the indices' shape plus a class "
                       "dim, got ")
           << getIndices().getType() << " -> " << getType();
  return success();
}

LogicalResult DropoutOp::verify() {
  RankedTensorType type = getInput().getType();
  if (int64_t(getGlobalShape().size()) != type.getRank())
    return emitOpError("global_shape has ")
           << getGlobalShape().size() << " dims, the input " << type.getRank();
  if (!getOffsets().empty() && int64_t(getOffsets().size()) != type.getRank())
    return emitOpError("takes one offset per dim (")
           << type.getRank() << "), got " << getOffsets().size();
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return emitOpError("ratio must be in [0, 1], got ") << ratio;
  return success();
}

LogicalResult MaskedGatherOp::verify() {
  return verifyGatherShape(*this, getData(), getIndices(), getAxis());
}

LogicalResult GatherOp::verify() {
  return verifyGatherShape(*this, getData(), getIndices(), getAxis());
}

LogicalResult GatherElementsOp::verify() {
  RankedTensorType data = tensorType(getData());
  RankedTensorType indices = tensorType(getIndices());
  RankedTensorType result = getType();
  int64_t rank = data.getRank(), axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is not a dim of the data "
                                << formatShape(data.getShape());
  if (indices.getRank() != rank)
    return emitOpError("indices ")
           << formatShape(indices.getShape()) << " must have the rank of data "
           << formatShape(data.getShape());
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.getDimSize(d) > data.getDimSize(d))
      return emitOpError("indices ")
             << formatShape(indices.getShape()) << " exceed data "
             << formatShape(data.getShape()) << " in dim " << d;
  if (result.getShape() != indices.getShape() ||
      result.getElementType() != data.getElementType())
    return emitOpError("result ")
           << result << " must have the indices' shape and data's element type";
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  return foldGather(*this, adaptor.getData(), adaptor.getIndices());
}

LogicalResult ExpandOp::verify() {
  RankedTensorType in = tensorType(getInput());
  std::string why;
  auto shape = broadcastShapes(in.getShape(), getType().getShape(), why);
  if (!shape || *shape != getType().getShape())
    return emitOpError("cannot broadcast ")
           << in << " to " << getType()
           << (why.empty() ? std::string() : ": " + why);
  return verifyResult(*this, getType().getShape(), in.getElementType());
}

#define GET_OP_CLASSES
#include "tp/Dialect/TP/IR/TPOps.cpp.inc"

WhereOp tp::wrapNegativeIndices(OpBuilder &b, Location loc, Value ids,
                                int64_t size) {
  auto type = cast<RankedTensorType>(ids.getType());
  Type idType = type.getElementType();
  auto scalarOf = [&](int64_t v) -> Value {
    auto t = RankedTensorType::get({}, idType);
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(t, APInt(idType.getIntOrFloatBitWidth(), v,
                                        /*isSigned=*/true)));
  };
  Value negative = LessOp::create(
      b, loc, RankedTensorType::get(type.getShape(), b.getI1Type()), ids,
      scalarOf(0));
  Value wrapped = AddOp::create(b, loc, ids, scalarOf(size));
  return WhereOp::create(b, loc, type, negative, wrapped, ids);
}

Value tp::moveOnto(OpBuilder &b, Operation *op, Value input) {
  assert((isa<TransposeOp, ReshapeOp>(op)) && "moves only data movement");
  Operation *moved = b.clone(*op);
  moved->setOperand(0, input);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  moved->getResult(0).setType(
      type.clone(cast<RankedTensorType>(input.getType()).getElementType()));
  return moved->getResult(0);
}
