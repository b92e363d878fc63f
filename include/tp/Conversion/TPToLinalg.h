//===- TPToLinalg.h - tp to linalg patterns -------------------*- C++ -*-===//
#ifndef TP_CONVERSION_TPTOLINALG_H
#define TP_CONVERSION_TPTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {

/// Adds the patterns that lower every tp op to linalg / tensor / arith / math.
void populateTPToLinalgPatterns(RewritePatternSet &patterns);

} // namespace mlir::tp

#endif // TP_CONVERSION_TPTOLINALG_H
