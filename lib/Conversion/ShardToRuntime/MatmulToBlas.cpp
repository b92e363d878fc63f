//===- MatmulToBlas.cpp - f32 matmuls on buffers -> tprt GEMM calls -------===//
#include "tp/Conversion/Passes.h"
#include "tp/Conversion/TPToLinalg.h"
#include "tp/Runtime/RuntimeABI.h"
#include "FillBefore.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPLOWERMATMULTOBLAS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// A contiguous, statically shaped buffer.
bool isPlainBuffer(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity();
}

/// Whether the target has a GEMM for operands of `operand` elements into a
/// product of `product` elements: f32 on the CPU (OpenBLAS), bf16 into f32
/// (mixed precision, oneDNN); with cuBLAS f32, f16 and bf16, and f16 / bf16
/// into f32.
bool hasGemm(Type operand, Type product, bool cuda) {
  bool half = operand.isF16() || operand.isBF16();
  if (operand == product)
    return operand.isF32() || (cuda && half);
  return product.isF32() && (operand.isBF16() || (cuda && half));
}

/// TPRT_TRANS_* for the operands a (batch_)matmul reads transposed
/// (tp-lower-to-linalg's gemmIndexingMaps); none for other maps.
std::optional<int32_t> transposedOperands(linalg::LinalgOp op) {
  bool batched = isa<linalg::BatchMatmulOp>(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (int32_t trans : {0, int(TPRT_TRANS_A), int(TPRT_TRANS_B),
                        TPRT_TRANS_A | TPRT_TRANS_B})
    if (ArrayRef(maps) ==
        ArrayRef(tp::gemmIndexingMaps(op->getContext(), batched,
                                      trans & TPRT_TRANS_A,
                                      trans & TPRT_TRANS_B)))
      return trans;
  return std::nullopt;
}

/// The zero fill of `op`'s product buffer right before it, which the GEMM
/// makes redundant when it overwrites the buffer (TPRT_OVERWRITE) instead
/// of adding to it.
linalg::FillOp zeroFillBefore(linalg::LinalgOp op) {
  linalg::FillOp fill = fillOfInitBefore(op);
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ? fill
                                                                     : nullptr;
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
      return declareRuntimeFunction(module, name, args);
    };
    SmallVector<std::pair<linalg::LinalgOp, int32_t>> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
          !op.hasPureBufferSemantics())
        return;
      Type elem = getElementTypeOrSelf(op->getOperand(0).getType());
      if (!llvm::all_of(op->getOperands(), isPlainBuffer) ||
          getElementTypeOrSelf(op->getOperand(1).getType()) != elem ||
          !hasGemm(elem, getElementTypeOrSelf(op->getOperand(2).getType()),
                   cuda))
        return;
      std::optional<int32_t> trans = transposedOperands(op);
      if (!trans)
        return;
      if (linalg::FillOp fill = zeroFillBefore(op)) {
        fill->erase();
        *trans |= TPRT_OVERWRITE;
      }
      matmuls.push_back({op, *trans});
    });
    for (auto [op, trans] : matmuls) {
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> args;
      for (Value v : op->getOperands())
        args.push_back(bufferAddress(b, loc, v));
      auto c = cast<MemRefType>(op->getOperand(2).getType());
      auto a = cast<MemRefType>(op->getOperand(0).getType());
      bool batched = isa<linalg::BatchMatmulOp>(op);
      bool mixed = a.getElementType() != c.getElementType();
      if (mixed)
        trans |= TPRT_F32_PRODUCT;
      // cuBLAS and the bf16 GEMM always take a batch count (1 for a plain
      // matmul).
      if (batched || cuda || mixed)
        args.push_back(arith::ConstantIntOp::create(
            b, loc, batched ? c.getDimSize(0) : 1, 64));
      int64_t rank = c.getRank();
      int64_t k = a.getDimSize(trans & TPRT_TRANS_A ? rank - 2 : rank - 1);
      for (int64_t d : {c.getDimSize(rank - 2), c.getDimSize(rank - 1), k})
        args.push_back(arith::ConstantIntOp::create(b, loc, d, 64));
      if (cuda)
        args.push_back(arith::ConstantIntOp::create(
            b, loc, *runtimeDType(a.getElementType()), 32));
      args.push_back(arith::ConstantIntOp::create(b, loc, trans, 32));
      StringRef fn = cuda    ? kCudaGemmFn
                     : mixed ? kGemmBf16Fn
                             : (batched ? kSgemmBatchedFn : kSgemmFn);
      func::CallOp::create(b, loc, declare(fn, ValueRange(args).getTypes()),
                           args);
      op->erase();
    }
  }
};

} // namespace
