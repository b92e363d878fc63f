//===- PipelineStages.cpp - cut the model into pipeline stages ------------===//
//
// tp-assign-stages: the plan's "pipeline" says which mesh axis holds the
// stages and, optionally, the modules that begin stages 1, 2, ...
// (`split_before`). Without them the stages are balanced: the cut points
// are the starts of the model's layers (the numbered children of its
// shallowest ModuleList, `layers.N` / `h.N`), chosen to minimise the
// largest stage's share of FLOPs plus share of parameter bytes.
//
// The cut is by position in the imported graph (topological order), so a
// value only ever flows to the same or a later stage. The module gets
// `tp.pipeline`: the axis, schedule, microbatches, the stage of every ONNX
// node (by name, which the training step's backward ops and the
// partitioned program keep), and per stage its first module, FLOPs,
// parameter bytes and the bytes it sends on per microbatch, which
// --report prints.
//
//===----------------------------------------------------------------------===//
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Import/ModuleTree.h"
#include "tp/Plan/Passes.h"
#include "tp/Plan/Plan.h"
#include "tp/Sharding/Report.h"
#include "tp/Sharding/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

#include <limits>

namespace mlir::tp {
#define GEN_PASS_DEF_TPASSIGNSTAGES
#include "tp/Plan/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// A layer: a numbered child (`layers.3`), where stages may begin.
bool isNumberedChild(StringRef path) {
  StringRef last = path.rsplit('.').second;
  if (last.empty())
    last = path;
  return !last.empty() && llvm::all_of(last, llvm::isDigit);
}

class StageAssigner {
public:
  StageAssigner(ModuleOp module, func::FuncOp func, Plan plan)
      : module(module), func(func), plan(std::move(plan)),
        where(this->plan.pipeline.source) {}

  LogicalResult run();

private:
  ModuleOp module;
  func::FuncOp func;
  Plan plan;
  std::string where;
  int64_t stages = 1, dpSize = 1;
  /// The function's ops in order (not the return).
  SmallVector<Operation *> ops;
  /// Module path (and each enclosing one) -> index of its first op.
  std::map<std::string, size_t> firstOp;
  /// Per op: its cost (share of FLOPs + share of parameter bytes).
  SmallVector<double> cost;
  SmallVector<double> flops;
  SmallVector<int64_t> paramBytes;

  InFlightDiagnostic error() { return emitError(func.getLoc()); }
  LogicalResult checkMesh();
  LogicalResult checkMicrobatches();
  void collect();
  FailureOr<SmallVector<size_t>> cutsFromSplitPoints();
  FailureOr<SmallVector<size_t>> balancedCuts();
  void write(ArrayRef<size_t> cuts);
};

} // namespace

LogicalResult StageAssigner::checkMesh() {
  const PipelinePlan &p = plan.pipeline;
  bool found = false;
  std::string meshText;
  for (auto &[name, size] : plan.mesh) {
    meshText += (meshText.empty() ? "" : ",") + name + "=" +
                std::to_string(size);
    if (name == p.axis) {
      found = true;
      stages = size;
    }
    if (name == plan.dataParallel)
      dpSize = size;
  }
  if (!found)
    return error() << "pipeline axis '" << p.axis << "' (" << where
                   << ") is not a mesh axis (mesh is "
                   << (meshText.empty() ? "empty" : meshText)
                   << "); add it, e.g. --mesh " << p.axis << "=2";
  if (p.axis == plan.dataParallel)
    return error() << "pipeline axis '" << p.axis << "' (" << where
                   << ") is also the data_parallel axis; give the stages an "
                      "axis of their own";
  return success();
}

/// Each data-parallel rank's batch splits into equal microbatches.
LogicalResult StageAssigner::checkMicrobatches() {
  int64_t m = plan.pipeline.microbatches;
  for (BlockArgument arg : func.getArguments()) {
    auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "tp.input");
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!name || !type || type.getRank() == 0)
      continue;
    // The first input's leading dim is the batch.
    int64_t batch = type.getDimSize(0);
    if (batch % dpSize == 0 && (batch / dpSize) % m == 0)
      return success();
    InFlightDiagnostic d = error();
    d << "pipeline microbatches " << m << " (" << where
      << ") do not divide the batch: input '" << name.getValue() << "' has "
      << batch << " rows";
    if (dpSize > 1)
      d << " (" << batch / dpSize << " per data-parallel rank, " << batch
        << " / " << dpSize << ")";
    return d;
  }
  return success();
}

void StageAssigner::collect() {
  ModuleTree tree = ModuleTree::build(func);
  double totalFlops = 0, totalParams = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    size_t i = ops.size();
    ops.push_back(&op);
    double f = estimateFlops(&op);
    int64_t params = 0;
    for (Value v : op.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && func.getArgAttr(arg.getArgNumber(), "tp.param"))
        params += staticBytes(v.getType());
    flops.push_back(f);
    paramBytes.push_back(params);
    totalFlops += f;
    totalParams += params;
    auto loc = dyn_cast<NameLoc>(op.getLoc());
    if (!loc || op.getLoc() == func.getLoc())
      continue;
    std::string scope = tree.modulePathOf(loc.getName().getValue());
    while (!scope.empty()) {
      firstOp.emplace(scope, i); // keeps the first
      size_t dot = scope.rfind('.');
      scope = dot == std::string::npos ? "" : scope.substr(0, dot);
    }
  }
  for (size_t i = 0; i < ops.size(); ++i)
    cost.push_back((totalFlops ? flops[i] / totalFlops : 0) +
                   (totalParams ? paramBytes[i] / totalParams : 0));
}

FailureOr<SmallVector<size_t>> StageAssigner::cutsFromSplitPoints() {
  const auto &names = plan.pipeline.splitBefore;
  if (int64_t(names.size()) + 1 != stages)
    return error() << "pipeline split_before (" << where << ") lists "
                   << names.size() << " module(s), so "
                   << names.size() + 1 << " stage(s), but mesh axis '"
                   << plan.pipeline.axis << "' has " << stages;
  // Ops before the first module's (unscoped constants) compute nothing.
  size_t firstModuleOp = std::numeric_limits<size_t>::max();
  for (auto &[path, index] : firstOp)
    firstModuleOp = std::min(firstModuleOp, index);
  SmallVector<size_t> cuts;
  for (const std::string &name : names) {
    auto it = firstOp.find(name);
    if (it == firstOp.end()) {
      std::vector<std::string> all;
      for (auto &[path, index] : firstOp)
        all.push_back(path);
      return error() << "pipeline split_before '" << name << "' (" << where
                     << ") names no module of the model; closest: "
                     << closestModules(name, all);
    }
    if (it->second <= firstModuleOp)
      return error() << "pipeline split_before '" << name << "' (" << where
                     << ") begins where the model does: stage 0 would "
                        "have no module";
    if (!cuts.empty() && it->second <= cuts.back())
      return error() << "pipeline split_before '" << name << "' (" << where
                     << ") does not come after '"
                     << names[cuts.size() - 1]
                     << "' in the model: list the modules in model order";
    cuts.push_back(it->second);
  }
  return cuts;
}

/// Linear partition of the ops into `stages` runs that begin at layer
/// starts, minimising the costliest run (dynamic programming over the
/// candidate cuts; a model has at most a few hundred layers).
FailureOr<SmallVector<size_t>> StageAssigner::balancedCuts() {
  // The layers: numbered children at the shallowest depth that has any.
  size_t depth = std::numeric_limits<size_t>::max();
  for (auto &[path, index] : firstOp)
    if (isNumberedChild(path))
      depth = std::min<size_t>(depth, StringRef(path).count('.'));
  SmallVector<size_t> starts;
  std::string layers;
  for (auto &[path, index] : firstOp)
    if (isNumberedChild(path) && StringRef(path).count('.') == depth) {
      if (index > 0)
        starts.push_back(index);
      layers += (layers.empty() ? "" : ", ") + path;
    }
  llvm::sort(starts);
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  if (int64_t(starts.size()) + 1 < stages)
    return error() << "pipeline axis '" << plan.pipeline.axis << "' ("
                   << where << ") has " << stages
                   << " stages, more than the model has places to cut: "
                   << (layers.empty()
                           ? std::string("it has no numbered layers "
                                         "(layers.0, h.0, ...)")
                           : "its layers are " + layers)
                   << "; give split_before or fewer stages";
  // bounds[k]: the op index where candidate segment k begins.
  SmallVector<size_t> bounds = {0};
  bounds.append(starts.begin(), starts.end());
  bounds.push_back(ops.size());
  size_t n = bounds.size() - 1; // segments
  SmallVector<double> prefix(ops.size() + 1, 0);
  for (size_t i = 0; i < ops.size(); ++i)
    prefix[i + 1] = prefix[i] + cost[i];
  auto span = [&](size_t a, size_t b) { // segments [a, b)
    return prefix[bounds[b]] - prefix[bounds[a]];
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][j]: the smallest max cost of the first j segments in s stages.
  std::vector<std::vector<double>> best(stages + 1,
                                        std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> from(stages + 1,
                                        std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int64_t s = 1; s <= stages; ++s)
    for (size_t j = s; j <= n; ++j)
      for (size_t k = s - 1; k < j; ++k) {
        double c = std::max(best[s - 1][k], span(k, j));
        if (c < best[s][j]) {
          best[s][j] = c;
          from[s][j] = k;
        }
      }
  SmallVector<size_t> cuts;
  for (size_t s = stages, j = n; s > 1; --s) {
    j = from[s][j];
    cuts.push_back(bounds[j]);
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

void StageAssigner::write(ArrayRef<size_t> cuts) {
  Builder b(func.getContext());
  SmallVector<int64_t> stageOf(ops.size());
  // By ONNX node name: the training step's backward ops and the
  // partitioned program's ops carry their forward op's name.
  llvm::StringMap<int64_t> nodeStages;
  for (size_t i = 0, s = 0; i < ops.size(); ++i) {
    while (s < cuts.size() && i >= cuts[s])
      ++s;
    stageOf[i] = s;
    if (auto loc = dyn_cast<NameLoc>(ops[i]->getLoc());
        loc && ops[i]->getLoc() != func.getLoc())
      nodeStages.try_emplace(loc.getName().getValue(), s);
  }
  SmallVector<NamedAttribute> nodeStageAttrs;
  for (auto &[name, s] : nodeStages)
    nodeStageAttrs.push_back(
        b.getNamedAttr(name, b.getI64IntegerAttr(s)));
  // Per stage: FLOPs, parameter bytes (a weight read in several stages
  // counts in each: each holds a copy), the module it begins with, and the
  // bytes of the values it hands on (per microbatch: the batch's share).
  SmallVector<double> stageFlops(stages, 0);
  SmallVector<int64_t> stageParams(stages, 0), stageSends(stages, 0);
  SmallVector<std::string> firstModule(stages);
  SmallVector<llvm::DenseSet<unsigned>> weights(stages);
  DenseMap<Operation *, size_t> index;
  for (auto [i, op] : llvm::enumerate(ops))
    index[op] = i;
  for (auto [i, op] : llvm::enumerate(ops)) {
    int64_t s = stageOf[i];
    stageFlops[s] += flops[i];
    for (Value v : op->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && func.getArgAttr(arg.getArgNumber(), "tp.param") &&
          weights[s].insert(arg.getArgNumber()).second)
        stageParams[s] += staticBytes(v.getType());
    // A value used by a later stage goes down the pipe, through every
    // stage between.
    int64_t last = s;
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers())
        if (auto it = index.find(user); it != index.end())
          last = std::max(last, stageOf[it->second]);
    if (last > s && !isa<ConstantOp>(op))
      for (int64_t t = s; t < last; ++t)
        for (Value r : op->getResults())
          stageSends[t] += staticBytes(r.getType()) / plan.pipeline.microbatches;
  }
  for (auto &[path, i] : firstOp) {
    int64_t s = stageOf[i];
    if (firstModule[s].empty() || i < firstOp[firstModule[s]] ||
        (i == firstOp[firstModule[s]] && path.size() < firstModule[s].size()))
      firstModule[s] = path;
  }
  auto strings = [&](ArrayRef<std::string> v) {
    SmallVector<Attribute> a;
    for (const std::string &s : v)
      a.push_back(b.getStringAttr(s));
    return b.getArrayAttr(a);
  };
  SmallVector<Attribute> flopAttrs;
  for (double f : stageFlops)
    flopAttrs.push_back(b.getF64FloatAttr(f));
  const PipelinePlan &p = plan.pipeline;
  module->setAttr(
      "tp.pipeline",
      b.getDictionaryAttr({
          b.getNamedAttr("axis", b.getStringAttr(p.axis)),
          b.getNamedAttr("stages", b.getI64IntegerAttr(stages)),
          b.getNamedAttr("microbatches", b.getI64IntegerAttr(p.microbatches)),
          b.getNamedAttr("schedule", b.getStringAttr(p.schedule)),
          b.getNamedAttr("balanced", b.getBoolAttr(p.splitBefore.empty())),
          b.getNamedAttr("first_modules", strings(firstModule)),
          b.getNamedAttr("flops", b.getArrayAttr(flopAttrs)),
          b.getNamedAttr("param_bytes", b.getDenseI64ArrayAttr(stageParams)),
          b.getNamedAttr("send_bytes", b.getDenseI64ArrayAttr(stageSends)),
          b.getNamedAttr("node_stages",
                         b.getDictionaryAttr(nodeStageAttrs)),
      }));
}

LogicalResult StageAssigner::run() {
  if (failed(checkMesh()) || failed(checkMicrobatches()))
    return failure();
  collect();
  FailureOr<SmallVector<size_t>> cuts = plan.pipeline.splitBefore.empty()
                                            ? balancedCuts()
                                            : cutsFromSplitPoints();
  if (failed(cuts))
    return failure();
  write(*cuts);
  return success();
}

namespace {
struct TPAssignStagesPass
    : tp::impl::TPAssignStagesBase<TPAssignStagesPass> {
  using TPAssignStagesBase::TPAssignStagesBase;

  void runOnOperation() override {
    Plan plan;
    auto fail = [&](const std::string &msg) {
      emitError(getOperation().getLoc()) << msg;
      signalPassFailure();
    };
    if (auto err = readPlanOptions(planFile, meshSpec, plan))
      return fail(*err);
    if (!pipeline.empty())
      if (auto err = parsePipelineSpec(pipeline, plan))
        return fail(*err);
    if (!dataParallel.empty())
      plan.dataParallel = dataParallel;
    if (!plan.pipeline.enabled())
      return; // no pipeline: nothing to assign
    ModuleOp module = getOperation();
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1)
      return fail("tp-assign-stages expects one function (the imported "
                  "graph)");
    StageAssigner assigner(module, funcs.front(), std::move(plan));
    if (failed(assigner.run()))
      signalPassFailure();
  }
};
} // namespace
