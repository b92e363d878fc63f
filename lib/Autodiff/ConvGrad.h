//===- ConvGrad.h - shape helpers of the convolution gradients -*- C++ -*-===//
//
// Shared by ConvVJPRules.cpp (max pooling's gradient) and
// ExpandConvGradients.cpp (a conv's gradients written as tp.conv).
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_AUTODIFF_CONVGRAD_H
#define TP_LIB_AUTODIFF_CONVGRAD_H

#include "GradBuilder.h"

namespace mlir::tp {

/// Shape helpers on top of Grad for the spatial rewrites of convolution
/// and pooling gradients.
struct ConvGrad {
  Grad &gb;

  RankedTensorType like(Value v, ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, gb.typeOf(v).getElementType());
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (gb.typeOf(v).getShape() == shape)
      return v;
    return ReshapeOp::create(gb.b, gb.loc, like(v, shape), v);
  }
  /// `v` [A, B, S...] viewed as [split..., S...] (three leading dims), those
  /// three permuted by `perm`, then merged into [merged..., S...] (two): how
  /// the gradients move batch, groups and channels past each other.
  Value regroup(Value v, ArrayRef<int64_t> split, ArrayRef<int64_t> perm,
                ArrayRef<int64_t> merged) {
    ArrayRef<int64_t> spatial = gb.typeOf(v).getShape().drop_front(2);
    SmallVector<int64_t> threeDims(split), order(perm), twoDims(merged);
    llvm::append_range(threeDims, spatial);
    llvm::append_range(twoDims, spatial);
    for (size_t i = 0; i < spatial.size(); ++i)
      order.push_back(3 + i);
    return reshape(gb.permute(reshape(v, threeDims), order), twoDims);
  }

  /// `v` cut to [starts, starts + sizes) on every dim.
  Value slice(Value v, ArrayRef<int64_t> starts, ArrayRef<int64_t> sizes) {
    auto shape = gb.typeOf(v).getShape();
    if (llvm::all_of(starts, [](int64_t s) { return s == 0; }) &&
        shape == sizes)
      return v;
    SmallVector<int64_t> limits, steps(shape.size(), 1);
    for (auto [s, n] : llvm::zip(starts, sizes))
      limits.push_back(s + n);
    return SliceOp::create(gb.b, gb.loc, like(v, sizes), v, starts, limits,
                           steps);
  }
  Value filled(Value likeV, ArrayRef<int64_t> shape, double value) {
    auto t = like(likeV, shape);
    return ConstantOp::create(
        gb.b, gb.loc,
        DenseElementsAttr::get(t, gb.b.getFloatAttr(t.getElementType(), value)));
  }
  Value zeros(Value likeV, ArrayRef<int64_t> shape) {
    return filled(likeV, shape, 0.0);
  }

  /// `before` and `after` elements of `value` added along `dim`.
  Value pad(Value v, int64_t dim, int64_t before, int64_t after, double value) {
    if (before == 0 && after == 0)
      return v;
    SmallVector<int64_t> shape(gb.typeOf(v).getShape());
    SmallVector<Value> parts;
    auto block = [&](int64_t n) {
      SmallVector<int64_t> b(shape);
      b[dim] = n;
      parts.push_back(filled(v, b, value));
    };
    if (before)
      block(before);
    parts.push_back(v);
    if (after)
      block(after);
    shape[dim] += before + after;
    return ConcatOp::create(gb.b, gb.loc, like(v, shape), parts,
                            gb.b.getI64IntegerAttr(dim));
  }

  /// `stride - 1` zeros between consecutive elements along `dim`.
  Value dilate(Value v, int64_t dim, int64_t stride) {
    if (stride == 1)
      return v;
    SmallVector<int64_t> shape(gb.typeOf(v).getShape());
    int64_t n = shape[dim];
    SmallVector<int64_t> one(shape), gap(shape), wide(shape);
    one.insert(one.begin() + dim + 1, 1);
    gap.insert(gap.begin() + dim + 1, stride - 1);
    wide.insert(wide.begin() + dim + 1, stride);
    Value parts[] = {reshape(v, one), zeros(v, gap)};
    Value joined = ConcatOp::create(gb.b, gb.loc, like(v, wide), parts,
                                    gb.b.getI64IntegerAttr(dim + 1));
    SmallVector<int64_t> flat(shape);
    flat[dim] = n * stride;
    SmallVector<int64_t> starts(shape.size(), 0), sizes(flat);
    sizes[dim] = (n - 1) * stride + 1;
    return slice(reshape(joined, flat), starts, sizes);
  }

  /// `v` reversed along `dim` (a gather of constant indices).
  Value flip(Value v, int64_t dim) {
    int64_t n = gb.typeOf(v).getDimSize(dim);
    if (n == 1)
      return v;
    SmallVector<int64_t> ids;
    for (int64_t i = n - 1; i >= 0; --i)
      ids.push_back(i);
    auto idType = RankedTensorType::get({n}, gb.b.getI64Type());
    Value idx = ConstantOp::create(
        gb.b, gb.loc, DenseElementsAttr::get(idType, ArrayRef<int64_t>(ids)));
    return GatherOp::create(gb.b, gb.loc, gb.typeOf(v), v, idx,
                            gb.b.getI64IntegerAttr(dim));
  }

  /// tp.conv of x and w; its result's element type is x's, or `result`
  /// (f32 for mixed precision's bf16 operands).
  Value conv(Value x, Value w, ArrayRef<int64_t> resultShape,
             ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
             ArrayRef<int64_t> pads, int64_t group, Type result = {}) {
    RankedTensorType type = like(x, resultShape);
    if (result)
      type = type.clone(result);
    return ConvOp::create(gb.b, gb.loc, type, x, w,
                          gb.b.getDenseI64ArrayAttr(strides),
                          gb.b.getDenseI64ArrayAttr(dilations),
                          gb.b.getDenseI64ArrayAttr(pads),
                          gb.b.getI64IntegerAttr(group));
  }
};

} // namespace mlir::tp

#endif // TP_LIB_AUTODIFF_CONVGRAD_H
