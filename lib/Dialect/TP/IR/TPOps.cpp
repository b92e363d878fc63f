//===- TPOps.cpp - tp dialect operations ----------------------------------===//
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tp;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult MatMulOp::verify() {
  return verifyBinaryOpType(*this, matmulShape);
}

#define GET_OP_CLASSES
#include "tp/Dialect/TP/IR/TPOps.cpp.inc"
