//===- SplitStages.cpp - the tp-split-stages pass -------------------------===//
//
// Pipeline parallelism on the per-device program (after tp-partition): the
// function becomes one private function per stage, `@<name>_stage<s>`,
// and a dispatch that calls the one of this device's coordinate on the
// plan's stage axis.
//
// Stages. tp-assign-stages named the stage of every ONNX node; the
// training step's backward ops and the partitioned program's ops carry
// their forward node's name, the loss's ops go to the last stage, and ops
// named after neither (the optimizer update) follow the stage of their
// operands. Ops that read only arguments and constants (a weight's
// transpose, the attention mask, the embedding of the input ids) are
// computed in every stage that needs them.
//
// Microbatches. With m microbatches tp-apply-plan split the batch over one
// more mesh axis, `_mb` (the last), so the partitioned program is one
// microbatch's: what depends on the inputs runs once per microbatch, on
// its slice of them. The collectives over `_mb` are the sums over the
// batch (the gradients' data-parallel all_reduce, the loss's): they become
// the sum over microbatches and the all_reduce over the other axes, once,
// after the last microbatch, with everything that reads them (the
// optimizer update). Results split over `_mb` (a forward's output) are the
// microbatches' results put back together.
//
// Schedule. A stage runs, per microbatch, its forward ops (the program's
// ops before the loss) and its backward ops (from the loss on), in the
// order of the schedule: GPipe (every forward, then every backward) or
// 1F1B (p - s - 1 forwards on stage s of p, then one forward and one
// backward in turn, then the remaining backwards), so that at most p
// microbatches' activations are alive on a stage.
//
// Transfers. A value one stage computes and another reads is a
// `shard.send` right after it is computed and a `shard.recv` where it is
// first needed (with everything the same sender sent before it, so that
// both ends see one order). Forward values only go to later stages and
// backward values to earlier ones, and every stage runs its forwards, and
// its backwards, in microbatch order: both ends of a pair of stages see
// the same order, and since sends never wait, no stage waits for one that
// waits for it.
//
// Results. A stage returns the results it computes; the dispatch returns
// the others as the argument of the same name (a weight another stage
// updates) or as uninitialised tensors (stand-ins that
// tp-stage-results-to-out-params drops after bufferization), and
// `tp.stage` on each result of the function says which stage's value
// counts (tp-run takes it there); `tp.stages` on an argument lists the
// stages that read it, where not all do.
// A weight that several stages read (GPT-2's embedding, tied to the
// output projection of the last stage) is updated once, by the stage that
// sums its gradient, and sent to the others, which return it too: every
// stage's copy is the updated one at the next step.
//
//===----------------------------------------------------------------------===//
#include "StageSplitter.h"

#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/Passes.h"
#include "tp/Sharding/Sharding.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/StringMap.h"

#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_TPSPLITSTAGES
#include "tp/Sharding/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::pipeline;


bool StageSplitter::splitOverMicrobatches(Attribute layout, Type type) {
  auto sharding = dyn_cast_or_null<ShardingAttr>(layout);
  auto t = cast<RankedTensorType>(type);
  if (!mbAxis || !sharding || t.getRank() == 0)
    return false;
  std::string error;
  FailureOr<TensorSharding> s =
      TensorSharding::fromAttr(sharding, mesh, t.getRank(), error);
  return succeeded(s) && llvm::is_contained(s->dims[0], *mbAxis);
}

LogicalResult StageSplitter::classify() {
  auto names = pipeline.getAs<DictionaryAttr>("node_stages");
  // The arguments split over `_mb`: the inputs (each microbatch's slice).
  for (BlockArgument a : func.getArguments()) {
    // Without microbatches the one microbatch is the whole batch.
    bool input = bool(func.getArgAttr(a.getArgNumber(), "tp.input"));
    if (mbAxis ? splitOverMicrobatches(
                     func.getArgAttr(a.getArgNumber(), kShardingAttr),
                     a.getType())
               : input && cast<RankedTensorType>(a.getType()).getRank() > 0)
      splitArgs.insert(a);
  }
  for (unsigned r = 0; r < func.getNumResults(); ++r)
    if (splitOverMicrobatches(func.getResultAttr(r, kShardingAttr),
                              func.getResultTypes()[r]))
      splitResults.insert(r);
  // The backward pass begins with the loss (tp-autodiff's order).
  bool backward = false;
  for (Operation &op : func.getBody().front().without_terminator()) {
    ops.push_back(&op);
    if (op.getNumRegions() != 0)
      return op.emitOpError("has regions: tp-split-stages expects a "
                            "straight-line program");
    std::string node = onnxNodeName(op.getLoc());
    backward |= StringRef(node).ends_with(" loss");
    OpInfo i;
    bool readsMicrobatch = false, readsAfter = false;
    for (Value v : op.getOperands()) {
      i.stage = std::max(i.stage, infoOf(v).stage);
      readsMicrobatch |= perMicrobatch(v);
      readsAfter |= infoOf(v).phase == Phase::After;
    }
    auto axesOf = [&]() -> ArrayRef<int16_t> {
      if (auto a = op.getAttrOfType<DenseI16ArrayAttr>("grid_axes"))
        return a.asArrayRef();
      if (auto p = dyn_cast<shard::ProcessMultiIndexOp>(op))
        return p.getAxes();
      return {};
    };
    if (overMicrobatches(axesOf())) {
      if (isa<shard::AllReduceOp>(op)) {
        if (cast<shard::AllReduceOp>(op).getReduction() !=
            shard::ReductionKind::Sum)
          return op.emitOpError("reduces over microbatches other than by a "
                                "sum (ONNX node '")
                 << node << "'): the pipeline cannot split it";
        readsAfter = true;
        readsMicrobatch = false;
      } else if (!isa<shard::AllSliceOp, shard::ProcessMultiIndexOp>(op)) {
        return op.emitError("pipeline microbatches: the ")
               << op.getName() << " at ONNX node '" << node
               << "' needs every microbatch's value at once; the batch of "
                  "this model cannot be split into microbatches";
      } else {
        readsMicrobatch = true;
      }
    }
    if (readsAfter && readsMicrobatch)
      return op.emitError("pipeline microbatches: ONNX node '")
             << node << "' reads both a sum over the whole batch and one "
             << "microbatch's values (batch statistics in the forward "
             << "pass?); this model's batch cannot be split into "
             << "microbatches";
    i.phase = readsAfter        ? Phase::After
              : readsMicrobatch ? (backward ? Phase::Backward : Phase::Forward)
                                : Phase::Once;
    // What reads only arguments and constants (or values computed so) is
    // computed where it is needed; so is what reads the inputs but has no
    // node of a stage nor a stage's operand.
    if (i.phase == Phase::Once)
      i.stage = kFree;
    else if (auto known =
                 names ? names.getAs<IntegerAttr>(node) : IntegerAttr())
      i.stage = known.getInt();
    else if (StringRef(node).ends_with(" loss"))
      i.stage = stages - 1;
    info[&op] = i;
  }
  return success();
}

LogicalResult StageSplitter::findTransfers() {
  for (Operation *op : ops) {
    OpInfo from = info[op];
    if (from.stage == kFree)
      continue;
    for (Value r : op->getResults()) {
      SmallVector<int64_t> to;
      for (Operation *user : r.getUsers()) {
        auto it = info.find(user);
        if (it == info.end() || it->second.stage == from.stage)
          continue; // the return, or the same stage
        if (!llvm::is_contained(to, it->second.stage))
          to.push_back(it->second.stage);
      }
      for (int64_t t : readersOfResult.lookup(r))
        if (!llvm::is_contained(to, t))
          to.push_back(t);
      for (int64_t t : to) {
        if (!isa<RankedTensorType>(r.getType()))
          return op->emitOpError("passes a value that is not a tensor from "
                                 "pipeline stage ")
                 << from.stage << " to stage " << t;
        // Both ends see one order only if forward values go down the pipe
        // and backward values up it.
        if (microbatches > 1 &&
            ((from.phase == Phase::Forward && t < from.stage) ||
             (from.phase == Phase::Backward && t > from.stage)))
          return op->emitError("pipeline: ONNX node '")
                 << onnxNodeName(op->getLoc()) << "' of stage "
                 << from.stage << "'s "
                 << (from.phase == Phase::Forward ? "forward" : "backward")
                 << " pass is read by stage " << t
                 << "; with microbatches values go forward to later "
                    "stages and gradients back to earlier ones";
        sent[{from.stage, t, from.phase}].push_back(r);
        sendsTo[r].push_back(t);
      }
    }
  }
  return success();
}

/// The stages whose ops read `arg`, also through what is computed where
/// it is needed (a weight's transpose).
SmallVector<int64_t> StageSplitter::stagesReading(Value arg) {
  SmallVector<int64_t> stagesFound;
  SmallVector<Value> work = {arg};
  DenseSet<Value> seen = {arg};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      auto it = info.find(user);
      if (it == info.end()) {
        // The return: a value no stage computes is stage 0's result.
        if (!llvm::is_contained(stagesFound, 0))
          stagesFound.push_back(0);
        continue;
      }
      if (it->second.stage != kFree) {
        if (!llvm::is_contained(stagesFound, it->second.stage))
          stagesFound.push_back(it->second.stage);
        continue;
      }
      for (Value r : user->getResults())
        if (seen.insert(r).second)
          work.push_back(r);
    }
  }
  return stagesFound;
}

void StageSplitter::shareUpdatedWeights() {
  // The weights by name (a deep model's step has thousands).
  llvm::StringMap<BlockArgument> weights;
  for (BlockArgument a : func.getArguments())
    if (auto name =
            func.getArgAttrOfType<StringAttr>(a.getArgNumber(), "tp.param"))
      weights.try_emplace(name.getValue(), a);
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
    auto out = func.getResultAttrOfType<StringAttr>(k, "tp.output");
    Operation *def = v.getDefiningOp();
    if (!out || !def || info[def].stage == kFree)
      continue;
    BlockArgument a = weights.lookup(out.getValue());
    if (!a || a.getType() != v.getType())
      continue;
    for (int64_t t : stagesReading(a))
      if (t != info[def].stage) {
        alsoReturnedBy[k].push_back(t);
        readersOfResult[v].push_back(t);
      }
  }
}

SmallVector<std::pair<Phase, int64_t>> StageSplitter::schedule(int64_t s) {
  SmallVector<std::pair<Phase, int64_t>> actions;
  int64_t m = microbatches;
  bool oneFOneB = pipeline.getAs<StringAttr>("schedule").getValue() == "1f1b";
  int64_t warmup = oneFOneB ? std::min(stages - s - 1, m) : m;
  for (int64_t i = 0; i < warmup; ++i)
    actions.push_back({Phase::Forward, i});
  for (int64_t i = 0; i < m - warmup; ++i) {
    actions.push_back({Phase::Forward, warmup + i});
    actions.push_back({Phase::Backward, i});
  }
  for (int64_t i = m - warmup; i < m; ++i)
    actions.push_back({Phase::Backward, i});
  return actions;
}

/// shard.send / shard.recv take tensors of rank 1 or more: a scalar travels
/// as one element.
void StageSplitter::dropMicrobatchAxis() {
  if (!mbAxis)
    return;
  Mesh outer = mesh;
  outer.names.erase(outer.names.begin() + *mbAxis);
  outer.sizes.erase(outer.sizes.begin() + *mbAxis);
  auto strip = [&](Attribute attr, Type type) -> Attribute {
    auto layout = dyn_cast_or_null<ShardingAttr>(attr);
    if (!layout)
      return attr;
    std::string error;
    FailureOr<TensorSharding> s = TensorSharding::fromAttr(
        layout, mesh, cast<RankedTensorType>(type).getRank(), error);
    if (failed(s))
      return attr;
    for (auto &dim : s->dims)
      llvm::erase(dim, int(*mbAxis));
    llvm::erase(s->partial, int(*mbAxis));
    return s->toAttr(module.getContext(), outer);
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (Attribute a = func.getArgAttr(i, kShardingAttr))
      func.setArgAttr(i, kShardingAttr,
                      strip(a, func.getArgument(i).getType()));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (Attribute a = func.getResultAttr(i, kShardingAttr))
      func.setResultAttr(i, kShardingAttr,
                         strip(a, func.getResultTypes()[i]));
  setMesh(module, outer);
}

/// Per stage, the bytes of one microbatch's values that its forward keeps
/// for its backward (computed there or received): what each microbatch
/// alive between its forward and its backward holds.
SmallVector<int64_t> StageSplitter::keptBytes() {
  SmallVector<int64_t> kept(stages, 0);
  for (Operation *op : ops) {
    if (info[op].phase != Phase::Forward)
      continue;
    for (Value r : op->getResults()) {
      int64_t bytes = staticBytes(r.getType());
      if (!bytes)
        continue;
      SmallVector<int64_t> readers;
      for (Operation *user : r.getUsers())
        if (auto it = info.find(user);
            it != info.end() && it->second.phase == Phase::Backward &&
            it->second.stage != kFree &&
            !llvm::is_contained(readers, it->second.stage))
          readers.push_back(it->second.stage);
      for (int64_t t : readers)
        kept[t] += bytes;
    }
  }
  return kept;
}

LogicalResult StageSplitter::run() {
  if (failed(classify()))
    return failure();
  shareUpdatedWeights();
  if (failed(findTransfers()))
    return failure();
  NamedAttrList figures(pipeline);
  figures.set("kept_bytes_per_microbatch", b.getDenseI64ArrayAttr(keptBytes()));
  module->setAttr("tp.pipeline", figures.getDictionary(module.getContext()));
  SmallVector<func::FuncOp> stageFuncs;
  SmallVector<SmallVector<unsigned>> owned(stages);
  for (int64_t s = 0; s < stages; ++s) {
    FailureOr<func::FuncOp> f = buildStage(s, owned[s]);
    if (failed(f))
      return failure();
    stageFuncs.push_back(*f);
  }
  buildDispatch(stageFuncs, owned);
  dropMicrobatchAxis();
  return success();
}

namespace {
struct TPSplitStagesPass : tp::impl::TPSplitStagesBase<TPSplitStagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto pipeline = module->getAttrOfType<DictionaryAttr>("tp.pipeline");
    if (!pipeline)
      return;
    FailureOr<Mesh> mesh = getMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    StringRef axisName = pipeline.getAs<StringAttr>("axis").getValue();
    std::optional<int> axis = mesh->axisIndex(axisName);
    std::optional<int> mbAxis = mesh->axisIndex(kMicrobatchAxis);
    if (!axis) {
      module.emitError("tp-split-stages: no mesh axis '")
          << axisName << "' for the pipeline's stages";
      return signalPassFailure();
    }
    if (mesh->sizes[*axis] < 2 && !mbAxis)
      return;
    if (mbAxis && *mbAxis + 1 != int(mesh->names.size())) {
      module.emitError("tp-split-stages: the microbatch axis must be the "
                       "mesh's last");
      return signalPassFailure();
    }
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      module.emitError("tp-split-stages expects one function (the "
                       "per-device program)");
      return signalPassFailure();
    }
    std::optional<int16_t> mb;
    if (mbAxis)
      mb = int16_t(*mbAxis);
    StageSplitter splitter(module, funcs.front(), pipeline, *mesh,
                           int16_t(*axis), mb);
    if (failed(splitter.run()))
      signalPassFailure();
  }
};
} // namespace
