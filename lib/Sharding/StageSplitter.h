//===- StageSplitter.h - tp-split-stages' splitter ----------*- C++ -*-===//
//
// The state tp-split-stages keeps while it cuts the per-device program
// into pipeline stages (SplitStages.cpp: classification, transfers,
// schedule; StageFunctions.cpp: the stage functions and the dispatch).
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_SHARDING_STAGESPLITTER_H
#define TP_LIB_SHARDING_STAGESPLITTER_H

#include "tp/Sharding/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <optional>
#include <tuple>

namespace mlir::tp::pipeline {

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


} // namespace mlir::tp::pipeline

#endif // TP_LIB_SHARDING_STAGESPLITTER_H
