//===- LinalgBuilders.cpp - helpers shared by tp lowerings ----------------===//
#include "LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::tp;

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

Value tp::buildParallelGeneric(OpBuilder &b, Location loc,
                               RankedTensorType resultType, ValueRange inputs,
                               ArrayRef<AffineMap> inputMaps,
                               ScalarBodyFn body) {
  SmallVector<AffineMap> maps(inputMaps);
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

Value tp::buildElementwise(OpBuilder &b, Location loc,
                           RankedTensorType resultType, ValueRange inputs,
                           ScalarBodyFn body) {
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastIndexingMap(
        cast<RankedTensorType>(in.getType()).getShape(), resultType.getShape(),
        b.getContext()));
  return buildParallelGeneric(b, loc, resultType, inputs, maps, body);
}

AffineMap tp::dropDimsMap(int64_t rank, ArrayRef<int64_t> dims,
                          MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value tp::buildScalar(OpBuilder &b, Location loc, Type type, double v) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(f, v));
  return arith::ConstantOp::create(b, loc, type,
                                   b.getIntegerAttr(type, int64_t(v)));
}

/// One linalg.generic: each result element is one chain over the reduced
/// dims, in order.
static Value buildChainReduction(OpBuilder &b, Location loc, Value input,
                                 ArrayRef<int64_t> axes, ReductionKind kind) {
  auto inType = cast<RankedTensorType>(input.getType());
  Type elemType = inType.getElementType();
  int64_t rank = inType.getRank();
  SmallVector<int64_t> outShape;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      outShape.push_back(inType.getDimSize(d));
  auto outType = RankedTensorType::get(outShape, elemType);

  TypedAttr initAttr;
  bool isFloat = isa<FloatType>(elemType);
  if (kind == ReductionKind::Sum)
    initAttr = b.getZeroAttr(elemType);
  else if (kind == ReductionKind::Prod)
    initAttr = isFloat ? TypedAttr(b.getFloatAttr(elemType, 1.0))
                       : TypedAttr(b.getIntegerAttr(elemType, 1));
  else if (isFloat)
    initAttr = b.getFloatAttr(
        elemType, APFloat::getInf(cast<FloatType>(elemType).getFloatSemantics(),
                                  /*Negative=*/true));
  else
    initAttr = b.getIntegerAttr(
        elemType, APInt::getSignedMinValue(elemType.getIntOrFloatBitWidth()));
  Value init = buildFilled(b, loc, outType,
                           arith::ConstantOp::create(b, loc, elemType, initAttr));

  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d)
    iterators.push_back(llvm::is_contained(axes, d)
                            ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 dropDimsMap(rank, axes, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, outType, input, init, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value v;
        if (kind == ReductionKind::Sum)
          v = isFloat ? Value(arith::AddFOp::create(nb, nloc, args[0], args[1]))
                      : Value(arith::AddIOp::create(nb, nloc, args[0], args[1]));
        else if (kind == ReductionKind::Prod)
          v = isFloat ? Value(arith::MulFOp::create(nb, nloc, args[0], args[1]))
                      : Value(arith::MulIOp::create(nb, nloc, args[0], args[1]));
        else if (!isFloat)
          v = arith::MaxSIOp::create(nb, nloc, args[0], args[1]);
        else if (kind == ReductionKind::MaxNum)
          v = arith::MaxNumFOp::create(nb, nloc, args[0], args[1]);
        else
          v = arith::MaximumFOp::create(nb, nloc, args[0], args[1]);
        linalg::YieldOp::create(nb, nloc, v);
      });
  return generic.getResult(0);
}

// A float sum loses about one rounding per addition to its accumulator: a
// chain of n terms is off by up to n * 2^-24 relative (the mse loss of a
// 524,288-element output by 1.9e-4). Longer sums are cascaded as PyTorch's
// are: blocks of kSumBlock terms, then sums of the block sums, so that no
// chain is longer than kSumChain.
static constexpr int64_t kSumChain = 1024, kSumBlock = 256;

/// Sums dim `axis` of `v` (dropping it) in chains of at most kSumChain.
static Value cascadeSum(OpBuilder &b, Location loc, Value v, int64_t axis) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t n = type.getDimSize(axis);
  if (n <= kSumChain)
    return buildChainReduction(b, loc, v, {axis}, ReductionKind::Sum);
  int64_t blocks = llvm::divideCeil(n, kSumBlock);
  if (blocks * kSumBlock != n) {
    // Zeros at the end make whole blocks.
    SmallVector<int64_t> padded(type.getShape());
    padded[axis] = blocks * kSumBlock;
    Value zero = arith::ConstantOp::create(
        b, loc, type.getElementType(), b.getZeroAttr(type.getElementType()));
    v = tensor::createPadHighOp(type.clone(padded), v, zero,
                                /*nofold=*/false, loc, b);
  }
  // [.., n, ..] -> [.., blocks, kSumBlock, ..], summed over the block.
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = blocks;
  shape.insert(shape.begin() + axis + 1, kSumBlock);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d)
    groups.push_back(d < axis    ? ReassociationIndices{d}
                     : d == axis ? ReassociationIndices{d, d + 1}
                                 : ReassociationIndices{d + 1});
  v = tensor::ExpandShapeOp::create(b, loc, type.clone(shape), v, groups);
  v = buildChainReduction(b, loc, v, {axis + 1}, ReductionKind::Sum);
  return cascadeSum(b, loc, v, axis);
}

Value tp::buildReduction(OpBuilder &b, Location loc, Value input,
                         ArrayRef<int64_t> axes, ReductionKind kind) {
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= inType.getDimSize(axis);
  if (kind != ReductionKind::Sum || !isa<FloatType>(inType.getElementType()) ||
      count <= kSumChain)
    return buildChainReduction(b, loc, input, axes, kind);
  // One dim at a time, the innermost first (it is contiguous).
  Value v = input;
  for (int64_t axis : llvm::reverse(axes))
    v = cascadeSum(b, loc, v, axis);
  return v;
}

Value tp::buildReshape(OpBuilder &b, Location loc, Value input,
                       RankedTensorType resultType) {
  auto inType = cast<RankedTensorType>(input.getType());
  if (inType == resultType)
    return input;
  if (inType.getRank() == 0 || resultType.getRank() == 0) {
    // All dims are 1: rank 0 <-> [1, ..., 1] needs no reassociation groups.
    SmallVector<ReassociationIndices> none;
    if (inType.getRank() > resultType.getRank())
      return tensor::CollapseShapeOp::create(b, loc, resultType, input, none);
    return tensor::ExpandShapeOp::create(b, loc, resultType, input, none);
  }
  if (inType.getRank() != resultType.getRank()) {
    if (auto reassociation =
            getReassociationIndicesForReshape(inType, resultType)) {
      if (inType.getRank() > resultType.getRank())
        return tensor::CollapseShapeOp::create(b, loc, resultType, input,
                                               *reassociation);
      return tensor::ExpandShapeOp::create(b, loc, resultType, input,
                                           *reassociation);
    }
  }
  // No single reassociation: go through the flat 1-D tensor.
  auto flatType = RankedTensorType::get({inType.getNumElements()},
                                        inType.getElementType());
  Value flat = buildReshape(b, loc, input, flatType);
  return buildReshape(b, loc, flat, resultType);
}

Value tp::buildFilled(OpBuilder &b, Location loc, RankedTensorType type,
                      Value scalar) {
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::FillOp::create(b, loc, scalar, init).getResult(0);
}

Value tp::buildZeroFilled(OpBuilder &b, Location loc, RankedTensorType type) {
  return buildFilled(b, loc, type,
                     arith::ConstantOp::create(
                         b, loc, type.getElementType(),
                         b.getZeroAttr(type.getElementType())));
}
