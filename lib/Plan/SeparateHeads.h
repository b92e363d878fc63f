//===- SeparateHeads.h - keep batch and heads apart after a split -*- C++ -*-===//
#ifndef TP_LIB_PLAN_SEPARATEHEADS_H
#define TP_LIB_PLAN_SEPARATEHEADS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tp {

/// Where a reshape of one of `projections` (a split fused projection's
/// parts) merges the batch with the heads ([S, B, heads * d] ->
/// [S, B * heads, d], nn.MultiheadAttention), keeps the two dims apart
/// through the attention that follows, so that a colwise split of the heads
/// stays local (SeparateHeads.cpp).
void separateMergedHeads(func::FuncOp func, ArrayRef<Value> projections);

} // namespace mlir::tp

#endif // TP_LIB_PLAN_SEPARATEHEADS_H
