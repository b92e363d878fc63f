//===- Convolution.cpp - lower tp.conv and tp.pool to linalg --------------===//
//
// A conv with one group is im2col and one GEMM (linalg.matmul, which
// becomes an OpenBLAS / cuBLAS call). Grouped convs (depthwise) and pooling
// are one linalg.generic over the (padded) input, whatever the number of
// spatial dims: conv over (n, g, m, o..., c, k...) with the input read at
// o * stride + k * dilation (groups made a dim of their own by reshaping),
// pooling over (n, c, o..., k...) with a window-shaped operand that gives
// the k loops their bounds, as linalg's named pooling ops do.
//
//===----------------------------------------------------------------------===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/ValueNames.h"

#include <limits>

using namespace mlir;
using namespace mlir::tp;

namespace {

/// `x` ([N, C, S...]) padded on the spatial dims with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> pads,
                 double value) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t r = type.getRank() - 2;
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return x;
  SmallVector<OpFoldResult> low(2, b.getIndexAttr(0)),
      high(2, b.getIndexAttr(0));
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t i = 0; i < r; ++i) {
    low.push_back(b.getIndexAttr(pads[i]));
    high.push_back(b.getIndexAttr(pads[r + i]));
    shape[2 + i] += pads[i] + pads[r + i];
  }
  auto padded = RankedTensorType::get(shape, type.getElementType());
  Value pad = buildScalar(b, loc, type.getElementType(), value);
  return tensor::PadOp::create(b, loc, padded, x, low, high, pad);
}

/// o * stride + k * dilation.
AffineExpr windowIndex(AffineExpr o, AffineExpr k, int64_t stride,
                       int64_t dilation) {
  return o * stride + k * dilation;
}

Value filled(OpBuilder &b, Location loc, RankedTensorType type, double v) {
  return buildFilled(b, loc, type, buildScalar(b, loc, type.getElementType(), v));
}

/// `lhs` [a, k] times `rhs` [k, b]: a linalg.matmul into a zero-filled
/// [a, b].
Value gemm(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto type = RankedTensorType::get(
      {lhsType.getDimSize(0),
       cast<RankedTensorType>(rhs.getType()).getDimSize(1)},
      lhsType.getElementType());
  return linalg::MatmulOp::create(b, loc, TypeRange{type},
                                  ValueRange{lhs, rhs},
                                  buildZeroFilled(b, loc, type))
      .getResult(0);
}

/// `v` with its dims permuted: result dim i is `v`'s dim perm[i].
Value permuted(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return linalg::TransposeOp::create(
             b, loc, v,
             tensor::EmptyOp::create(b, loc, shape, type.getElementType()),
             perm)
      .getResult()[0];
}

/// A conv with one group as im2col and one GEMM. The windows of the padded
/// input are copied into columns in one of two layouts, chosen so that the
/// copy's innermost loop runs along a long contiguous row of the input:
///   - output-major, [C, K..., N, O...] (innermost: the output's last
///     spatial dim), when the output is wider than the filter (a forward
///     conv, the input's gradient): the filter [M, C*K...] times the
///     columns gives [M, N, O...], and [N, M, O...] moves whole rows;
///   - window-major, [N, O..., C, K...] (innermost: the filter's last
///     spatial dim), when the filter is the wider one (the filter's
///     gradient, whose "filter" is the output's gradient): the columns
///     times the filter read transposed (a BLAS flag once
///     FoldTransposeIntoMatmul has run) give [N*O..., M], which is small.
/// The GEMM runs at OpenBLAS's (cuBLAS's) speed; the columns cost K times
/// the input in memory.
Value convAsGemm(OpBuilder &b, Location loc, ConvOp op, Value x,
                 Value filterValue) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType outType = op.getType();
  Type f = outType.getElementType();
  ArrayRef<int64_t> w = op.getFilter().getType().getShape();
  ArrayRef<int64_t> o = outType.getShape().drop_front(2);
  int64_t r = outType.getRank() - 2, n = outType.getDimSize(0), m = w[0];
  int64_t windows = n, window = w[1];
  for (int64_t i = 0; i < r; ++i) {
    windows *= o[i];
    window *= w[2 + i];
  }
  bool outputMajor = r == 0 || o.back() >= w.back();
  // Loop dims: the window's (c, k_1..k_r) and the output's (n, o_1..o_r),
  // in the columns' order.
  int64_t cDim = outputMajor ? 0 : 1 + r, kDim = cDim + 1;
  int64_t nDim = outputMajor ? 1 + r : 0, oDim = nDim + 1;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> in = {d(nDim), d(cDim)};
  for (int64_t i = 0; i < r; ++i)
    in.push_back(windowIndex(d(oDim + i), d(kDim + i), op.getStrides()[i],
                             op.getDilations()[i]));
  SmallVector<int64_t> windowShape = {w[1]}, outputShape = {n};
  llvm::append_range(windowShape, w.drop_front(2));
  llvm::append_range(outputShape, o);
  SmallVector<int64_t> colsShape(outputMajor ? windowShape : outputShape);
  llvm::append_range(colsShape, outputMajor ? outputShape : windowShape);
  Value cols = buildParallelGeneric(
      b, loc, RankedTensorType::get(colsShape, f), ValueRange{x},
      {AffineMap::get(2 + 2 * r, 0, in, ctx)},
      [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  Value filter = buildReshape(b, loc, filterValue,
                              RankedTensorType::get({m, window}, f));
  Value product;
  SmallVector<int64_t> productShape, perm;
  if (outputMajor) {
    cols =
        buildReshape(b, loc, cols, RankedTensorType::get({window, windows}, f));
    product = gemm(b, loc, filter, cols);
    productShape = {m, n};
    llvm::append_range(productShape, o);
    perm = {1, 0};
    for (int64_t i = 0; i < r; ++i)
      perm.push_back(2 + i);
  } else {
    cols =
        buildReshape(b, loc, cols, RankedTensorType::get({windows, window}, f));
    product = gemm(b, loc, cols, permuted(b, loc, filter, {1, 0}));
    productShape = {n};
    llvm::append_range(productShape, o);
    productShape.push_back(m);
    perm = {0, r + 1};
    for (int64_t i = 0; i < r; ++i)
      perm.push_back(1 + i);
  }
  product =
      buildReshape(b, loc, product, RankedTensorType::get(productShape, f));
  // One image: [M, 1, O...] is already [1, M, O...] in memory.
  if (outputMajor && n == 1)
    return buildReshape(b, loc, product, outType);
  return permuted(b, loc, product, perm);
}

struct ConvLowering : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    // Its GEMM and copies are timed as the family "convolution" by
    // tp-run --profile (tp-trace-kernel-sites reads the tag).
    Location loc = tagLocation(op.getLoc(), "convolution");
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType outType = op.getType();
    Type f = outType.getElementType();
    // Mixed precision (bf16 operands, f32 result): the loops compute in
    // the result's type, so the operands are widened first.
    auto widen = [&](Value v) -> Value {
      auto t = cast<RankedTensorType>(v.getType());
      return t.getElementType() == f
                 ? v
                 : CastOp::create(rewriter, loc, t.clone(f), v).getResult();
    };
    Value input = widen(op.getInput()), filter = widen(op.getFilter());
    ArrayRef<int64_t> w = op.getFilter().getType().getShape();
    int64_t r = outType.getRank() - 2, g = op.getGroup();
    int64_t n = outType.getDimSize(0), m = w[0] / g, c = w[1];
    Value x = padSpatial(rewriter, loc, input, op.getPads(), 0.0);
    if (g == 1) {
      rewriter.replaceOp(op, convAsGemm(rewriter, loc, op, x, filter));
      return success();
    }
    ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
    // [N, G*C, S...] -> [N, G, C, S...]; [G*M, C, K...] -> [G, M, C, K...];
    // the result [N, G, M, O...] -> [N, G*M, O...].
    SmallVector<int64_t> xg = {n, g, c}, wg = {g, m, c}, og = {n, g, m};
    llvm::append_range(xg, xs.drop_front(2));
    llvm::append_range(wg, w.drop_front(2));
    llvm::append_range(og, outType.getShape().drop_front(2));
    Value xgv = buildReshape(rewriter, loc, x, RankedTensorType::get(xg, f));
    Value wgv = buildReshape(rewriter, loc, filter, RankedTensorType::get(wg, f));
    // Loops: n, g, m, o_1..o_r, c, k_1..k_r.
    int64_t loops = 4 + 2 * r;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> in = {d(0), d(1), d(3 + r)}, filt = {d(1), d(2), d(3 + r)},
                            out = {d(0), d(1), d(2)};
    for (int64_t i = 0; i < r; ++i) {
      in.push_back(windowIndex(d(3 + i), d(4 + r + i), op.getStrides()[i],
                               op.getDilations()[i]));
      filt.push_back(d(4 + r + i));
      out.push_back(d(3 + i));
    }
    SmallVector<utils::IteratorType> iterators(3 + r,
                                               utils::IteratorType::parallel);
    iterators.append(1 + r, utils::IteratorType::reduction);
    auto accType = RankedTensorType::get(og, f);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, accType, ValueRange{xgv, wgv},
        filled(rewriter, loc, accType, 0.0),
        SmallVector<AffineMap>{AffineMap::get(loops, 0, in, ctx),
                               AffineMap::get(loops, 0, filt, ctx),
                               AffineMap::get(loops, 0, out, ctx)},
        iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          Value prod = arith::MulFOp::create(b, l, a[0], a[1]);
          linalg::YieldOp::create(b, l,
                                  Value(arith::AddFOp::create(b, l, a[2], prod)));
        });
    rewriter.replaceOp(op, buildReshape(rewriter, loc, generic.getResult(0),
                                        outType));
    return success();
  }
};

/// Sums (or maxes) windows of `x` (already padded) into `outType`.
Value poolWindows(OpBuilder &b, Location loc, Value x, PoolOp op,
                  RankedTensorType outType, bool max) {
  MLIRContext *ctx = b.getContext();
  int64_t r = outType.getRank() - 2;
  Type f = outType.getElementType();
  int64_t loops = 2 + 2 * r;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> in = {d(0), d(1)}, window, out = {d(0), d(1)};
  for (int64_t i = 0; i < r; ++i) {
    in.push_back(windowIndex(d(2 + i), d(2 + r + i), op.getStrides()[i],
                             op.getDilations()[i]));
    window.push_back(d(2 + r + i));
    out.push_back(d(2 + i));
  }
  Value shape = tensor::EmptyOp::create(b, loc, op.getKernel(), f);
  SmallVector<utils::IteratorType> iterators(2 + r,
                                             utils::IteratorType::parallel);
  iterators.append(r, utils::IteratorType::reduction);
  double init = max ? -std::numeric_limits<double>::infinity() : 0.0;
  auto generic = linalg::GenericOp::create(
      b, loc, outType, ValueRange{x, shape}, filled(b, loc, outType, init),
      SmallVector<AffineMap>{AffineMap::get(loops, 0, in, ctx),
                             AffineMap::get(loops, 0, window, ctx),
                             AffineMap::get(loops, 0, out, ctx)},
      iterators, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = max ? Value(arith::MaximumFOp::create(nb, l, a[2], a[0]))
                      : Value(arith::AddFOp::create(nb, l, a[2], a[0]));
        linalg::YieldOp::create(nb, l, v);
      });
  return generic.getResult(0);
}

struct PoolLowering : OpRewritePattern<PoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PoolOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    bool max = op.getKind() == "max";
    Value x = padSpatial(rewriter, loc, op.getInput(), op.getPads(),
                         max ? -std::numeric_limits<double>::infinity() : 0.0);
    Value pooled = poolWindows(rewriter, loc, x, op, outType, max);
    if (max) {
      rewriter.replaceOp(op, pooled);
      return success();
    }
    // The divisor: the window size, or how many of its elements lie inside
    // the input (a pooled ones tensor padded with zeros).
    Value divisor;
    bool padded = llvm::any_of(op.getPads(), [](int64_t p) { return p; });
    if (op.getCountIncludePad() || !padded) {
      int64_t size = 1;
      for (int64_t k : op.getKernel())
        size *= k;
      divisor = buildScalar(rewriter, loc, outType.getElementType(), size);
      Value result = buildElementwise(
          rewriter, loc, outType, pooled,
          [&](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::DivFOp::create(b, l, a[0], divisor);
          });
      rewriter.replaceOp(op, result);
      return success();
    }
    auto inType = op.getInput().getType();
    Value ones = filled(rewriter, loc, cast<RankedTensorType>(inType), 1.0);
    Value counts = poolWindows(
        rewriter, loc, padSpatial(rewriter, loc, ones, op.getPads(), 0.0), op,
        outType, false);
    Value result = buildElementwise(
        rewriter, loc, outType, ValueRange{pooled, counts},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::DivFOp::create(b, l, a[0], a[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tp::populateConvolutionLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvLowering, PoolLowering>(patterns.getContext());
}
