//===- TPDialect.cpp - the tp dialect -------------------------------------===//
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/IR/TPOps.h"

using namespace mlir;
using namespace mlir::tp;

#include "tp/Dialect/TP/IR/TPOpsDialect.cpp.inc"

void TPDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "tp/Dialect/TP/IR/TPOps.cpp.inc"
      >();
}
