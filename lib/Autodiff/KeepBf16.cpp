//===- KeepBf16.cpp - mixed precision keeps activations in bf16 -----------===//
//
// Under torch.autocast the activations a training step keeps for its
// backward pass are bf16: the products' outputs are bf16 tensors, and so
// is everything computed from them until a norm. tp-autocast keeps the
// forward's values in f32 (the products sum into f32; elementwise ops,
// norms and softmax compute in f32), so the values the backward pass reads
// are kept as bf16 copies instead: each f32 activation the backward pass
// reads is rounded once, right after it is computed, and widened again
// right before its first backward reader; the f32 tensor dies with its
// last forward reader. The backward pass then computes, as PyTorch's, on
// the rounded activations, and the bytes kept halve. Statistics (the
// outputs of reductions) and tensors of a few elements stay f32.
//
//===----------------------------------------------------------------------===//
#include "StepOrder.h"
#include "tp/Autodiff/Autodiff.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tp;

/// An f32 activation worth keeping in bf16: not a reduction's statistics,
/// not a handful of elements.
static bool isLargeF32Activation(Operation *def, Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.getElementType().isF32() || !t.hasStaticShape() ||
      t.getNumElements() < 64)
    return false;
  return !isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceProdOp,
              ConstantOp>(def);
}

void tp::keepActivationsInBf16(func::FuncOp step,
                               ArrayRef<Operation *> forwardOps,
                               Operation *lastBeforeBackward) {
  StepOrder order(step, lastBeforeBackward);
  OpBuilder b(step.getContext());
  for (Operation *op : forwardOps) {
    for (Value v : op->getResults()) {
      if (!isLargeF32Activation(op, v))
        continue;
      Operation *first = nullptr;
      for (Operation *user : v.getUsers())
        if (order.isBackward(user) &&
            (!first || order.position.lookup(user) <
                           order.position.lookup(first)))
          first = user;
      if (!first)
        continue;
      auto t = cast<RankedTensorType>(v.getType());
      b.setInsertionPointAfter(op);
      Value kept = CastOp::create(b, op->getLoc(), t.clone(b.getBF16Type()), v);
      b.setInsertionPoint(first);
      Value widened =
          CastOp::create(b, tagLocation(op->getLoc(), "backward"), t, kept);
      v.replaceUsesWithIf(widened, [&](OpOperand &use) {
        return order.isBackward(use.getOwner());
      });
    }
  }
}
