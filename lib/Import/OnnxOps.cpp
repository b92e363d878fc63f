//===- OnnxOps.cpp - ONNX op types -> tp ops ------------------------------===//
//
// One handler per ONNX op type (default domain, opsets 11-17). Handlers turn
// ONNX attributes and constant inputs into static tp ops; opset differences
// (axes as attribute vs. input, Softmax's flattening before opset 13) are
// resolved here so that tp ops have one meaning.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Shorthand: append a created value to the node's outputs.
LogicalResult emit(NodeImporter &n, FailureOr<Value> v) {
  if (failed(v))
    return failure();
  n.outputs.push_back(*v);
  return success();
}

RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

FailureOr<Value> reshape(NodeImporter &n, Value v, ArrayRef<int64_t> shape) {
  return n.create<ReshapeOp>(withShape(n.typeOf(v), shape), v);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpTy> LogicalResult binary(NodeImporter &n) {
  auto lhs = n.requiredInput(0, "A");
  auto rhs = n.requiredInput(1, "B");
  if (failed(lhs) || failed(rhs))
    return failure();
  return emit(n, n.createInferred<OpTy>(*lhs, *rhs));
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
  // ONNX lets the exponent have another type; tp.pow wants the base's.
  Value e = *exp;
  Type baseElem = n.typeOf(*base).getElementType();
  if (n.typeOf(e).getElementType() != baseElem) {
    auto cast = n.create<CastOp>(
        RankedTensorType::get(n.typeOf(e).getShape(), baseElem), e);
    if (failed(cast))
      return failure();
    e = *cast;
  }
  return emit(n, n.createInferred<PowOp>(*base, e));
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

LogicalResult greater(NodeImporter &n) {
  auto a = n.requiredInput(0, "A");
  auto b = n.requiredInput(1, "B");
  if (failed(a) || failed(b))
    return failure();
  std::string why;
  RankedTensorType type = inferBinaryOpType(
      (*a).getType(), (*b).getType(), broadcastShapes, why);
  if (!type)
    return n.error() << "'tp.greater' op " << why;
  return emit(n, n.create<GreaterOp>(
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
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < *axis ? outer : inner) *= type.getDimSize(d);
  auto flat = reshape(n, *x, {outer, inner});
  if (failed(flat))
    return failure();
  auto y = n.create<OpTy>(n.typeOf(*flat), *flat, int64_t(1));
  if (failed(y))
    return failure();
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
  if (n.outputUsed(1) || n.outputUsed(2))
    return n.error() << "the Mean and InvStdDev outputs are not supported";
  Value bias = n.input(2);
  if (!bias) {
    auto biasType = withShape(type, type.getShape().drop_front(*axis));
    bias = n.constant(DenseElementsAttr::get(
        biasType, n.b.getZeroAttr(type.getElementType())));
  }
  return emit(n, n.create<LayerNormOp>(
                     type, *x, *scaleIn, bias, n.b.getI64IntegerAttr(*axis),
                     n.b.getF32FloatAttr(n.floatAttr("epsilon", 1e-5f))));
}

/// Reduce ops: axes from the attribute (or, for ReduceSum since opset 13,
/// from the second input); no axes means all (unless noop_with_empty_axes).
template <typename OpTy, int AxesInputSince>
LogicalResult reduce(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
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
  bool keepdims = n.intAttr("keepdims", 1) != 0;
  return emit(n, n.create<OpTy>(
                     withShape(type, reducedShape(type.getShape(), axes, keepdims)),
                     *x,
                                n.b.getDenseI64ArrayAttr(axes),
                                n.b.getBoolAttr(keepdims)));
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
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  return emit(n, reshape(n, *x, {outer, inner}));
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

/// ONNX Slice (opset 10+): starts, ends, axes, steps as constant inputs,
/// clamped as ONNX specifies. Negative steps are not supported.
LogicalResult slice(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  auto starts = n.constantInts(n.input(1), "starts");
  auto ends = n.constantInts(n.input(2), "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (Value a = n.input(3)) {
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

LogicalResult gather(NodeImporter &n) {
  auto data = n.requiredInput(0, "data");
  auto indices = n.requiredInput(1, "indices");
  if (failed(data) || failed(indices))
    return failure();
  RankedTensorType type = n.typeOf(*data);
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(type.getShape().take_front(*axis));
  llvm::append_range(shape, n.typeOf(*indices).getShape());
  llvm::append_range(shape, type.getShape().drop_front(*axis + 1));
  return emit(n, n.create<GatherOp>(withShape(type, shape), *data, *indices,
                                    int64_t(*axis)));
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

struct OpEntry {
  StringRef opType;
  int64_t since; // first opset of the semantics imported
  NodeHandler handler;
};

const OpEntry kOps[] = {
    {"Add", 7, binary<AddOp>},
    {"Cast", 6, cast},
    {"Concat", 11, concat},
    {"Constant", 11, constantOp},
    {"ConstantOfShape", 9, constantOfShape},
    {"Div", 7, binary<DivOp>},
    {"Dropout", 12, dropout},
    {"Erf", 9, unary<ErfOp>},
    {"Exp", 6, unary<ExpOp>},
    {"Expand", 8, expand},
    {"Flatten", 11, flatten},
    {"Gather", 11, gather},
    {"Gemm", 11, gemm},
    {"Greater", 9, greater},
    {"Identity", 1, identity},
    {"LayerNormalization", 17, layerNorm},
    {"Log", 6, unary<LogOp>},
    {"LogSoftmax", 11, softmax<LogSoftmaxOp>},
    {"MatMul", 9, matmul},
    {"Max", 8, variadic<MaxOp>},
    {"Min", 8, variadic<MinOp>},
    {"Mul", 7, binary<MulOp>},
    {"Neg", 6, unary<NegOp>},
    {"Pow", 7, pow},
    {"Reciprocal", 6, unary<ReciprocalOp>},
    {"ReduceMax", 11, reduce<ReduceMaxOp, 18>},
    {"ReduceMean", 11, reduce<ReduceMeanOp, 18>},
    {"ReduceSum", 11, reduce<ReduceSumOp, 13>},
    {"Relu", 6, unary<ReluOp>},
    {"Reshape", 5, reshapeOp},
    {"Shape", 1, shape},
    {"Sigmoid", 6, unary<SigmoidOp>},
    {"Slice", 10, slice},
    {"Softmax", 11, softmax<SoftmaxOp>},
    {"Split", 11, split},
    {"Sqrt", 6, unary<SqrtOp>},
    {"Squeeze", 11, squeeze},
    {"Sub", 7, binary<SubOp>},
    {"Tanh", 6, unary<TanhOp>},
    {"Transpose", 1, transposeOp},
    {"Unsqueeze", 11, unsqueeze},
    {"Where", 9, where},
};

} // namespace

NodeHandler tp::lookupNodeHandler(StringRef opType) {
  for (const OpEntry &e : kOps)
    if (e.opType == opType)
      return e.handler;
  return nullptr;
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
