//===- SplitStages.cpp - the tp-split-stages pass -------------------------===//
//
// Pipeline parallelism on the per-device program (after tp-partition): the
// function becomes one private function per stage, `@<name>_stage<s>`,
// and a dispatch that calls the one of this device's coordinate on the
// plan's stage axis. tp-assign-stages named the stage of every ONNX node;
// the training step's backward ops and the partitioned program's ops carry
// their forward node's name, the loss's ops go to the last stage, and ops
// named after neither (the optimizer update) follow the stage of their
// operands. Ops that read only arguments and constants (a weight's
// transpose) are computed in every stage that uses them.
//
// A value computed in one stage and read in another travels as a
// `shard.send` / `shard.recv` pair on the stage axis: the sender sends it
// right after computing it, the receiver receives it where it first needs
// it (with any value the same sender sent before it, so that both ends see
// one order). Every stage runs its ops in the program's order, which is a
// topological order, and sends never wait: no stage can wait for another
// that waits for it.
//
// A stage returns the results it computes; the dispatch returns the other
// results as the argument of the same name (a weight another stage
// updates) or as uninitialised tensors, and `tp.stage` on each result of
// the function says which stage's value counts (tp-run takes it from
// there).
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

#include <deque>
#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_TPSPLITSTAGES
#include "tp/Sharding/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

constexpr int64_t kFree = -1;

class StageSplitter {
public:
  StageSplitter(ModuleOp module, func::FuncOp func, DictionaryAttr pipeline,
                int64_t stages, int16_t axis)
      : module(module), func(func), pipeline(pipeline), stages(stages),
        axis(axis), b(module.getContext()) {}

  LogicalResult run();

private:
  ModuleOp module;
  func::FuncOp func;
  DictionaryAttr pipeline;
  int64_t stages;
  int16_t axis;
  OpBuilder b;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> stageOf;
  /// Per (from, to): the values `from` sends to `to`, in program order.
  std::map<std::pair<int64_t, int64_t>, SmallVector<Value>> transfers;
  /// Per value: the stages it is sent to.
  DenseMap<Value, SmallVector<int64_t>> sendsTo;

  int64_t stageOfValue(Value v) {
    Operation *def = v.getDefiningOp();
    return def ? stageOf.lookup(def) : kFree;
  }
  LogicalResult assign();
  func::FuncOp buildStage(int64_t s, SmallVector<unsigned> &owned);
  void buildDispatch(ArrayRef<func::FuncOp> stageFuncs,
                     ArrayRef<SmallVector<unsigned>> owned);
};

} // namespace

LogicalResult StageSplitter::assign() {
  auto names = pipeline.getAs<DictionaryAttr>("node_stages");
  for (Operation &op : func.getBody().front().without_terminator()) {
    ops.push_back(&op);
    if (op.getNumRegions() != 0)
      return op.emitOpError("has regions: tp-split-stages expects a "
                            "straight-line program");
    std::string node = onnxNodeName(op.getLoc());
    int64_t s = kFree;
    if (auto known = names ? names.getAs<IntegerAttr>(node) : IntegerAttr())
      s = known.getInt();
    else if (StringRef(node).ends_with(" loss"))
      s = stages - 1;
    else
      for (Value v : op.getOperands())
        s = std::max(s, stageOfValue(v));
    stageOf[&op] = s;
  }
  // What crosses from one stage to another, in program order.
  for (Operation *op : ops) {
    int64_t from = stageOf[op];
    if (from == kFree)
      continue;
    for (Value r : op->getResults()) {
      SmallVector<int64_t> to;
      for (Operation *user : r.getUsers()) {
        auto it = stageOf.find(user);
        if (it == stageOf.end() || it->second == from)
          continue; // the return, or the same stage
        if (it->second == kFree)
          return user->emitOpError("reads a stage's value but has no stage");
        if (!llvm::is_contained(to, it->second))
          to.push_back(it->second);
      }
      for (int64_t t : to) {
        if (!isa<RankedTensorType>(r.getType()))
          return op->emitOpError("passes a value that is not a tensor from "
                                 "pipeline stage ")
                 << from << " to stage " << t;
        transfers[{from, t}].push_back(r);
        sendsTo[r].push_back(t);
      }
    }
  }
  return success();
}

/// shard.send / shard.recv take tensors of rank 1 or more: a scalar travels
/// as one element.
static Value asSendable(OpBuilder &b, Location loc, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() > 0)
    return v;
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({1}, t.getElementType()), v,
      ArrayRef<ReassociationIndices>{});
}

func::FuncOp StageSplitter::buildStage(int64_t s,
                                       SmallVector<unsigned> &owned) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  // The results this stage computes; values no stage computes (an
  // argument, a constant) come from stage 0.
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    int64_t owner = stageOfValue(v);
    if (owner == s || (owner == kFree && s == 0))
      owned.push_back(i);
  }
  SmallVector<Type> resultTypes;
  for (unsigned i : owned)
    resultTypes.push_back(ret.getOperand(i).getType());
  b.setInsertionPointAfter(func);
  auto stage = func::FuncOp::create(
      b, func.getLoc(), (func.getName() + "_stage" + Twine(s)).str(),
      b.getFunctionType(func.getArgumentTypes(), resultTypes));
  stage.setPrivate();
  Block *entry = stage.addEntryBlock();
  IRMapping map;
  for (auto [from, to] : llvm::zip(func.getArguments(), entry->getArguments()))
    map.map(from, to);
  b.setInsertionPointToStart(entry);
  // Values received so far, per sender: how many of its transfers.
  std::map<int64_t, size_t> received;
  auto receiveUpTo = [&](Value v, int64_t from) {
    auto &list = transfers[{from, s}];
    size_t &next = received[from];
    while (!map.contains(v)) {
      Value x = list[next++];
      Location loc = x.getLoc();
      auto xType = cast<RankedTensorType>(x.getType());
      auto type = xType.getRank() ? xType
                                  : RankedTensorType::get(
                                        {1}, xType.getElementType());
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      Value got = shard::RecvOp::create(b, loc, type, kMeshSymbol,
                                        ArrayRef<int16_t>{axis}, empty,
                                        b.getDenseI64ArrayAttr({from}),
                                        ValueRange{});
      if (type != xType)
        got = tensor::CollapseShapeOp::create(
            b, loc, xType, got, ArrayRef<ReassociationIndices>{});
      map.map(x, got);
    }
  };
  // Clones `op` (a free one on demand, with what it reads).
  std::function<void(Operation *)> cloneInto = [&](Operation *op) {
    for (Value v : op->getOperands()) {
      if (map.contains(v))
        continue;
      Operation *def = v.getDefiningOp();
      int64_t from = stageOfValue(v);
      if (from == kFree)
        cloneInto(def);
      else
        receiveUpTo(v, from);
    }
    Operation *copy = b.clone(*op, map);
    // Sends go right after the value is computed.
    if (stageOf[op] != s)
      return;
    for (auto [r, c] : llvm::zip(op->getResults(), copy->getResults()))
      for (int64_t t : sendsTo.lookup(r)) {
        Value sendable = asSendable(b, r.getLoc(), c);
        shard::SendOp::create(b, r.getLoc(), sendable.getType(), kMeshSymbol,
                              ArrayRef<int16_t>{axis}, sendable,
                              ArrayRef<int64_t>{t}, ValueRange{});
      }
  };
  for (Operation *op : ops)
    if (stageOf[op] == s)
      cloneInto(op);
  SmallVector<Value> results;
  for (unsigned i : owned) {
    Value v = ret.getOperand(i);
    if (!map.contains(v)) {
      if (Operation *def = v.getDefiningOp())
        cloneInto(def);
    }
    results.push_back(map.lookupOrDefault(v));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  return stage;
}

void StageSplitter::buildDispatch(ArrayRef<func::FuncOp> stageFuncs,
                                  ArrayRef<SmallVector<unsigned>> owned) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Location loc = ret.getLoc();
  TypeRange resultTypes = func.getResultTypes();
  // The argument a result stands for when another stage computes it.
  auto passThrough = [&](unsigned r) -> Value {
    auto out = func.getResultAttrOfType<StringAttr>(r, "tp.output");
    for (BlockArgument a : func.getArguments())
      for (StringRef key : {"tp.param", "tp.state"})
        if (auto name = func.getArgAttrOfType<StringAttr>(a.getArgNumber(), key);
            out && name && name == out && a.getType() == resultTypes[r])
          return a;
    return {};
  };
  // Every result's stage, for the manifest.
  for (auto [s, list] : llvm::enumerate(owned))
    for (unsigned r : list)
      func.setResultAttr(r, "tp.stage", b.getI64IntegerAttr(s));
  // The old body goes; the dispatch replaces it.
  ret.erase();
  while (!body.empty())
    body.back().erase();
  b.setInsertionPointToEnd(&body);
  auto index = shard::ProcessMultiIndexOp::create(
      b, loc, kMeshSymbol, ArrayRef<int16_t>{axis});
  SmallVector<int64_t> cases;
  for (int64_t s = 0; s + 1 < stages; ++s)
    cases.push_back(s);
  auto dispatch = scf::IndexSwitchOp::create(b, loc, resultTypes,
                                             index.getResult()[0], cases,
                                             cases.size());
  auto fill = [&](Region &region, int64_t s) {
    Block *block = b.createBlock(&region);
    b.setInsertionPointToStart(block);
    auto call = func::CallOp::create(b, loc, stageFuncs[s],
                                     func.getArguments());
    SmallVector<Value> yields(resultTypes.size());
    for (auto [k, r] : llvm::enumerate(owned[s]))
      yields[r] = call.getResult(k);
    for (unsigned r = 0; r < yields.size(); ++r)
      if (!yields[r]) {
        Value arg = passThrough(r);
        auto t = cast<RankedTensorType>(resultTypes[r]);
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

LogicalResult StageSplitter::run() {
  if (failed(assign()))
    return failure();
  SmallVector<func::FuncOp> stageFuncs;
  SmallVector<SmallVector<unsigned>> owned(stages);
  for (int64_t s = 0; s < stages; ++s)
    stageFuncs.push_back(buildStage(s, owned[s]));
  buildDispatch(stageFuncs, owned);
  return success();
}

namespace {
struct TPSplitStagesPass : tp::impl::TPSplitStagesBase<TPSplitStagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto pipeline = module->getAttrOfType<DictionaryAttr>("tp.pipeline");
    if (!pipeline)
      return;
    int64_t stages = pipeline.getAs<IntegerAttr>("stages").getInt();
    if (stages < 2)
      return;
    auto grid = module.lookupSymbol<shard::GridOp>(kMeshSymbol);
    auto names = grid ? grid->getAttrOfType<ArrayAttr>(kAxisNamesAttr)
                      : ArrayAttr();
    StringRef axisName = pipeline.getAs<StringAttr>("axis").getValue();
    std::optional<int16_t> axis;
    for (auto [i, n] : llvm::enumerate(names ? names.getValue()
                                             : ArrayRef<Attribute>{}))
      if (cast<StringAttr>(n).getValue() == axisName)
        axis = int16_t(i);
    if (!axis) {
      module.emitError("tp-split-stages: no mesh axis '")
          << axisName << "' for the pipeline's stages";
      return signalPassFailure();
    }
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      module.emitError("tp-split-stages expects one function (the "
                       "per-device program)");
      return signalPassFailure();
    }
    StageSplitter splitter(module, funcs.front(), pipeline, stages, *axis);
    if (failed(splitter.run()))
      signalPassFailure();
  }
};
} // namespace
