//===- OnnxIndexOps.cpp - ops that compute along index positions ----------===//
//
// Range (arange: position ids, rotary positions), CumSum, ScatterElements,
// ScatterND and TopK, written with tp ops that already lower, shard and
// differentiate: a range of constants is a constant, a prefix sum is a
// product with a triangle of ones, a scatter is a one-hot product summed
// over the indices, a top-k is each element's place counted by comparisons.
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"
#include "tp/Dialect/TP/IR/TPFolders.h"

#include "mlir/IR/Matchers.h"
#include <cmath>

using namespace mlir;
using namespace mlir::tp;

/// Range of constants (arange, position ids) is a constant.
LogicalResult tp::importRange(NodeImporter &n) {
  SmallVector<double> v;
  Type elem;
  static const StringRef kInputs[] = {"start", "limit", "delta"};
  for (auto [i, what] : llvm::enumerate(kInputs)) {
    Value in = n.input(i);
    DenseElementsAttr attr;
    if (!in || !matchPattern(in, m_Constant(&attr)) || attr.getNumElements() != 1) {
      auto diag = n.error() << "the " << what
                            << " input must be a compile-time constant scalar";
      if (in)
        n.explainNotConstant(in, diag);
      return failure();
    }
    elem = attr.getElementType();
    v.push_back(isa<FloatType>(elem)
                    ? (*attr.getValues<APFloat>().begin()).convertToDouble()
                    : double((*attr.getValues<APInt>().begin()).getSExtValue()));
  }
  if (v[2] == 0)
    return n.error() << "delta is 0";
  int64_t count = std::max<int64_t>(0, int64_t(std::ceil((v[1] - v[0]) / v[2])));
  if (count > kMaxFoldElements)
    return n.error() << "the range has " << count
                     << " elements, over the folding limit of "
                     << kMaxFoldElements;
  auto type = RankedTensorType::get({count}, elem);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < count; ++i) {
    double x = v[0] + i * v[2];
    values.push_back(isa<FloatType>(elem)
                         ? Attribute(n.b.getFloatAttr(elem, x))
                         : Attribute(n.b.getIntegerAttr(elem, int64_t(x))));
  }
  n.outputs.push_back(n.constant(DenseElementsAttr::get(type, values)));
  return success();
}

/// CumSum along `axis` is a product with a triangle of ones (its reverse
/// and exclusive forms other triangles), so it lowers to a GEMM, shards
/// like one and differentiates like one.
LogicalResult tp::importCumSum(NodeImporter &n) {
  auto x = n.requiredInput(0, "x");
  if (failed(x))
    return failure();
  RankedTensorType type = n.typeOf(*x);
  if (!isa<FloatType>(type.getElementType()))
    return n.error() << "needs a float input, got " << type;
  auto axisV = n.constantInts(n.input(1), "axis");
  if (failed(axisV) || axisV->size() != 1)
    return failed(axisV) ? failure()
                         : (n.error() << "axis must hold one value", failure());
  auto axis = n.normalizeAxis((*axisV)[0], type.getRank(), "axis");
  if (failed(axis))
    return failure();
  int64_t len = type.getDimSize(*axis);
  bool exclusive = n.intAttr("exclusive", 0), reverse = n.intAttr("reverse", 0);
  // y[j] = sum_i x[i] * T[i, j]: T[i, j] = 1 where i <= j (i < j exclusive;
  // i >= j, i > j reversed).
  SmallVector<Attribute> ones;
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < len; ++j) {
      bool on = reverse ? (exclusive ? i > j : i >= j)
                        : (exclusive ? i < j : i <= j);
      ones.push_back(n.b.getFloatAttr(type.getElementType(), on ? 1.0 : 0.0));
    }
  Value tri = n.constant(DenseElementsAttr::get(
      RankedTensorType::get({len, len}, type.getElementType()), ones));
  auto last = moveDim(n, *x, *axis, type.getRank() - 1);
  if (failed(last))
    return failure();
  auto y = n.createInferred<MatMulOp>(*last, tri);
  if (failed(y))
    return failure();
  return emit(n, moveDim(n, *y, type.getRank() - 1, *axis));
}

/// A 0-d constant `v` of type `element` (integer or float).
static Value scalarOfType(NodeImporter &n, Type element, double v) {
  auto t = RankedTensorType::get({}, element);
  if (isa<FloatType>(element))
    return n.constant(
        DenseElementsAttr::get(t, n.b.getFloatAttr(element, v)));
  return n.constant(DenseElementsAttr::get(
      t, APInt(element.getIntOrFloatBitWidth(), int64_t(v), /*isSigned=*/true)));
}

/// ScatterElements' and ScatterND's operands, and whether the reduction is
/// add (else none: the only two tp composes), on float data.
struct ScatterOperands {
  Value data, indices, updates;
  bool add;
};
static FailureOr<ScatterOperands> scatterOperands(NodeImporter &n) {
  auto data = n.requiredInput(0, "data");
  auto indices = n.requiredInput(1, "indices");
  auto updates = n.requiredInput(2, "updates");
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  std::string reduction = n.stringAttr("reduction", "none");
  if (reduction != "none" && reduction != "add")
    return n.error() << "reduction '" << reduction
                     << "' is not supported (none and add are)";
  if (!isa<FloatType>(n.typeOf(*data).getElementType()))
    return n.error() << "needs float data, got " << n.typeOf(*data);
  return ScatterOperands{*data, *indices, *updates, reduction == "add"};
}

/// ScatterElements (reduction none or add) on float data, with the axis
/// moved last: onehot(indices) [.., K, A] times updates [.., K, 1] summed
/// over K is what lands on each position; `none` keeps data where nothing
/// lands. One-hot products shard and differentiate like the rest.
LogicalResult tp::importScatterElements(NodeImporter &n) {
  auto operands = scatterOperands(n);
  if (failed(operands))
    return failure();
  Value data = operands->data, indices = operands->indices,
        updates = operands->updates;
  RankedTensorType dt = n.typeOf(data), it = n.typeOf(indices);
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), dt.getRank(), "axis");
  if (failed(axis))
    return failure();
  int64_t rank = dt.getRank(), len = dt.getDimSize(*axis);
  if (it.getRank() != rank || n.typeOf(updates).getShape() != it.getShape())
    return n.error() << "indices and updates must have data's rank and one "
                        "shape, got "
                     << it << " and " << n.typeOf(updates);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && it.getDimSize(d) != dt.getDimSize(d))
      return n.error() << "indices smaller than data off the axis (dim " << d
                       << ": " << it.getDimSize(d) << " of "
                       << dt.getDimSize(d) << ") are not supported";
  Compose c{n};
  auto dLast = moveDim(n, data, *axis, rank - 1);
  auto iLast = moveDim(n, indices, *axis, rank - 1);
  auto uLast = moveDim(n, updates, *axis, rank - 1);
  if (failed(dLast) || failed(iLast) || failed(uLast))
    return failure();
  // Negative indices count from the end.
  Type idElem = it.getElementType();
  Value wrapped = c.where(c.cmp<LessOp>(*iLast, scalarOfType(n, idElem, 0)),
                          c.bin<AddOp>(*iLast, scalarOfType(n, idElem, len)),
                          *iLast);
  if (c.failed)
    return failure();
  auto hot = oneHotLast(n, wrapped, len, dt.getElementType());
  SmallVector<int64_t> column(n.typeOf(*uLast).getShape());
  column.push_back(1);
  auto u = reshape(n, *uLast, column);
  if (failed(hot) || failed(u))
    return failure();
  auto landed = reduceOver<ReduceSumOp>(n, c.bin<MulOp>(*hot, *u), {rank - 1},
                                        false);
  if (c.failed || failed(landed))
    return failure();
  Value y;
  if (operands->add) {
    y = c.bin<AddOp>(*dLast, *landed);
  } else {
    // A select, not data * (1 - hit): -inf in data must not become NaN.
    auto hits = reduceOver<ReduceSumOp>(n, *hot, {rank - 1}, false);
    if (failed(hits))
      return failure();
    y = c.where(c.positive(*hits), *landed, *dLast);
  }
  if (c.failed)
    return failure();
  return emit(n, moveDim(n, y, rank - 1, *axis));
}

/// TopK without sorting: along the axis (moved last), element i's place in
/// the result is the number of elements that come before it (larger, or
/// equal at a lower index: ONNX's order, exact with ties and infinities);
/// the k places select their element by a one-hot over the axis. All pairs
/// are compared, so the work is len^2 per row (limited below). Values are
/// a where + reduce_sum of the input, so their gradient flows back to the
/// chosen elements through rules that exist.
LogicalResult tp::importTopK(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  RankedTensorType xt = n.typeOf(*x);
  int64_t k;
  if (n.opset < 10) {
    k = n.intAttr("k", -1);
  } else {
    auto kv = n.constantInts(n.input(1), "K");
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return n.error() << "K must hold one value, got " << kv->size();
    k = (*kv)[0];
  }
  int64_t rank = xt.getRank();
  auto axis = n.normalizeAxis(n.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  bool largest = n.intAttr("largest", 1) != 0;
  int64_t len = xt.getDimSize(*axis);
  if (k < 0 || k > len)
    return n.error() << "K = " << k << " must be between 0 and " << len
                     << " (the size of axis " << *axis << ")";
  constexpr int64_t kMaxPairs = int64_t(1) << 28;
  if (xt.getNumElements() * len > kMaxPairs)
    return n.error() << "TopK compares every pair along the axis: "
                     << xt.getNumElements() << " x " << len
                     << " comparisons exceed the limit of " << kMaxPairs;
  Type elem = xt.getElementType();
  Compose c{n};
  auto last = moveDim(n, *x, *axis, rank - 1);
  if (failed(last))
    return failure();
  SmallVector<int64_t> col(n.typeOf(*last).getShape()), row(col);
  col.push_back(1);
  row.insert(row.end() - 1, 1);
  auto a = reshape(n, *last, col), b = reshape(n, *last, row);
  if (failed(a) || failed(b))
    return failure();
  // before[.., i, j]: element j comes before element i.
  SmallVector<bool> lowerBits;
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < len; ++j)
      lowerBits.push_back(j < i);
  Value lower = n.constant(DenseElementsAttr::get(
      RankedTensorType::get({len, len}, n.b.getI1Type()), ArrayRef(lowerBits)));
  Value beats = largest ? c.cmp<GreaterOp>(*b, *a) : c.cmp<LessOp>(*b, *a);
  Value before = c.bin<OrOp>(beats, c.bin<AndOp>(c.cmp<EqualOp>(*b, *a), lower));
  if (c.failed)
    return failure();
  Type f32 = n.b.getF32Type();
  auto count = n.create<CastOp>(
      RankedTensorType::get(n.typeOf(before).getShape(), f32), before);
  if (failed(count))
    return failure();
  auto place = reduceOver<ReduceSumOp>(n, *count, {rank}, /*keepdims=*/true);
  SmallVector<Attribute> places, positions;
  for (int64_t p = 0; p < k; ++p)
    places.push_back(n.b.getF32FloatAttr(p));
  for (int64_t i = 0; i < len; ++i)
    positions.push_back(n.b.getF32FloatAttr(i));
  Value wanted = n.constant(
      DenseElementsAttr::get(RankedTensorType::get({k}, f32), places));
  Value position = n.constant(
      DenseElementsAttr::get(RankedTensorType::get({len, 1}, f32), positions));
  if (failed(place))
    return failure();
  // hot[.., i, p]: element i goes to place p.
  Value hot = c.cmp<EqualOp>(*place, wanted);
  Value picked = c.where(hot, *a, scalarOfType(n, elem, 0));
  Value pickedAt = c.where(hot, position, scalarOfType(n, f32, 0));
  if (c.failed)
    return failure();
  auto values = reduceOver<ReduceSumOp>(n, picked, {rank - 1}, false);
  auto at = reduceOver<ReduceSumOp>(n, pickedAt, {rank - 1}, false);
  if (failed(values) || failed(at))
    return failure();
  auto indices = n.create<CastOp>(
      RankedTensorType::get(n.typeOf(*at).getShape(), n.b.getI64Type()), *at);
  if (failed(indices) || failed(emit(n, moveDim(n, *values, rank - 1, *axis))))
    return failure();
  return emit(n, moveDim(n, *indices, rank - 1, *axis));
}

/// ScatterND (reduction none or add) on float data: each index tuple (the
/// last dim of `indices`, q entries) is a row of data flattened to
/// [prod(dims[:q]), prod(dims[q:])]; onehot(rows)^T times the updates is
/// what lands on each row, and `none` keeps data's rows where nothing
/// lands. Indices may be computed at run time.
LogicalResult tp::importScatterND(NodeImporter &n) {
  auto operands = scatterOperands(n);
  if (failed(operands))
    return failure();
  RankedTensorType dt = n.typeOf(operands->data),
                   it = n.typeOf(operands->indices),
                   ut = n.typeOf(operands->updates);
  int64_t q = it.getRank() ? it.getShape().back() : 0;
  if (it.getRank() < 1 || q < 1 || q > dt.getRank())
    return n.error() << "indices " << it << " must end in a dim of 1 to "
                     << dt.getRank() << " (data's rank)";
  SmallVector<int64_t> expected(it.getShape().drop_back());
  llvm::append_range(expected, dt.getShape().drop_front(q));
  if (ut.getShape() != ArrayRef(expected))
    return n.error() << "updates must be " << formatShape(expected) << ", got "
                     << ut;
  int64_t rows = 1, cols = 1, tuples = 1;
  for (int64_t d : dt.getShape().take_front(q))
    rows *= d;
  for (int64_t d : dt.getShape().drop_front(q))
    cols *= d;
  for (int64_t d : it.getShape().drop_back())
    tuples *= d;
  // Row of each tuple: sum of index * stride, negative indices wrapped.
  Type idElem = it.getElementType();
  unsigned bits = idElem.getIntOrFloatBitWidth();
  SmallVector<APInt> dims, strides(q, APInt(bits, 1));
  for (int64_t j = 0; j < q; ++j)
    dims.push_back(APInt(bits, dt.getDimSize(j), /*isSigned=*/true));
  for (int64_t j = q - 2; j >= 0; --j)
    strides[j] = strides[j + 1] * dims[j + 1];
  auto vec = [&](ArrayRef<APInt> v) {
    return n.constant(DenseElementsAttr::get(
        RankedTensorType::get({q}, idElem), v));
  };
  Compose c{n};
  Value id = operands->indices;
  Value wrapped = c.where(c.cmp<LessOp>(id, scalarOfType(n, idElem, 0)),
                          c.bin<AddOp>(id, vec(dims)), id);
  Value scaled = c.bin<MulOp>(wrapped, vec(strides));
  if (c.failed)
    return failure();
  auto row = reduceOver<ReduceSumOp>(n, scaled, {it.getRank() - 1}, false);
  if (failed(row))
    return failure();
  auto flatRow = reshape(n, *row, {tuples});
  if (failed(flatRow))
    return failure();
  auto hot = oneHotLast(n, *flatRow, rows, dt.getElementType());
  auto u = reshape(n, operands->updates, {tuples, cols});
  auto d = reshape(n, operands->data, {rows, cols});
  if (failed(hot) || failed(u) || failed(d))
    return failure();
  auto hotT = moveDim(n, *hot, 0, 1);
  if (failed(hotT))
    return failure();
  auto landed = n.createInferred<MatMulOp>(*hotT, *u);
  if (failed(landed))
    return failure();
  Value y;
  if (operands->add) {
    y = c.bin<AddOp>(*d, *landed);
  } else {
    // A select, not data * (1 - hit): -inf in data must not become NaN.
    auto hits = reduceOver<ReduceSumOp>(n, *hot, {0}, false);
    if (failed(hits))
      return failure();
    auto hitCol = reshape(n, *hits, {rows, 1});
    if (failed(hitCol))
      return failure();
    y = c.where(c.positive(*hitCol), *landed, *d);
  }
  if (c.failed)
    return failure();
  return emit(n, reshape(n, y, dt.getShape()));
}
