//===- TPToLinalg.h - tp to linalg patterns -------------------*- C++ -*-===//
#ifndef TP_CONVERSION_TPTOLINALG_H
#define TP_CONVERSION_TPTOLINALG_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {

/// Adds the patterns that lower every tp op to linalg / tensor / arith / math.
void populateTPToLinalgPatterns(RewritePatternSet &patterns);

/// The indexing maps of a GEMM C[m, n] += A[m, k] B[k, n] over loops
/// (m, n, k), or (batch, m, n, k) when `batched`, with A read as [k, m]
/// when `transA` and B as [n, k] when `transB`: what tp-lower-to-linalg
/// gives a matmul that reads a transpose's input, and what
/// tp-lower-matmul-to-blas passes to BLAS as transpose flags.
SmallVector<AffineMap, 3> gemmIndexingMaps(MLIRContext *ctx, bool batched,
                                           bool transA, bool transB);

} // namespace mlir::tp

#endif // TP_CONVERSION_TPTOLINALG_H
