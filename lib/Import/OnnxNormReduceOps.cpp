//===- OnnxNormReduceOps.cpp - normalizations and reductions -> tp --------===//
//
// Softmax, LogSoftmax and Hardmax, the normalizations (LayerNormalization
// is tp.layer_norm; BatchNormalization in inference and InstanceNormalization
// are composed of tp ops) and the reductions. Their opset differences end
// here: before opset 13 Softmax and Hardmax flatten the input to 2-D at the
// axis; reduction axes move from an attribute to an input (ReduceSum at
// opset 13, the others at 18); ReduceL2, ReduceLogSumExp... are a tp
// reduction between two elementwise maps.
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

//===----------------------------------------------------------------------===//
// Softmax and normalizations
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

/// A running statistic (BatchNormalization's input_mean / input_var) is a
/// buffer, not a parameter: it gets no gradient and no optimizer update.
static void markBuffer(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (func && func.getArgAttr(arg.getArgNumber(), "tp.param"))
    func.setArgAttr(arg.getArgNumber(), "tp.buffer",
                    UnitAttr::get(func.getContext()));
}

/// Whether the node normalizes with batch statistics: training_mode = 1
/// (opset 14+), running statistics as outputs (before), or --batchnorm.
static bool batchNormTraining(NodeImporter &n) {
  StringRef mode = n.options ? StringRef(n.options->batchNorm) : "";
  if (mode == "train" || mode == "eval")
    return mode == "train";
  return n.opset >= 14 ? n.intAttr("training_mode", 0) != 0
                       : n.outputUsed(1) || n.outputUsed(2);
}

/// BatchNormalization: (x - mean) / sqrt(var + eps) * scale + B per channel
/// (dim 1). In inference, mean and var are the running statistics. In
/// training, they are the batch's, over every dim but the channel's,
/// computed in groups of the batch (x viewed [G, N/G, C, S...]: G = 1 on one
/// device and for SyncBatchNorm, one group per data-parallel rank for DDP's
/// local statistics; each group on its own rank, so DDP's are computed
/// without communication and SyncBatchNorm's are partial sums all-reduced
/// by propagation). The running statistics are updated as PyTorch does,
/// from the first group (DDP keeps rank 0's buffers): r * momentum +
/// stat * (1 - momentum), the variance unbiased.
LogicalResult batchNorm(NodeImporter &n) {
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
  markBuffer(in[3]);
  markBuffer(in[4]);
  RankedTensorType type = n.typeOf(in[0]);
  if (type.getRank() < 2)
    return n.error() << "needs an input of rank 2 or more, got " << type;
  Compose c{n};
  Value eps = c.c(in[0], n.floatAttr("epsilon", 1e-5f));
  if (!batchNormTraining(n)) {
    // [C] -> [C, 1, ..., 1] so that it broadcasts over dims 2...
    SmallVector<int64_t> perChannel(type.getRank() - 1, 1);
    perChannel[0] = type.getDimSize(1);
    auto channel = [&](Value v) { return c.reshape(v, perChannel); };
    Value invStd = c.un<ReciprocalOp>(
        c.un<SqrtOp>(c.bin<AddOp>(channel(in[4]), eps)));
    Value y = c.bin<MulOp>(c.bin<SubOp>(in[0], channel(in[3])),
                           c.bin<MulOp>(invStd, channel(in[1])));
    if (failed(c.emit(c.bin<AddOp>(y, channel(in[2])))))
      return failure();
    // A training export run in eval mode (--batchnorm eval) names the
    // statistics outputs: they are the running ones, unchanged.
    for (unsigned i = 1; i < n.numOutputs() && i <= 4; ++i)
      n.outputs.push_back(in[i % 2 ? 3 : 4]);
    return success();
  }

  int64_t batch = type.getDimSize(0), channels = type.getDimSize(1);
  int64_t groups = n.options ? n.options->batchNormGroups : 1;
  if (groups < 1 || batch % groups)
    return n.error() << "training-mode BatchNormalization computes each "
                        "data-parallel rank's statistics on its part of the "
                        "batch: batch "
                     << batch << " does not split into " << groups
                     << " parts (use SyncBatchNorm, or a batch that divides)";
  // x as [G, N/G, C, S...]; statistics over all dims but G and C.
  SmallVector<int64_t> grouped = {groups, batch / groups};
  llvm::append_range(grouped, type.getShape().drop_front());
  SmallVector<int64_t> axes = {1};
  for (int64_t d = 3; d < int64_t(grouped.size()); ++d)
    axes.push_back(d);
  SmallVector<int64_t> perChannel(grouped.size(), 1);
  perChannel[2] = channels;
  auto channel = [&](Value v) { return c.reshape(v, perChannel); };
  Value xg = c.reshape(in[0], grouped);
  if (c.failed)
    return failure();
  auto mean = reduceOver<ReduceMeanOp>(n, xg, axes, true);
  if (failed(mean))
    return failure();
  Value centered = c.bin<SubOp>(xg, *mean);
  if (c.failed)
    return failure();
  auto var = reduceOver<ReduceMeanOp>(n, c.bin<MulOp>(centered, centered),
                                      axes, true);
  if (c.failed || failed(var))
    return failure();
  Value invStd = c.un<ReciprocalOp>(c.un<SqrtOp>(c.bin<AddOp>(*var, eps)));
  Value y = c.bin<AddOp>(
      c.bin<MulOp>(centered, c.bin<MulOp>(invStd, channel(in[1]))),
      channel(in[2]));
  if (c.failed || failed(emit(n, reshape(n, y, type.getShape()))))
    return failure();

  // Running statistics from the first group.
  int64_t count = (batch / groups) * type.getNumElements() / (batch * channels);
  // [G, 1, C, 1...] -> group 0's [1, 1, C, 1...] -> [C].
  auto firstGroup = [&](Value stat) -> Value {
    SmallVector<int64_t> starts(perChannel.size(), 0),
        steps(perChannel.size(), 1);
    auto sliced = n.create<SliceOp>(withShape(n.typeOf(stat), perChannel),
                                    stat, starts, perChannel, steps);
    if (failed(sliced))
      return c.failed = true, Value();
    return c.reshape(*sliced, {channels});
  };
  double momentum = n.floatAttr("momentum", 0.9f);
  auto update = [&](Value running, Value stat) {
    return c.bin<AddOp>(c.bin<MulOp>(running, c.c(running, momentum)),
                        c.bin<MulOp>(stat, c.c(stat, 1.0 - momentum)));
  };
  Value newMean = update(in[3], firstGroup(*mean));
  Value unbiased = firstGroup(*var);
  if (count > 1)
    unbiased = c.bin<MulOp>(unbiased, c.c(unbiased, double(count) / (count - 1)));
  Value newVar = update(in[4], unbiased);
  if (c.failed)
    return failure();
  // Outputs 1 and 2 are the updated running statistics; 3 and 4 (before
  // opset 14: the batch's mean and variance, for a backward pass of the
  // exporter's own) are named by torch's exports but read by no node.
  Value outs[] = {newMean, newVar, firstGroup(*mean), firstGroup(*var)};
  if (c.failed)
    return failure();
  for (unsigned i = 1; i < n.numOutputs() && i <= 4; ++i)
    n.outputs.push_back(outs[i - 1]);
  std::pair<Value, Value> buffers[] = {{in[3], newMean}, {in[4], newVar}};
  for (auto [running, updated] : buffers)
    if (auto arg = dyn_cast<BlockArgument>(running))
      n.bufferUpdates.push_back({arg, updated});
  return success();
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

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

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

/// The normalization and reduction op types.
const OnnxOpEntry kOps[] = {
    {"ArgMax", 1, argReduce<true>},
    {"ArgMin", 1, argReduce<false>},
    {"BatchNormalization", 6, batchNorm},
    {"Hardmax", 1, hardmax},
    {"InstanceNormalization", 6, instanceNorm},
    {"LayerNormalization", 17, layerNorm},
    {"LogSoftmax", 1, softmax<LogSoftmaxOp>},
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
    {"Softmax", 1, softmax<SoftmaxOp>},
};

} // namespace

ArrayRef<OnnxOpEntry> tp::normReduceOnnxOps() { return kOps; }
