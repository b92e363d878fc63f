//===- TPOps.h - tp dialect operations ------------------------*- C++ -*-===//
#ifndef TP_DIALECT_TP_IR_TPOPS_H
#define TP_DIALECT_TP_IR_TPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPFolders.h"
#include "tp/Dialect/TP/IR/TPShapes.h"

#define GET_OP_CLASSES
#include "tp/Dialect/TP/IR/TPOps.h.inc"

namespace mlir::tp {
/// Gather indices with the negative ones counted from the end of a dim of
/// `size`, as ONNX's Gather reads them: where(ids < 0, ids + size, ids).
WhereOp wrapNegativeIndices(OpBuilder &b, Location loc, Value ids,
                            int64_t size);

/// A transpose or reshape `op` built again on `input` (same shape, perhaps
/// another element type, which its result takes), at `b`'s insertion
/// point: how mixed precision moves a rounding past data movement.
Value moveOnto(OpBuilder &b, Operation *op, Value input);
} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_TPOPS_H
