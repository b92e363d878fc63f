//===- TPFolders.cpp - evaluating tp ops on constants ---------------------===//
//
// One evaluator for every elementwise op (with ONNX broadcasting), expand and
// transpose: exporters leave whole subgraphs of constants (`x.expand(...)`'s
// ConstantOfShape -> Mul -> Equal -> Where chain, causal masks, position
// ids), and the importer needs their values as constants. Floats are
// computed in double and rounded once to the result type; integers in
// int64 and truncated to the result's width (i1 is 0 / 1).
//
//===----------------------------------------------------------------------===//
#include "tp/Dialect/TP/IR/TPFolders.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

using namespace mlir;
using namespace mlir::tp;

namespace {
/// A constant's elements in row-major order.
struct Elements {
  bool isFloat = false;
  SmallVector<int64_t> ints;
  SmallVector<double> floats;
  SmallVector<int64_t> shape;

  int64_t size() const { return isFloat ? floats.size() : ints.size(); }
  double f(int64_t k) const { return isFloat ? floats[k] : double(ints[k]); }
  int64_t i(int64_t k) const { return isFloat ? int64_t(floats[k]) : ints[k]; }
};
} // namespace

static std::optional<Elements> readElements(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  Elements e;
  auto type = cast<ShapedType>(dense.getType());
  e.shape.assign(type.getShape().begin(), type.getShape().end());
  Type elem = type.getElementType();
  if (auto ft = dyn_cast<FloatType>(elem)) {
    e.isFloat = true;
    if (ft.isF32())
      for (float v : dense.getValues<float>())
        e.floats.push_back(v);
    else
      for (APFloat v : dense.getValues<APFloat>()) {
        bool lost;
        v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
        e.floats.push_back(v.convertToDouble());
      }
    return e;
  }
  auto it = dyn_cast<IntegerType>(elem);
  if (!it)
    return std::nullopt;
  for (const APInt &v : dense.getValues<APInt>())
    e.ints.push_back(it.getWidth() == 1 ? int64_t(v.getZExtValue())
                                        : v.getSExtValue());
  return e;
}

/// Every operand's elements, or nothing when one is not a constant.
static std::optional<SmallVector<Elements>> readAll(ArrayRef<Attribute> attrs) {
  SmallVector<Elements> all;
  for (Attribute a : attrs) {
    std::optional<Elements> e = readElements(a);
    if (!e)
      return std::nullopt;
    all.push_back(std::move(*e));
  }
  return all;
}

/// The attribute of `type` holding `e` (floats rounded to the element type,
/// integers truncated to its width).
static DenseElementsAttr writeElements(RankedTensorType type,
                                       const Elements &e) {
  Type elem = type.getElementType();
  if (auto ft = dyn_cast<FloatType>(elem)) {
    if (ft.isF32()) {
      SmallVector<float> values;
      for (int64_t k = 0; k < e.size(); ++k)
        values.push_back(float(e.f(k)));
      return DenseElementsAttr::get(type, ArrayRef(values));
    }
    SmallVector<APFloat> values;
    for (int64_t k = 0; k < e.size(); ++k) {
      APFloat v(e.f(k));
      bool lost;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = cast<IntegerType>(elem).getWidth();
  if (width == 1) {
    SmallVector<bool> values;
    for (int64_t k = 0; k < e.size(); ++k)
      values.push_back(e.i(k) != 0);
    return DenseElementsAttr::get(type, ArrayRef(values));
  }
  SmallVector<APInt> values;
  for (int64_t k = 0; k < e.size(); ++k)
    values.push_back(APInt(64, uint64_t(e.i(k)), /*isSigned=*/true)
                         .sextOrTrunc(width));
  return DenseElementsAttr::get(type, values);
}

/// Linear index into an operand of shape `in` for each element of `out`
/// under numpy broadcasting (missing leading dims and size-1 dims repeat).
static SmallVector<int64_t> broadcastIndices(ArrayRef<int64_t> in,
                                             ArrayRef<int64_t> out) {
  int64_t n = 1;
  for (int64_t d : out)
    n *= d;
  SmallVector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (int64_t d = int64_t(in.size()) - 1; d >= 0; --d) {
    int64_t od = d + int64_t(out.size()) - int64_t(in.size());
    strides[od] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  SmallVector<int64_t> indices(n), index(out.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t linear = 0;
    for (size_t d = 0; d < out.size(); ++d)
      linear += index[d] * strides[d];
    indices[k] = linear;
    for (int64_t d = int64_t(out.size()) - 1; d >= 0; --d) {
      if (++index[d] < out[d])
        break;
      index[d] = 0;
    }
  }
  return indices;
}

static std::optional<double> evalFloat(Operation *op, ArrayRef<double> x) {
  double a = x[0], b = x.size() > 1 ? x[1] : 0;
  return llvm::TypeSwitch<Operation *, std::optional<double>>(op)
      .Case<AddOp>([&](auto) { return a + b; })
      .Case<SubOp>([&](auto) { return a - b; })
      .Case<MulOp>([&](auto) { return a * b; })
      .Case<DivOp>([&](auto) { return a / b; })
      .Case<PowOp>([&](auto) { return std::pow(a, b); })
      .Case<RemOp>([&](auto) { return std::fmod(a, b); })
      .Case<MaxOp>([&](auto) { return std::isnan(a) || a >= b ? a : b; })
      .Case<MinOp>([&](auto) { return std::isnan(a) || a <= b ? a : b; })
      .Case<ReluOp>([&](auto) { return a > 0 ? a : 0.0; })
      .Case<NegOp>([&](auto) { return -a; })
      .Case<AbsOp>([&](auto) { return std::fabs(a); })
      .Case<CeilOp>([&](auto) { return std::ceil(a); })
      .Case<FloorOp>([&](auto) { return std::floor(a); })
      .Case<RoundOp>([&](auto) { return std::nearbyint(a); })
      .Case<CosOp>([&](auto) { return std::cos(a); })
      .Case<SinOp>([&](auto) { return std::sin(a); })
      .Case<SqrtOp>([&](auto) { return std::sqrt(a); })
      .Case<ErfOp>([&](auto) { return std::erf(a); })
      .Case<TanhOp>([&](auto) { return std::tanh(a); })
      .Case<SigmoidOp>([&](auto) { return 1 / (1 + std::exp(-a)); })
      .Case<ExpOp>([&](auto) { return std::exp(a); })
      .Case<LogOp>([&](auto) { return std::log(a); })
      .Case<ReciprocalOp>([&](auto) { return 1 / a; })
      .Default([](Operation *) { return std::nullopt; });
}

static std::optional<int64_t> evalInt(Operation *op, ArrayRef<int64_t> x) {
  int64_t a = x[0], b = x.size() > 1 ? x[1] : 0;
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case<AddOp>([&](auto) { return int64_t(uint64_t(a) + uint64_t(b)); })
      .Case<SubOp>([&](auto) { return int64_t(uint64_t(a) - uint64_t(b)); })
      .Case<MulOp>([&](auto) { return int64_t(uint64_t(a) * uint64_t(b)); })
      .Case<DivOp>([&](auto) -> std::optional<int64_t> {
        if (b == 0 || (a == INT64_MIN && b == -1))
          return std::nullopt;
        return a / b;
      })
      .Case<RemOp>([&](auto) -> std::optional<int64_t> {
        if (b == 0 || (a == INT64_MIN && b == -1))
          return std::nullopt;
        return a % b;
      })
      .Case<MaxOp>([&](auto) { return std::max(a, b); })
      .Case<MinOp>([&](auto) { return std::min(a, b); })
      .Case<AndOp>([&](auto) { return int64_t(a && b); })
      .Case<OrOp>([&](auto) { return int64_t(a || b); })
      .Case<XorOp>([&](auto) { return int64_t(bool(a) != bool(b)); })
      .Case<NotOp>([&](auto) { return int64_t(!a); })
      .Default([](Operation *) { return std::nullopt; });
}

/// Comparisons read their operands as floats or integers, whichever they
/// are, and give 0 / 1.
static std::optional<int64_t> evalCompare(Operation *op, bool floats,
                                          const Elements &l, int64_t li,
                                          const Elements &r, int64_t ri) {
  auto cmp = [&](auto a, auto b) -> std::optional<int64_t> {
    if (isa<GreaterOp>(op))
      return a > b;
    if (isa<LessOp>(op))
      return a < b;
    if (isa<EqualOp>(op))
      return a == b;
    if (isa<GreaterEqualOp>(op))
      return a >= b;
    if (isa<LessEqualOp>(op))
      return a <= b;
    return std::nullopt;
  };
  return floats ? cmp(l.f(li), r.f(ri)) : cmp(l.i(li), r.i(ri));
}

OpFoldResult tp::foldElementwise(Operation *op, ArrayRef<Attribute> operands) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (type.getNumElements() > kMaxFoldElements)
    return {};
  std::optional<SmallVector<Elements>> read = readAll(operands);
  if (!read)
    return {};
  SmallVector<Elements> &in = *read;
  SmallVector<SmallVector<int64_t>> index;
  for (const Elements &e : in)
    index.push_back(broadcastIndices(e.shape, type.getShape()));
  int64_t n = type.getNumElements();
  Elements out;
  out.isFloat = isa<FloatType>(type.getElementType());
  bool compare = isa<GreaterOp, LessOp, EqualOp, GreaterEqualOp, LessEqualOp>(op);
  for (int64_t k = 0; k < n; ++k) {
    if (isa<ExpandOp>(op)) {
      if (out.isFloat)
        out.floats.push_back(in[0].f(index[0][k]));
      else
        out.ints.push_back(in[0].i(index[0][k]));
      continue;
    }
    if (isa<WhereOp>(op)) {
      int pick = in[0].i(index[0][k]) ? 1 : 2;
      if (out.isFloat)
        out.floats.push_back(in[pick].f(index[pick][k]));
      else
        out.ints.push_back(in[pick].i(index[pick][k]));
      continue;
    }
    if (compare) {
      auto v = evalCompare(op, in[0].isFloat, in[0], index[0][k], in[1],
                           index[1][k]);
      if (!v)
        return {};
      out.ints.push_back(*v);
      continue;
    }
    if (out.isFloat) {
      SmallVector<double, 2> x;
      for (auto [e, idx] : llvm::zip(in, index))
        x.push_back(e.f(idx[k]));
      std::optional<double> v = evalFloat(op, x);
      if (!v)
        return {};
      out.floats.push_back(*v);
    } else {
      SmallVector<int64_t, 2> x;
      for (auto [e, idx] : llvm::zip(in, index))
        x.push_back(e.i(idx[k]));
      std::optional<int64_t> v = evalInt(op, x);
      if (!v)
        return {};
      out.ints.push_back(*v);
    }
  }
  return writeElements(type, out);
}

/// The result of `type` whose element at each multi-index is element
/// `source(index)` (operand number, linear index) of `in`.
static DenseElementsAttr
gatherFrom(RankedTensorType type, ArrayRef<Elements> in,
           function_ref<std::pair<unsigned, int64_t>(ArrayRef<int64_t>)>
               source) {
  Elements out;
  out.isFloat = isa<FloatType>(type.getElementType());
  SmallVector<int64_t> index(type.getRank(), 0);
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    auto [operand, linear] = source(index);
    if (out.isFloat)
      out.floats.push_back(in[operand].f(linear));
    else
      out.ints.push_back(in[operand].i(linear));
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (++index[d] < type.getDimSize(d))
        break;
      index[d] = 0;
    }
  }
  return writeElements(type, out);
}

/// Row-major linear index of `index` in `shape`.
static int64_t linearIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> index) {
  int64_t linear = 0;
  for (auto [d, i] : llvm::zip(shape, index))
    linear = linear * d + i;
  return linear;
}

OpFoldResult tp::foldConcat(ConcatOp op, ArrayRef<Attribute> inputs) {
  auto type = op.getType();
  if (type.getNumElements() > kMaxFoldElements)
    return {};
  std::optional<SmallVector<Elements>> read = readAll(inputs);
  if (!read)
    return {};
  SmallVector<Elements> &in = *read;
  int64_t axis = op.getAxis();
  return gatherFrom(type, in, [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> at(index);
    unsigned i = 0;
    while (at[axis] >= in[i].shape[axis])
      at[axis] -= in[i++].shape[axis];
    return std::make_pair(i, linearIndex(in[i].shape, at));
  });
}

OpFoldResult tp::foldSlice(SliceOp op, Attribute input) {
  auto type = op.getType();
  std::optional<Elements> in = readElements(input);
  if (!in || type.getNumElements() > kMaxFoldElements)
    return {};
  ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
  return gatherFrom(type, *in, [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> at;
    for (auto [d, i] : llvm::enumerate(index))
      at.push_back(starts[d] + i * steps[d]);
    return std::make_pair(0u, linearIndex(in->shape, at));
  });
}

OpFoldResult tp::foldGather(GatherOp op, Attribute data, Attribute indices) {
  auto type = op.getType();
  std::optional<Elements> d = readElements(data), ids = readElements(indices);
  if (!d || !ids || type.getNumElements() > kMaxFoldElements)
    return {};
  int64_t axis = op.getAxis() < 0 ? op.getAxis() + d->shape.size()
                                  : op.getAxis();
  int64_t size = d->shape[axis], k = ids->shape.size();
  for (int64_t i = 0; i < ids->size(); ++i)
    if (ids->i(i) < -size || ids->i(i) >= size)
      return {}; // out of range: the runtime reports it
  return gatherFrom(type, *d, [&](ArrayRef<int64_t> index) {
    // result [pre, ids..., post] reads data [pre, ids[...], post].
    SmallVector<int64_t> at(index.take_front(axis));
    int64_t id = ids->i(linearIndex(ids->shape, index.slice(axis, k)));
    at.push_back(id < 0 ? id + size : id);
    llvm::append_range(at, index.drop_front(axis + k));
    return std::make_pair(0u, linearIndex(d->shape, at));
  });
}

OpFoldResult tp::foldTranspose(TransposeOp op, Attribute input) {
  auto type = op.getType();
  std::optional<Elements> in = readElements(input);
  if (!in || type.getNumElements() > kMaxFoldElements)
    return {};
  ArrayRef<int64_t> perm = op.getPerm();
  return gatherFrom(type, *in, [&](ArrayRef<int64_t> index) {
    // Result dim d is input dim perm[d].
    SmallVector<int64_t> at(perm.size());
    for (auto [d, p] : llvm::enumerate(perm))
      at[p] = index[d];
    return std::make_pair(0u, linearIndex(in->shape, at));
  });
}
