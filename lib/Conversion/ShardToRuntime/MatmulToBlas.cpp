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

/// A contiguous, statically shaped f32 buffer.
bool isPlainF32(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() &&
         t.getLayout().isIdentity();
}

struct TPLowerMatmulToBlasPass
    : tp::impl::TPLowerMatmulToBlasBase<TPLowerMatmulToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    auto declare = [&](StringRef name, unsigned numArgs) {
      if (auto f = module.lookupSymbol<func::FuncOp>(name))
        return f;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      SmallVector<Type> args(numArgs, b.getI64Type());
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
      if (!llvm::all_of(op->getOperands(), isPlainF32))
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
      if (batched)
        args.push_back(
            arith::ConstantIntOp::create(b, loc, c.getDimSize(0), 64));
      int64_t rank = c.getRank();
      for (int64_t d : {c.getDimSize(rank - 2), c.getDimSize(rank - 1),
                        a.getDimSize(rank - 1)})
        args.push_back(arith::ConstantIntOp::create(b, loc, d, 64));
      func::CallOp::create(
          b, loc,
          declare(batched ? kSgemmBatchedFn : kSgemmFn, args.size()), args);
      op->erase();
    }
  }
};

} // namespace
