//===- GradBuilder.h - what the VJP rule files share ---------*- C++ -*-===//
//
// The small tp-op builder gradient formulas are written with, and how a
// rule becomes an op's VJPOpInterface model. Shared by VJPRules.cpp and
// the rule files of op families (ConvVJPRules.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_AUTODIFF_GRADBUILDER_H
#define TP_LIB_AUTODIFF_GRADBUILDER_H

#include "tp/Autodiff/Autodiff.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/IR/TPShapes.h"
#include "tp/Sharding/ValueNames.h"

namespace mlir::tp {

/// Small tp-op builder for gradient formulas.
struct Grad {
  OpBuilder &b;
  Location loc;

  RankedTensorType typeOf(Value v) const {
    return cast<RankedTensorType>(v.getType());
  }
  Value scalar(Value like, double v) {
    auto t = RankedTensorType::get({}, typeOf(like).getElementType());
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
  Value mulScalar(Value x, double v) { return mul(x, scalar(x, v)); }

  /// `v` with element type `elem` (itself if it has it).
  Value castTo(Value v, Type elem) {
    RankedTensorType t = typeOf(v);
    if (t.getElementType() == elem)
      return v;
    return CastOp::create(b, loc, t.clone(elem), v);
  }

  /// Sums a gradient of the broadcast result shape back to `target`'s shape
  /// (the dims broadcasting added or stretched).
  Value unbroadcast(Value g, Type target) {
    auto t = cast<RankedTensorType>(target);
    ArrayRef<int64_t> res = typeOf(g).getShape(), shape = t.getShape();
    if (res == shape)
      return g;
    int64_t offset = res.size() - shape.size();
    SmallVector<int64_t> axes;
    for (int64_t i = 0; i < offset; ++i)
      axes.push_back(i);
    for (int64_t i = 0; i < int64_t(shape.size()); ++i)
      if (shape[i] == 1 && res[offset + i] != 1)
        axes.push_back(offset + i);
    SmallVector<int64_t> kept(res);
    for (int64_t a : axes)
      kept[a] = 1;
    Value summed = ReduceSumOp::create(
        b, loc, RankedTensorType::get(kept, t.getElementType()), g,
        b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
    return ReshapeOp::create(b, loc, t, summed);
  }

  /// A reduced value (keepdims or not) broadcast back to `shape`.
  Value expandBack(Value g, ArrayRef<int64_t> axes, RankedTensorType input) {
    SmallVector<int64_t> kept(input.getShape());
    for (int64_t a : axes)
      kept[a] = 1;
    Value k = ReshapeOp::create(
        b, loc, RankedTensorType::get(kept, input.getElementType()), g);
    return ExpandOp::create(b, loc, input, k);
  }

  /// Result dim i is dim perm[i] of `v`; `v` itself for the identity.
  Value permute(Value v, ArrayRef<int64_t> perm) {
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return v;
    auto t = typeOf(v);
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(t.getDimSize(p));
    return TransposeOp::create(
        b, loc, RankedTensorType::get(shape, t.getElementType()), v,
        b.getDenseI64ArrayAttr(perm));
  }

  /// Swaps the last two dims (matmul's transposed operand).
  Value transposeLast2(Value v) {
    auto t = typeOf(v);
    int64_t r = t.getRank();
    SmallVector<int64_t> shape(t.getShape());
    std::swap(shape[r - 1], shape[r - 2]);
    return TransposeOp::create(
        b, loc, RankedTensorType::get(shape, t.getElementType()), v,
        b.getDenseI64ArrayAttr(swapLastTwo(r)));
  }
};

using Rule = LogicalResult (*)(Operation *, Grad &, Value,
                               SmallVectorImpl<Value> &);

template <typename OpTy, Rule rule>
struct VJPModel
    : public VJPOpInterface::ExternalModel<VJPModel<OpTy, rule>, OpTy> {
  LogicalResult buildVJP(Operation *op, OpBuilder &b, Value g,
                         SmallVectorImpl<Value> &grads) const {
    Grad gb{b, tagLocation(op->getLoc(), "backward")};
    return rule(op, gb, g, grads);
  }
};

template <typename OpTy, Rule rule> void attach(MLIRContext *ctx) {
  OpTy::template attachInterface<VJPModel<OpTy, rule>>(*ctx);
}

/// The rules of convolution and pooling (ConvVJPRules.cpp).
void attachConvVJPRules(MLIRContext *ctx);

} // namespace mlir::tp

#endif // TP_LIB_AUTODIFF_GRADBUILDER_H
