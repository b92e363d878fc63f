//===- Recompute.cpp - activation recomputation in the training step ------===//
//
// torch.utils.checkpoint per module, done by the compiler: the forward values
// of a checkpointed module that the backward pass reads are computed a second
// time right before the first backward op that reads one of them, from the
// module's inputs (which stay alive: they are the checkpoint). The forward's
// own copies then die inside the forward pass (tp-free-after-last-use frees
// them after their last forward reader), so a step keeps each checkpointed
// module's inputs instead of all its intermediate values. The clones carry
// `tp.recomputed`, which keeps CSE from folding them into the originals and
// lets `--report` count them.
//
//===----------------------------------------------------------------------===//
#include "StepOrder.h"
#include "tp/Autodiff/Autodiff.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/ValueNames.h"
#include "tp/Import/ModuleTree.h"
#include "tp/Plan/Plan.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tp;

/// Whether module path `path` is `module` or a module inside it.
static bool isWithinModule(StringRef path, StringRef module) {
  return path.starts_with(module) &&
         (path.size() == module.size() || path[module.size()] == '.');
}

/// The modules `patterns` name, outermost only (a module inside another
/// checkpointed one is recomputed as part of it).
static FailureOr<SmallVector<std::string>>
checkpointedModules(Operation *at, const ModuleTree &tree,
                    ArrayRef<std::string> patterns) {
  SmallVector<std::string> matched;
  for (const std::string &pattern : patterns) {
    bool any = false;
    for (auto &[path, info] : tree.modules())
      if (matchesPattern(pattern, path)) {
        any = true;
        if (!llvm::is_contained(matched, path))
          matched.push_back(path);
      }
    if (any)
      continue;
    SmallVector<std::string> names;
    for (auto &[path, info] : tree.modules())
      names.push_back(path);
    auto diag = emitError(at->getLoc(), "recompute entry '")
                << pattern << "' matches no module";
    if (names.empty())
      return diag << " (the model's node names have no module scopes)";
    return diag << "; closest: " << closestModules(pattern, names);
  }
  SmallVector<std::string> outermost;
  for (const std::string &m : matched)
    if (llvm::none_of(matched, [&](const std::string &o) {
          return m != o && isWithinModule(m, o);
        }))
      outermost.push_back(m);
  llvm::sort(outermost);
  return outermost;
}

LogicalResult tp::recomputeCheckpointedModules(
    func::FuncOp step, const ModuleTree &tree, ArrayRef<std::string> patterns,
    ArrayRef<Operation *> forwardOps, Operation *lastBeforeBackward) {
  FailureOr<SmallVector<std::string>> modules =
      checkpointedModules(step, tree, patterns);
  if (failed(modules))
    return failure();

  StepOrder order(step, lastBeforeBackward);

  // The module each forward op's ONNX node belongs to.
  DenseMap<Operation *, std::string> moduleOf;
  for (Operation *op : forwardOps)
    if (auto loc = dyn_cast<NameLoc>(op->getLoc()); loc && !isa<ConstantOp>(op))
      moduleOf[op] = tree.modulePathOf(loc.getName().getValue());

  // Each checkpointed module's forward ops.
  SmallVector<llvm::SetVector<Operation *>> regions(modules->size());
  DenseMap<Operation *, unsigned> regionOf;
  for (auto [r, module] : llvm::enumerate(*modules)) {
    for (Operation *op : forwardOps) {
      auto it = moduleOf.find(op);
      if (it != moduleOf.end() && isWithinModule(it->second, module)) {
        regions[r].insert(op);
        regionOf[op] = r;
      }
    }
  }
  // A module's values that another checkpointed module reads in the
  // forward pass are that module's checkpoint: kept until its
  // recomputation anyway, so the backward pass reads them as they are.
  DenseSet<Value> checkpoints;
  for (auto [r, region] : llvm::enumerate(regions))
    for (Operation *op : region)
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp(); def && regionOf.count(def) &&
                                                regionOf[def] != r)
          checkpoints.insert(v);

  MLIRContext *ctx = step.getContext();
  SmallVector<Attribute> recorded;
  for (auto [r, region] : llvm::enumerate(regions)) {
    // The region's values the backward pass reads, and the region ops
    // they are computed from.
    SmallVector<Operation *> worklist;
    Operation *firstReader = nullptr;
    for (Operation *op : region)
      for (Value v : op->getResults()) {
        if (checkpoints.contains(v))
          continue;
        for (Operation *user : v.getUsers())
          if (order.isBackward(user)) {
            worklist.push_back(op);
            if (!firstReader || order.position.lookup(user) <
                                    order.position.lookup(firstReader))
              firstReader = user;
          }
      }
    if (!firstReader)
      continue;
    DenseSet<Operation *> needed;
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!needed.insert(op).second)
        continue;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp();
            def && region.contains(def) && !checkpoints.contains(v))
          worklist.push_back(def);
    }
    // Clone them in forward order before the first backward reader, and
    // let every backward op read the clones.
    OpBuilder b(firstReader);
    IRMapping map;
    for (Operation *op : region)
      if (needed.contains(op)) {
        Operation *clone = b.clone(*op, map);
        clone->setAttr("tp.recomputed", UnitAttr::get(ctx));
        // tp-run --trace shows the recomputation as a phase of its own.
        clone->setLoc(tagLocation(op->getLoc(), "recompute"));
      }
    for (Operation *op : region) {
      if (!needed.contains(op))
        continue;
      for (Value v : op->getResults())
        if (!checkpoints.contains(v))
          v.replaceUsesWithIf(map.lookup(v), [&](OpOperand &use) {
            return order.isBackward(use.getOwner());
          });
    }
    recorded.push_back(StringAttr::get(ctx, (*modules)[r]));
  }
  if (!recorded.empty())
    step->getParentOp()->setAttr("tp.recomputed_modules",
                                 ArrayAttr::get(ctx, recorded));
  return success();
}
