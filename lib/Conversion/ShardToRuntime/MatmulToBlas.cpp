//===- MatmulToBlas.cpp - f32 matmuls on buffers -> tprt GEMM calls -------===//
#include "tp/Conversion/Passes.h"
#include "tp/Runtime/RuntimeABI.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPLOWERMATMULTOBLAS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// A contiguous, statically shaped buffer of the element types the target's
/// GEMM takes: f32 on the CPU (OpenBLAS); f32, f16 and bf16 with cuBLAS.
bool isPlainGemmOperand(Value v, bool cuda) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getLayout().isIdentity())
    return false;
  Type e = t.getElementType();
  return e.isF32() || (cuda && (e.isF16() || e.isBF16()));
}

struct TPLowerMatmulToBlasPass
    : tp::impl::TPLowerMatmulToBlasBase<TPLowerMatmulToBlasPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<bool> cudaTarget =
        isCudaTarget(target, module, "tp-lower-matmul-to-blas");
    if (failed(cudaTarget))
      return signalPassFailure();
    bool cuda = *cudaTarget;
    OpBuilder b(module.getContext());
    auto declare = [&](StringRef name, TypeRange args) {
      if (auto f = module.lookupSymbol<func::FuncOp>(name))
        return f;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      auto f = func::FuncOp::create(b, module.getLoc(), name,
                                    b.getFunctionType(args, {}));
      f.setPrivate();
      return f;
    };
    SmallVector<linalg::LinalgOp> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
          !op.hasPureBufferSemantics())
        return;
      Type elem = getElementTypeOrSelf(op->getOperand(0).getType());
      if (!llvm::all_of(op->getOperands(), [&](Value v) {
            return isPlainGemmOperand(v, cuda) &&
                   getElementTypeOrSelf(v.getType()) == elem;
          }))
        return;
      SmallVector<AffineMap> defaults =
          isa<linalg::MatmulOp>(op)
              ? linalg::MatmulOp::getDefaultIndexingMaps(op->getContext())
              : linalg::BatchMatmulOp::getDefaultIndexingMaps(
                    op->getContext());
      if (op.getIndexingMapsArray() != defaults)
        return;
      matmuls.push_back(op);
    });
    for (linalg::LinalgOp op : matmuls) {
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> args;
      for (Value v : op->getOperands()) {
        Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
        args.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), p));
      }
      auto c = cast<MemRefType>(op->getOperand(2).getType());
      auto a = cast<MemRefType>(op->getOperand(0).getType());
      bool batched = isa<linalg::BatchMatmulOp>(op);
      // cuBLAS always takes a batch count (1 for a plain matmul).
      if (batched || cuda)
        args.push_back(arith::ConstantIntOp::create(
            b, loc, batched ? c.getDimSize(0) : 1, 64));
      int64_t rank = c.getRank();
      for (int64_t d : {c.getDimSize(rank - 2), c.getDimSize(rank - 1),
                        a.getDimSize(rank - 1)})
        args.push_back(arith::ConstantIntOp::create(b, loc, d, 64));
      if (cuda)
        args.push_back(arith::ConstantIntOp::create(
            b, loc, *runtimeDType(c.getElementType()), 32));
      StringRef fn =
          cuda ? kCudaGemmFn : (batched ? kSgemmBatchedFn : kSgemmFn);
      func::CallOp::create(b, loc, declare(fn, ValueRange(args).getTypes()),
                           args);
      op->erase();
    }
  }
};

} // namespace
