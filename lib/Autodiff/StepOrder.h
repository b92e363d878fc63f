//===- StepOrder.h - forward and backward ops of a training step -*- C++ -*-===//
//
// What Recompute.cpp and Rematerialize.cpp share: in the training step that
// tp-autodiff builds, the backward pass (and the optimizer's update, which
// reads no forward value) are the ops after `lastBeforeBackward`, and their
// position in the block orders them.
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_AUTODIFF_STEPORDER_H
#define TP_LIB_AUTODIFF_STEPORDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tp {

struct StepOrder {
  StepOrder(func::FuncOp step, Operation *lastBeforeBackward) {
    for (auto [i, op] : llvm::enumerate(step.getBody().front()))
      position[&op] = i;
    backwardStart = position.lookup(lastBeforeBackward) + 1;
  }

  /// Whether `op` belongs to the backward pass. Ops created since (the
  /// recomputed copies) have no position and do not.
  bool isBackward(Operation *op) const {
    auto it = position.find(op);
    return it != position.end() && it->second >= backwardStart;
  }

  DenseMap<Operation *, unsigned> position;
  unsigned backwardStart;
};

} // namespace mlir::tp

#endif // TP_LIB_AUTODIFF_STEPORDER_H
