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

/// TPRT_TRANS_* for the operands a (batch_)matmul reads transposed
/// (FoldTransposeIntoMatmul's indexing maps); none for other maps.
std::optional<int32_t> transposedOperands(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned first = isa<linalg::BatchMatmulOp>(op) ? 1 : 0;
  MLIRContext *ctx = op->getContext();
  AffineExpr m = getAffineDimExpr(first, ctx),
             n = getAffineDimExpr(first + 1, ctx),
             k = getAffineDimExpr(first + 2, ctx);
  // An operand's last two results: [rows, cols], or swapped when transposed.
  auto reads = [&](AffineMap map, AffineExpr rows,
                   AffineExpr cols) -> std::optional<bool> {
    if (map.getNumResults() != first + 2 ||
        (first && map.getResult(0) != getAffineDimExpr(0, ctx)))
      return std::nullopt;
    AffineExpr r = map.getResult(first), c = map.getResult(first + 1);
    if (r == rows && c == cols)
      return false;
    if (r == cols && c == rows)
      return true;
    return std::nullopt;
  };
  std::optional<bool> a = reads(maps[0], m, k), b = reads(maps[1], k, n),
                      c = reads(maps[2], m, n);
  if (!a || !b || !c || *c)
    return std::nullopt;
  return (*a ? TPRT_TRANS_A : 0) | (*b ? TPRT_TRANS_B : 0);
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
      if (transposedOperands(op))
        matmuls.push_back(op);
    });
    for (linalg::LinalgOp op : matmuls) {
      int32_t trans = *transposedOperands(op);
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
      int64_t k = a.getDimSize(trans & TPRT_TRANS_A ? rank - 2 : rank - 1);
      for (int64_t d : {c.getDimSize(rank - 2), c.getDimSize(rank - 1), k})
        args.push_back(arith::ConstantIntOp::create(b, loc, d, 64));
      if (cuda)
        args.push_back(arith::ConstantIntOp::create(
            b, loc, *runtimeDType(c.getElementType()), 32));
      args.push_back(arith::ConstantIntOp::create(b, loc, trans, 32));
      StringRef fn =
          cuda ? kCudaGemmFn : (batched ? kSgemmBatchedFn : kSgemmFn);
      func::CallOp::create(b, loc, declare(fn, ValueRange(args).getTypes()),
                           args);
      op->erase();
    }
  }
};

} // namespace
