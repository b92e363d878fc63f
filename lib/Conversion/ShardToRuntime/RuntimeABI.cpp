//===- RuntimeABI.cpp - targets and element types the runtime handles -----===//
#include "tp/Runtime/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"

mlir::FailureOr<bool> mlir::tp::isCudaTarget(StringRef target, Operation *op,
                                             StringRef pass) {
  if (target == "cpu" || target == "cuda")
    return target == "cuda";
  return op->emitError() << pass << ": unknown target '" << target
                         << "' (cpu or cuda)";
}

std::optional<int32_t> mlir::tp::runtimeDType(Type t) {
  if (t.isF32())
    return TPRT_F32;
  if (t.isF16())
    return TPRT_F16;
  if (t.isBF16())
    return TPRT_BF16;
  if (t.isF64())
    return TPRT_F64;
  if (t.isInteger(64))
    return TPRT_I64;
  if (t.isInteger(32))
    return TPRT_I32;
  if (t.isInteger(16))
    return TPRT_I16;
  if (t.isInteger(8))
    return TPRT_I8;
  if (t.isInteger(1))
    return TPRT_BOOL;
  return std::nullopt;
}

mlir::Value mlir::tp::bufferAddress(OpBuilder &b, Location loc, Value memref) {
  Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), p);
}

mlir::func::FuncOp mlir::tp::declareRuntimeFunction(ModuleOp module,
                                                    StringRef name,
                                                    TypeRange args,
                                                    TypeRange results) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(args, results));
  f.setPrivate();
  return f;
}
