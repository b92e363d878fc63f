//===- FillBefore.h - the fill that initializes an op's output --*- C++ -*-===//
//
// tp-lower-matmul-to-blas drops a GEMM's zero fill (the GEMM overwrites its
// buffer) and tp-linalg-to-loops moves a reduction's fill into its rows:
// both look for the fill right before the op.
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_CONVERSION_SHARDTORUNTIME_FILLBEFORE_H
#define TP_LIB_CONVERSION_SHARDTORUNTIME_FILLBEFORE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tp {

/// The linalg.fill of `op`'s (only) output buffer right before it, with
/// only ops that touch no memory in between; null otherwise.
inline linalg::FillOp fillOfInitBefore(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return nullptr;
  Value init = op.getDpsInits()[0];
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev))
      return fill.hasPureBufferSemantics() && fill.getOutputs()[0] == init
                 ? fill
                 : nullptr;
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_SHARDTORUNTIME_FILLBEFORE_H
