//===- OnnxIndexOps.cpp - ops that compute along index positions ----------===//
//
// Range (arange: position ids, rotary positions), CumSum and ScatterElements,
// written with tp ops that already lower, shard and differentiate: a range
// of constants is a constant, a prefix sum is a product with a triangle of
// ones, a scatter is a one-hot product summed over the indices.
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

/// ScatterElements (reduction none or add) on float data, with the axis
/// moved last: onehot(indices) [.., K, A] times updates [.., K, 1] summed
/// over K is what lands on each position; `none` keeps data where nothing
/// lands. One-hot products shard and differentiate like the rest.
LogicalResult tp::importScatterElements(NodeImporter &n) {
  auto data = n.requiredInput(0, "data");
  auto indices = n.requiredInput(1, "indices");
  auto updates = n.requiredInput(2, "updates");
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  RankedTensorType dt = n.typeOf(*data), it = n.typeOf(*indices);
  std::string reduction = n.stringAttr("reduction", "none");
  if (reduction != "none" && reduction != "add")
    return n.error() << "reduction '" << reduction
                     << "' is not supported (none and add are)";
  if (!isa<FloatType>(dt.getElementType()))
    return n.error() << "needs float data, got " << dt;
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), dt.getRank(), "axis");
  if (failed(axis))
    return failure();
  int64_t rank = dt.getRank(), len = dt.getDimSize(*axis);
  if (it.getRank() != rank || n.typeOf(*updates).getShape() != it.getShape())
    return n.error() << "indices and updates must have data's rank and one "
                        "shape, got "
                     << it << " and " << n.typeOf(*updates);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && it.getDimSize(d) != dt.getDimSize(d))
      return n.error() << "indices smaller than data off the axis (dim " << d
                       << ": " << it.getDimSize(d) << " of "
                       << dt.getDimSize(d) << ") are not supported";
  Compose c{n};
  auto dLast = moveDim(n, *data, *axis, rank - 1);
  auto iLast = moveDim(n, *indices, *axis, rank - 1);
  auto uLast = moveDim(n, *updates, *axis, rank - 1);
  if (failed(dLast) || failed(iLast) || failed(uLast))
    return failure();
  // Negative indices count from the end.
  auto intScalar = [&](int64_t v) {
    auto t = RankedTensorType::get({}, it.getElementType());
    return n.constant(DenseElementsAttr::get(
        t, APInt(it.getElementTypeBitWidth(), v, /*isSigned=*/true)));
  };
  Value wrapped = c.where(c.cmp<LessOp>(*iLast, intScalar(0)),
                          c.bin<AddOp>(*iLast, intScalar(len)), *iLast);
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
  if (reduction == "add") {
    y = c.bin<AddOp>(*dLast, *landed);
  } else {
    auto hits = reduceOver<ReduceSumOp>(n, *hot, {rank - 1}, false);
    if (failed(hits))
      return failure();
    Value hit = c.bin<MinOp>(*hits, c.c(*hits, 1.0));
    y = c.bin<AddOp>(c.bin<MulOp>(*dLast, c.bin<SubOp>(c.c(hit, 1.0), hit)),
                     *landed);
  }
  if (c.failed)
    return failure();
  return emit(n, moveDim(n, y, rank - 1, *axis));
}
