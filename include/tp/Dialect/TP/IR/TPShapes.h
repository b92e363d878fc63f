//===- TPShapes.h - ONNX shape rules shared by tp ops ----------*- C++ -*-===//
//
// Shape functions used by op verifiers / type inference and by the importer,
// so that both report the same thing for the same mistake.
//
//===----------------------------------------------------------------------===//
#ifndef TP_DIALECT_TP_IR_TPSHAPES_H
#define TP_DIALECT_TP_IR_TPSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/ValueRange.h"
#include "mlir/Support/LLVM.h"
#include <optional>
#include <string>

namespace mlir::tp {

/// Formats a shape the way ONNX users read it: `[8, 64]`.
std::string formatShape(ArrayRef<int64_t> shape);

/// ONNX multidirectional (numpy) broadcasting of two shapes. On failure
/// returns std::nullopt and sets `why` to a sentence naming the offending dim.
std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs, std::string &why);

/// The permutation of `rank` dims that swaps the last two (a matmul operand
/// transposed).
SmallVector<int64_t> swapLastTwo(int64_t rank);

/// numpy matmul on rank >= 2 operands: `[.., M, K] x [.., K, N] -> [.., M, N]`
/// with broadcast batch dims.
std::optional<SmallVector<int64_t>>
matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs, std::string &why);

/// The shape left by reducing `axes` of `shape` (size-1 dims with keepdims).
/// The spatial output size of a convolution or pooling window over `input`
/// spatial dims (ONNX's formula, floor division); an error in `why` when a
/// window does not fit.
std::optional<SmallVector<int64_t>>
windowOutputShape(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                  ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                  ArrayRef<int64_t> pads, std::string &why);

SmallVector<int64_t> reducedShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> axes, bool keepdims);

/// How many elements a reduction over `axes` of `shape` combines (the
/// divisor of a mean).
int64_t reducedCount(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes);

using BinaryShapeFn = std::optional<SmallVector<int64_t>> (*)(
    ArrayRef<int64_t>, ArrayRef<int64_t>, std::string &);

/// The result type of a two-operand tp op whose operands share an element
/// type and whose result shape is `shapeFn` of the operand shapes; null with
/// `why` set when there is none. Used by verifiers and by the importer.
RankedTensorType inferBinaryOpType(Type lhs, Type rhs, BinaryShapeFn shapeFn,
                                   std::string &why);

/// Verifier of such an op: the operands combine and the result type is the
/// inferred one.
LogicalResult verifyBinaryOpType(Operation *op, BinaryShapeFn shapeFn);

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_TPSHAPES_H
