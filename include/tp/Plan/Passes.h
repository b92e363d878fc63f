//===- Passes.h - tp plan passes ------------------------------*- C++ -*-===//
#ifndef TP_PLAN_PASSES_H
#define TP_PLAN_PASSES_H

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Plan/Passes.h.inc"

} // namespace mlir::tp

#endif // TP_PLAN_PASSES_H
