//===- TPOps.h - tp dialect operations ------------------------*- C++ -*-===//
#ifndef TP_DIALECT_TP_IR_TPOPS_H
#define TP_DIALECT_TP_IR_TPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPFolders.h"
#include "tp/Dialect/TP/IR/TPShapes.h"

#define GET_OP_CLASSES
#include "tp/Dialect/TP/IR/TPOps.h.inc"

#endif // TP_DIALECT_TP_IR_TPOPS_H
