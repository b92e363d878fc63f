//===- PlaceUpdates.cpp - each weight's update right after its gradient ---===//
//
// tp-autodiff builds the optimizer's updates after the whole backward pass.
// Each weight's update instead goes right after the last op it waits for
// (its gradient, the last reader of the weight), and takes the name of its
// gradient's module scope (`/layers.3.fc1/optimizer sgd`): a layer's
// updates then belong to the layer's backward ops, so that
// tp-outline-repeated-layers compiles them once in the layer's function
// rather than once per weight in the step (1,536 updates of a 96-layer
// step), and tp-find-in-place-updates still writes each into its weight.
//
//===----------------------------------------------------------------------===//
#include "tp/Autodiff/Autodiff.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

/// The module scope of `v`'s defining op (`/layers.3.fc1` of
/// `/layers.3.fc1/MatMul`), or empty.
static StringRef scopeOf(Value v) {
  Operation *def = v.getDefiningOp();
  auto name = def ? dyn_cast<NameLoc>(def->getLoc()) : NameLoc();
  if (!name)
    return {};
  StringRef s = name.getName().getValue();
  size_t slash = s.rfind('/');
  return slash == StringRef::npos || slash == 0 ? StringRef() : s.take_front(slash);
}

void tp::placeUpdatesAfterGradients(ArrayRef<WeightUpdate> updates,
                                    StringRef optimizer) {
  if (updates.empty() || updates.front().ops.empty())
    return;
  Block *block = updates.front().ops.front()->getBlock();
  // Positions before any move: an update waits only for ops outside the
  // updates, whose order the moves keep (asking the block instead would
  // renumber it after each move).
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(*block))
    position[&op] = i;
  for (const WeightUpdate &u : updates) {
    if (u.ops.empty())
      continue;
    llvm::SmallPtrSet<Operation *, 8> chain(u.ops.begin(), u.ops.end());
    // The last op of the block the update waits for.
    Operation *after = nullptr;
    auto waitFor = [&](Operation *op) {
      op = op ? block->findAncestorOpInBlock(*op) : nullptr;
      if (op && !chain.contains(op) &&
          (!after || position.lookup(after) < position.lookup(op)))
        after = op;
    };
    for (Operation *op : u.ops)
      for (Value operand : op->getOperands())
        waitFor(operand.getDefiningOp());
    for (Operation *user : u.weight.getUsers())
      waitFor(user);
    if (!after)
      continue;
    // Named after the gradient's module, if it has one.
    StringRef scope = scopeOf(u.gradient);
    for (Operation *op : llvm::reverse(u.ops)) {
      op->moveAfter(after);
      if (!scope.empty())
        op->setLoc(NameLoc::get(
            StringAttr::get(op->getContext(),
                            scope + "/optimizer " + optimizer),
            op->getLoc()));
    }
  }
}
