//===- OnnxShapeOps.cpp - shapes and data movement -> tp ops --------------===//
//
// Reshape, Flatten, Squeeze / Unsqueeze, Transpose, Concat, Split, Slice,
// Gather, OneHot, Tile, DepthToSpace / SpaceToDepth, Expand and Pad. Shapes
// are static, so shape, axes, starts, pads and repeats inputs must be
// compile-time constants and each op becomes tp ops of static shapes. Also
// the reshape, flatten, dim move and one-hot that the other op files build
// with.
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

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
/// A negative step is a gather of the elements it selects.
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
    if (steps[i] == 0)
      return n.error() << "step 0 on axis " << *axis;
    if (steps[i] < 0) {
      // ONNX: start clamped to [0, dim - 1], end to [-1, dim - 1]; the
      // elements start, start + step, ... above end (torch.flip: all of
      // them, backwards). A gather of those indices.
      auto from = [&](int64_t v, int64_t low) {
        // Far-out ends (INT64_MIN) must not wrap when dim is added.
        if (v < 0)
          v = v < -dim ? -dim - 1 : v + dim;
        return std::clamp<int64_t>(v, low, dim - 1);
      };
      int64_t start = from((*starts)[i], 0), end = from((*ends)[i], -1);
      SmallVector<int64_t> indices;
      for (int64_t k = start; k > end; k += steps[i])
        indices.push_back(k);
      if (indices.empty())
        return n.error() << "selects no element on axis " << *axis
                         << " (start " << (*starts)[i] << ", end "
                         << (*ends)[i] << ", step " << steps[i]
                         << "): tp has no empty tensors";
      auto indexType = RankedTensorType::get({int64_t(indices.size())},
                                             n.b.getI64Type());
      Value ids = n.constant(
          DenseElementsAttr::get(indexType, ArrayRef<int64_t>(indices)));
      SmallVector<int64_t> shape(n.typeOf(result).getShape());
      shape[*axis] = int64_t(indices.size());
      auto g = n.create<GatherOp>(withShape(n.typeOf(result), shape), result,
                                  ids, *axis);
      if (failed(g))
        return failure();
      result = *g;
      continue;
    }
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

/// The shape and data-movement op types.
const OnnxOpEntry kOps[] = {
    {"Concat", 1, concat},
    {"DepthToSpace", 1, blocksMove<true>},
    {"Expand", 8, expand},
    {"Flatten", 1, flatten},
    {"Gather", 1, gather<GatherOp>},
    {"GatherElements", 11, gather<GatherElementsOp>},
    {"OneHot", 9, oneHot},
    {"Pad", 2, pad},
    {"Reshape", 5, reshapeOp},
    {"Slice", 1, slice},
    {"SpaceToDepth", 1, blocksMove<false>},
    {"Split", 2, split},
    {"Squeeze", 1, squeeze},
    {"Tile", 6, tile},
    {"Transpose", 1, transposeOp},
    {"Unsqueeze", 1, unsqueeze},
};

} // namespace

ArrayRef<OnnxOpEntry> tp::shapeOnnxOps() { return kOps; }

//===----------------------------------------------------------------------===//
// Compositions the op files share (NodeImporter.h)
//===----------------------------------------------------------------------===//

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
