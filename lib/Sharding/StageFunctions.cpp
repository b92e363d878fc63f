//===- StageFunctions.cpp - tp-split-stages' stage functions ------------===//
//
// The function of each pipeline stage (its ops per microbatch in the
// schedule's order, sends after their value, receives where first
// needed) and the dispatch that calls the device's stage; see
// SplitStages.cpp for the whole.
//
//===----------------------------------------------------------------------===//
#include "StageSplitter.h"

#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/Sharding.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <map>

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::pipeline;

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
      // tp-run --trace shows each microbatch's work as a span.
      if (at != kShared && microbatches > 1)
        copy->setLoc(tagLocation(op->getLoc(),
                                 "microbatch " + std::to_string(at)));
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
