//===- Report.h - explain shardings, report collectives -------*- C++ -*-===//
#ifndef TP_SHARDING_REPORT_H
#define TP_SHARDING_REPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tp {

/// After tp-propagate-sharding: every argument and op result with its
/// layout and where it came from (the plan entry, or the op and neighbour it
/// propagated from), one line each.
void printShardingExplanation(ModuleOp module, llvm::raw_ostream &os);

/// Floating-point operations of one op, roughly: 2 M N K for a matmul,
/// 2 per output element and filter tap for a conv, one per result element
/// for everything else.
double estimateFlops(Operation *op);

/// After tp-partition: every collective (kind, mesh axes, local shape,
/// bytes, the ONNX node it serves), totals per function, and per-device
/// parameter and activation memory; as a table or as JSON.
void printCollectiveReport(ModuleOp module, llvm::raw_ostream &os, bool json);

} // namespace mlir::tp

#endif // TP_SHARDING_REPORT_H
