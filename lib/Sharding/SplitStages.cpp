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

#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_TPSPLITSTAGES
#include "tp/Sharding/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

constexpr int64_t kFree = -1;
/// The microbatch axis tp-apply-plan adds (the mesh's last).
constexpr llvm::StringLiteral kMicrobatchAxis = "_mb";

/// When an op runs: per microbatch in its forward or backward, once before
/// them (what reads only weights and constants), or once after them (what
/// reads a sum over microbatches).
enum class Phase { Forward, Backward, Once, After };

struct OpInfo {
  int64_t stage = kFree;
  Phase phase = Phase::Once;
};

/// Where a value is looked up: microbatch i's mapping, or the one shared
/// by what runs once (before or after the microbatches).
constexpr int kShared = -1;

class StageSplitter {
public:
  StageSplitter(ModuleOp module, func::FuncOp func, DictionaryAttr pipeline,
                Mesh mesh, int16_t axis, std::optional<int16_t> mbAxis)
      : module(module), func(func), pipeline(pipeline), mesh(std::move(mesh)),
        axis(axis), mbAxis(mbAxis), b(module.getContext()) {
    stages = this->mesh.sizes[axis];
    microbatches = mbAxis ? this->mesh.sizes[*mbAxis] : 1;
  }

  LogicalResult run();

private:
  ModuleOp module;
  func::FuncOp func;
  DictionaryAttr pipeline;
  Mesh mesh;
  int16_t axis;
  std::optional<int16_t> mbAxis;
  int64_t stages, microbatches;
  OpBuilder b;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, OpInfo> info;
  /// Arguments split over the microbatches (the inputs), and results (a
  /// forward's output).
  DenseSet<Value> splitArgs;
  DenseSet<unsigned> splitResults;
  /// Per (from, to, phase): the values sent, in program order.
  std::map<std::tuple<int64_t, int64_t, Phase>, SmallVector<Value>> sent;
  DenseMap<Value, SmallVector<int64_t>> sendsTo;
  /// Per result: the stages other than its owner that return it too (an
  /// updated weight they read).
  DenseMap<unsigned, SmallVector<int64_t>> alsoReturnedBy;
  /// Those stages, per returned value (they receive it).
  DenseMap<Value, SmallVector<int64_t>> readersOfResult;

  bool perMicrobatch(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return splitArgs.contains(arg);
    Phase p = info.lookup(v.getDefiningOp()).phase;
    return p == Phase::Forward || p == Phase::Backward;
  }
  OpInfo infoOf(Value v) {
    Operation *def = v.getDefiningOp();
    return def ? info.lookup(def) : OpInfo{};
  }
  bool overMicrobatches(ArrayRef<int16_t> axes) {
    return mbAxis && llvm::is_contained(axes, *mbAxis);
  }
  SmallVector<int16_t> withoutMicrobatches(ArrayRef<int16_t> axes) {
    SmallVector<int16_t> rest;
    for (int16_t a : axes)
      if (!mbAxis || a != *mbAxis)
        rest.push_back(a);
    return rest;
  }

  bool splitOverMicrobatches(Attribute layout, Type type);
  LogicalResult classify();
  LogicalResult findTransfers();
  void shareUpdatedWeights();
  SmallVector<int64_t> stagesReading(Value arg);
  SmallVector<std::pair<Phase, int64_t>> schedule(int64_t s);
  FailureOr<func::FuncOp> buildStage(int64_t s, SmallVector<unsigned> &owned);
  void buildDispatch(ArrayRef<func::FuncOp> stageFuncs,
                     ArrayRef<SmallVector<unsigned>> owned);
  FunctionType signature();
  SmallVector<int64_t> keptBytes();
  void dropMicrobatchAxis();
};

} // namespace

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
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
    auto out = func.getResultAttrOfType<StringAttr>(k, "tp.output");
    Operation *def = v.getDefiningOp();
    if (!out || !def || info[def].stage == kFree)
      continue;
    for (BlockArgument a : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(a.getArgNumber(),
                                                    "tp.param");
      if (name != out || a.getType() != v.getType())
        continue;
      for (int64_t t : stagesReading(a))
        if (t != info[def].stage) {
          alsoReturnedBy[k].push_back(t);
          readersOfResult[v].push_back(t);
        }
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
static RankedTensorType carrierType(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getRank() ? t : RankedTensorType::get({1}, t.getElementType());
}

FunctionType StageSplitter::signature() {
  auto grow = [&](Type t) -> Type {
    auto r = cast<RankedTensorType>(t);
    SmallVector<int64_t> shape(r.getShape());
    shape[0] *= microbatches;
    return RankedTensorType::get(shape, r.getElementType());
  };
  SmallVector<Type> args, results;
  for (BlockArgument a : func.getArguments())
    args.push_back(splitArgs.contains(a) ? grow(a.getType()) : a.getType());
  for (auto [r, t] : llvm::enumerate(func.getResultTypes()))
    results.push_back(splitResults.contains(r) ? grow(t) : t);
  return b.getFunctionType(args, results);
}

FailureOr<func::FuncOp> StageSplitter::buildStage(int64_t s,
                                                  SmallVector<unsigned> &owned) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  // The results this stage computes; values no stage computes (an
  // argument, a constant) come from stage 0.
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    int64_t owner = infoOf(v).stage;
    if (owner == s || (owner == kFree && s == 0) ||
        llvm::is_contained(alsoReturnedBy.lookup(i), s))
      owned.push_back(i);
  }
  FunctionType whole = signature();
  SmallVector<Type> resultTypes;
  for (unsigned i : owned)
    resultTypes.push_back(whole.getResult(i));
  b.setInsertionPointAfter(func);
  auto stage = func::FuncOp::create(
      b, func.getLoc(), (func.getName() + "_stage" + Twine(s)).str(),
      b.getFunctionType(whole.getInputs(), resultTypes));
  stage.setPrivate();
  Block *entry = stage.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // Per microbatch its mapping; what runs once maps in `shared`.
  IRMapping shared;
  SmallVector<IRMapping> mapped(microbatches);
  for (auto [from, to] : llvm::zip(func.getArguments(), entry->getArguments()))
    if (!splitArgs.contains(from))
      shared.map(from, to);
  auto mapFor = [&](int at) -> IRMapping & {
    return at == kShared ? shared : mapped[at];
  };
  auto find = [&](Value v, int at) -> Value {
    if (Value x = mapFor(at).lookupOrNull(v))
      return x;
    return shared.lookupOrNull(v);
  };

  // Receives, in the sender's order, up to (v, at).
  std::map<int64_t, SmallVector<std::pair<Value, int>>> inbox;
  std::map<int64_t, size_t> received;
  for (int64_t from = 0; from < stages; ++from) {
    if (from == s)
      continue;
    auto &list = inbox[from];
    for (auto [phase, i] : schedule(from))
      for (Value v : sent[{from, s, phase}])
        list.push_back({v, int(i)});
    for (Value v : sent[{from, s, Phase::After}])
      list.push_back({v, kShared});
    for (Value v : sent[{from, s, Phase::Once}])
      list.push_back({v, kShared});
  }
  auto receive = [&](Value v, int at, int64_t from) -> LogicalResult {
    auto &list = inbox[from];
    size_t &next = received[from];
    while (!mapFor(at).contains(v)) {
      if (next == list.size())
        return func.emitError("internal: stage ")
               << s << " waits for a value stage " << from
               << " does not send";
      auto [x, i] = list[next++];
      Location loc = x.getLoc();
      RankedTensorType type = carrierType(x);
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      Value got = shard::RecvOp::create(b, loc, type, kMeshSymbol,
                                        ArrayRef<int16_t>{axis}, empty,
                                        b.getDenseI64ArrayAttr({from}),
                                        ValueRange{});
      if (type != x.getType())
        got = tensor::CollapseShapeOp::create(
            b, loc, cast<RankedTensorType>(x.getType()), got,
            ArrayRef<ReassociationIndices>{});
      mapFor(i).map(x, got);
    }
    return success();
  };

  // Makes `v` available to microbatch `at` (or to what runs once).
  std::function<LogicalResult(Value, int)> need;
  std::function<LogicalResult(Operation *, int)> emit;
  std::function<LogicalResult(Operation *, ValueRange)> sendResults;
  need = [&](Value v, int at) -> LogicalResult {
    if (find(v, at))
      return success();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      // This microbatch's rows of a split input (all of them for one).
      if (microbatches == 1) {
        mapped[at].map(v, entry->getArgument(arg.getArgNumber()));
        return success();
      }
      auto type = cast<RankedTensorType>(arg.getType());
      int64_t rows = type.getDimSize(0);
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          sizes, strides(type.getRank(), b.getIndexAttr(1));
      offsets[0] = b.getIndexAttr(rows * at);
      for (int64_t d : type.getShape())
        sizes.push_back(b.getIndexAttr(d));
      Value slice = tensor::ExtractSliceOp::create(
          b, arg.getLoc(), type, entry->getArgument(arg.getArgNumber()),
          offsets, sizes, strides);
      mapped[at].map(v, slice);
      return success();
    }
    Operation *def = v.getDefiningOp();
    OpInfo i = info[def];
    if (i.stage == s || i.stage == kFree) {
      if (i.stage == s && i.phase != Phase::Once)
        return def->emitOpError("internal: stage ")
               << s << " reads it before computing it";
      // Computed here on demand: once, or for this microbatch.
      return emit(def, i.phase == Phase::Once || i.phase == Phase::After
                           ? kShared
                           : at);
    }
    return receive(v, i.phase == Phase::Forward || i.phase == Phase::Backward
                          ? at
                          : kShared,
                   i.stage);
  };
  emit = [&](Operation *op, int at) -> LogicalResult {
    Location loc = op->getLoc();
    // A sum over microbatches: the microbatches' values added, then the
    // all_reduce over the other axes.
    if (auto ar = dyn_cast<shard::AllReduceOp>(op);
        ar && overMicrobatches(ar.getGridAxes())) {
      Value sum;
      for (int i = 0; i < microbatches; ++i) {
        if (failed(need(ar.getInput(), i)))
          return failure();
        Value x = find(ar.getInput(), i);
        sum = sum ? AddOp::create(b, loc, sum, x).getResult() : x;
      }
      SmallVector<int16_t> rest = withoutMicrobatches(ar.getGridAxes());
      if (!rest.empty())
        sum = shard::AllReduceOp::create(b, loc, sum, kMeshSymbol, rest,
                                         ar.getReduction());
      shared.map(ar.getResult(), sum);
      return sendResults(op, {sum});
    }
    for (Value v : op->getOperands()) {
      if (failed(need(v, at)))
        return failure();
      if (!find(v, at))
        return op->emitOpError("internal: tp-split-stages lost an operand "
                               "of stage ")
               << s << ", microbatch " << at;
    }
    IRMapping &map = mapFor(at);
    auto operand = [&](Value v) { return find(v, at); };
    Operation *copy;
    if (auto sl = dyn_cast<shard::AllSliceOp>(op);
        sl && overMicrobatches(sl.getGridAxes())) {
      // This microbatch's piece of the other axes' piece (`_mb` is the
      // minor axis).
      Value x = operand(sl.getInput());
      SmallVector<int16_t> rest = withoutMicrobatches(sl.getGridAxes());
      int64_t dim = sl.getSliceAxis().getSExtValue();
      auto type = cast<RankedTensorType>(sl.getType());
      if (!rest.empty()) {
        auto inType = cast<RankedTensorType>(x.getType());
        SmallVector<int64_t> shape(inType.getShape());
        shape[dim] = type.getDimSize(dim) * microbatches;
        x = shard::AllSliceOp::create(
            b, loc, RankedTensorType::get(shape, type.getElementType()), x,
            kMeshSymbol, rest, dim);
      }
      auto inType = cast<RankedTensorType>(x.getType());
      SmallVector<OpFoldResult> offsets(inType.getRank(), b.getIndexAttr(0)),
          sizes, strides(inType.getRank(), b.getIndexAttr(1));
      offsets[dim] = b.getIndexAttr(type.getDimSize(dim) * at);
      for (int64_t d : type.getShape())
        sizes.push_back(b.getIndexAttr(d));
      copy = tensor::ExtractSliceOp::create(b, loc, type, x, offsets, sizes,
                                            strides);
    } else if (auto idx = dyn_cast<shard::ProcessMultiIndexOp>(op);
               idx && overMicrobatches(idx.getAxes())) {
      // The microbatch's index is its place in the schedule.
      SmallVector<int16_t> rest = withoutMicrobatches(idx.getAxes());
      Operation *others =
          rest.empty() ? nullptr
                       : shard::ProcessMultiIndexOp::create(b, loc, kMeshSymbol,
                                                            rest)
                             .getOperation();
      unsigned k = 0;
      for (auto [j, a] : llvm::enumerate(idx.getAxes()))
        map.map(idx.getResult()[j],
                a == *mbAxis ? arith::ConstantIndexOp::create(b, loc, at)
                                   .getResult()
                             : others->getResult(k++));
      return success();
    } else {
      // Operands from this microbatch's mapping or the shared one.
      IRMapping operands;
      for (Value v : op->getOperands())
        operands.map(v, operand(v));
      copy = b.clone(*op, operands);
    }
    for (auto [r, c] : llvm::zip(op->getResults(), copy->getResults()))
      map.map(r, c);
    return sendResults(op, copy->getResults());
  };
  // Sends go right after the value is computed.
  sendResults = [&](Operation *op, ValueRange copies) -> LogicalResult {
    if (info[op].stage != s)
      return success();
    Location loc = op->getLoc();
    for (auto [r, c] : llvm::zip(op->getResults(), copies))
      for (int64_t t : sendsTo.lookup(r)) {
        Value sendable = c;
        RankedTensorType type = carrierType(r);
        if (type != r.getType())
          sendable = tensor::ExpandShapeOp::create(
              b, loc, type, c, ArrayRef<ReassociationIndices>{});
        shard::SendOp::create(b, loc, type, kMeshSymbol,
                              ArrayRef<int16_t>{axis}, sendable,
                              ArrayRef<int64_t>{t}, ValueRange{});
      }
    return success();
  };

  // The schedule's microbatches, then what runs once after them.
  for (auto [phase, i] : schedule(s))
    for (Operation *op : ops)
      if (info[op].stage == s && info[op].phase == phase &&
          failed(emit(op, int(i))))
        return failure();
  for (Operation *op : ops)
    if (info[op].stage == s && info[op].phase == Phase::After &&
        failed(emit(op, kShared)))
      return failure();
  for (Operation *op : ops)
    if (info[op].stage == s && info[op].phase == Phase::Once &&
        !find(op->getResult(0), kShared) && !op->getUsers().empty() &&
        failed(emit(op, kShared)))
      return failure();

  SmallVector<Value> results;
  for (unsigned k : owned) {
    Value v = ret.getOperand(k);
    if (!splitResults.contains(k)) {
      // One value: what runs once, or the one microbatch's.
      int at = perMicrobatch(v) ? 0 : kShared;
      if (perMicrobatch(v) && microbatches > 1)
        return ret.emitOpError("pipeline: result ")
               << k << " differs per microbatch but is not split over them";
      if (failed(need(v, at)))
        return failure();
      results.push_back(find(v, at));
      continue;
    }
    // A result split over the microbatches: theirs, one after another.
    auto part = cast<RankedTensorType>(v.getType());
    auto wholeType = cast<RankedTensorType>(whole.getResult(k));
    Value out = tensor::EmptyOp::create(b, v.getLoc(), wholeType.getShape(),
                                        wholeType.getElementType());
    for (int i = 0; i < microbatches; ++i) {
      if (failed(need(v, i)))
        return failure();
      SmallVector<OpFoldResult> offsets(part.getRank(), b.getIndexAttr(0)),
          sizes, strides(part.getRank(), b.getIndexAttr(1));
      offsets[0] = b.getIndexAttr(part.getDimSize(0) * i);
      for (int64_t d : part.getShape())
        sizes.push_back(b.getIndexAttr(d));
      out = tensor::InsertSliceOp::create(b, v.getLoc(), find(v, i), out,
                                          offsets, sizes, strides);
    }
    results.push_back(out);
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  return stage;
}

void StageSplitter::buildDispatch(ArrayRef<func::FuncOp> stageFuncs,
                                  ArrayRef<SmallVector<unsigned>> owned) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Location loc = ret.getLoc();
  FunctionType whole = signature();
  // The argument a result stands for when another stage computes it.
  auto passThrough = [&](unsigned r) -> Value {
    auto out = func.getResultAttrOfType<StringAttr>(r, "tp.output");
    for (BlockArgument a : func.getArguments())
      for (StringRef key : {"tp.param", "tp.state"})
        if (auto name = func.getArgAttrOfType<StringAttr>(a.getArgNumber(), key);
            out && name && name == out && a.getType() == whole.getResult(r))
          return a;
    return {};
  };
  // The stages that read each argument, where not all do: tp-run leaves
  // the others' ranks without it.
  for (BlockArgument a : func.getArguments()) {
    SmallVector<int64_t> readers = stagesReading(a);
    if (int64_t(readers.size()) < stages) {
      llvm::sort(readers);
      func.setArgAttr(a.getArgNumber(), "tp.stages",
                      b.getDenseI64ArrayAttr(readers));
    }
  }
  // Every result's stage, for the manifest; a result more than one stage
  // writes (an updated tied weight) lists them all.
  for (auto [s, list] : llvm::enumerate(owned))
    for (unsigned r : list)
      if (!llvm::is_contained(alsoReturnedBy.lookup(r), int64_t(s)))
        func.setResultAttr(r, "tp.stage", b.getI64IntegerAttr(s));
  for (auto &[r, others] : alsoReturnedBy) {
    SmallVector<int64_t> writers = {
        func.getResultAttrOfType<IntegerAttr>(r, "tp.stage").getInt()};
    writers.append(others.begin(), others.end());
    llvm::sort(writers);
    func.setResultAttr(r, "tp.stages", b.getDenseI64ArrayAttr(writers));
  }
  // The old body goes; the dispatch replaces it.
  ret.erase();
  while (!body.empty())
    body.back().erase();
  for (auto [a, t] : llvm::zip(func.getArguments(), whole.getInputs()))
    a.setType(t);
  func.setFunctionType(whole);
  b.setInsertionPointToEnd(&body);
  auto index = shard::ProcessMultiIndexOp::create(
      b, loc, kMeshSymbol, ArrayRef<int16_t>{axis});
  SmallVector<int64_t> cases;
  for (int64_t s = 0; s + 1 < stages; ++s)
    cases.push_back(s);
  auto dispatch = scf::IndexSwitchOp::create(
      b, loc, whole.getResults(), index.getResult()[0], cases, cases.size());
  auto fill = [&](Region &region, int64_t s) {
    Block *block = b.createBlock(&region);
    b.setInsertionPointToStart(block);
    auto call = func::CallOp::create(b, loc, stageFuncs[s],
                                     func.getArguments());
    SmallVector<Value> yields(whole.getNumResults());
    for (auto [k, r] : llvm::enumerate(owned[s]))
      yields[r] = call.getResult(k);
    for (unsigned r = 0; r < yields.size(); ++r)
      if (!yields[r]) {
        Value arg = passThrough(r);
        auto t = cast<RankedTensorType>(whole.getResult(r));
        yields[r] = arg ? arg
                        : tensor::EmptyOp::create(b, loc, t.getShape(),
                                                  t.getElementType())
                              .getResult();
      }
    scf::YieldOp::create(b, loc, yields);
  };
  for (int64_t s = 0; s + 1 < stages; ++s)
    fill(dispatch.getCaseRegions()[s], s);
  fill(dispatch.getDefaultRegion(), stages - 1);
  b.setInsertionPointToEnd(&body);
  func::ReturnOp::create(b, loc, dispatch.getResults());
}

/// The runtime knows no `_mb` axis: the mesh, and the layouts of the
/// arguments and results, lose it.
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
      auto type = dyn_cast<RankedTensorType>(r.getType());
      if (!type || !type.hasStaticShape())
        continue;
      int64_t bytes = type.getNumElements() *
                      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
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
