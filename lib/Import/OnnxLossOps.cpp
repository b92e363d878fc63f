//===- OnnxLossOps.cpp - ONNX's loss ops as tp ops -------------------------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12+) are
// built from tp ops that already shard and differentiate: the class dim is
// moved last, the target becomes a one-hot mask (tp.one_hot: a target
// outside [0, C), such as ignore_index, selects nothing), the picked
// log-probability and its class weight are reduced out of it, and the
// reduction (none, sum, mean: divided by the summed weights) follows.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

RankedTensorType shaped(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

/// `OpTy` of `v` over all its dims: a scalar.
template <typename OpTy> FailureOr<Value> reduceAll(NodeImporter &n, Value v) {
  return reduceOver<OpTy>(
      n, v, llvm::to_vector(llvm::seq<int64_t>(0, n.typeOf(v).getRank())),
      false);
}

/// The loss of log-probabilities `logProb` [N, C, d...] at `target`
/// [N, d...], weighted by `weight` [C] (may be null).
FailureOr<Value> nllLoss(NodeImporter &n, Value logProb, Value target,
                         Value weight) {
  RankedTensorType type = n.typeOf(logProb);
  RankedTensorType targetType = n.typeOf(target);
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  if (rank < 2)
    return n.error() << "the input " << formatShape(type.getShape())
                     << " has no class dim: [N, C] or [N, C, d1, ...]";
  SmallVector<int64_t> expected{type.getDimSize(0)};
  llvm::append_range(expected, type.getShape().drop_front(2));
  if (!targetType.getElementType().isSignlessInteger())
    return n.error() << "the target must hold class indices (integers), not "
                     << targetType.getElementType();
  if (targetType.getShape() != ArrayRef<int64_t>(expected))
    return n.error() << "the target " << formatShape(targetType.getShape())
                     << " must be " << formatShape(expected) << ", the input "
                     << formatShape(type.getShape())
                     << " without its class dim";
  int64_t classes = type.getDimSize(1);
  if (weight && n.typeOf(weight).getShape() != ArrayRef<int64_t>{classes})
    return n.error() << "the weight "
                     << formatShape(n.typeOf(weight).getShape()) << " must be ["
                     << classes << "], one per class";

  // The class dim last, where tp.one_hot puts it.
  auto x = moveDim(n, logProb, 1, rank - 1);
  auto mask = oneHotLast(n, target, classes, element);
  if (failed(x) || failed(mask))
    return failure();
  auto masked = n.createInferred<MulOp>(*x, *mask);
  if (failed(masked))
    return failure();
  auto picked = reduceOver<ReduceSumOp>(n, *masked, {rank - 1}, false);
  if (failed(picked))
    return failure();
  auto loss = n.create<NegOp>(n.typeOf(*picked), *picked);
  if (failed(loss))
    return failure();

  // Per-element weights: the target class's, zero where ignored.
  Value weights;
  if (weight) {
    auto perClass = n.createInferred<MulOp>(*mask, weight);
    if (failed(perClass))
      return failure();
    auto w = reduceOver<ReduceSumOp>(n, *perClass, {rank - 1}, false);
    if (failed(w))
      return failure();
    weights = *w;
  }
  if (const onnx::AttributeProto *ignore = n.attr("ignore_index")) {
    Value ignored = n.constant(DenseElementsAttr::get(
        shaped({}, targetType.getElementType()),
        n.b.getIntegerAttr(targetType.getElementType(), ignore->i())));
    RankedTensorType boolType = shaped(expected, n.b.getI1Type());
    auto same = n.create<EqualOp>(boolType, target, ignored);
    if (failed(same))
      return failure();
    auto differs = n.create<NotOp>(boolType, *same);
    if (failed(differs))
      return failure();
    auto valid = n.create<CastOp>(shaped(expected, element), *differs);
    if (failed(valid))
      return failure();
    if (weights) {
      auto w = n.createInferred<MulOp>(weights, *valid);
      if (failed(w))
        return failure();
      weights = *w;
    } else {
      weights = *valid;
    }
  }
  if (weights) {
    auto weighted = n.createInferred<MulOp>(*loss, weights);
    if (failed(weighted))
      return failure();
    loss = weighted;
  }

  std::string reduction = n.stringAttr("reduction", "mean");
  if (reduction == "none")
    return loss;
  if (reduction == "sum")
    return reduceAll<ReduceSumOp>(n, *loss);
  if (reduction != "mean")
    return n.error() << "reduction '" << reduction
                     << "' is not none, sum or mean";
  if (!weights)
    return reduceAll<ReduceMeanOp>(n, *loss);
  auto total = reduceAll<ReduceSumOp>(n, *loss);
  auto weightTotal = reduceAll<ReduceSumOp>(n, weights);
  if (failed(total) || failed(weightTotal))
    return failure();
  return n.createInferred<DivOp>(*total, *weightTotal);
}

} // namespace

LogicalResult mlir::tp::importNegativeLogLikelihoodLoss(NodeImporter &n) {
  auto input = n.requiredInput(0, "input");
  auto target = n.requiredInput(1, "target");
  if (failed(input) || failed(target))
    return failure();
  auto loss = nllLoss(n, *input, *target, n.input(2));
  if (failed(loss))
    return failure();
  n.outputs.push_back(*loss);
  return success();
}

LogicalResult mlir::tp::importSoftmaxCrossEntropyLoss(NodeImporter &n) {
  auto scores = n.requiredInput(0, "scores");
  auto labels = n.requiredInput(1, "labels");
  if (failed(scores) || failed(labels))
    return failure();
  if (n.typeOf(*scores).getRank() < 2)
    return n.error() << "the scores "
                     << formatShape(n.typeOf(*scores).getShape())
                     << " have no class dim: [N, C] or [N, C, d1, ...]";
  auto logProb = n.create<LogSoftmaxOp>(n.typeOf(*scores), *scores, int64_t(1));
  if (failed(logProb))
    return failure();
  auto loss = nllLoss(n, *logProb, *labels, n.input(2));
  if (failed(loss))
    return failure();
  n.outputs.push_back(*loss);
  if (n.numOutputs() > 1)
    n.outputs.push_back(*logProb);
  return success();
}
