//===- TPDialect.h - the tp dialect ---------------------------*- C++ -*-===//
#ifndef TP_DIALECT_TP_IR_TPDIALECT_H
#define TP_DIALECT_TP_IR_TPDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "tp/Dialect/TP/IR/TPOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tp/Dialect/TP/IR/TPAttrs.h.inc"

#endif // TP_DIALECT_TP_IR_TPDIALECT_H
