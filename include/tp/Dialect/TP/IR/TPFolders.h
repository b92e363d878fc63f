//===- TPFolders.h - constant folding shared by tp ops --------*- C++ -*-===//
//
// Folding matters at import time: ONNX shape arithmetic (Shape, Gather,
// Concat, Mul on shape vectors) feeds Reshape targets, and the importer needs
// those targets as constants to keep every shape static.
//
//===----------------------------------------------------------------------===//
#ifndef TP_DIALECT_TP_IR_TPFOLDERS_H
#define TP_DIALECT_TP_IR_TPFOLDERS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::tp {

/// Folds a broadcasting binary tp op whose operands are both constants and
/// whose result is small; each operand must have the result's shape or hold
/// a single element.
OpFoldResult foldBinaryOp(Operation *op, Attribute lhs, Attribute rhs);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_TPFOLDERS_H
