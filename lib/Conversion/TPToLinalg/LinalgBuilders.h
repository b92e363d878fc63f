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

/// Builds an all-parallel linalg.generic over `resultType` reading `inputs`
/// through `inputMaps` and yielding `body` of their scalars.
Value buildParallelGeneric(OpBuilder &b, Location loc,
                           RankedTensorType resultType, ValueRange inputs,
                           ArrayRef<AffineMap> inputMaps, ScalarBodyFn body);

/// buildParallelGeneric with ONNX broadcasting maps for every input.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ScalarBodyFn body);

/// The map from a loop nest of `rank` dims to a tensor that lacks `dims`
/// (a reduced value read back inside the un-reduced loop nest).
AffineMap dropDimsMap(int64_t rank, ArrayRef<int64_t> dims, MLIRContext *ctx);

/// MaxNum: the max of a row's numbers, a NaN dropped (arith.maxnumf),
/// which LLVM vectorizes as a reduction; for reductions whose user turns
/// a row with a NaN to NaN anyway.
enum class ReductionKind { Sum, Max, MaxNum, Prod };

/// Reduces `input` over `axes` (sorted) with linalg.generics; the result
/// drops the reduced dims. Float sums of more than 1024 terms are cascaded
/// (no chain of additions longer than 1024; LinalgBuilders.cpp).
Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, ReductionKind kind);

/// Reshapes a static tensor to `resultType` with collapse_shape /
/// expand_shape (through 1-D when no single reassociation exists).
Value buildReshape(OpBuilder &b, Location loc, Value input,
                   RankedTensorType resultType);

/// A scalar constant of `type` (float or integer) with value `v`.
Value buildScalar(OpBuilder &b, Location loc, Type type, double v);

/// A tensor of `type` filled with zero (accumulator init for contractions).
Value buildZeroFilled(OpBuilder &b, Location loc, RankedTensorType type);
/// A tensor of `type` filled with `scalar` (linalg.fill of tensor.empty).
Value buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                  Value scalar);

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_TPTOLINALG_LINALGBUILDERS_H
