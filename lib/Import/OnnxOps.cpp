//===- OnnxOps.cpp - ONNX op types -> tp ops ------------------------------===//
//
// One handler per ONNX op type (default domain, opsets 1-17). Handlers turn
// ONNX attributes and constant inputs into static tp ops; opset differences
// (axes as attribute vs. input, Softmax's flattening before opset 13) are
// resolved here so that tp ops have one meaning.
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tp;

namespace {


//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Before opset 7, binary ops broadcast only with `broadcast = 1`, B
/// aligned at A's dim `axis` (trailing-aligned without it). Returns B
/// reshaped so that numpy broadcasting (opset 7+) means the same.
FailureOr<Value> legacyBroadcast(NodeImporter &n, Value a, Value b) {
  if (n.opset >= 7 || !n.intAttr("broadcast", 0) || !n.attr("axis"))
    return b;
  int64_t rankA = n.typeOf(a).getRank();
  ArrayRef<int64_t> shapeB = n.typeOf(b).getShape();
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), rankA);
  if (failed(axis))
    return failure();
  if (*axis + int64_t(shapeB.size()) > rankA)
    return n.error() << "B " << n.typeOf(b) << " does not fit A "
                     << n.typeOf(a) << " at axis " << *axis;
  SmallVector<int64_t> shape(*axis, 1);
  llvm::append_range(shape, shapeB);
  shape.resize(rankA, 1);
  return reshape(n, b, shape);
}

template <typename OpTy> LogicalResult binary(NodeImporter &n) {
  auto lhs = n.requiredInput(0, "A");
  auto rhs = n.requiredInput(1, "B");
  if (failed(lhs) || failed(rhs))
    return failure();
  auto b = legacyBroadcast(n, *lhs, *rhs);
  if (failed(b))
    return failure();
  return emit(n, n.createInferred<OpTy>(*lhs, *b));
}

/// Max / Min take any number of inputs.
template <typename OpTy> LogicalResult variadic(NodeImporter &n) {
  if (n.inputs.empty())
    return n.error() << "needs at least one input";
  Value acc = n.inputs[0];
  for (Value v : ArrayRef(n.inputs).drop_front()) {
    auto r = n.createInferred<OpTy>(acc, v);
    if (failed(r))
      return failure();
    acc = *r;
  }
  n.outputs.push_back(acc);
  return success();
}

LogicalResult pow(NodeImporter &n) {
  auto base = n.requiredInput(0, "X");
  auto exp = n.requiredInput(1, "Y");
  if (failed(base) || failed(exp))
    return failure();
  // ONNX lets the exponent have another type; tp.pow wants the base's, a
  // float one. An integer base is raised in f64 and truncated back, as
  // numpy's power and astype do.
  Type baseElem = n.typeOf(*base).getElementType();
  bool integer = !isa<FloatType>(baseElem);
  Type powElem = integer ? Type(n.b.getF64Type()) : baseElem;
  auto asPowType = [&](Value v) -> FailureOr<Value> {
    if (n.typeOf(v).getElementType() == powElem)
      return v;
    return n.create<CastOp>(
        RankedTensorType::get(n.typeOf(v).getShape(), powElem), v);
  };
  auto b = asPowType(*base);
  auto e = asPowType(*exp);
  if (failed(b) || failed(e))
    return failure();
  auto legacy = legacyBroadcast(n, *b, *e);
  if (failed(legacy))
    return failure();
  auto y = n.createInferred<PowOp>(*b, *legacy);
  if (failed(y) || !integer)
    return emit(n, y);
  return emit(n, n.create<CastOp>(
                     RankedTensorType::get(n.typeOf(*y).getShape(), baseElem),
                     *y));
}

template <typename OpTy> LogicalResult unary(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  return emit(n, n.create<OpTy>(n.typeOf(*x), *x));
}

LogicalResult identity(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  n.outputs.push_back(*x);
  return success();
}

/// Inference-mode Dropout is the identity; its mask is all true.
LogicalResult dropout(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  if (Value training = n.input(2)) {
    DenseIntElementsAttr mode;
    if (!matchPattern(training, m_Constant(&mode)) ||
        !mode.getSplatValue<APInt>().isZero())
      return n.error() << "training-mode Dropout is not supported; export the "
                          "model in eval mode";
  }
  n.outputs.push_back(*x);
  if (n.outputUsed(1)) {
    auto maskType =
        RankedTensorType::get(n.typeOf(*x).getShape(), n.b.getI1Type());
    n.outputs.push_back(n.constant(DenseElementsAttr::get(maskType, true)));
  }
  return success();
}

LogicalResult cast(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  int64_t to = n.intAttr("to", 0);
  Type elemType = convertOnnxElementType(to, n.b.getContext());
  if (!elemType)
    return n.error() << "cast to unsupported type " << onnxElementTypeName(to);
  return emit(n, n.create<CastOp>(
                     RankedTensorType::get(n.typeOf(*x).getShape(), elemType),
                     *x));
}

/// Comparisons and logical ops: a boolean tensor of the broadcast shape.
template <typename OpTy> LogicalResult boolean(NodeImporter &n) {
  auto a = n.requiredInput(0, "A");
  auto b = n.requiredInput(1, "B");
  if (failed(a) || failed(b))
    return failure();
  std::string why;
  RankedTensorType type = inferBinaryOpType(
      (*a).getType(), (*b).getType(), broadcastShapes, why);
  if (!type)
    return n.error() << "'" << OpTy::getOperationName() << "' op " << why;
  return emit(n, n.create<OpTy>(
                     RankedTensorType::get(type.getShape(), n.b.getI1Type()),
                     *a, *b));
}

LogicalResult where(NodeImporter &n) {
  auto c = n.requiredInput(0, "condition");
  auto x = n.requiredInput(1, "X");
  auto y = n.requiredInput(2, "Y");
  if (failed(c) || failed(x) || failed(y))
    return failure();
  std::string why;
  auto shape = broadcastShapes(n.typeOf(*c).getShape(),
                               n.typeOf(*x).getShape(), why);
  if (shape)
    shape = broadcastShapes(*shape, n.typeOf(*y).getShape(), why);
  if (!shape)
    return n.error() << why;
  return emit(n, n.create<WhereOp>(withShape(n.typeOf(*x), *shape), *c, *x,
                                   *y));
}

/// Mod: fmod = 1 is C's remainder (tp.rem, the dividend's sign); fmod = 0,
/// for integers, takes the divisor's sign: r + b where r != 0 and the
/// signs of r and b differ.
LogicalResult mod(NodeImporter &n) {
  auto a = n.requiredInput(0, "A");
  auto b = n.requiredInput(1, "B");
  if (failed(a) || failed(b))
    return failure();
  bool fmod = n.intAttr("fmod", 0) != 0;
  Type element = n.typeOf(*a).getElementType();
  if (!fmod && !element.isSignlessInteger())
    return n.error() << "fmod = 0 is for integers; a floating-point Mod "
                        "needs fmod = 1";
  auto r = n.createInferred<RemOp>(*a, *b);
  if (failed(r) || fmod)
    return emit(n, r);
  RankedTensorType type = n.typeOf(*r);
  auto bools = [&](Value v) {
    return RankedTensorType::get(n.typeOf(v).getShape(), n.b.getI1Type());
  };
  Value zero = n.constant(
      DenseElementsAttr::get(withShape(type, {}), n.b.getZeroAttr(element)));
  auto rNegative = n.create<LessOp>(bools(*r), *r, zero);
  auto bNegative = n.create<LessOp>(bools(*b), *b, zero);
  auto isZero = n.create<EqualOp>(bools(*r), *r, zero);
  if (failed(rNegative) || failed(bNegative) || failed(isZero))
    return failure();
  auto signsDiffer = n.create<XorOp>(bools(*r), *rNegative, *bNegative);
  auto nonZero = n.create<NotOp>(bools(*r), *isZero);
  if (failed(signsDiffer) || failed(nonZero))
    return failure();
  auto shift = n.create<AndOp>(bools(*r), *signsDiffer, *nonZero);
  auto shifted = n.createInferred<AddOp>(*r, *b);
  if (failed(shift) || failed(shifted))
    return failure();
  return emit(n, n.create<WhereOp>(type, *shift, *shifted, *r));
}

/// Trilu: the kept triangle of the last two dims is col - row >= k (upper)
/// or <= k (lower): a constant mask when k is (or is absent), a comparison
/// of the constant col - row with k otherwise; then a tp.where with zeros.
LogicalResult trilu(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  if (type.getRank() < 2)
    return n.error() << "the input " << formatShape(type.getShape())
                     << " has fewer than 2 dims";
  bool upper = n.intAttr("upper", 1) != 0;
  int64_t rows = type.getDimSize(type.getRank() - 2);
  int64_t cols = type.getDimSize(type.getRank() - 1);
  auto maskType = RankedTensorType::get({rows, cols}, n.b.getI1Type());
  Value kIn = n.input(1);
  std::optional<int64_t> k = 0;
  if (kIn) {
    if (n.typeOf(kIn).getNumElements() != 1)
      return n.error() << "k must be one integer";
    DenseIntElementsAttr known;
    k = matchPattern(kIn, m_Constant(&known))
            ? std::optional<int64_t>((*known.begin()).getSExtValue())
            : std::nullopt;
  }
  SmallVector<bool> keep;
  SmallVector<int64_t> offsets;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      offsets.push_back(j - i);
      if (k)
        keep.push_back(upper ? j - i >= *k : j - i <= *k);
    }
  Value mask;
  if (k) {
    mask = n.constant(DenseElementsAttr::get(maskType, keep));
  } else {
    RankedTensorType kType = n.typeOf(kIn);
    Value offset = n.constant(DenseElementsAttr::get(
        RankedTensorType::get({rows, cols}, kType.getElementType()),
        ArrayRef<int64_t>(offsets)));
    auto scalarK = reshape(n, kIn, {});
    if (failed(scalarK))
      return failure();
    auto cmp = upper ? n.create<GreaterEqualOp>(maskType, offset, *scalarK)
                     : n.create<LessEqualOp>(maskType, offset, *scalarK);
    if (failed(cmp))
      return failure();
    mask = *cmp;
  }
  Value zero = n.constant(DenseElementsAttr::get(
      withShape(type, {}), n.b.getZeroAttr(type.getElementType())));
  return emit(n, n.create<WhereOp>(type, mask, *x, zero));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// numpy matmul; rank-1 operands are promoted to rank 2 and the added dim
/// removed again, as numpy does.
LogicalResult matmul(NodeImporter &n) {
  auto a = n.requiredInput(0, "A");
  auto b = n.requiredInput(1, "B");
  if (failed(a) || failed(b))
    return failure();
  Value lhs = *a, rhs = *b;
  bool lhsVec = n.typeOf(lhs).getRank() == 1, rhsVec = n.typeOf(rhs).getRank() == 1;
  if (lhsVec) {
    auto r = reshape(n, lhs, {1, n.typeOf(lhs).getDimSize(0)});
    if (failed(r))
      return failure();
    lhs = *r;
  }
  if (rhsVec) {
    auto r = reshape(n, rhs, {n.typeOf(rhs).getDimSize(0), 1});
    if (failed(r))
      return failure();
    rhs = *r;
  }
  auto y = n.createInferred<MatMulOp>(lhs, rhs);
  if (failed(y) || (!lhsVec && !rhsVec))
    return emit(n, y);
  SmallVector<int64_t> shape(n.typeOf(*y).getShape());
  if (rhsVec)
    shape.erase(shape.end() - 1);
  if (lhsVec)
    shape.erase(shape.end() - (rhsVec ? 1 : 2));
  return emit(n, reshape(n, *y, shape));
}

FailureOr<Value> transpose2d(NodeImporter &n, Value v) {
  auto t = n.typeOf(v);
  if (t.getRank() != 2) {
    n.error() << "Gemm operands must be 2-D, got " << t;
    return failure();
  }
  return n.create<TransposeOp>(withShape(t, {t.getDimSize(1), t.getDimSize(0)}),
                               v, n.b.getDenseI64ArrayAttr({1, 0}));
}

FailureOr<Value> scale(NodeImporter &n, Value v, float factor) {
  if (factor == 1.0f)
    return v;
  auto scalarType = RankedTensorType::get({}, n.typeOf(v).getElementType());
  Value s = n.constant(DenseElementsAttr::get(
      scalarType, n.b.getFloatAttr(scalarType.getElementType(), factor)));
  return n.createInferred<MulOp>(v, s);
}

/// Y = alpha * op(A) * op(B) + beta * C: transposes, a matmul and an add, so
/// that the plan and the sharding rules see the Linear layer's weight.
LogicalResult gemm(NodeImporter &n) {
  auto a = n.requiredInput(0, "A");
  auto b = n.requiredInput(1, "B");
  if (failed(a) || failed(b))
    return failure();
  Value lhs = *a, rhs = *b;
  if (n.intAttr("transA", 0)) {
    auto t = transpose2d(n, lhs);
    if (failed(t))
      return failure();
    lhs = *t;
  }
  if (n.intAttr("transB", 0)) {
    auto t = transpose2d(n, rhs);
    if (failed(t))
      return failure();
    rhs = *t;
  }
  auto y = n.createInferred<MatMulOp>(lhs, rhs);
  if (succeeded(y))
    y = scale(n, *y, n.floatAttr("alpha", 1.0f));
  if (failed(y))
    return failure();
  if (Value c = n.input(2)) {
    auto bias = scale(n, c, n.floatAttr("beta", 1.0f));
    if (failed(bias))
      return failure();
    y = n.createInferred<AddOp>(*y, *bias);
  }
  return emit(n, y);
}

//===----------------------------------------------------------------------===//
// Normalizations and reductions
//===----------------------------------------------------------------------===//

template <typename OpTy> LogicalResult softmax(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  int64_t rank = type.getRank();
  auto axis = n.normalizeAxis(n.intAttr("axis", n.opset < 13 ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  if (n.opset >= 13 || *axis == rank - 1)
    return emit(n, n.create<OpTy>(type, *x, *axis));
  // Before opset 13 the input is flattened to 2-D at `axis`.
  auto flat = flattenAt(n, *x, *axis);
  if (failed(flat))
    return failure();
  auto y = n.create<OpTy>(n.typeOf(*flat), *flat, int64_t(1));
  if (failed(y))
    return failure();
  return emit(n, reshape(n, *y, type.getShape()));
}

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere: the
/// argmax one-hot encoded (tp.one_hot puts the classes last; a transpose
/// puts them back). Before opset 13 the input is flattened to 2-D at the
/// axis, as Softmax's.
LogicalResult hardmax(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  auto axis = n.normalizeAxis(n.intAttr("axis", n.opset < 13 ? 1 : -1),
                              type.getRank());
  if (failed(axis))
    return failure();
  Value in = *x;
  int64_t a = *axis;
  if (n.opset < 13) {
    auto flat = flattenAt(n, in, a);
    if (failed(flat))
      return failure();
    in = *flat;
    a = 1;
  }
  RankedTensorType inType = n.typeOf(in);
  auto argmax = n.create<ArgReduceOp>(
      RankedTensorType::get(reducedShape(inType.getShape(), {a}, false),
                            n.b.getI64Type()),
      in, n.b.getStringAttr("max"), n.b.getI64IntegerAttr(a),
      n.b.getBoolAttr(false), n.b.getBoolAttr(false));
  if (failed(argmax))
    return failure();
  auto hot = oneHotLast(n, *argmax, inType.getDimSize(a),
                        inType.getElementType());
  if (failed(hot))
    return failure();
  auto y = moveDim(n, *hot, inType.getRank() - 1, a);
  if (failed(y) || n.opset >= 13)
    return emit(n, y);
  return emit(n, reshape(n, *y, type.getShape()));
}

LogicalResult layerNorm(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  auto scaleIn = n.requiredInput(1, "Scale");
  if (failed(x) || failed(scaleIn))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  auto axis = n.normalizeAxis(n.intAttr("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  Value bias = n.input(2);
  if (!bias) {
    auto biasType = withShape(type, type.getShape().drop_front(*axis));
    bias = n.constant(DenseElementsAttr::get(
        biasType, n.b.getZeroAttr(type.getElementType())));
  }
  float epsilon = n.floatAttr("epsilon", 1e-5f);
  if (failed(emit(n, n.create<LayerNormOp>(type, *x, *scaleIn, bias,
                                           n.b.getI64IntegerAttr(*axis),
                                           n.b.getF32FloatAttr(epsilon)))))
    return failure();
  if (n.numOutputs() < 2)
    return success();
  // Mean and InvStdDev (training's saved statistics), over the normalized
  // dims kept as 1s: from tp ops, as the layer norm's own lowering does.
  auto axes = llvm::to_vector(llvm::seq<int64_t>(*axis, type.getRank()));
  auto mean = reduceOver<ReduceMeanOp>(n, *x, axes, /*keepdims=*/true);
  if (failed(mean))
    return failure();
  auto centered = n.createInferred<SubOp>(*x, *mean);
  if (failed(centered))
    return failure();
  auto squared = n.createInferred<MulOp>(*centered, *centered);
  if (failed(squared))
    return failure();
  auto variance = reduceOver<ReduceMeanOp>(n, *squared, axes, true);
  if (failed(variance))
    return failure();
  Value eps = n.constant(DenseElementsAttr::get(
      withShape(type, {}),
      n.b.getFloatAttr(type.getElementType(), double(epsilon))));
  auto shifted = n.createInferred<AddOp>(*variance, eps);
  if (failed(shifted))
    return failure();
  RankedTensorType statType = n.typeOf(*mean);
  auto stdDev = n.create<SqrtOp>(statType, *shifted);
  if (failed(stdDev))
    return failure();
  n.outputs.push_back(*mean);
  return emit(n, n.create<ReciprocalOp>(statType, *stdDev));
}

using ValueFn = FailureOr<Value> (*)(NodeImporter &, Value);
FailureOr<Value> same(NodeImporter &, Value v) { return v; }

/// Reduce ops: axes from the attribute (or, for ReduceSum since opset 13,
/// from the second input); no axes means all (unless noop_with_empty_axes).
/// `Pre` and `Post` map the input and the reduced value (ReduceL2 is
/// sqrt(ReduceSum(x * x))).
template <typename OpTy, int AxesInputSince, ValueFn Pre = same,
          ValueFn Post = same>
LogicalResult reduce(NodeImporter &n) {
  auto in = n.requiredInput(0, "data");
  if (failed(in))
    return failure();
  auto x = Pre(n, *in);
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  SmallVector<int64_t> axes;
  if (n.opset >= AxesInputSince) {
    if (Value axesIn = n.input(1)) {
      auto a = n.constantInts(axesIn, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
  } else if (auto a = n.intsAttr("axes")) {
    axes = *a;
  }
  if (axes.empty()) {
    if (n.intAttr("noop_with_empty_axes", 0)) {
      n.outputs.push_back(*x);
      return success();
    }
    axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  }
  for (int64_t &a : axes) {
    auto norm = n.normalizeAxis(a, type.getRank(), "reduction axis");
    if (failed(norm))
      return failure();
    a = *norm;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  auto reduced =
      reduceOver<OpTy>(n, *x, axes, n.intAttr("keepdims", 1) != 0);
  if (failed(reduced))
    return failure();
  return emit(n, Post(n, *reduced));
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

LogicalResult reshapeOp(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  auto target = n.constantInts(n.input(1), "shape");
  if (failed(target))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  bool allowZero = n.intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t known = 1, inferIndex = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !allowZero) {
      if (int64_t(i) >= type.getRank())
        return n.error() << "shape entry " << i
                         << " is 0 (copy) but the input " << type
                         << " has no dim " << i;
      d = type.getDimSize(i);
    }
    if (d == -1) {
      if (inferIndex >= 0)
        return n.error() << "shape [" << *target << "] has more than one -1";
      inferIndex = i;
    } else if (d < 0) {
      return n.error() << "shape [" << *target << "] has a negative entry";
    } else if (d > 0 && known > (int64_t(1) << 62) / d) {
      // The product must equal the input's count, far below this.
      return n.error() << "shape [" << *target << "] has more elements than "
                       << "the input " << type;
    } else {
      known *= d;
    }
    shape.push_back(d);
  }
  int64_t total = type.getNumElements();
  if (inferIndex >= 0) {
    if (known == 0 || total % known)
      return n.error() << "cannot reshape " << formatShape(type.getShape())
                       << " (" << total << " elements) to ["
                       << *target << "]";
    shape[inferIndex] = total / known;
  }
  int64_t product = 1;
  for (int64_t d : shape)
    product *= d;
  if (product != total)
    return n.error() << "cannot reshape " << formatShape(type.getShape())
                     << " (" << total << " elements) to "
                     << formatShape(shape) << " (" << product << " elements)";
  return emit(n, reshape(n, *x, shape));
}

LogicalResult flatten(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  int64_t axis = n.intAttr("axis", 1);
  if (axis < 0)
    axis += type.getRank();
  if (axis < 0 || axis > type.getRank())
    return n.error() << "axis " << n.intAttr("axis", 1)
                     << " is out of range for " << type;
  return emit(n, flattenAt(n, *x, axis));
}

/// Axes for Squeeze / Unsqueeze: an attribute before opset 13, an input since.
FailureOr<std::optional<SmallVector<int64_t>>> squeezeAxes(NodeImporter &n) {
  if (n.opset < 13)
    return n.intsAttr("axes");
  if (!n.input(1))
    return std::optional<SmallVector<int64_t>>();
  auto axes = n.constantInts(n.input(1), "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

LogicalResult squeeze(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  auto axes = squeezeAxes(n);
  if (failed(x) || failed(axes))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  SmallVector<int64_t> drop;
  if (*axes) {
    for (int64_t a : **axes) {
      auto norm = n.normalizeAxis(a, type.getRank());
      if (failed(norm))
        return failure();
      if (type.getDimSize(*norm) != 1)
        return n.error() << "cannot squeeze dim " << *norm << " of size "
                         << type.getDimSize(*norm) << " in " << type;
      drop.push_back(*norm);
    }
  } else {
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.getDimSize(d) == 1)
        drop.push_back(d);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!llvm::is_contained(drop, d))
      shape.push_back(type.getDimSize(d));
  return emit(n, reshape(n, *x, shape));
}

LogicalResult unsqueeze(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  auto axes = squeezeAxes(n);
  if (failed(x) || failed(axes))
    return failure();
  if (!*axes)
    return n.error() << "needs axes";
  RankedTensorType type = n.typeOf(*x);
  int64_t outRank = type.getRank() + (*axes)->size();
  SmallVector<int64_t> inserted;
  for (int64_t a : **axes) {
    auto norm = n.normalizeAxis(a, outRank);
    if (failed(norm))
      return failure();
    inserted.push_back(*norm);
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < outRank; ++d)
    shape.push_back(llvm::is_contained(inserted, d) ? 1
                                                    : type.getDimSize(next++));
  return emit(n, reshape(n, *x, shape));
}

LogicalResult transposeOp(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  SmallVector<int64_t> perm;
  if (auto p = n.intsAttr("perm"))
    perm = *p;
  else
    for (int64_t d = type.getRank() - 1; d >= 0; --d)
      perm.push_back(d);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= type.getRank())
      return n.error() << "perm [" << perm << "] is not a permutation of "
                       << type.getRank() << " dims";
    shape.push_back(type.getDimSize(p));
  }
  return emit(n, n.create<TransposeOp>(withShape(type, shape), *x,
                                       n.b.getDenseI64ArrayAttr(perm)));
}

LogicalResult concat(NodeImporter &n) {
  if (n.inputs.empty())
    return n.error() << "needs at least one input";
  RankedTensorType first = n.typeOf(n.inputs[0]);
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : ArrayRef(n.inputs).drop_front())
    shape[*axis] += n.typeOf(v).getRank() == first.getRank()
                        ? n.typeOf(v).getDimSize(*axis)
                        : 0;
  return emit(n, n.create<ConcatOp>(withShape(first, shape), n.inputs,
                                    int64_t(*axis)));
}

/// One static slice of `x` along `axis`.
FailureOr<Value> sliceAlong(NodeImporter &n, Value x, int64_t axis,
                            int64_t start, int64_t limit, int64_t step) {
  RankedTensorType type = n.typeOf(x);
  SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape()),
      steps(type.getRank(), 1), shape(type.getShape());
  starts[axis] = start;
  limits[axis] = limit;
  steps[axis] = step;
  shape[axis] = (limit - start + step - 1) / step;
  return n.create<SliceOp>(withShape(type, shape), x,
                           n.b.getDenseI64ArrayAttr(starts),
                           n.b.getDenseI64ArrayAttr(limits),
                           n.b.getDenseI64ArrayAttr(steps));
}

/// OneHot with a constant depth: indices (negative ones counted from the
/// end) one-hot encoded by tp.one_hot (classes last, moved to `axis`), then
/// off + (on - off) * mask with values = [off, on].
LogicalResult oneHot(NodeImporter &n) {
  auto indices = n.requiredInput(0, "indices");
  auto values = n.requiredInput(2, "values");
  if (failed(indices) || failed(values))
    return failure();
  auto depths = n.constantInts(n.input(1), "depth");
  if (failed(depths))
    return failure();
  if (depths->size() != 1 || (*depths)[0] < 1)
    return n.error() << "depth must be one positive integer";
  int64_t depth = (*depths)[0];
  RankedTensorType valuesType = n.typeOf(*values);
  if (valuesType.getNumElements() != 2)
    return n.error() << "values " << formatShape(valuesType.getShape())
                     << " must be [off, on]";
  Type element = valuesType.getElementType();
  Type i64 = n.b.getI64Type();
  RankedTensorType idxType = n.typeOf(*indices);
  auto ofType = [&](Type t, ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, t);
  };
  Value idx = *indices;
  if (idxType.getElementType() != i64) {
    auto cast = n.create<CastOp>(ofType(i64, idxType.getShape()), idx);
    if (failed(cast))
      return failure();
    idx = *cast;
  }
  auto scalar = [&](Type t, Attribute v) {
    return n.constant(DenseElementsAttr::get(ofType(t, {}), v));
  };
  Value zero = scalar(i64, n.b.getI64IntegerAttr(0));
  auto negative = n.create<LessOp>(ofType(n.b.getI1Type(), idxType.getShape()),
                                   idx, zero);
  auto wrapped = n.createInferred<AddOp>(
      idx, scalar(i64, n.b.getI64IntegerAttr(depth)));
  if (failed(negative) || failed(wrapped))
    return failure();
  auto positive = n.create<WhereOp>(n.typeOf(idx), *negative, *wrapped, idx);
  if (failed(positive))
    return failure();
  Type maskElement = isa<FloatType>(element) ? element : n.b.getF32Type();
  auto mask = oneHotLast(n, *positive, depth, maskElement);
  if (failed(mask))
    return failure();
  Value m = *mask;
  if (maskElement != element) {
    auto cast = n.create<CastOp>(ofType(element, n.typeOf(m).getShape()), m);
    if (failed(cast))
      return failure();
    m = *cast;
  }
  auto flat = reshape(n, *values, {2});
  if (failed(flat))
    return failure();
  auto offSlice = sliceAlong(n, *flat, 0, 0, 1, 1);
  auto onSlice = sliceAlong(n, *flat, 0, 1, 2, 1);
  if (failed(offSlice) || failed(onSlice))
    return failure();
  auto off = reshape(n, *offSlice, {});
  auto on = reshape(n, *onSlice, {});
  if (failed(off) || failed(on))
    return failure();
  auto span = n.createInferred<SubOp>(*on, *off);
  if (failed(span))
    return failure();
  auto scaled = n.createInferred<MulOp>(m, *span);
  if (failed(scaled))
    return failure();
  auto y = n.createInferred<AddOp>(*scaled, *off);
  if (failed(y))
    return failure();
  int64_t rank = n.typeOf(*y).getRank();
  auto axis = n.normalizeAxis(n.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  return emit(n, moveDim(n, *y, rank - 1, *axis));
}

LogicalResult split(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t size = type.getDimSize(*axis);
  SmallVector<int64_t> parts;
  if (n.opset >= 13 && n.input(1)) {
    auto s = n.constantInts(n.input(1), "split");
    if (failed(s))
      return failure();
    parts = *s;
  } else if (auto s = n.intsAttr("split")) {
    parts = *s;
  } else {
    int64_t count = n.numOutputs();
    if (size % count)
      return n.error() << "cannot split dim " << *axis << " of size " << size
                       << " into " << count << " equal parts";
    parts.assign(count, size / count);
  }
  int64_t sum = 0;
  for (int64_t p : parts)
    sum += p;
  if (sum != size || int64_t(parts.size()) != int64_t(n.numOutputs()))
    return n.error() << "split sizes [" << parts << "] do not cover dim "
                     << *axis << " of size " << size << " with "
                     << n.numOutputs() << " outputs";
  int64_t offset = 0;
  for (int64_t p : parts) {
    if (failed(emit(n, sliceAlong(n, *x, *axis, offset, offset + p, 1))))
      return failure();
    offset += p;
  }
  return success();
}

/// ONNX Slice: starts, ends, axes, steps as constant inputs (opset 10+) or
/// starts, ends, axes attributes (before), clamped as ONNX specifies.
/// Negative steps are not supported.
LogicalResult slice(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  FailureOr<SmallVector<int64_t>> starts = failure(), ends = failure();
  if (n.opset < 10) {
    auto s = n.intsAttr("starts"), e = n.intsAttr("ends");
    if (!s || !e)
      return n.error() << "needs the starts and ends attributes";
    starts = *s;
    ends = *e;
  } else {
    starts = n.constantInts(n.input(1), "starts");
    ends = n.constantInts(n.input(2), "ends");
  }
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (n.opset < 10) {
    if (auto a = n.intsAttr("axes"))
      axes = *a;
    else
      axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  } else if (Value a = n.input(3)) {
    auto v = n.constantInts(a, "axes");
    if (failed(v))
      return failure();
    axes = *v;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (Value s = n.input(4)) {
    auto v = n.constantInts(s, "steps");
    if (failed(v))
      return failure();
    steps = *v;
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size())
    return n.error() << "starts, ends, axes and steps differ in length";
  Value result = *x;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = n.normalizeAxis(axes[i], type.getRank());
    if (failed(axis))
      return failure();
    int64_t dim = type.getDimSize(*axis);
    if (steps[i] <= 0)
      return n.error() << "step " << steps[i] << " on axis " << *axis
                       << " is not supported (only positive steps)";
    auto clamp = [&](int64_t v) {
      if (v < 0)
        v += dim;
      return std::clamp<int64_t>(v, 0, dim);
    };
    int64_t start = clamp((*starts)[i]), limit = clamp((*ends)[i]);
    limit = std::max(limit, start);
    auto s = sliceAlong(n, result, *axis, start, limit, steps[i]);
    if (failed(s))
      return failure();
    result = *s;
  }
  n.outputs.push_back(result);
  return success();
}

/// Gather (slices of data along the axis) and GatherElements (one element
/// per index, the result shaped like the indices).
template <typename OpTy> LogicalResult gather(NodeImporter &n) {
  auto data = n.requiredInput(0, "data");
  auto indices = n.requiredInput(1, "indices");
  if (failed(data) || failed(indices))
    return failure();
  RankedTensorType type = n.typeOf(*data);
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(n.typeOf(*indices).getShape());
  if constexpr (std::is_same_v<OpTy, GatherOp>) {
    shape.insert(shape.begin(), type.getShape().begin(),
                 type.getShape().begin() + *axis);
    llvm::append_range(shape, type.getShape().drop_front(*axis + 1));
  }
  return emit(n, n.create<OpTy>(withShape(type, shape), *data, *indices,
                                int64_t(*axis)));
}

/// Tile: each dim d of size s repeated r times is a [1, s] -> [r, s]
/// broadcast between two reshapes (the copies follow one another).
LogicalResult tile(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  auto repeats = n.constantInts(n.input(1), "repeats");
  if (failed(repeats))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  if (int64_t(repeats->size()) != type.getRank())
    return n.error() << "repeats [" << *repeats << "] must have one entry per "
                     << "dim of the input " << formatShape(type.getShape());
  SmallVector<int64_t> split, broadcast, tiled;
  for (auto [r, s] : llvm::zip(*repeats, type.getShape())) {
    if (r < 1)
      return n.error() << "repeats [" << *repeats << "] must be positive";
    // (Not append({a, b}): that is append(count, value).)
    split.push_back(1);
    split.push_back(s);
    broadcast.push_back(r);
    broadcast.push_back(s);
    tiled.push_back(r * s);
  }
  if (tiled == ArrayRef<int64_t>(type.getShape())) {
    n.outputs.push_back(*x);
    return success();
  }
  auto pairs = reshape(n, *x, split);
  if (failed(pairs))
    return failure();
  auto copies = n.create<ExpandOp>(withShape(type, broadcast), *pairs);
  if (failed(copies))
    return failure();
  return emit(n, reshape(n, *copies, tiled));
}

/// DepthToSpace / SpaceToDepth on [N, C, H, W]: a reshape that exposes the
/// blocks, a transpose that moves them, a reshape that merges them.
template <bool ToSpace> LogicalResult blocksMove(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  int64_t b = n.intAttr("blocksize", 0);
  if (type.getRank() != 4 || b < 1)
    return n.error() << "needs a [N, C, H, W] input and a positive "
                        "blocksize, got "
                     << formatShape(type.getShape()) << " and " << b;
  ArrayRef<int64_t> s = type.getShape();
  int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  SmallVector<int64_t> exposed, perm, merged;
  if (ToSpace) {
    if (C % (b * b))
      return n.error() << "channels " << C << " are not a multiple of "
                       << b * b;
    bool crd = n.stringAttr("mode", "DCR") == "CRD";
    exposed = crd ? SmallVector<int64_t>{N, C / (b * b), b, b, H, W}
                  : SmallVector<int64_t>{N, b, b, C / (b * b), H, W};
    perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3}
               : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
    merged = {N, C / (b * b), H * b, W * b};
  } else {
    if (H % b || W % b)
      return n.error() << "height " << H << " and width " << W
                       << " are not multiples of " << b;
    exposed = {N, C, H / b, b, W / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {N, C * b * b, H / b, W / b};
  }
  auto blocks = reshape(n, *x, exposed);
  if (failed(blocks))
    return failure();
  SmallVector<int64_t> moved;
  for (int64_t p : perm)
    moved.push_back(exposed[p]);
  auto t = n.create<TransposeOp>(withShape(type, moved), *blocks,
                                 n.b.getDenseI64ArrayAttr(perm));
  if (failed(t))
    return failure();
  return emit(n, reshape(n, *t, merged));
}

LogicalResult expand(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  auto target = n.constantInts(n.input(1), "shape");
  if (failed(target))
    return failure();
  std::string why;
  auto shape = broadcastShapes(n.typeOf(*x).getShape(), *target, why);
  if (!shape)
    return n.error() << why;
  return emit(n, n.create<ExpandOp>(withShape(n.typeOf(*x), *shape), *x));
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

LogicalResult constantOp(NodeImporter &n) {
  MLIRContext *ctx = n.b.getContext();
  if (const auto *a = n.attr("value")) {
    std::string error;
    DenseElementsAttr attr = convertOnnxTensor(a->t(), ctx, error);
    if (!attr)
      return n.error() << error;
    n.outputs.push_back(n.constant(attr));
    return success();
  }
  auto f32 = n.b.getF32Type();
  auto i64 = n.b.getI64Type();
  if (const auto *a = n.attr("value_float")) {
    n.outputs.push_back(n.constant(
        DenseElementsAttr::get(RankedTensorType::get({}, f32), a->f())));
    return success();
  }
  if (const auto *a = n.attr("value_int")) {
    n.outputs.push_back(n.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, i64), int64_t(a->i()))));
    return success();
  }
  if (const auto *a = n.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    n.outputs.push_back(n.constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, f32), ArrayRef(v))));
    return success();
  }
  if (const auto *a = n.attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    n.outputs.push_back(n.constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, i64), ArrayRef(v))));
    return success();
  }
  return n.error() << "unsupported Constant form (sparse or string value)";
}

/// Shapes are static, so Shape is a constant (opset 15 adds start / end).
LogicalResult shape(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> dims = n.typeOf(*x).getShape();
  int64_t rank = dims.size();
  auto clamp = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t start = clamp(n.intAttr("start", 0));
  int64_t end = clamp(n.intAttr("end", rank));
  SmallVector<int64_t> v(dims.begin() + start,
                         dims.begin() + std::max(start, end));
  n.outputs.push_back(n.constant(DenseElementsAttr::get(
      RankedTensorType::get({int64_t(v.size())}, n.b.getI64Type()),
      ArrayRef(v))));
  return success();
}

LogicalResult constantOfShape(NodeImporter &n) {
  auto dims = n.constantInts(n.input(0), "shape");
  if (failed(dims))
    return failure();
  DenseElementsAttr value;
  if (const auto *a = n.attr("value")) {
    std::string error;
    value = convertOnnxTensor(a->t(), n.b.getContext(), error);
    if (!value)
      return n.error() << error;
  } else {
    value = DenseElementsAttr::get(RankedTensorType::get({1}, n.b.getF32Type()),
                                   0.0f);
  }
  auto type = RankedTensorType::get(*dims, value.getElementType());
  n.outputs.push_back(n.constant(
      DenseElementsAttr::get(type, value.getValues<Attribute>()[0])));
  return success();
}

//===----------------------------------------------------------------------===//
// Ops composed of tp ops (activations, Clip, BatchNormalization, reductions)
//===----------------------------------------------------------------------===//

/// Elementwise activations: f(x, attributes) written with tp ops.
using ActivationFn = Value (*)(Compose &, Value x);
template <ActivationFn Fn> LogicalResult activation(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  if (!isa<FloatType>(n.typeOf(*x).getElementType()))
    return n.error() << "needs a float input, got " << n.typeOf(*x);
  Compose c{n};
  return c.emit(Fn(c, *x));
}

Value leakyRelu(Compose &c, Value x) {
  double alpha = c.n.floatAttr("alpha", 0.01f);
  return c.where(c.positive(x), x, c.bin<MulOp>(x, c.c(x, alpha)));
}
/// x for x > 0, alpha (exp(x) - 1) otherwise.
Value eluOf(Compose &c, Value x, double alpha) {
  Value negative = c.bin<MulOp>(
      c.bin<SubOp>(c.un<ExpOp>(x), c.c(x, 1.0)), c.c(x, alpha));
  return c.where(c.positive(x), x, negative);
}
Value elu(Compose &c, Value x) {
  return eluOf(c, x, c.n.floatAttr("alpha", 1.0f));
}
Value selu(Compose &c, Value x) {
  double alpha = c.n.floatAttr("alpha", 1.67326319217681884765625f);
  double gamma = c.n.floatAttr("gamma", 1.05070102214813232421875f);
  return c.bin<MulOp>(eluOf(c, x, alpha), c.c(x, gamma));
}
Value celu(Compose &c, Value x) {
  double alpha = c.n.floatAttr("alpha", 1.0f);
  // max(0, x) + min(0, alpha (exp(x / alpha) - 1))
  Value e = c.bin<MulOp>(
      c.bin<SubOp>(c.un<ExpOp>(c.bin<DivOp>(x, c.c(x, alpha))), c.c(x, 1.0)),
      c.c(x, alpha));
  return c.bin<AddOp>(c.bin<MaxOp>(x, c.c(x, 0.0)),
                      c.bin<MinOp>(e, c.c(x, 0.0)));
}
Value thresholdedRelu(Compose &c, Value x) {
  Value alpha = c.c(x, c.n.floatAttr("alpha", 1.0f));
  return c.where(c.cmp<GreaterOp>(x, alpha), x, c.c(x, 0.0));
}
Value softplus(Compose &c, Value x) {
  return c.un<LogOp>(c.bin<AddOp>(c.un<ExpOp>(x), c.c(x, 1.0)));
}
Value softsign(Compose &c, Value x) {
  return c.bin<DivOp>(x, c.bin<AddOp>(c.un<AbsOp>(x), c.c(x, 1.0)));
}
Value hardSigmoidOf(Compose &c, Value x, double alpha, double beta) {
  Value lin = c.bin<AddOp>(c.bin<MulOp>(x, c.c(x, alpha)), c.c(x, beta));
  return c.bin<MaxOp>(c.bin<MinOp>(lin, c.c(x, 1.0)), c.c(x, 0.0));
}
Value hardSigmoid(Compose &c, Value x) {
  return hardSigmoidOf(c, x, c.n.floatAttr("alpha", 0.2f),
                       c.n.floatAttr("beta", 0.5f));
}
Value hardSwish(Compose &c, Value x) {
  return c.bin<MulOp>(x, hardSigmoidOf(c, x, 1.0 / 6, 0.5));
}

LogicalResult prelu(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  auto slope = n.requiredInput(1, "slope");
  if (failed(x) || failed(slope))
    return failure();
  Compose c{n};
  return c.emit(c.where(c.positive(*x), *x, c.bin<MulOp>(*x, *slope)));
}

/// Clip: min and max are attributes before opset 11, optional inputs since.
LogicalResult clip(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  if (failed(x))
    return failure();
  Compose c{n};
  Value lo, hi;
  if (n.opset < 11) {
    if (n.attr("min"))
      lo = c.c(*x, n.floatAttr("min", 0));
    if (n.attr("max"))
      hi = c.c(*x, n.floatAttr("max", 0));
  } else {
    lo = n.input(1);
    hi = n.input(2);
  }
  Value y = *x;
  if (hi)
    y = c.bin<MinOp>(y, hi);
  if (lo)
    y = c.bin<MaxOp>(y, lo);
  return c.emit(y);
}

/// Sum and Mean of any number of inputs, with broadcasting.
template <bool IsMean> LogicalResult sumOrMean(NodeImporter &n) {
  if (n.inputs.empty())
    return n.error() << "needs at least one input";
  Compose c{n};
  Value acc = n.inputs[0];
  for (Value v : ArrayRef(n.inputs).drop_front())
    acc = c.bin<AddOp>(acc, v);
  if (IsMean && n.inputs.size() > 1)
    acc = c.bin<MulOp>(acc, c.c(acc, 1.0 / n.inputs.size()));
  return c.emit(acc);
}

/// BatchNormalization in inference: (x - mean) / sqrt(var + eps) * scale + B
/// per channel (dim 1).
LogicalResult batchNorm(NodeImporter &n) {
  if (n.intAttr("training_mode", 0) || n.outputUsed(1))
    return n.error() << "training-mode BatchNormalization (running "
                        "statistics as outputs) is not supported";
  SmallVector<Value> in;
  // Named, not a temporary: an ArrayRef of a braced list dangles once the
  // range-for's initializer ends (found by AddressSanitizer).
  static const StringRef kInputs[] = {"X", "scale", "B", "input_mean",
                                      "input_var"};
  for (auto [i, what] : llvm::enumerate(kInputs)) {
    auto v = n.requiredInput(i, what);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  RankedTensorType type = n.typeOf(in[0]);
  if (type.getRank() < 2)
    return n.error() << "needs an input of rank 2 or more, got " << type;
  // [C] -> [C, 1, ..., 1] so that it broadcasts over dims 2...
  SmallVector<int64_t> perChannel(type.getRank() - 1, 1);
  perChannel[0] = type.getDimSize(1);
  Compose c{n};
  auto channel = [&](Value v) -> Value {
    auto r = reshape(n, v, perChannel);
    return failed(r) ? (c.failed = true, Value()) : *r;
  };
  Value eps = c.c(in[0], n.floatAttr("epsilon", 1e-5f));
  Value invStd = c.un<ReciprocalOp>(
      c.un<SqrtOp>(c.bin<AddOp>(channel(in[4]), eps)));
  Value y = c.bin<MulOp>(c.bin<SubOp>(in[0], channel(in[3])),
                         c.bin<MulOp>(invStd, channel(in[1])));
  return c.emit(c.bin<AddOp>(y, channel(in[2])));
}

/// InstanceNormalization: each (sample, channel) normalized over the
/// spatial dims, then scale[c] and B[c].
LogicalResult instanceNorm(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  auto scale = n.requiredInput(1, "scale");
  auto bias = n.requiredInput(2, "B");
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  if (type.getRank() < 3)
    return n.error() << "needs an input [N, C, D...], got " << type;
  SmallVector<int64_t> spatial, perChannel(type.getRank() - 1, 1);
  for (int64_t d = 2; d < type.getRank(); ++d)
    spatial.push_back(d);
  perChannel[0] = type.getDimSize(1);
  Compose c{n};
  auto mean = reduceOver<ReduceMeanOp>(n, *x, spatial, true);
  if (failed(mean))
    return failure();
  Value centered = c.bin<SubOp>(*x, *mean);
  Value squared = c.bin<MulOp>(centered, centered);
  if (c.failed)
    return failure();
  auto var = reduceOver<ReduceMeanOp>(n, squared, spatial, true);
  auto s = reshape(n, *scale, perChannel), b = reshape(n, *bias, perChannel);
  if (failed(var) || failed(s) || failed(b))
    return failure();
  Value invStd = c.un<ReciprocalOp>(c.un<SqrtOp>(
      c.bin<AddOp>(*var, c.c(*x, n.floatAttr("epsilon", 1e-5f)))));
  return c.emit(c.bin<AddOp>(c.bin<MulOp>(c.bin<MulOp>(centered, invStd), *s), *b));
}

LogicalResult castLike(NodeImporter &n) {
  auto x = n.requiredInput(0, "input");
  auto like = n.requiredInput(1, "target_type");
  if (failed(x) || failed(like))
    return failure();
  return emit(n, n.create<CastOp>(
                     withShape(RankedTensorType::get(
                                   n.typeOf(*x).getShape(),
                                   n.typeOf(*like).getElementType()),
                               n.typeOf(*x).getShape()),
                     *x));
}

/// Static shapes: Size is a constant.
LogicalResult size(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  auto t = RankedTensorType::get({}, n.b.getI64Type());
  n.outputs.push_back(n.constant(DenseElementsAttr::get(
      t, n.b.getI64IntegerAttr(n.typeOf(*x).getNumElements()).getValue())));
  return success();
}

/// Pre / post maps of the composed reductions.
template <typename OpTy> FailureOr<Value> applyUnary(NodeImporter &n, Value v) {
  return n.create<OpTy>(v.getType(), v);
}
FailureOr<Value> squareOf(NodeImporter &n, Value v) {
  return n.create<MulOp>(v.getType(), v, v);
}

/// ArgMax / ArgMin (select_last_index since opset 12).
template <bool IsMax> LogicalResult argReduce(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  bool keepdims = n.intAttr("keepdims", 1) != 0;
  return emit(n, n.create<ArgReduceOp>(
                     RankedTensorType::get(
                         reducedShape(type.getShape(), {*axis}, keepdims),
                         n.b.getI64Type()),
                     *x, n.b.getStringAttr(IsMax ? "max" : "min"),
                     n.b.getI64IntegerAttr(*axis), n.b.getBoolAttr(keepdims),
                     n.b.getBoolAttr(n.intAttr("select_last_index", 0) != 0)));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Window attributes of Conv / MaxPool / AveragePool resolved to explicit
/// pads: auto_pad (SAME_UPPER / SAME_LOWER / VALID) and ceil_mode (extra
/// end padding so that ONNX's floor formula gives the ceil result).
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};

FailureOr<Window> windowAttrs(NodeImporter &n, ArrayRef<int64_t> spatial,
                              ArrayRef<int64_t> kernel) {
  size_t r = spatial.size();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = n.intsAttr("strides").value_or(SmallVector<int64_t>(r, 1));
  w.dilations = n.intsAttr("dilations").value_or(SmallVector<int64_t>(r, 1));
  w.pads = n.intsAttr("pads").value_or(SmallVector<int64_t>(2 * r, 0));
  if (w.kernel.size() != r || w.strides.size() != r ||
      w.dilations.size() != r || w.pads.size() != 2 * r)
    return n.error() << "kernel_shape, strides, dilations and pads must "
                        "cover the " << r << " spatial dims",
           failure();
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  for (size_t i = 0; i < r; ++i) {
    int64_t span = w.dilations[i] * (w.kernel[i] - 1) + 1;
    if (autoPad == "VALID") {
      w.pads[i] = w.pads[r + i] = 0;
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + span - spatial[i]);
      int64_t small = total / 2;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : total - small;
      w.pads[r + i] = total - w.pads[i];
    } else if (autoPad != "NOTSET") {
      return n.error() << "unknown auto_pad '" << autoPad << "'", failure();
    }
    if (n.intAttr("ceil_mode", 0)) {
      int64_t padded = spatial[i] + w.pads[i] + w.pads[r + i];
      int64_t out = (padded - span + w.strides[i] - 1) / w.strides[i] + 1;
      // The last window must start inside the input or its begin padding.
      if ((out - 1) * w.strides[i] >= spatial[i] + w.pads[i])
        --out;
      w.pads[r + i] +=
          std::max<int64_t>(0, (out - 1) * w.strides[i] + span - padded);
    }
  }
  return w;
}

LogicalResult conv(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  auto wt = n.requiredInput(1, "W");
  if (failed(x) || failed(wt))
    return failure();
  RankedTensorType xt = n.typeOf(*x), ft = n.typeOf(*wt);
  if (xt.getRank() < 3 || ft.getRank() != xt.getRank())
    return n.error() << "needs X [N, C, S...] and W [M, C/group, K...], got "
                     << xt << " and " << ft;
  auto w = windowAttrs(n, xt.getShape().drop_front(2),
                       ft.getShape().drop_front(2));
  if (failed(w))
    return failure();
  std::string why;
  auto spatial = windowOutputShape(xt.getShape().drop_front(2), w->kernel,
                                   w->strides, w->dilations, w->pads, why);
  if (!spatial)
    return n.error() << why;
  SmallVector<int64_t> shape = {xt.getDimSize(0), ft.getDimSize(0)};
  llvm::append_range(shape, *spatial);
  auto y = n.create<ConvOp>(withShape(xt, shape), *x, *wt,
                            n.b.getDenseI64ArrayAttr(w->strides),
                            n.b.getDenseI64ArrayAttr(w->dilations),
                            n.b.getDenseI64ArrayAttr(w->pads),
                            n.b.getI64IntegerAttr(n.intAttr("group", 1)));
  if (failed(y) || !n.input(2))
    return emit(n, y);
  // Bias [M] -> [M, 1, ...] added along the channels.
  SmallVector<int64_t> biasShape(shape.size() - 1, 1);
  biasShape[0] = shape[1];
  auto bias = reshape(n, n.input(2), biasShape);
  if (failed(bias))
    return failure();
  return emit(n, n.createInferred<AddOp>(*y, *bias));
}

template <bool IsMax> LogicalResult pool(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  if (IsMax && n.outputUsed(1))
    return n.error() << "the Indices output is not supported";
  RankedTensorType xt = n.typeOf(*x);
  auto kernel = n.intsAttr("kernel_shape");
  if (!kernel || xt.getRank() < 3)
    return n.error() << "needs kernel_shape and an input [N, C, S...], got "
                     << xt;
  auto w = windowAttrs(n, xt.getShape().drop_front(2), *kernel);
  if (failed(w))
    return failure();
  std::string why;
  auto spatial = windowOutputShape(xt.getShape().drop_front(2), w->kernel,
                                   w->strides, w->dilations, w->pads, why);
  if (!spatial)
    return n.error() << why;
  SmallVector<int64_t> shape(xt.getShape().take_front(2));
  llvm::append_range(shape, *spatial);
  return emit(n, n.create<PoolOp>(
                     withShape(xt, shape), *x,
                     n.b.getStringAttr(IsMax ? "max" : "avg"),
                     n.b.getDenseI64ArrayAttr(w->kernel),
                     n.b.getDenseI64ArrayAttr(w->strides),
                     n.b.getDenseI64ArrayAttr(w->dilations),
                     n.b.getDenseI64ArrayAttr(w->pads),
                     n.b.getBoolAttr(n.intAttr("count_include_pad", 0))));
}

/// GlobalAveragePool / GlobalMaxPool: a keepdims reduction over S....
template <typename ReduceOpTy> LogicalResult globalPool(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  RankedTensorType xt = n.typeOf(*x);
  if (xt.getRank() < 3)
    return n.error() << "needs an input [N, C, S...], got " << xt;
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, xt.getRank()));
  return emit(n, n.create<ReduceOpTy>(
                     withShape(xt, reducedShape(xt.getShape(), axes, true)), *x,
                     n.b.getDenseI64ArrayAttr(axes), n.b.getBoolAttr(true)));
}

/// Pad, constant mode: blocks of the constant concatenated before and after
/// each padded axis (negative pads slice).
LogicalResult pad(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  std::string mode = n.stringAttr("mode", "constant");
  if (mode != "constant")
    return n.error() << "mode '" << mode << "' is not supported (constant only)";
  RankedTensorType t = n.typeOf(*x);
  int64_t rank = t.getRank();
  SmallVector<int64_t> pads;
  double value = 0;
  if (n.opset < 11) {
    pads = n.intsAttr("pads").value_or(SmallVector<int64_t>());
    value = n.floatAttr("value", 0);
  } else {
    auto p = n.constantInts(n.input(1), "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (Value c = n.input(2)) {
      DenseElementsAttr attr;
      if (!matchPattern(c, m_Constant(&attr)))
        return n.error() << "the constant_value input must be a compile-time "
                            "constant";
      auto values = llvm::to_vector(attr.getValues<Attribute>());
      if (auto f = dyn_cast<FloatAttr>(values[0]))
        value = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(values[0]))
        value = double(i.getInt());
    }
  }
  if (int64_t(pads.size()) != 2 * rank)
    return n.error() << "needs " << 2 * rank << " pads, got " << pads.size();
  Value y = *x;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = pads[d], after = pads[rank + d];
    RankedTensorType cur = n.typeOf(y);
    if (before < 0 || after < 0) {
      int64_t start = std::max<int64_t>(0, -before);
      int64_t end = cur.getDimSize(d) - std::max<int64_t>(0, -after);
      auto s = sliceAlong(n, y, d, start, end, 1);
      if (failed(s))
        return failure();
      y = *s;
      cur = n.typeOf(y);
    }
    SmallVector<Value> parts;
    auto block = [&](int64_t size) {
      SmallVector<int64_t> shape(cur.getShape());
      shape[d] = size;
      auto bt = withShape(cur, shape);
      Type e = bt.getElementType();
      Attribute v = isa<FloatType>(e) ? Attribute(n.b.getFloatAttr(e, value))
                                      : Attribute(n.b.getIntegerAttr(e, int64_t(value)));
      parts.push_back(n.constant(DenseElementsAttr::get(bt, v)));
    };
    if (before > 0)
      block(before);
    parts.push_back(y);
    if (after > 0)
      block(after);
    if (parts.size() == 1)
      continue;
    SmallVector<int64_t> shape(cur.getShape());
    shape[d] += std::max<int64_t>(0, before) + std::max<int64_t>(0, after);
    auto c = n.create<ConcatOp>(withShape(cur, shape), parts, d);
    if (failed(c))
      return failure();
    y = *c;
  }
  n.outputs.push_back(y);
  return success();
}

struct OpEntry {
  StringRef opType;
  int64_t since; // first opset of the semantics imported
  NodeHandler handler;
};

const OpEntry kOps[] = {
    {"Abs", 1, unary<AbsOp>},
    {"Add", 1, binary<AddOp>},
    {"And", 7, boolean<AndOp>},
    {"ArgMax", 1, argReduce<true>},
    {"ArgMin", 1, argReduce<false>},
    {"AveragePool", 1, pool<false>},
    {"BatchNormalization", 6, batchNorm},
    {"Cast", 6, cast},
    {"CastLike", 15, castLike},
    {"Ceil", 1, unary<CeilOp>},
    {"Celu", 12, activation<celu>},
    {"Clip", 6, clip},
    {"Concat", 1, concat},
    {"Constant", 1, constantOp},
    {"ConstantOfShape", 9, constantOfShape},
    {"Conv", 1, conv},
    {"ConvTranspose", 1, importConvTranspose},
    {"Cos", 7, unary<CosOp>},
    {"CumSum", 11, importCumSum},
    {"DepthToSpace", 1, blocksMove<true>},
    {"Div", 1, binary<DivOp>},
    {"Dropout", 1, dropout},
    {"Einsum", 12, importEinsum},
    {"Elu", 6, activation<elu>},
    {"Equal", 7, boolean<EqualOp>},
    {"Erf", 9, unary<ErfOp>},
    {"Exp", 1, unary<ExpOp>},
    {"Expand", 8, expand},
    {"Flatten", 1, flatten},
    {"Floor", 1, unary<FloorOp>},
    {"Gather", 1, gather<GatherOp>},
    {"GatherElements", 11, gather<GatherElementsOp>},
    {"Gemm", 1, gemm},
    {"GlobalAveragePool", 1, globalPool<ReduceMeanOp>},
    {"GlobalMaxPool", 1, globalPool<ReduceMaxOp>},
    {"Greater", 7, boolean<GreaterOp>},
    {"GreaterOrEqual", 12, boolean<GreaterEqualOp>},
    {"HardSigmoid", 6, activation<hardSigmoid>},
    {"Hardmax", 1, hardmax},
    {"HardSwish", 14, activation<hardSwish>},
    {"Identity", 1, identity},
    {"InstanceNormalization", 6, instanceNorm},
    {"LayerNormalization", 17, layerNorm},
    {"LeakyRelu", 6, activation<leakyRelu>},
    {"Less", 7, boolean<LessOp>},
    {"LessOrEqual", 12, boolean<LessEqualOp>},
    {"Log", 1, unary<LogOp>},
    {"LogSoftmax", 1, softmax<LogSoftmaxOp>},
    {"MatMul", 1, matmul},
    {"Max", 6, variadic<MaxOp>},
    {"MaxPool", 1, pool<true>},
    {"Mean", 6, sumOrMean<true>},
    {"Min", 6, variadic<MinOp>},
    {"Mod", 10, mod},
    {"Mul", 1, binary<MulOp>},
    {"Neg", 1, unary<NegOp>},
    {"NegativeLogLikelihoodLoss", 12, importNegativeLogLikelihoodLoss},
    {"Not", 1, unary<NotOp>},
    {"OneHot", 9, oneHot},
    {"Or", 7, boolean<OrOp>},
    {"PRelu", 7, prelu},
    {"Pad", 2, pad},
    {"Pow", 1, pow},
    {"Range", 11, importRange},
    {"Reciprocal", 1, unary<ReciprocalOp>},
    {"ReduceL1", 1, reduce<ReduceSumOp, 18, applyUnary<AbsOp>>},
    {"ReduceL2", 1, reduce<ReduceSumOp, 18, squareOf, applyUnary<SqrtOp>>},
    {"ReduceLogSum", 1, reduce<ReduceSumOp, 18, same, applyUnary<LogOp>>},
    {"ReduceLogSumExp", 1, reduce<ReduceSumOp, 18, applyUnary<ExpOp>, applyUnary<LogOp>>},
    {"ReduceMax", 1, reduce<ReduceMaxOp, 18>},
    {"ReduceMean", 1, reduce<ReduceMeanOp, 18>},
    {"ReduceMin", 1, reduce<ReduceMaxOp, 18, applyUnary<NegOp>, applyUnary<NegOp>>},
    {"ReduceProd", 1, reduce<ReduceProdOp, 18>},
    {"ReduceSum", 1, reduce<ReduceSumOp, 13>},
    {"ReduceSumSquare", 1, reduce<ReduceSumOp, 18, squareOf>},
    {"Relu", 1, unary<ReluOp>},
    {"Reshape", 5, reshapeOp},
    {"Resize", 11, importResize},
    {"Round", 11, unary<RoundOp>},
    {"ScatterElements", 11, importScatterElements},
    {"Selu", 6, activation<selu>},
    {"Shape", 1, shape},
    {"Sigmoid", 1, unary<SigmoidOp>},
    {"Sin", 7, unary<SinOp>},
    {"Size", 1, size},
    {"Slice", 1, slice},
    {"Softmax", 1, softmax<SoftmaxOp>},
    {"SoftmaxCrossEntropyLoss", 12, importSoftmaxCrossEntropyLoss},
    {"Softplus", 1, activation<softplus>},
    {"Softsign", 1, activation<softsign>},
    {"SpaceToDepth", 1, blocksMove<false>},
    {"Split", 2, split},
    {"Sqrt", 1, unary<SqrtOp>},
    {"Squeeze", 1, squeeze},
    {"Sub", 1, binary<SubOp>},
    {"Sum", 6, sumOrMean<false>},
    {"Tanh", 1, unary<TanhOp>},
    {"ThresholdedRelu", 10, activation<thresholdedRelu>},
    {"Tile", 6, tile},
    {"Transpose", 1, transposeOp},
    {"Trilu", 14, trilu},
    {"Unsqueeze", 1, unsqueeze},
    {"Where", 9, where},
    {"Xor", 7, boolean<XorOp>},
};

} // namespace

FailureOr<Value> tp::reshape(NodeImporter &n, Value v,
                             ArrayRef<int64_t> shape) {
  return n.create<ReshapeOp>(withShape(n.typeOf(v), shape), v);
}

FailureOr<Value> tp::flattenAt(NodeImporter &n, Value v, int64_t axis) {
  RankedTensorType type = n.typeOf(v);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  return reshape(n, v, {outer, inner});
}

FailureOr<Value> tp::moveDim(NodeImporter &n, Value v, int64_t from,
                             int64_t to) {
  if (from == to)
    return v;
  RankedTensorType type = n.typeOf(v);
  auto perm = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  perm.erase(perm.begin() + from);
  perm.insert(perm.begin() + to, from);
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return n.create<TransposeOp>(withShape(type, shape), v,
                               n.b.getDenseI64ArrayAttr(perm));
}

FailureOr<Value> tp::oneHotLast(NodeImporter &n, Value indices,
                                int64_t classes, Type element) {
  SmallVector<int64_t> shape(n.typeOf(indices).getShape());
  shape.push_back(classes);
  Value zero = n.constant(DenseElementsAttr::get(
      RankedTensorType::get({}, n.b.getI64Type()), n.b.getI64IntegerAttr(0)));
  return n.create<OneHotOp>(RankedTensorType::get(shape, element), indices,
                            zero);
}

NodeHandler tp::lookupNodeHandler(StringRef opType, int64_t opset) {
  for (const OpEntry &e : kOps)
    if (e.opType == opType && opset >= e.since)
      return e.handler;
  return nullptr;
}

int64_t tp::onnxOpSince(StringRef opType) {
  for (const OpEntry &e : kOps)
    if (e.opType == opType)
      return e.since;
  return 0;
}

ArrayRef<std::pair<StringRef, int64_t>> tp::supportedOnnxOps() {
  static const SmallVector<std::pair<StringRef, int64_t>> list = [] {
    SmallVector<std::pair<StringRef, int64_t>> l;
    for (const OpEntry &e : kOps)
      l.push_back({e.opType, e.since});
    return l;
  }();
  return list;
}
