//===- Passes.h - tp sharding passes --------------------------*- C++ -*-===//
#ifndef TP_SHARDING_PASSES_H
#define TP_SHARDING_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Sharding/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Sharding/Passes.h.inc"

} // namespace mlir::tp

#endif // TP_SHARDING_PASSES_H
