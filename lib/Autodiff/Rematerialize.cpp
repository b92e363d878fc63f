//===- Rematerialize.cpp - elementwise values recomputed, not kept --------===//
//
// A forward value the backward pass reads is kept from the forward pass to
// its backward reader: for a decomposed GELU (x/sqrt(2), erf, 1 + erf,
// x (1 + erf), / 2) or layer norm (x - mean, / std, * gamma) that is several
// tensors of the layer's widest size, where PyTorch's fused ops keep one.
// A value computed by an elementwise op (or a reshape, transpose, expand)
// from values that are kept anyway (read by the backward pass themselves,
// weights, inputs, constants, or tensors much smaller than it: statistics)
// is instead recomputed right before its first backward reader, as AOT
// autograd's rematerializing partitioner does. The recomputation is cheap
// (elementwise, fused with its readers by tp-fuse-elementwise) and never
// keeps a value alive longer than before; the results are bit-identical.
//
//===----------------------------------------------------------------------===//
#include "StepOrder.h"
#include "tp/Autodiff/Autodiff.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tp;

static bool isCheapToRecompute(Operation *op) {
  return op->getNumResults() == 1 &&
         isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, NegOp, AbsOp,
             SqrtOp, ErfOp, TanhOp, SigmoidOp, ExpOp, LogOp, ReciprocalOp,
             ReluOp, CosOp, SinOp, CastOp, WhereOp, ReshapeOp, TransposeOp,
             ExpandOp>(op);
}

static int64_t elementsOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : -1;
}

void tp::rematerializeElementwise(func::FuncOp step,
                                  ArrayRef<Operation *> forwardOps,
                                  Operation *lastBeforeBackward) {
  StepOrder order(step, lastBeforeBackward);
  auto isBackward = [&](Operation *op) { return order.isBackward(op); };
  DenseSet<Operation *> forward(forwardOps.begin(), forwardOps.end());
  auto readByBackward = [&](Value v) {
    return llvm::any_of(v.getUsers(), isBackward);
  };

  // In forward order, whether each value can be recomputed from values
  // that are available in the backward pass anyway, in at most
  // kMaxChain ops (a residual stream's long chain of adds is kept).
  constexpr unsigned kMaxChain = 16;
  DenseMap<Value, unsigned> recomputable; // value -> ops to recompute it
  auto available = [&](Value u, Value v) {
    Operation *def = u.getDefiningOp();
    if (!def || isa<ConstantOp>(def))
      return true;
    if (!forward.contains(def))
      return false;
    if (recomputable.count(u) || readByBackward(u))
      return true;
    // Kept a little longer: a tensor at most 1/8 of the value (a norm's
    // statistics).
    int64_t small = elementsOf(u), large = elementsOf(v);
    return small >= 0 && large >= 0 && small * 8 <= large;
  };
  for (Operation *op : forwardOps) {
    if (!isCheapToRecompute(op))
      continue;
    Value v = op->getResult(0);
    if (!llvm::all_of(op->getOperands(),
                      [&](Value u) { return available(u, v); }))
      continue;
    unsigned chain = 1;
    for (Value u : op->getOperands())
      chain += recomputable.lookup(u);
    if (chain <= kMaxChain)
      recomputable[v] = chain;
  }

  // The recomputable values the backward pass reads, by their first reader.
  struct Root {
    unsigned position;
    Operation *firstReader;
    Value value;
  };
  SmallVector<Root> roots;
  for (Operation *op : forwardOps) {
    if (!op->getNumResults() || !recomputable.count(op->getResult(0)))
      continue;
    Value v = op->getResult(0);
    Operation *first = nullptr;
    for (Operation *user : v.getUsers())
      if (isBackward(user) && (!first || order.position.lookup(user) <
                                             order.position.lookup(first)))
        first = user;
    if (first)
      roots.push_back({order.position.lookup(first), first, v});
  }
  llvm::stable_sort(roots, [](const Root &a, const Root &b) {
    return a.position < b.position;
  });

  // Clones are shared by later readers: those come after the first.
  MLIRContext *ctx = step.getContext();
  IRMapping clones;
  std::function<Value(OpBuilder &, Value)> cloneOf = [&](OpBuilder &b,
                                                         Value v) -> Value {
    if (Value c = clones.lookupOrNull(v))
      return c;
    if (!recomputable.count(v))
      return v;
    Operation *op = v.getDefiningOp();
    for (Value u : op->getOperands())
      clones.map(u, cloneOf(b, u));
    Operation *clone = b.clone(*op, clones);
    clone->setAttr("tp.rematerialized", UnitAttr::get(ctx));
    // It runs in the backward pass (tp-run --trace's phases).
    clone->setLoc(tagLocation(op->getLoc(), "backward"));
    return clone->getResult(0);
  };
  for (Root &root : roots) {
    OpBuilder b(root.firstReader);
    Value c = cloneOf(b, root.value);
    root.value.replaceUsesWithIf(c, [&](OpOperand &use) {
      return isBackward(use.getOwner());
    });
  }
}
