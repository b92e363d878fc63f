//===- ShardingRules.cpp - per-op sharding rules --------------------------===//
#include "tp/Sharding/ShardingRule.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tp;

using DimFactors = TensorFactors;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// One factor per dim of `shape`, all of `kind`.
static DimFactors addDimFactors(ShardingRule &rule, ArrayRef<int64_t> shape,
                                FactorKind kind = FactorKind::Parallel) {
  DimFactors dims;
  for (int64_t d : shape)
    dims.push_back({rule.addFactor(d, kind)});
  return dims;
}

/// The factors of an operand broadcast (ONNX-style, trailing-aligned)
/// against dims that already have `factors` for `shape`.
static DimFactors broadcastFactors(ArrayRef<int64_t> operand,
                                   ArrayRef<int64_t> shape,
                                   const DimFactors &factors) {
  DimFactors dims;
  size_t offset = shape.size() - operand.size();
  for (auto [i, d] : llvm::enumerate(operand)) {
    if (d == shape[offset + i])
      dims.push_back(factors[offset + i]);
    else
      dims.push_back({}); // a stretched size-1 dim
  }
  return dims;
}

/// Elementwise ops with broadcasting (including where, cast, expand).
static ShardingRule elementwiseRule(Operation *op) {
  ShardingRule rule;
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  DimFactors factors = addDimFactors(rule, shape);
  for (Value v : op->getOperands())
    rule.operands.push_back(broadcastFactors(shapeOf(v), shape, factors));
  rule.results.push_back(factors);
  return rule;
}

static ShardingRule matmulRule(MatMulOp op) {
  ShardingRule rule;
  rule.priority = 1;
  ArrayRef<int64_t> res = shapeOf(op.getResult());
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs()), rhs = shapeOf(op.getRhs());
  DimFactors out = addDimFactors(rule, res);
  int k = rule.addFactor(lhs.back(), FactorKind::Reduction);
  DimFactors batch(out.begin(), out.end() - 2);
  auto operand = [&](ArrayRef<int64_t> shape, DimFactorList row,
                     DimFactorList col) {
    DimFactors dims =
        broadcastFactors(shape.drop_back(2), res.drop_back(2), batch);
    dims.push_back(row);
    dims.push_back(col);
    return dims;
  };
  rule.operands.push_back(operand(lhs, out[res.size() - 2], {k}));
  rule.operands.push_back(operand(rhs, {k}, out[res.size() - 1]));
  rule.results.push_back(out);
  return rule;
}

static ShardingRule transposeRule(TransposeOp op) {
  ShardingRule rule;
  DimFactors in = addDimFactors(rule, shapeOf(op.getInput()));
  DimFactors out;
  for (int64_t p : op.getPerm())
    out.push_back(in[p]);
  rule.operands.push_back(in);
  rule.results.push_back(out);
  return rule;
}

/// Factorizes input and output shapes into common factors, so that a dim
/// split into several (or merged from several) shares factors with them.
static ShardingRule reshapeRule(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  ShardingRule rule;
  DimFactors inF(in.size()), outF(out.size());
  size_t i = 0, j = 0;
  int64_t inRem = 0, outRem = 0; // what is left of dims i and j
  while (true) {
    while (i < in.size() && in[i] == 1)
      ++i;
    while (j < out.size() && out[j] == 1)
      ++j;
    if (i == in.size() || j == out.size())
      break;
    if (!inRem)
      inRem = in[i];
    if (!outRem)
      outRem = out[j];
    int64_t size;
    if (inRem % outRem == 0)
      size = outRem;
    else if (outRem % inRem == 0)
      size = inRem;
    else
      break; // no common factorization from here on
    int f = rule.addFactor(size, FactorKind::Parallel);
    inF[i].push_back(f);
    outF[j].push_back(f);
    inRem /= size;
    outRem /= size;
    if (inRem == 1) {
      inRem = 0;
      ++i;
    }
    if (outRem == 1) {
      outRem = 0;
      ++j;
    }
  }
  // Dims left without a factorization must stay whole.
  for (; i < in.size(); ++i)
    if (in[i] != 1)
      inF[i].push_back(rule.addFactor(in[i], FactorKind::Replicated));
  for (; j < out.size(); ++j)
    if (out[j] != 1)
      outF[j].push_back(rule.addFactor(out[j], FactorKind::Replicated));
  rule.operands.push_back(inF);
  rule.results.push_back(outF);
  return rule;
}

/// Reductions over `axes`: the reduced factors are summed (Reduction) or,
/// for a max, must stay whole.
static ShardingRule reduceRule(Operation *op, ArrayRef<int64_t> axes,
                               bool keepdims, FactorKind reducedKind) {
  ShardingRule rule;
  rule.priority = 1;
  ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
  DimFactors inF, outF;
  for (auto [d, size] : llvm::enumerate(in)) {
    bool reduced = llvm::is_contained(axes, int64_t(d));
    int f = rule.addFactor(size, reduced ? reducedKind : FactorKind::Parallel);
    inF.push_back({f});
    if (!reduced)
      outF.push_back({f});
    else if (keepdims)
      outF.push_back({});
  }
  rule.operands.push_back(inF);
  rule.results.push_back(outF);
  return rule;
}

/// Ops that work along some dims of one tensor and keep the shape: those
/// dims (`whole`) must be replicated, the others are parallel.
static ShardingRule perDimRule(Operation *op, ArrayRef<int64_t> whole) {
  ShardingRule rule;
  rule.priority = 1;
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  DimFactors dims;
  for (auto [d, size] : llvm::enumerate(shape))
    dims.push_back({rule.addFactor(size, llvm::is_contained(whole, int64_t(d))
                                             ? FactorKind::Replicated
                                             : FactorKind::Parallel)});
  rule.operands.push_back(dims);
  rule.results.push_back(dims);
  return rule;
}

static ShardingRule layerNormRule(LayerNormOp op) {
  int64_t rank = op.getType().getRank();
  SmallVector<int64_t> normalized =
      llvm::to_vector(llvm::seq<int64_t>(op.getAxis(), rank));
  ShardingRule rule = perDimRule(op, normalized);
  DimFactors params(rule.operands[0].begin() + op.getAxis(),
                    rule.operands[0].end());
  rule.operands.push_back(params); // scale
  rule.operands.push_back(params); // bias
  return rule;
}

static ShardingRule concatRule(ConcatOp op) {
  ShardingRule rule = perDimRule(op, {int64_t(op.getAxis())});
  rule.operands.assign(op.getInputs().size(), rule.results[0]);
  return rule;
}

static ShardingRule sliceRule(SliceOp op) {
  ArrayRef<int64_t> in = shapeOf(op.getInput());
  SmallVector<int64_t> sliced;
  for (auto [d, size] : llvm::enumerate(in))
    if (op.getStarts()[d] != 0 || op.getLimits()[d] != size ||
        op.getSteps()[d] != 1)
      sliced.push_back(d);
  return perDimRule(op, sliced);
}

/// data[pre..., V, post...] indexed by ids[I...] -> [pre..., I..., post...].
/// V (the vocabulary of an embedding) is a Reduction: each device looks up
/// the ids in its slice of the table, zeros the others, and the partial
/// results are summed (Megatron's vocab-parallel embedding).
static ShardingRule gatherRule(GatherOp op) {
  ShardingRule rule;
  rule.priority = 1;
  ArrayRef<int64_t> data = shapeOf(op.getData());
  int64_t axis = op.getAxis();
  DimFactors dataF = addDimFactors(rule, data);
  rule.kinds[dataF[axis][0]] = FactorKind::Reduction;
  DimFactors idsF = addDimFactors(rule, shapeOf(op.getIndices()));
  DimFactors outF(dataF.begin(), dataF.begin() + axis);
  outF.append(idsF.begin(), idsF.end());
  outF.append(dataF.begin() + axis + 1, dataF.end());
  rule.operands = {dataF, idsF};
  rule.results.push_back(outF);
  return rule;
}

/// data and indices of one rank -> the indices' shape. Off the axis, a dim
/// the indices share with the data is one parallel factor (each device
/// gathers from its own slice); a smaller one keeps both whole. Along the
/// axis the data stays whole (the indices are global positions in it) and
/// the indices' dim is parallel.
static ShardingRule gatherElementsRule(GatherElementsOp op) {
  ShardingRule rule;
  ArrayRef<int64_t> data = shapeOf(op.getData());
  ArrayRef<int64_t> ids = shapeOf(op.getIndices());
  int64_t axis = op.getAxis();
  DimFactors dataF, idsF;
  for (int64_t d = 0; d < int64_t(data.size()); ++d) {
    if (d != axis && data[d] == ids[d]) {
      int f = rule.addFactor(data[d], FactorKind::Parallel);
      dataF.push_back({f});
      idsF.push_back({f});
      continue;
    }
    dataF.push_back({rule.addFactor(data[d], FactorKind::Replicated)});
    idsF.push_back({rule.addFactor(
        ids[d], d == axis ? FactorKind::Parallel : FactorKind::Replicated)});
  }
  rule.operands = {dataF, idsF};
  rule.results.push_back(idsF);
  return rule;
}

/// labels[I...] -> [I..., C]: the class dim C may be split (each device
/// encodes the classes of its slice; see tp-partition).
static ShardingRule oneHotRule(OneHotOp op) {
  ShardingRule rule;
  DimFactors out = addDimFactors(rule, shapeOf(op.getResult()));
  rule.operands.push_back(DimFactors(out.begin(), out.end() - 1));
  rule.operands.push_back({}); // the scalar offset
  rule.results.push_back(out);
  return rule;
}

/// Which of a conv's dims an op of the conv family sums over.
enum class ConvSum { Channels, OutputChannels, Batch };

/// The factors of a conv [N, C, S...] x [M, C/g, K...] -> [N, M, O...],
/// which its two gradients share: each sums over one of N, C, M (`sum`) and
/// keeps the other two parallel. A conv sums over C (N is data
/// parallelism; with one group M splits like a colwise Linear and C like a
/// rowwise one); the input's gradient sums over M, the filter's over N (a
/// data-parallel filter gradient is partial). A depthwise conv (one channel
/// per group, one filter per channel) has C = M, parallel, so that it
/// follows a channel split; other grouped convs keep C and M whole.
/// Windows keep the spatial dims whole. `in`, `w`, `out`: the conv's
/// shapes; the one the op computes is the one that does not hold the
/// summed dim (the conv's output, the input's or the filter's gradient),
/// the other two are its operands in the conv's order.
static ShardingRule convFamilyRule(ArrayRef<int64_t> in, ArrayRef<int64_t> w,
                                   ArrayRef<int64_t> out, int64_t group,
                                   ConvSum sum) {
  ShardingRule rule;
  rule.priority = 1;
  bool depthwise = group == in[1] && w[0] == in[1] && w[1] == 1;
  auto kind = [&](ConvSum dim) {
    if (group != 1 && !depthwise && dim != ConvSum::Batch)
      return FactorKind::Replicated;
    return dim == sum ? FactorKind::Reduction : FactorKind::Parallel;
  };
  int n = rule.addFactor(in[0], kind(ConvSum::Batch));
  DimFactors inF, wF, outF;
  if (depthwise) {
    int c = rule.addFactor(in[1], FactorKind::Parallel);
    inF = {{n}, {c}};
    wF = {{c}, {rule.addFactor(1, FactorKind::Replicated)}};
    outF = {{n}, {c}};
  } else {
    int m = rule.addFactor(w[0], kind(ConvSum::OutputChannels));
    int c = rule.addFactor(in[1], kind(ConvSum::Channels));
    int cw = group != 1 ? rule.addFactor(w[1], FactorKind::Replicated) : c;
    inF = {{n}, {c}};
    wF = {{m}, {cw}};
    outF = {{n}, {m}};
  }
  for (size_t i = 2; i < in.size(); ++i) {
    inF.push_back({rule.addFactor(in[i], FactorKind::Replicated)});
    wF.push_back({rule.addFactor(w[i], FactorKind::Replicated)});
    outF.push_back({rule.addFactor(out[i], FactorKind::Replicated)});
  }
  switch (sum) {
  case ConvSum::Channels:
    rule.operands = {inF, wF};
    rule.results.push_back(outF);
    break;
  case ConvSum::OutputChannels:
    rule.operands = {outF, wF};
    rule.results.push_back(inF);
    break;
  case ConvSum::Batch:
    rule.operands = {inF, outF};
    rule.results.push_back(wF);
    break;
  }
  return rule;
}

static ShardingRule convRule(ConvOp op) {
  return convFamilyRule(shapeOf(op.getInput()), shapeOf(op.getFilter()),
                        shapeOf(op.getResult()), op.getGroup(),
                        ConvSum::Channels);
}

static ShardingRule convInputGradRule(ConvInputGradOp op) {
  return convFamilyRule(shapeOf(op.getResult()), shapeOf(op.getFilter()),
                        shapeOf(op.getOutputGrad()), op.getGroup(),
                        ConvSum::OutputChannels);
}

static ShardingRule convFilterGradRule(ConvFilterGradOp op) {
  return convFamilyRule(shapeOf(op.getInput()), shapeOf(op.getResult()),
                        shapeOf(op.getOutputGrad()), op.getGroup(),
                        ConvSum::Batch);
}

/// Pooling [N, C, S...] -> [N, C, O...]: batch and channels parallel.
static ShardingRule poolRule(PoolOp op) {
  ShardingRule rule;
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op.getResult());
  int n = rule.addFactor(in[0], FactorKind::Parallel);
  int c = rule.addFactor(in[1], FactorKind::Parallel);
  DimFactors inF = {{n}, {c}}, outF = {{n}, {c}};
  for (size_t i = 2; i < in.size(); ++i) {
    inF.push_back({rule.addFactor(in[i], FactorKind::Replicated)});
    outF.push_back({rule.addFactor(out[i], FactorKind::Replicated)});
  }
  rule.operands = {inF};
  rule.results.push_back(outF);
  return rule;
}

std::optional<ShardingRule> tp::getShardingRule(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<ShardingRule>>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, PowOp, RemOp, MaxOp, MinOp, ReluOp,
            NegOp,
            SqrtOp, ErfOp, TanhOp, SigmoidOp, ExpOp, LogOp, ReciprocalOp,
            CastOp, WhereOp, ExpandOp, GreaterOp, LessOp, EqualOp,
            GreaterEqualOp, LessEqualOp, AndOp, OrOp, XorOp, NotOp, AbsOp,
            CeilOp, FloorOp, RoundOp, CosOp, SinOp, DropoutOp>(
          [](Operation *op) { return elementwiseRule(op); })
      .Case([](MatMulOp op) { return matmulRule(op); })
      .Case([](TransposeOp op) { return transposeRule(op); })
      .Case([](ReshapeOp op) {
        return reshapeRule(shapeOf(op.getInput()), shapeOf(op.getResult()));
      })
      .Case<ReduceSumOp, ReduceMeanOp>([](auto op) {
        return reduceRule(op, op.getAxes(), op.getKeepdims(),
                          FactorKind::Reduction);
      })
      .Case([](ArgReduceOp op) {
        return reduceRule(op, {int64_t(op.getAxis())}, op.getKeepdims(),
                          FactorKind::Replicated);
      })
      // No partial products: the reduced dims stay whole.
      .Case<ReduceMaxOp, ReduceProdOp>([](auto op) {
        return reduceRule(op, op.getAxes(), op.getKeepdims(),
                          FactorKind::Replicated);
      })
      // The softmax axis may stay split (a vocab-parallel LM head's
      // logits): tp-partition then all-reduces the max and the sum of
      // exponentials, as Megatron's vocab-parallel cross entropy does.
      .Case<SoftmaxOp, LogSoftmaxOp>([](auto op) { return perDimRule(op, {}); })
      .Case([](LayerNormOp op) { return layerNormRule(op); })
      .Case([](ConcatOp op) { return concatRule(op); })
      .Case([](SliceOp op) { return sliceRule(op); })
      .Case([](GatherOp op) { return gatherRule(op); })
      .Case([](GatherElementsOp op) { return gatherElementsRule(op); })
      .Case([](OneHotOp op) { return oneHotRule(op); })
      .Case([](ConvOp op) { return convRule(op); })
      .Case([](ConvInputGradOp op) { return convInputGradRule(op); })
      .Case([](ConvFilterGradOp op) { return convFilterGradRule(op); })
      .Case([](PoolOp op) { return poolRule(op); })
      .Case([](ConstantOp op) {
        // Constants stay whole; a consumer that wants a shard slices it.
        ShardingRule rule;
        rule.results.push_back(addDimFactors(
            rule, shapeOf(op.getResult()), FactorKind::Replicated));
        return rule;
      })
      .Default([](Operation *) { return std::nullopt; });
}
