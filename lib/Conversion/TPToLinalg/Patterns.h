//===- Patterns.h - per-family tp lowering patterns -----------*- C++ -*-===//
#ifndef TP_LIB_CONVERSION_TPTOLINALG_PATTERNS_H
#define TP_LIB_CONVERSION_TPTOLINALG_PATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
void populateElementwiseLoweringPatterns(RewritePatternSet &patterns);
void populateContractionLoweringPatterns(RewritePatternSet &patterns);
void populateNormalizationLoweringPatterns(RewritePatternSet &patterns);
void populateDataMovementLoweringPatterns(RewritePatternSet &patterns);
void populateConvolutionLoweringPatterns(RewritePatternSet &patterns);
void populateDropoutLoweringPatterns(RewritePatternSet &patterns);
/// Before lowering (shapes are local): a batched product summed over its
/// batch becomes one GEMM over the flattened batch.
void populateFlattenWeightGradientPatterns(RewritePatternSet &patterns);
/// After lowering: GEMMs read transposed operands through their indexing
/// maps instead of a materialized linalg.transpose.
void populateFoldTransposeIntoMatmulPatterns(RewritePatternSet &patterns);
/// After lowering: a GEMM whose product is only read transposed computes
/// the transposed product (operands swapped, each read the other way).
void populateFoldTransposeOfMatmulPatterns(RewritePatternSet &patterns);
} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_TPTOLINALG_PATTERNS_H
