//===- LinalgBuilders.cpp - helpers shared by tp lowerings ----------------===//
#include "LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

AffineMap tp::broadcastIndexingMap(ArrayRef<int64_t> operandShape,
                                   ArrayRef<int64_t> resultShape,
                                   MLIRContext *ctx) {
  size_t offset = resultShape.size() - operandShape.size();
  SmallVector<AffineExpr> exprs;
  for (auto [i, dim] : llvm::enumerate(operandShape)) {
    bool stretched = dim == 1 && resultShape[offset + i] != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

Value tp::buildElementwise(OpBuilder &b, Location loc,
                           RankedTensorType resultType, ValueRange inputs,
                           ScalarBodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastIndexingMap(
        cast<RankedTensorType>(in.getType()).getShape(), resultType.getShape(),
        ctx));
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, v);
      });
  return generic.getResult(0);
}

Value tp::buildZeroFilled(OpBuilder &b, Location loc, RankedTensorType type) {
  Value zero = arith::ConstantOp::create(
      b, loc, type.getElementType(), b.getZeroAttr(type.getElementType()));
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::FillOp::create(b, loc, zero, init).getResult(0);
}
