//===- OnnxElementwiseOps.cpp - elementwise ONNX ops -> tp ops ------------===//
//
// Arithmetic, comparisons and logic, casts, Trilu's mask, and the
// activations tp has no op of its own for (Elu, Selu, HardSwish...), composed
// of tp ops. Binary ops before opset 7 broadcast only when asked to, B aligned
// at an axis; B is reshaped here so that every tp op broadcasts as numpy's.
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

//===----------------------------------------------------------------------===//
// Arithmetic, comparisons, casts
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

/// Inference-mode Dropout is the identity, its mask all true; a
/// training-mode one draws its mask (tp.dropout).
LogicalResult dropout(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  bool forcedEval = n.options && n.options->dropout == "eval";
  double ratio = 0.5; // the opset 12 default
  bool training = false;
  if (Value mode = n.input(2); mode && !forcedEval) {
    DenseIntElementsAttr modeValue;
    if (!matchPattern(mode, m_Constant(&modeValue)))
      return n.error() << "training_mode must be a constant (the export's "
                          "train() or eval())";
    training = !modeValue.getSplatValue<APInt>().isZero();
  }
  if (training) {
    if (Value r = n.input(1)) {
      DenseFPElementsAttr ratioValue;
      if (!matchPattern(r, m_Constant(&ratioValue)))
        return n.error() << "ratio must be a constant";
      ratio = ratioValue.getSplatValue<APFloat>().convertToDouble();
    }
    if (!(ratio >= 0.0 && ratio <= 1.0))
      return n.error() << "ratio " << ratio << " is not in [0, 1]";
    // A ratio of 0 keeps everything: the identity.
    training = ratio > 0.0;
  }
  if (!training) {
    n.outputs.push_back(*x);
    if (n.outputUsed(1)) {
      auto maskType =
          RankedTensorType::get(n.typeOf(*x).getShape(), n.b.getI1Type());
      n.outputs.push_back(n.constant(DenseElementsAttr::get(maskType, true)));
    }
    return success();
  }
  RankedTensorType type = n.typeOf(*x);
  auto drop = [&](Value v) {
    return n.create<DropoutOp>(
        type, v, n.dropoutStep(), ValueRange(), n.b.getF64FloatAttr(ratio),
        n.b.getI64IntegerAttr(n.options ? n.options->seed : 0),
        n.b.getI64IntegerAttr(n.dropoutSite),
        n.b.getDenseI64ArrayAttr(type.getShape()));
  };
  auto y = drop(*x);
  if (failed(y))
    return failure();
  n.outputs.push_back(*y);
  if (n.outputUsed(1)) {
    // The mask: where a one survives (the same key draws the same mask).
    Value ones = n.constant(DenseElementsAttr::get(
        type, n.b.getFloatAttr(type.getElementType(), 1.0)));
    auto kept = drop(ones);
    if (failed(kept))
      return failure();
    auto maskType = RankedTensorType::get(type.getShape(), n.b.getI1Type());
    auto zero = n.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, type.getElementType()),
        n.b.getFloatAttr(type.getElementType(), 0.0)));
    auto mask = n.create<GreaterOp>(maskType, *kept, zero);
    if (failed(mask))
      return failure();
    n.outputs.push_back(*mask);
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
// Activations and variadic ops composed of tp ops
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

/// The elementwise op types.
const OnnxOpEntry kOps[] = {
    {"Abs", 1, unary<AbsOp>},
    {"Add", 1, binary<AddOp>},
    {"And", 7, boolean<AndOp>},
    {"Cast", 6, cast},
    {"CastLike", 15, castLike},
    {"Ceil", 1, unary<CeilOp>},
    {"Celu", 12, activation<celu>},
    {"Clip", 6, clip},
    {"Cos", 7, unary<CosOp>},
    {"Div", 1, binary<DivOp>},
    {"Dropout", 1, dropout},
    {"Elu", 6, activation<elu>},
    {"Equal", 7, boolean<EqualOp>},
    {"Erf", 9, unary<ErfOp>},
    {"Exp", 1, unary<ExpOp>},
    {"Floor", 1, unary<FloorOp>},
    {"Greater", 7, boolean<GreaterOp>},
    {"GreaterOrEqual", 12, boolean<GreaterEqualOp>},
    {"HardSigmoid", 6, activation<hardSigmoid>},
    {"HardSwish", 14, activation<hardSwish>},
    {"Identity", 1, identity},
    {"LeakyRelu", 6, activation<leakyRelu>},
    {"Less", 7, boolean<LessOp>},
    {"LessOrEqual", 12, boolean<LessEqualOp>},
    {"Log", 1, unary<LogOp>},
    {"Max", 6, variadic<MaxOp>},
    {"Mean", 6, sumOrMean<true>},
    {"Min", 6, variadic<MinOp>},
    {"Mod", 10, mod},
    {"Mul", 1, binary<MulOp>},
    {"Neg", 1, unary<NegOp>},
    {"Not", 1, unary<NotOp>},
    {"Or", 7, boolean<OrOp>},
    {"PRelu", 7, prelu},
    {"Pow", 1, pow},
    {"Reciprocal", 1, unary<ReciprocalOp>},
    {"Relu", 1, unary<ReluOp>},
    {"Round", 11, unary<RoundOp>},
    {"Selu", 6, activation<selu>},
    {"Sigmoid", 1, unary<SigmoidOp>},
    {"Sin", 7, unary<SinOp>},
    {"Softplus", 1, activation<softplus>},
    {"Softsign", 1, activation<softsign>},
    {"Sqrt", 1, unary<SqrtOp>},
    {"Sub", 1, binary<SubOp>},
    {"Sum", 6, sumOrMean<false>},
    {"Tanh", 1, unary<TanhOp>},
    {"ThresholdedRelu", 10, activation<thresholdedRelu>},
    {"Trilu", 14, trilu},
    {"Where", 9, where},
    {"Xor", 7, boolean<XorOp>},
};

} // namespace

ArrayRef<OnnxOpEntry> tp::elementwiseOnnxOps() { return kOps; }
