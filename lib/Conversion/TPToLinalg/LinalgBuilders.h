//===- LinalgBuilders.h - helpers shared by tp lowerings ------*- C++ -*-===//
#ifndef TP_LIB_CONVERSION_TPTOLINALG_LINALGBUILDERS_H
#define TP_LIB_CONVERSION_TPTOLINALG_LINALGBUILDERS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::tp {

/// The indexing map that reads an operand of shape `operandShape` inside a
/// loop nest over `resultShape`, following ONNX broadcasting: operand dims
/// align with the trailing loop dims, and a size-1 operand dim against a
/// larger result dim always reads index 0.
AffineMap broadcastIndexingMap(ArrayRef<int64_t> operandShape,
                               ArrayRef<int64_t> resultShape,
                               MLIRContext *ctx);

using ScalarBodyFn =
    function_ref<Value(OpBuilder &, Location, ValueRange scalarArgs)>;

/// Builds an all-parallel linalg.generic over `resultType` that applies
/// `body` to the broadcast scalars of `inputs`.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBodyFn body);

/// A tensor of `type` filled with zero (accumulator init for contractions).
Value buildZeroFilled(OpBuilder &b, Location loc, RankedTensorType type);

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_TPTOLINALG_LINALGBUILDERS_H
