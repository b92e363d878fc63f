//===- Passes.h - tp conversion passes ------------------------*- C++ -*-===//
#ifndef TP_CONVERSION_PASSES_H
#define TP_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Conversion/Passes.h.inc"

} // namespace mlir::tp

#endif // TP_CONVERSION_PASSES_H
