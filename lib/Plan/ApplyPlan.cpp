//===- ApplyPlan.cpp - the tp-apply-plan pass -----------------------------===//
#include "tp/Dialect/TP/IR/FunctionAttrs.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Import/ModuleTree.h"
#include "tp/Plan/Passes.h"
#include "tp/Plan/Plan.h"
#include "tp/Sharding/Sharding.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPAPPLYPLAN
#include "tp/Plan/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// How a weight is used: by a matmul as its right operand (Linear) or by a
/// gather as its table (Embedding), and which of its dims are the output
/// features and the input features / vocabulary.
struct WeightUse {
  bool embedding = false;
  int64_t outDim = -1, inDim = -1;
  Operation *user = nullptr; // the matmul or gather
};

/// Follows `v` (whose dims are the weight's `dims`) through transposes and
/// casts (tp-autocast's bf16 copies) to the matmuls and gathers that use it; the earliest in program order is the
/// forward pass's (a training step also uses the weight in its backward
/// pass, where a matmul reads it transposed).
/// A weight tied between modules (an embedding read again by the LM head)
/// has a use in each: `inModule` (the plan entry's module's ops) picks the
/// one the entry means.
std::optional<WeightUse>
findWeightUse(Value v, SmallVector<int64_t> dims,
              const llvm::SmallPtrSetImpl<Operation *> &inModule) {
  std::optional<WeightUse> best;
  auto consider = [&](std::optional<WeightUse> found) {
    if (!found)
      return;
    bool mine = inModule.contains(found->user);
    bool bestMine = best && inModule.contains(best->user);
    if (!best || (mine && !bestMine) ||
        (mine == bestMine && found->user->isBeforeInBlock(best->user)))
      best = found;
  };
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto t = dyn_cast<TransposeOp>(user)) {
      SmallVector<int64_t> permuted;
      for (int64_t p : t.getPerm())
        permuted.push_back(dims[p]);
      consider(findWeightUse(t.getResult(), permuted, inModule));
    } else if (auto c = dyn_cast<CastOp>(user)) {
      consider(findWeightUse(c.getResult(), dims, inModule));
    } else if (isa<MatMulOp>(user) && use.getOperandNumber() == 1 &&
               dims.size() == 2) {
      consider(WeightUse{false, dims[1], dims[0], user});
    } else if (auto g = dyn_cast<GatherOp>(user);
               g && use.getOperandNumber() == 0 && dims.size() == 2) {
      int64_t axis = g.getAxis();
      consider(WeightUse{true, dims[1 - axis], dims[axis], user});
    }
  }
  return best;
}

struct Annotation {
  TensorSharding sharding;
  std::string origin;
};

class PlanApplier {
public:
  PlanApplier(ModuleOp module, func::FuncOp func, Plan plan)
      : module(module), func(func), plan(std::move(plan)) {}
  LogicalResult run();

private:
  ModuleOp module;
  func::FuncOp func;
  Plan plan;
  Mesh mesh;
  int dpAxis = -1;
  /// The pipeline's stage axis, which no style splits over, and its
  /// microbatches' axis (after the plan's), which splits the batch.
  int stageAxis = -1, mbAxis = -1;
  /// Module path -> indices of its weight arguments.
  llvm::StringMap<SmallVector<unsigned>> paramModules;
  /// Module path -> ops whose ONNX node is in that scope.
  llvm::StringMap<SmallVector<Operation *>> nodeScopes;
  DenseMap<unsigned, Annotation> args;
  DenseMap<Operation *, Annotation> ops;
  DenseMap<unsigned, Annotation> results;
  /// Every module a plan entry may name, sorted, and which entry applies
  /// to which (resolvePlanEntries).
  SmallVector<std::string> modules;
  PlanMatches matches;

  InFlightDiagnostic error() { return emitError(func.getLoc()); }
  LogicalResult buildMesh();
  void collectModules();
  FailureOr<int> styleAxis(const PlanEntry &e, StringRef style,
                           StringRef axisName);
  LogicalResult shardDim(TensorSharding &s, RankedTensorType type,
                         int64_t dim, int axis, StringRef tensor,
                         StringRef entry);
  LogicalResult applyEntry(const PlanEntry &e);
  LogicalResult applyIO(bool inputs);
  void write();
};

} // namespace

LogicalResult PlanApplier::buildMesh() {
  if (plan.mesh.empty())
    return error() << "the plan has no mesh (give \"mesh\" in the plan "
                      "file or --mesh tp=2)";
  llvm::StringSet<> seen;
  for (auto &[name, size] : plan.mesh) {
    if (!seen.insert(name).second)
      return error() << "mesh axis '" << name << "' appears twice";
    mesh.names.push_back(name);
    mesh.sizes.push_back(size);
  }
  if (!plan.dataParallel.empty()) {
    auto idx = mesh.axisIndex(plan.dataParallel);
    if (!idx)
      return error() << "data_parallel names unknown mesh axis '"
                     << plan.dataParallel << "' (mesh is " << mesh.describe()
                     << ")";
    dpAxis = *idx;
  }
  // tp-assign-stages recorded the pipeline's axis: stages split no tensor.
  // Microbatches split the batch over one more axis, the last: the program
  // is partitioned as one microbatch's (tp-split-stages runs it for each).
  if (auto pipeline = module->getAttrOfType<DictionaryAttr>("tp.pipeline")) {
    if (auto axis = pipeline.getAs<StringAttr>("axis"))
      if (auto idx = mesh.axisIndex(axis.getValue()))
        stageAxis = *idx;
    if (auto m = pipeline.getAs<IntegerAttr>("microbatches");
        m && m.getInt() > 1) {
      mbAxis = int(mesh.names.size());
      mesh.names.push_back("_mb");
      mesh.sizes.push_back(m.getInt());
    }
  }
  return success();
}

void PlanApplier::collectModules() {
  // The importer recorded each weight's PyTorch names as tp.torch_names.
  paramModules = weightsByModule(func);
  ModuleTree tree = ModuleTree::build(func);
  // The ops of a module share their ONNX scope (`/model/layers.0/mlp/`):
  // each scope is resolved once, to the op lists of its module and of every
  // enclosing one (`layers.0` holds `layers.0.attn`). StringMap's values
  // stay where they are.
  llvm::StringMap<SmallVector<SmallVector<Operation *> *, 4>> listsOfScope;
  func.walk([&](Operation *op) {
    // Ops the importer placed at the function's location (the model file's
    // path) belong to no module: the path's folders are not scopes.
    auto loc = dyn_cast<NameLoc>(op->getLoc());
    if (!loc || !isa_and_present<TPDialect>(op->getDialect()) ||
        op->getLoc() == func.getLoc())
      return;
    StringRef scope = ModuleTree::scopeOf(loc.getName().getValue());
    if (scope.empty())
      return;
    auto [lists, inserted] = listsOfScope.try_emplace(scope);
    if (inserted)
      for (std::string scope = tree.modulePathOf(lists->first());
           !scope.empty();) {
        lists->second.push_back(&nodeScopes[scope]);
        size_t dot = scope.rfind('.');
        scope = dot == std::string::npos ? "" : scope.substr(0, dot);
      }
    for (SmallVector<Operation *> *list : lists->second)
      list->push_back(op);
  });
}

/// The mesh axis a style works on: the one named with `@axis`, else the
/// only axis that is not the data-parallel one.
FailureOr<int> PlanApplier::styleAxis(const PlanEntry &e, StringRef style,
                                      StringRef axisName) {
  if (!axisName.empty()) {
    if (auto idx = mesh.axisIndex(axisName)) {
      if (*idx == stageAxis)
        return error() << "plan entry '" << e.pattern << "=" << e.style
                       << "' (" << e.source << ") splits over '" << axisName
                       << "', the pipeline's stage axis; tensor parallelism "
                          "needs an axis of its own";
      return *idx;
    }
    return error() << "plan entry '" << e.pattern << "=" << e.style << "' ("
                   << e.source << ") names unknown mesh axis '" << axisName
                   << "' (mesh is " << mesh.describe() << ")";
  }
  SmallVector<int> candidates;
  for (int a = 0; a < int(mesh.names.size()); ++a)
    if (a != dpAxis && a != stageAxis && a != mbAxis)
      candidates.push_back(a);
  if (candidates.size() == 1)
    return candidates[0];
  if (candidates.empty())
    return error() << "plan entry '" << e.pattern << "=" << e.style << "' ("
                   << e.source << ") needs a mesh axis for tensor "
                   << "parallelism, and mesh " << mesh.describe()
                   << " has none besides "
                   << (stageAxis >= 0 ? "the pipeline's stage axis"
                                      : "the data-parallel axis")
                   << "; add one (--mesh " << mesh.describe()
                   << ",tp=2) or drop the entry";
  return error() << "plan entry '" << e.pattern << "=" << e.style << "' ("
                 << e.source << ") must say which mesh axis it uses, e.g. "
                 << style << "@" << mesh.names.back() << " (mesh is "
                 << mesh.describe() << ")";
}

/// Splits need not divide: tp-pad-uneven gives the devices torch.chunk's
/// blocks.
LogicalResult PlanApplier::shardDim(TensorSharding &s, RankedTensorType type,
                                    int64_t dim, int axis, StringRef tensor,
                                    StringRef entry) {
  if (llvm::is_contained(s.dims[dim], axis))
    return error() << "cannot split " << tensor << " "
                   << formatShape(type.getShape()) << " on dim " << dim
                   << " twice over mesh axis '" << mesh.names[axis] << "' ("
                   << entry << ")";
  s.dims[dim].push_back(axis);
  return success();
}

LogicalResult PlanApplier::applyEntry(const PlanEntry &e) {
  auto [style, axisName] = StringRef(e.style).split('@');
  std::string where = "plan entry '" + e.pattern + "=" + e.style + "'";
  if (StringRef(e.style).contains('@') && axisName.empty())
    return error() << where << " (" << e.source
                   << "): no mesh axis after '@' (style@axis, e.g. colwise@tp)";
  static const char *kStyles[] = {"colwise", "rowwise", "sequence",
                                  "replicate"};
  if (!llvm::is_contained(kStyles, style))
    return error() << where << " (" << e.source << "): unknown style '"
                   << style
                   << "'; styles are colwise, rowwise, sequence, replicate";

  unsigned index = &e - plan.entries.data();
  // A module an exact entry names is that entry's.
  const std::vector<std::string> &matched = matches.applies[index];
  if (!matches.matchedAny[index])
    return error() << where << " (" << e.source
                   << ") matches no module; closest: "
                   << closestModules(e.pattern, modules);

  FailureOr<int> axis = 0;
  if (style != "replicate") {
    axis = styleAxis(e, style, axisName);
    if (failed(axis))
      return failure();
  }
  std::string origin = where + " (" + e.source + ")";
  for (const std::string &module : matched) {
    SmallVector<unsigned> params = paramModules.lookup(module);
    ProjectionWeights projection = projectionWeights(func, params, module);
    auto annotate = [&](unsigned arg) -> TensorSharding & {
      auto type = cast<RankedTensorType>(func.getArgument(arg).getType());
      auto &a = args[arg];
      a.sharding = TensorSharding::replicated(type.getRank());
      a.origin = origin;
      return a.sharding;
    };
    if (style == "replicate" || style == "sequence") {
      for (unsigned i : params)
        annotate(i);
      if (style == "replicate")
        continue;
      // Activations of the module split on the sequence dim (dim 1).
      for (Operation *op : nodeScopes.lookup(module)) {
        if (op->getNumResults() != 1 || isa<ConstantOp>(op))
          continue;
        auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
        if (!type || type.getRank() < 2)
          continue;
        Annotation &a = ops[op];
        a.sharding = TensorSharding::replicated(type.getRank());
        a.origin = origin;
        if (failed(shardDim(a.sharding, type, 1, *axis,
                            "the output of " + op->getName().getStringRef().str(),
                            where)))
          return failure();
      }
      continue;
    }
    // colwise / rowwise: a Linear or Embedding weight and its bias.
    llvm::SmallPtrSet<Operation *, 16> moduleOps;
    for (Operation *op : nodeScopes.lookup(module))
      moduleOps.insert(op);
    std::optional<unsigned> weight = projection.weight;
    if (!weight) {
      // Say where the weights are: the submodules a plan should name.
      SmallVector<std::string> withWeights;
      for (auto &entry : paramModules)
        if (StringRef(entry.getKey()).starts_with(module + "."))
          withWeights.push_back(entry.getKey().str());
      llvm::sort(withWeights);
      withWeights.resize(std::min<size_t>(withWeights.size(), 4));
      auto diag = error() << where << " (" << e.source << "): module '"
                          << module << "' has no weight of its own ("
                          << style
                          << " splits the weight of a Linear, Conv1D, "
                             "Conv or Embedding module)";
      if (!withWeights.empty())
        diag << "; its submodules with weights: "
             << llvm::join(withWeights, ", ");
      return diag;
    }
    Value w = func.getArgument(*weight);
    auto type = cast<RankedTensorType>(w.getType());
    // The dim the style splits, and whether the bias follows it.
    bool colwise = style == "colwise";
    int64_t dim;
    bool splitBias;
    // A convolution: colwise splits its output channels (filter dim 0, the
    // bias too), rowwise its input channels (filter dim 1; the result is a
    // partial sum), so that two in a row communicate once, like a Megatron
    // MLP; BatchNorm, pooling and activations follow the channel split.
    ConvOp conv;
    for (Operation *user : w.getUsers())
      if (auto c = dyn_cast<ConvOp>(user); c && c.getFilter() == w && !conv)
        conv = c;
    auto fused = func.getArgAttrOfType<DenseI64ArrayAttr>(*weight,
                                                           "tp.fused_view");
    if (fused) {
      // A fused projection's view (tp-split-fused-projections): colwise
      // splits every part's output features, the bias's too.
      dim = colwise ? fused[1] : fused[2];
      splitBias = colwise;
    } else if (conv) {
      if (conv.getGroup() != 1)
        return error() << where << " (" << e.source << "): '" << module
                       << ".weight' is the filter of a grouped convolution "
                          "(group "
                       << conv.getGroup() << "); " << style
                       << " splits ungrouped ones (a depthwise convolution "
                          "follows its input's channel split by itself)";
      dim = colwise ? 0 : 1;
      splitBias = colwise;
    } else {
      std::optional<WeightUse> use;
      if (type.getRank() == 2)
        use = findWeightUse(w, {0, 1}, moduleOps);
      if (!use)
        return error() << where << " (" << e.source << "): '" << module
                       << ".weight' is not the weight of a MatMul/Gemm or the "
                          "table of a Gather, so "
                       << style << " has no meaning for it";
      // Linear: colwise splits output features, rowwise input features.
      // Embedding: rowwise splits the vocabulary, colwise the embedding dim.
      dim = colwise ? use->outDim : use->inDim;
      splitBias = colwise && !use->embedding;
    }
    if (failed(shardDim(annotate(*weight), type, dim, *axis,
                        "'" + describeValue(w) + "'", where)))
      return failure();
    if (std::optional<unsigned> bias = projection.bias) {
      TensorSharding &b = annotate(*bias);
      // A fused bias's view is [parts, out / parts].
      int64_t biasDim =
          func.getArgAttr(*bias, "tp.fused_view") ? 1 : 0;
      if (splitBias)
        if (failed(shardDim(b,
                            cast<RankedTensorType>(
                                func.getArgument(*bias).getType()),
                            biasDim, *axis, "'" + describeValue(func.getArgument(*bias)) + "'",
                            where)))
          return failure();
    }
  }
  return success();
}

/// Graph inputs (or outputs): the plan's layout for them, plus the batch
/// dim over the data-parallel axis.
LogicalResult PlanApplier::applyIO(bool inputs) {
  auto &specs = inputs ? plan.inputs : plan.outputs;
  StringRef attrName = inputs ? "tp.input" : "tp.output";
  unsigned count = inputs ? func.getNumArguments() : func.getNumResults();
  auto nameOf = [&](unsigned i) {
    return inputs ? func.getArgAttrOfType<StringAttr>(i, attrName)
                  : func.getResultAttrOfType<StringAttr>(i, attrName);
  };
  auto typeOf = [&](unsigned i) {
    return cast<RankedTensorType>(inputs ? func.getArgumentTypes()[i]
                                         : func.getResultTypes()[i]);
  };
  for (auto &[name, layout] : specs) {
    bool found = false;
    for (unsigned i = 0; i < count; ++i)
      found |= nameOf(i) && nameOf(i).getValue() == name;
    if (!found) {
      std::string names;
      for (unsigned i = 0; i < count; ++i)
        if (nameOf(i))
          names += (names.empty() ? "" : ", ") + nameOf(i).str();
      return error() << "the plan's " << (inputs ? "inputs" : "outputs")
                     << " name '" << name << "', which is not a graph "
                     << (inputs ? "input" : "output") << " (" << names << ")";
    }
  }
  auto &out = inputs ? args : results;
  // Sized once: an annotation moves at each rehash.
  out.reserve(count);
  llvm::StringSet<> weightNames = weightAndStateNames(func);
  for (unsigned i = 0; i < count; ++i) {
    StringAttr name = nameOf(i);
    if (!name)
      continue;
    RankedTensorType type = typeOf(i);
    Annotation a{TensorSharding::replicated(type.getRank()),
                 std::string(inputs ? "graph input" : "graph output") +
                     " (replicated)"};
    std::string tensor = std::string(inputs ? "input" : "output") + " '" +
                         name.str() + "'";
    // A training step's gradients, updated weights and optimizer state have
    // their weight's layout (write() gives it), not a batch dim.
    auto isWeightOutput = [&] {
      StringRef n = name.getValue();
      n.consume_front("grad_");
      return weightNames.contains(n) || weightNames.contains(name.getValue());
    };
    // An explicit `replicate` keeps the tensor whole under data_parallel
    // too (updates, indices or tables fed as graph inputs).
    bool keptWhole = llvm::any_of(specs, [&](const auto &spec) {
      return spec.first == name.getValue() &&
             StringRef(spec.second).split('@').first == "replicate";
    });
    if (dpAxis >= 0 && type.getRank() > 0 && !keptWhole &&
        (inputs || !isWeightOutput())) {
      a.origin = "data_parallel '" + mesh.names[dpAxis] + "'";
      if (failed(shardDim(a.sharding, type, 0, dpAxis, tensor,
                          "data_parallel")))
        return failure();
    }
    if (mbAxis >= 0 && type.getRank() > 0 && !keptWhole &&
        (inputs || !isWeightOutput()))
      a.sharding.dims[0].push_back(mbAxis);
    for (auto &[n, layout] : specs) {
      if (n != name.getValue())
        continue;
      auto [style, axisName] = StringRef(layout).split('@');
      PlanEntry e{n, layout, inputs ? "inputs" : "outputs"};
      std::string origin = std::string(inputs ? "inputs" : "outputs") +
                           " entry '" + n + "=" + layout + "'";
      a.origin = origin;
      int64_t dim;
      if (style == "replicate")
        continue;
      if (style == "sequence")
        dim = 1;
      else if (!style.consume_front("shard(") || !style.consume_back(")") ||
               style.getAsInteger(10, dim))
        return error() << origin << ": unknown layout '" << layout
                       << "'; layouts are replicate, sequence, shard(<dim>)";
      FailureOr<int> axis = styleAxis(e, "sequence", axisName);
      if (failed(axis))
        return failure();
      if (dim < 0 || dim >= type.getRank())
        return error() << origin << ": dim " << dim << " is out of range for "
                       << tensor << " " << formatShape(type.getShape());
      if (failed(shardDim(a.sharding, type, dim, *axis, tensor, origin)))
        return failure();
    }
    out[i] = a;
  }
  return success();
}

void PlanApplier::write() {
  setMesh(module, mesh);
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  FunctionAttrs attrs(func);
  auto annotate = [&](NamedAttrList &list, const TensorSharding &s,
                      StringRef origin) {
    list.set(kShardingAttr, s.toAttr(ctx, mesh));
    list.set(kOriginAttr, b.getStringAttr(origin));
  };
  auto rankOf = [](Type t) { return cast<RankedTensorType>(t).getRank(); };
  for (auto &[i, a] : args)
    annotate(attrs.arg(i), a.sharding, a.origin);
  // Weights the plan does not mention stay whole (PyTorch's default).
  // Weight layouts by name, for the optimizer state and results below.
  llvm::StringMap<TensorSharding> weightLayouts;
  for (unsigned i = 0; i < attrs.numArgs(); ++i) {
    auto param = attrs.argAttr<StringAttr>(i, "tp.param");
    if (!param)
      continue;
    int64_t rank = rankOf(func.getArgumentTypes()[i]);
    TensorSharding layout = TensorSharding::replicated(rank);
    if (args.count(i))
      layout = args[i].sharding;
    else
      annotate(attrs.arg(i), layout, "not in the plan (replicated)");
    weightLayouts.try_emplace(param.getValue(), layout);
  }
  // Optimizer state ("<weight>.<name>") is laid out like its weight.
  auto layoutOfWeight = [&](StringRef weight,
                            int64_t rank) -> std::optional<TensorSharding> {
    auto it = weightLayouts.find(weight);
    if (it == weightLayouts.end() ||
        int64_t(it->second.dims.size()) != rank)
      return std::nullopt;
    return it->second;
  };
  llvm::StringSet<> stateNames;
  for (unsigned i = 0; i < attrs.numArgs(); ++i) {
    auto state = attrs.argAttr<StringAttr>(i, "tp.state");
    if (!state)
      continue;
    stateNames.insert(state.getValue());
    auto rank = rankOf(func.getArgumentTypes()[i]);
    auto layout = layoutOfWeight(state.getValue().rsplit('.').first, rank);
    annotate(attrs.arg(i), layout ? *layout : TensorSharding::replicated(rank),
             "optimizer state of its weight");
  }
  // Graph inputs by name, for their gradients' layouts.
  llvm::StringMap<unsigned> inputArgs;
  for (unsigned i = 0; i < attrs.numArgs(); ++i)
    if (auto input = attrs.argAttr<StringAttr>(i, "tp.input"))
      inputArgs.try_emplace(input.getValue(), i);
  // A training step's outputs named after a weight (its gradient
  // "grad_<weight>" or its update "<weight>") or after optimizer state keep
  // that layout, so that partition produces the gradient exchange.
  for (unsigned r = 0; r < attrs.numResults(); ++r) {
    auto name = attrs.resultAttr<StringAttr>(r, "tp.output");
    if (!name || plan.outputs.end() !=
                     llvm::find_if(plan.outputs, [&](auto &o) {
                       return o.first == name.getValue();
                     }))
      continue;
    StringRef weight = name.getValue();
    weight.consume_front("grad_");
    int64_t rank = rankOf(func.getResultTypes()[r]);
    auto layout = layoutOfWeight(weight, rank);
    if (!layout && stateNames.contains(name.getValue()))
      layout = layoutOfWeight(name.getValue().rsplit('.').first, rank)
                   .value_or(TensorSharding::replicated(rank));
    if (layout) {
      results[r] = Annotation{*layout,
                              "the layout of weight '" + weight.str() + "'"};
      continue;
    }
    // An input's gradient ("grad_<input>", tp-autodiff's input-grads) is
    // laid out like the input.
    if (auto it = inputArgs.find(weight);
        it != inputArgs.end() && name.getValue().starts_with("grad_") &&
        args.count(it->second))
      results[r] = Annotation{args[it->second].sharding,
                              "the layout of input '" + weight.str() + "'"};
  }
  for (auto &[i, a] : results)
    annotate(attrs.result(i), a.sharding, a.origin);
  attrs.write();
  for (auto &[op, a] : ops) {
    op->setAttr(kShardingAttr, a.sharding.toAttr(ctx, mesh));
    op->setAttr(kOriginAttr, b.getStringAttr(a.origin));
  }
}

LogicalResult PlanApplier::run() {
  if (failed(buildMesh()))
    return failure();
  collectModules();
  for (auto &entry : paramModules)
    modules.push_back(entry.getKey().str());
  for (auto &entry : nodeScopes)
    if (!paramModules.count(entry.getKey()))
      modules.push_back(entry.getKey().str());
  llvm::sort(modules);
  if (auto err = resolvePlanEntries(plan.entries, modules, matches))
    return error() << *err;
  if (!matches.overrides.empty()) {
    Builder b(module.getContext());
    SmallVector<Attribute> notes;
    for (const PlanOverride &o : matches.overrides)
      notes.push_back(b.getStringAttr("module '" + o.module + "': entry " +
                                      o.exact + " names it, so " + o.wildcard +
                                      " does not apply to it"));
    module->setAttr(kPlanOverridesAttr, b.getArrayAttr(notes));
  }
  for (const PlanEntry &e : plan.entries)
    if (failed(applyEntry(e)))
      return failure();
  if (failed(applyIO(/*inputs=*/true)) || failed(applyIO(/*inputs=*/false)))
    return failure();
  write();
  return success();
}

namespace {
struct TPApplyPlanPass : tp::impl::TPApplyPlanBase<TPApplyPlanPass> {
  using TPApplyPlanBase::TPApplyPlanBase;

  void runOnOperation() override {
    Plan plan;
    auto fail = [&](const std::string &msg) {
      emitError(getOperation().getLoc()) << msg;
      signalPassFailure();
    };
    if (auto err = readPlanOptions(planFile, meshSpec, plan))
      return fail(*err);
    if (auto err = addEntries(entries, plan))
      return fail(*err);
    if (!dataParallel.empty())
      plan.dataParallel = dataParallel;
    for (const std::string &s : inputs)
      if (auto err = parseAssignment(s, "--input-layout", plan.inputs))
        return fail(*err);
    for (const std::string &s : outputs)
      if (auto err = parseAssignment(s, "--output-layout", plan.outputs))
        return fail(*err);

    ModuleOp module = getOperation();
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1)
      return fail("tp-apply-plan expects one function (the imported graph)");
    PlanApplier applier(module, funcs.front(), std::move(plan));
    if (failed(applier.run()))
      signalPassFailure();
  }
};
} // namespace
