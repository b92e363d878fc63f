//===- Autodiff.cpp - the tp-autodiff pass --------------------------------===//
#include "tp/Autodiff/Autodiff.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Import/ModuleTree.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/GlobPattern.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPAUTODIFF
#include "tp/Autodiff/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct TPAutodiffPass : tp::impl::TPAutodiffBase<TPAutodiffPass> {
  using TPAutodiffBase::TPAutodiffBase;

  SmallVector<std::string> stateNames;
  /// The mean's count of a cross entropy whose division is left to the
  /// gradients (microbatched pipelines: see buildCrossEntropy).
  Value gradientDivisor;

  /// PyTorch's cross_entropy of `logits` [..., C] against `labels` [...]
  /// with ignore_index, reduction and label_smoothing. With lp =
  /// log_softmax(logits), v = 1 where the label is not ignored, t the
  /// one-hot target (a zero row where ignored) smoothed to (1 - e) t + e / C,
  /// and D the count of v (mean) or 1 (sum):
  ///   loss = -sum(v * t * lp) / D,   dL/dlogits = (exp(lp) - t) * v / D.
  /// Log-softmax and NLL are fused this way, never forming softmax's
  /// probabilities in the loss itself; on logits split over the classes
  /// every step stays split (tp-partition all-reduces the max, the sum of
  /// exponentials and the loss: Megatron's vocab-parallel cross entropy),
  /// and D, a sum over the batch, is all-reduced over data parallelism: the
  /// mean is over the global count, however the ignored labels fall.
  void buildCrossEntropy(ModuleOp module, OpBuilder &b, Location loc,
                         RankedTensorType outType,
                         Value logits, Value labels, Value &lossValue,
                         Value &seed) {
    int64_t axis = outType.getRank() - 1, classes = outType.getShape().back();
    Type f = outType.getElementType();
    auto labelType = cast<RankedTensorType>(labels.getType());
    auto scalar = [&](Type t, Attribute v) -> Value {
      return ConstantOp::create(
          b, loc, DenseElementsAttr::get(RankedTensorType::get({}, t), v));
    };
    auto fconst = [&](double v) { return scalar(f, b.getFloatAttr(f, v)); };
    auto iconst = [&](int64_t v) {
      return scalar(b.getI64Type(), b.getI64IntegerAttr(v));
    };
    Value lp = LogSoftmaxOp::create(b, loc, outType, logits,
                                    b.getI64IntegerAttr(axis));
    // An ignored label becomes `classes`, out of OneHot's range: a zero row
    // (a negative ignore_index would otherwise wrap to a class).
    Value ignored =
        EqualOp::create(b, loc, labelType.clone(b.getI1Type()), labels,
                        iconst(ignoreIndex));
    Value safeLabels =
        WhereOp::create(b, loc, labelType, ignored, iconst(classes), labels);
    Value target = buildOneHot(b, loc, outType, safeLabels);
    Value valid = CastOp::create(b, loc, labelType.clone(f),
                                 NotOp::create(b, loc, ignored));
    SmallVector<int64_t> keptShape(outType.getShape());
    keptShape.back() = 1;
    Value validRows =
        ReshapeOp::create(b, loc, RankedTensorType::get(keptShape, f), valid);
    auto scalarType = RankedTensorType::get({}, f);
    auto sumAll = [&](Value v) -> Value {
      int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
      return ReduceSumOp::create(
          b, loc, scalarType, v,
          b.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(0, rank))),
          b.getBoolAttr(false));
    };
    // -sum(v * t * lp): t's ignored rows are zero already.
    Value picked = sumAll(MulOp::create(b, loc, target, lp));
    double e = labelSmoothing;
    if (e > 0) {
      // (1 - e) * picked + e / C * sum(v * sum_c lp)
      Value perRow = ReduceSumOp::create(
          b, loc, labelType.clone(f), lp, b.getDenseI64ArrayAttr({axis}),
          b.getBoolAttr(false));
      Value smooth = sumAll(MulOp::create(b, loc, perRow, valid));
      picked = AddOp::create(
          b, loc, MulOp::create(b, loc, picked, fconst(1.0 - e)),
          MulOp::create(b, loc, smooth, fconst(e / double(classes))));
      target = AddOp::create(b, loc,
                             MulOp::create(b, loc, target, fconst(1.0 - e)),
                             fconst(e / double(classes)));
    }
    Value negated = NegOp::create(b, loc, picked);
    Value rowScale = validRows;
    if (reduction == "mean") {
      Value count = sumAll(valid);
      lossValue = DivOp::create(b, loc, negated, count);
      // A pipeline runs each microbatch's backward pass before the count,
      // a sum over the whole batch, is complete: there the backward pass
      // differentiates the sum, and each gradient (a sum over the
      // microbatches too) is divided by the count at the end.
      auto pipeline = module->getAttrOfType<DictionaryAttr>("tp.pipeline");
      auto microbatches =
          pipeline ? pipeline.getAs<IntegerAttr>("microbatches") : nullptr;
      if (microbatches && microbatches.getInt() > 1)
        gradientDivisor = count;
      else
        rowScale = DivOp::create(b, loc, validRows, count);
    } else {
      lossValue = negated;
    }
    seed = MulOp::create(
        b, loc, SubOp::create(b, loc, ExpOp::create(b, loc, lp), target),
        rowScale);
  }

  LogicalResult build(ModuleOp module, func::FuncOp forward) {
    if (loss != "mse" && loss != "cross_entropy" && loss != "output")
      return forward.emitError("unknown --loss '")
             << loss << "' (mse, cross_entropy or output)";
    bool crossEntropy = loss == "cross_entropy";
    if (reduction != "mean" && reduction != "sum")
      return forward.emitError("unknown --reduction '")
             << reduction << "' (mean or sum)";
    if (!(labelSmoothing >= 0.0 && labelSmoothing <= 1.0))
      return forward.emitError("--label-smoothing must lie in [0, 1], got ")
             << labelSmoothing;
    bool hasLabels = labels || crossEntropy;
    if (optimizer != "sgd" && optimizer != "adamw" && optimizer != "none")
      return forward.emitError("unknown --optimizer '")
             << optimizer << "' (sgd, adamw or none)";
    // Results: the model's output, then the buffers training-mode
    // BatchNormalization updates (tp.buffer_update, named after them).
    unsigned outputs = 0;
    for (unsigned i = 0; i < forward.getNumResults(); ++i)
      outputs += !forward.getResultAttr(i, "tp.buffer_update");
    if (outputs != 1 || forward.getResultAttr(0, "tp.buffer_update"))
      return forward.emitError("training needs a model with one output, "
                               "this one has ")
             << outputs;
    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    b.setInsertionPoint(forward);
    Location loc = forward.getLoc();

    // The weights: float arguments named by tp.param, but for those frozen
    // (an ONNX file does not tell PyTorch's buffers from its parameters).
    SmallVector<llvm::GlobPattern> frozenGlobs;
    SmallVector<bool> frozenUsed(frozen.size(), false);
    for (const std::string &f : frozen) {
      auto glob = llvm::GlobPattern::create(f);
      if (!glob) {
        llvm::consumeError(glob.takeError());
        return emitError(forward.getLoc(), "--frozen '")
               << f << "' is not a glob";
      }
      frozenGlobs.push_back(std::move(*glob));
    }
    SmallVector<unsigned> params;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      auto param = forward.getArgAttrOfType<StringAttr>(i, "tp.param");
      // Running statistics are buffers: updated by the forward, not trained.
      if (!param || forward.getArgAttr(i, "tp.buffer"))
        continue;
      SmallVector<StringRef> names{param.getValue()};
      if (auto torch = forward.getArgAttrOfType<ArrayAttr>(i, "tp.torch_names"))
        for (Attribute t : torch)
          names.push_back(cast<StringAttr>(t).getValue());
      bool isFrozen = false;
      for (auto [g, glob] : llvm::enumerate(frozenGlobs))
        for (StringRef name : names)
          if (glob.match(name))
            isFrozen = frozenUsed[g] = true;
      if (!isFrozen)
        params.push_back(i);
    }
    for (auto [g, used] : llvm::enumerate(frozenUsed))
      if (!used)
        return emitError(forward.getLoc(), "--frozen '")
               << frozen[g] << "' matches no weight of the model";
    if (params.empty())
      return forward.emitError("the model has no weights to train");

    SmallVector<Type> argTypes(forward.getArgumentTypes());
    auto outType = cast<RankedTensorType>(forward.getResultTypes()[0]);
    if (crossEntropy) {
      // Logits [..., C] against class ids [...].
      if (outType.getRank() < 1 || !isa<FloatType>(outType.getElementType()))
        return forward.emitError("--loss cross_entropy needs float logits "
                                 "with the classes on the last dim, got ")
               << outType;
      argTypes.push_back(RankedTensorType::get(outType.getShape().drop_back(),
                                               b.getI64Type()));
    } else if (labels) {
      argTypes.push_back(outType);
    }
    auto step = func::FuncOp::create(
        b, loc, "train_step", b.getFunctionType(argTypes, {}));
    Block *entry = step.addEntryBlock();
    // The step's argument attributes, set as one array once its optimizer
    // state is known (set one by one, they are quadratic in the weights).
    SmallVector<DictionaryAttr> argAttrs;
    forward.getAllArgAttrs(argAttrs);
    if (hasLabels)
      argAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("tp.input", b.getStringAttr("labels"))));
    for (unsigned i = 0; i < forward.getNumArguments(); ++i)
      entry->getArgument(i).setLoc(forward.getArgument(i).getLoc());
    IRMapping map;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i)
      map.map(forward.getArgument(i), entry->getArgument(i));
    b.setInsertionPointToStart(entry);
    SmallVector<Operation *> ops;
    Value output;
    SmallVector<std::pair<Value, std::string>> bufferUpdates;
    for (Operation &op : forward.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        output = map.lookup(ret.getOperand(0));
        for (unsigned i = 1; i < ret.getNumOperands(); ++i)
          bufferUpdates.push_back(
              {map.lookup(ret.getOperand(i)),
               forward.getResultAttrOfType<StringAttr>(i, "tp.output").str()});
        continue;
      }
      ops.push_back(b.clone(op, map));
    }

    // Loss and its gradient with respect to the output.
    auto scalarType = RankedTensorType::get({}, outType.getElementType());
    Value lossValue, seed;
    // The loss's ops (and the collectives they need) are named after it.
    Location funcLoc = loc;
    loc = tagLocation(NameLoc::get(b.getStringAttr(loss + " loss"), funcLoc),
                      "loss");
    auto constant = [&](RankedTensorType t, double v) -> Value {
      return ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
    };
    if (loss == "mse") {
      // mean(d^2) with d = y - labels (or y: against zeros, as the
      // reference models' losses); dL/dy = 2 d / N.
      SmallVector<int64_t> all =
          llvm::to_vector(llvm::seq<int64_t>(0, outType.getRank()));
      Value diff = output;
      if (labels)
        diff = SubOp::create(b, loc, output,
                             entry->getArgument(forward.getNumArguments()));
      Value sq = MulOp::create(b, loc, diff, diff);
      lossValue = ReduceMeanOp::create(b, loc, scalarType, sq,
                                       b.getDenseI64ArrayAttr(all),
                                       b.getBoolAttr(false));
      seed = MulOp::create(
          b, loc, diff,
          constant(scalarType, 2.0 / double(outType.getNumElements())));
    } else if (crossEntropy) {
      Value labelsArg = entry->getArgument(forward.getNumArguments());
      buildCrossEntropy(module, b, loc, outType, output, labelsArg, lossValue,
                        seed);
    } else {
      if (labels)
        return forward.emitError("--labels goes with --loss mse");
      if (outType.getNumElements() != 1)
        return forward.emitError("--loss output needs a scalar output, got ")
               << outType;
      lossValue = ReshapeOp::create(b, loc, scalarType, output);
      seed = constant(outType, 1.0);
    }

    // Which values depend on a weight (only they need gradients).
    DenseSet<Value> active;
    for (unsigned i : params)
      active.insert(entry->getArgument(i));
    SmallVector<unsigned> gradInputs;
    if (inputGrads)
      for (unsigned i = 0; i < forward.getNumArguments(); ++i)
        if (forward.getArgAttr(i, "tp.input") &&
            isa<FloatType>(
                cast<RankedTensorType>(forward.getArgument(i).getType())
                    .getElementType())) {
          gradInputs.push_back(i);
          active.insert(entry->getArgument(i));
        }
    for (Operation *op : ops)
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value r : op->getResults())
          if (isa<FloatType>(cast<RankedTensorType>(r.getType()).getElementType()))
            active.insert(r);

    DenseMap<Value, Value> grads;
    // A value used several times gets the sum of its users' gradients,
    // named after the value's ONNX node.
    // Gradients of a bf16 value rounded from f32 ones (mixed precision) are
    // summed in f32 and rounded once.
    auto accumulate = [&](Value v, Value g) {
      Value sum = g;
      Operation *def = v.getDefiningOp();
      Location at = tagLocation(def ? def->getLoc() : v.getLoc(), "backward");
      if (Value previous = grads.lookup(v)) {
        auto r1 = previous.getDefiningOp<CastOp>(), r2 = g.getDefiningOp<CastOp>();
        auto wider = [&](CastOp r) {
          auto from = dyn_cast<FloatType>(getElementTypeOrSelf(r.getInput()));
          auto to = dyn_cast<FloatType>(getElementTypeOrSelf(v));
          return from && to && from.getWidth() > to.getWidth();
        };
        if (r1 && r2 && r1.getInput().getType() == r2.getInput().getType() &&
            wider(r1))
          sum = CastOp::create(b, at, g.getType(),
                               AddOp::create(b, at, r1.getInput(), r2.getInput()));
        else
          sum = AddOp::create(b, at, previous, g);
      }
      grads[v] = sum;
    };
    accumulate(output, seed);
    // The backward pass goes after the forward ops, in reverse order.
    b.setInsertionPointToEnd(entry);
    Operation *lastBeforeBackward = &entry->back();
    for (Operation *op : llvm::reverse(ops)) {
      if (op->getNumResults() != 1)
        continue;
      auto it = grads.find(op->getResult(0));
      if (it == grads.end())
        continue;
      if (!llvm::any_of(op->getOperands(),
                        [&](Value v) { return active.contains(v); }))
        continue;
      auto vjp = dyn_cast<VJPOpInterface>(op);
      if (!vjp)
        return op->emitError("no VJP rule for '")
               << op->getName() << "' (ONNX node '" << onnxNodeOf(op)
               << "'): tp cannot differentiate through it";
      SmallVector<Value> operandGrads;
      if (failed(vjp.buildVJP(b, it->second, operandGrads)))
        return failure();
      for (auto [v, g] : llvm::zip(op->getOperands(), operandGrads))
        if (g && active.contains(v))
          accumulate(v, g);
    }

    // The module tree (a walk of the forward) only when modules are named.
    if (!recompute.empty() &&
        failed(recomputeCheckpointedModules(step, ModuleTree::build(forward),
                                            recompute, ops,
                                            lastBeforeBackward)))
      return failure();
    if (rematerialize)
      rematerializeElementwise(step, ops, lastBeforeBackward);
    // Mixed precision (tp-autocast marks the module): what the backward pass
    // keeps of the forward's is bf16.
    if (auto precision = module->getAttrOfType<StringAttr>("tp.precision");
        precision && precision.getValue() == "bf16")
      keepActivationsInBf16(step, ops, lastBeforeBackward);

    // Results: loss, gradients, updated weights, new optimizer state.
    b.setInsertionPointToEnd(entry);
    loc = tagLocation(
        NameLoc::get(b.getStringAttr("optimizer " + optimizer), funcLoc),
        "update");
    SmallVector<Value> results = {lossValue};
    SmallVector<DictionaryAttr> resultAttrs = {b.getDictionaryAttr(
        b.getNamedAttr("tp.output", b.getStringAttr("loss")))};
    auto addResult = [&](Value v, StringRef name) {
      results.push_back(v);
      resultAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("tp.output", b.getStringAttr(name))));
    };
    // Optimizer state: an argument and a result of the same name.
    SmallVector<std::pair<Value, std::string>> newState;
    auto state = [&](Type type, const std::string &name) -> Value {
      BlockArgument arg = entry->addArgument(type, loc);
      stateNames.push_back(name);
      return arg;
    };
    SmallVector<std::pair<Value, std::string>> updated;
    SmallVector<WeightUpdate> updates;
    // The ops built since `before`, in order.
    auto opsSince = [&](Operation *before) {
      SmallVector<Operation *> built;
      for (Operation *op = before->getNextNode(); op; op = op->getNextNode())
        built.push_back(op);
      return built;
    };
    Value stepCount, bias1, bias2;
    if (optimizer == "adamw") {
      Operation *before = &entry->back();
      // t += 1; bias corrections 1 - beta^t.
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      Value t = AddOp::create(b, loc, state(scalar, "adamw.step"),
                              constant(scalar, 1.0));
      newState.push_back({t, "adamw.step"});
      auto correction = [&](double beta) -> Value {
        return SubOp::create(
            b, loc, constant(scalar, 1.0),
            PowOp::create(b, loc, constant(scalar, beta), t));
      };
      bias1 = correction(beta1);
      bias2 = correction(beta2);
      // At the start (they read only the step count), so that updates do
      // not wait for them.
      Operation *start = &entry->front();
      for (Operation *op : opsSince(before))
        op->moveBefore(start);
    }
    for (unsigned i : params) {
      Value p = entry->getArgument(i);
      auto pt = cast<RankedTensorType>(p.getType());
      auto scalarType = RankedTensorType::get({}, pt.getElementType());
      auto c = [&](double v) { return constant(scalarType, v); };
      std::string name = forward.getArgAttrOfType<StringAttr>(i, "tp.param").str();
      Operation *before = &entry->back();
      Value g = grads.lookup(p);
      if (!g)
        g = constant(pt, 0.0);
      else if (gradientDivisor)
        g = DivOp::create(b, loc, g, gradientDivisor);
      addResult(g, "grad_" + name);
      if (optimizer == "sgd") {
        // PyTorch's SGD: g += wd p; buf = momentum buf + g; p -= lr buf.
        Value d = g;
        if (weightDecay != 0)
          d = AddOp::create(b, loc, d, MulOp::create(b, loc, p, c(weightDecay)));
        if (momentum != 0) {
          std::string bufName = name + ".momentum_buffer";
          Value buf = AddOp::create(
              b, loc, MulOp::create(b, loc, state(pt, bufName), c(momentum)), d);
          newState.push_back({buf, bufName});
          d = buf;
        }
        updated.push_back({SubOp::create(b, loc, p, MulOp::create(b, loc, d, c(lr))),
                           name});
      } else if (optimizer == "adamw") {
        // PyTorch's AdamW: p -= lr wd p; m, v moments; p -= lr m^ / (sqrt(v^) + eps).
        std::string mName = name + ".exp_avg", vName = name + ".exp_avg_sq";
        Value m = AddOp::create(
            b, loc, MulOp::create(b, loc, state(pt, mName), c(beta1)),
            MulOp::create(b, loc, g, c(1 - beta1)));
        Value v = AddOp::create(
            b, loc, MulOp::create(b, loc, state(pt, vName), c(beta2)),
            MulOp::create(b, loc, MulOp::create(b, loc, g, g), c(1 - beta2)));
        newState.push_back({m, mName});
        newState.push_back({v, vName});
        Value decayed = SubOp::create(
            b, loc, p, MulOp::create(b, loc, p, c(lr * weightDecay)));
        Value mHat = DivOp::create(b, loc, m, CastOp::create(b, loc, scalarType, bias1));
        Value vHat = DivOp::create(b, loc, v, CastOp::create(b, loc, scalarType, bias2));
        Value denom = AddOp::create(b, loc, SqrtOp::create(b, loc, vHat), c(epsilon));
        updated.push_back(
            {SubOp::create(b, loc, decayed,
                           MulOp::create(b, loc, DivOp::create(b, loc, mHat, denom), c(lr))),
             name});
      }
      updates.push_back({p, g, opsSince(before)});
    }
    // A pipeline's stages order their ops themselves (tp-split-stages).
    if (!module->hasAttr("tp.pipeline"))
      placeUpdatesAfterGradients(updates, optimizer);
    for (unsigned i : gradInputs) {
      Value x = entry->getArgument(i);
      Value g = grads.lookup(x);
      if (!g)
        g = constant(cast<RankedTensorType>(x.getType()), 0.0);
      else if (gradientDivisor)
        g = DivOp::create(b, loc, g, gradientDivisor);
      addResult(g, "grad_" + forward.getArgAttrOfType<StringAttr>(i, "tp.input").str());
    }
    for (auto &[v, name] : updated)
      addResult(v, name);
    // Updated buffers are named like their weight too: tp-run feeds them to
    // the next step and --save writes them.
    for (auto &[v, name] : bufferUpdates)
      addResult(v, name);
    for (auto &[v, name] : newState)
      addResult(v, name);
    func::ReturnOp::create(b, loc, results);
    step.setType(b.getFunctionType(entry->getArgumentTypes(),
                                   TypeRange(ValueRange(results))));
    for (const std::string &name : stateNames)
      argAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("tp.state", b.getStringAttr(name))));
    step.setAllArgAttrs(argAttrs);
    step.setAllResultAttrs(resultAttrs);
    forward.erase();
    // Rules build every operand's gradient; drop those nothing needs (the
    // gradient of a constant, of the labels).
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(entry->getOperations())))
      if (isOpTriviallyDead(&op))
        op.erase();
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      module.emitError("tp-autodiff expects one function (the imported graph)");
      return signalPassFailure();
    }
    if (failed(build(module, funcs.front())))
      signalPassFailure();
  }
};

} // namespace
