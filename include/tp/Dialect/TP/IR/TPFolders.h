//===- TPFolders.h - constant folding shared by tp ops --------*- C++ -*-===//
//
// Folding matters at import time: ONNX shape arithmetic (Shape, Gather,
// Concat, Mul on shape vectors) feeds Reshape targets, exporters leave whole
// subgraphs of constants (expand's shape, causal masks), and the importer
// needs those values as constants to keep every shape static.
//
//===----------------------------------------------------------------------===//
#ifndef TP_DIALECT_TP_IR_TPFOLDERS_H
#define TP_DIALECT_TP_IR_TPFOLDERS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::tp {

class TransposeOp;
class ConcatOp;
class SliceOp;
class GatherOp;

/// Folding gives up on results with more elements than this (4 MiB of f32):
/// bigger constants of a model are weights, stored once in the ONNX file.
constexpr int64_t kMaxFoldElements = 1 << 20;

/// Evaluates an elementwise tp op (binary arithmetic, comparison, logical,
/// unary, where) or tp.expand whose operands are all constants, with ONNX
/// broadcasting; null when an operand is not constant, the result is over
/// kMaxFoldElements, or the value is undefined (integer division by zero).
OpFoldResult foldElementwise(Operation *op, ArrayRef<Attribute> operands);

/// Evaluates tp.transpose, tp.concat, tp.slice and tp.gather of constants
/// (any rank).
OpFoldResult foldTranspose(TransposeOp op, Attribute input);
OpFoldResult foldConcat(ConcatOp op, ArrayRef<Attribute> inputs);
OpFoldResult foldSlice(SliceOp op, Attribute input);
OpFoldResult foldGather(GatherOp op, Attribute data, Attribute indices);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_TPFOLDERS_H
