//===- OutlineRepeatedLayers.cpp - the tp-outline-repeated-layers pass ----===//
//
// A model's repeated layers (`/model/layers.0/...`, `/model/layers.1/...`)
// are, in the per-device program, runs of ops that differ only in the
// values they read: each layer's forward ops follow one another, and so do
// its backward ops. Each run becomes a function; runs that are the same but
// for their arguments share one, so that the lowering to linalg, fusion,
// bufferization, the lowering to loops and LLVM see each distinct layer
// once and compile time grows with the number of distinct layers, not with
// depth.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"
#include "Outlining.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPOUTLINEREPEATEDLAYERS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Runs shorter than this stay inline: a call costs more than it saves.
constexpr size_t kMinRunOps = 8;

/// The layer an ONNX node name belongs to: its scope up to the first
/// numbered part (`/model/layers.3` of `/model/layers.3/mlp/Mul`, also
/// `/encoder/layers/encoder_layer_3/...`), and that scope with the number
/// as `*` (what the shared function's ops are named after). None for ops
/// outside a numbered scope.
std::optional<std::pair<std::string, std::string>> layerOf(Location loc) {
  // Fused ops (tp-fuse-elementwise) are in a layer when all their parts are.
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    std::optional<std::pair<std::string, std::string>> layer;
    for (Location part : fused.getLocations()) {
      auto partLayer = layerOf(part);
      if (!partLayer || (layer && layer->first != partLayer->first))
        return std::nullopt;
      layer = partLayer;
    }
    return layer;
  }
  auto name = dyn_cast<NameLoc>(loc);
  if (!name)
    return std::nullopt;
  StringRef s = name.getName().getValue();
  size_t scopeEnd = s.rfind('/');
  if (scopeEnd == StringRef::npos)
    return std::nullopt;
  for (size_t a = 1; a < scopeEnd; ++a) {
    if (!llvm::isDigit(s[a]) || !(s[a - 1] == '.' || s[a - 1] == '_'))
      continue;
    size_t b = a;
    while (b < scopeEnd && llvm::isDigit(s[b]))
      ++b;
    if (s[b] != '/' && s[b] != '.') {
      a = b;
      continue;
    }
    return std::make_pair(s.substr(0, b).str(), (s.substr(0, a) + "*").str());
  }
  return std::nullopt;
}

struct Run {
  SmallVector<Operation *> ops;
  std::string scope, wildcard;
};

/// Maximal sequences of top-level ops of one layer; constants in between
/// belong to no run and do not end one.
SmallVector<Run> findRuns(Block &block) {
  SmallVector<Run> runs;
  Run current;
  auto close = [&] {
    if (current.ops.size() >= kMinRunOps)
      runs.push_back(std::move(current));
    current = Run();
  };
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    auto layer = op.hasTrait<OpTrait::IsTerminator>() ? std::nullopt
                                                       : layerOf(op.getLoc());
    if (!layer || layer->first != current.scope)
      close();
    if (!layer)
      continue;
    current.scope = layer->first;
    current.wildcard = layer->second;
    current.ops.push_back(&op);
  }
  close();
  return runs;
}

/// Names every op of a shared function after all the layers it runs for:
/// `/model/layers.0/mlp/Mul` becomes `/model/layers.*/mlp/Mul` (messages
/// and the collective sites' names say so).
void nameAfterEveryLayer(func::FuncOp func, const Run &run) {
  MLIRContext *ctx = func.getContext();
  auto rename = [&](Location loc) -> Location {
    auto name = dyn_cast<NameLoc>(loc);
    if (!name || !name.getName().getValue().starts_with(run.scope))
      return loc;
    std::string renamed =
        run.wildcard +
        name.getName().getValue().drop_front(run.scope.size()).str();
    return NameLoc::get(StringAttr::get(ctx, renamed), name.getChildLoc());
  };
  func.walk([&](Operation *op) {
    op->setLoc(rename(op->getLoc()));
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (BlockArgument arg : b.getArguments())
          arg.setLoc(rename(arg.getLoc()));
  });
}

/// Moves `run` into a single-block region yielding what the rest of the
/// function reads, with the constants it reads cloned in, and outlines it.
FailureOr<func::CallOp> outlineRun(IRRewriter &rewriter, const Run &run,
                                   StringRef name) {
  llvm::SmallPtrSet<Operation *, 32> inRun(run.ops.begin(), run.ops.end());
  Block *block = run.ops.front()->getBlock();
  // The values the rest of the function reads, and where it reads them.
  SmallVector<Value> escaping;
  SmallVector<SmallVector<OpOperand *>> outsideUses;
  for (Operation *op : run.ops)
    for (Value r : op->getResults()) {
      SmallVector<OpOperand *> outside;
      for (OpOperand &use : r.getUses()) {
        Operation *top = block->findAncestorOpInBlock(*use.getOwner());
        if (!top || !inRun.contains(top))
          outside.push_back(&use);
      }
      if (outside.empty())
        continue;
      escaping.push_back(r);
      outsideUses.push_back(std::move(outside));
    }
  Location loc = run.ops.front()->getLoc();
  rewriter.setInsertionPoint(run.ops.front());
  auto region = scf::ExecuteRegionOp::create(
      rewriter, loc, ValueRange(escaping).getTypes());
  Block *body = rewriter.createBlock(&region.getRegion());
  rewriter.setInsertionPointToEnd(body);
  auto yield = scf::YieldOp::create(rewriter, loc, escaping);
  for (auto [uses, r] : llvm::zip(outsideUses, region.getResults()))
    for (OpOperand *use : uses)
      use->set(r);
  for (Operation *op : run.ops)
    op->moveBefore(yield);
  // Constants come in rather than as arguments (Outlining.h).
  tp::cloneConstantsInto(rewriter, region, body);
  func::CallOp call;
  if (failed(outlineSingleBlockRegion(rewriter, loc, region.getRegion(), name,
                                      &call)))
    return failure();
  call->moveBefore(region);
  rewriter.replaceOp(region, call.getResults());
  return call;
}

struct TPOutlineRepeatedLayersPass
    : tp::impl::TPOutlineRepeatedLayersBase<TPOutlineRepeatedLayersPass> {
  using TPOutlineRepeatedLayersBase::TPOutlineRepeatedLayersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(module.getContext());
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() || !func.isPublic() ||
          !func.getBody().hasOneBlock())
        continue;
      SmallVector<Run> runs = findRuns(func.getBody().front());
      // Which layers share each run's function: only runs that repeat are
      // outlined.
      tp::EquivalentFunctions bodies;
      SmallVector<std::pair<func::FuncOp, const Run *>> distinct;
      SmallVector<std::pair<func::CallOp, const Run *>> calls;
      int count = 0;
      for (const Run &run : runs) {
        std::string name =
            (func.getSymName() + "_layer" + Twine(count++)).str();
        FailureOr<func::CallOp> call = outlineRun(rewriter, run, name);
        if (failed(call))
          return signalPassFailure();
        auto callee = module.lookupSymbol<func::FuncOp>(name);
        func::FuncOp same = bodies.lookupOrAdd(callee);
        if (same == callee) {
          distinct.push_back({callee, &run});
        } else {
          call->setCallee(same.getSymName());
          rewriter.eraseOp(callee);
          --count;
        }
        calls.push_back({*call, &run});
      }
      // A run that did not repeat often enough goes back inline.
      DenseMap<StringRef, int> uses;
      for (auto &[call, run] : calls)
        ++uses[call.getCallee()];
      for (auto [callee, run] : distinct) {
        if (repeats(uses.lookup(callee.getSymName()))) {
          tp::keepOutOfLine(callee);
          nameAfterEveryLayer(callee, *run);
        }
      }
      llvm::SetVector<Operation *> inlined;
      for (auto &[call, run] : calls) {
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
        if (repeats(uses.lookup(callee.getSymName())))
          continue;
        inlineCall(rewriter, call, callee);
        inlined.insert(callee);
      }
      for (Operation *callee : inlined)
        rewriter.eraseOp(callee);
      // Constants the runs' functions took a copy of.
      for (Operation &op : llvm::make_early_inc_range(
               llvm::reverse(func.getBody().front())))
        if (op.hasTrait<OpTrait::ConstantLike>() && op.use_empty())
          rewriter.eraseOp(&op);
    }
  }

  bool repeats(int uses) const {
    return uses > 1 && uses >= int(minRepeats);
  }

  /// Puts `callee`'s body back in place of `call`.
  static void inlineCall(IRRewriter &rewriter, func::CallOp call,
                         func::FuncOp callee) {
    IRMapping map;
    for (auto [arg, operand] :
         llvm::zip(callee.getArguments(), call.getOperands()))
      map.map(arg, operand);
    rewriter.setInsertionPoint(call);
    SmallVector<Value> results;
    for (Operation &op : callee.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          results.push_back(map.lookupOrDefault(v));
        break;
      }
      rewriter.clone(op, map);
    }
    rewriter.replaceOp(call, results);
  }
};

} // namespace
