//===- ConvVJPRules.cpp - the VJPs of convolution and pooling -------------===//
//
// Both gradients of a convolution are convolutions themselves, so they are
// written as tp.conv (plus reshapes, transposes and slices) and shard,
// lower and run wherever the forward conv does:
//   - the input's gradient is the output's gradient, with stride - 1 zeros
//     inserted between its elements, convolved with the filter flipped in
//     space and with its in and out channels swapped (a transposed conv);
//   - the filter's gradient is the input convolved with the output's
//     gradient, batch and channels swapped, the forward's stride becoming
//     the dilation and its dilation the stride.
// Groups stay groups in both. Average pooling is a depthwise conv with a
// filter of ones, so its gradient is that conv's transpose; max pooling's
// goes to the first maximum of each window.
//
//===----------------------------------------------------------------------===//
#include "GradBuilder.h"
#include "tp/Sharding/ValueNames.h"

#include <limits>

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Shape helpers on top of Grad for the spatial rewrites below.
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

  Value conv(Value x, Value w, ArrayRef<int64_t> resultShape,
             ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
             ArrayRef<int64_t> pads, int64_t group) {
    return ConvOp::create(gb.b, gb.loc, like(x, resultShape), x, w,
                          gb.b.getDenseI64ArrayAttr(strides),
                          gb.b.getDenseI64ArrayAttr(dilations),
                          gb.b.getDenseI64ArrayAttr(pads),
                          gb.b.getI64IntegerAttr(group));
  }
};

/// The transpose of a conv of `filter` ([M, C/G, K...]) on an input of
/// `xShape` ([N, C, S...]), applied to `g` ([N, M, O...]):
/// dx[n, c, i] = sum over o, k with o s + k d - pad = i of g[n, m, o] w[m, c, k],
/// a stride-1 conv of g dilated by s with w flipped and transposed per group.
Value transposedConv(ConvGrad &cg, Value g, Value filter,
                     ArrayRef<int64_t> x, ArrayRef<int64_t> s,
                     ArrayRef<int64_t> d, ArrayRef<int64_t> pads,
                     int64_t group) {
  ArrayRef<int64_t> w = cg.gb.typeOf(filter).getShape(),
                    o = cg.gb.typeOf(g).getShape();
  int64_t r = x.size() - 2;
  int64_t m = w[0], cPerGroup = w[1], mPerGroup = m / group;

  // Filter [G*Mg, Cg, K...] -> [G*Cg, Mg, K...], flipped in space.
  Value wt = cg.regroup(filter, {group, mPerGroup, cPerGroup}, {0, 2, 1},
                        {group * cPerGroup, mPerGroup});
  for (int64_t i = 0; i < r; ++i)
    wt = cg.flip(wt, 2 + i);

  Value gd = g;
  for (int64_t i = 0; i < r; ++i)
    gd = cg.dilate(gd, 2 + i, s[i]);

  // Pads that make the output S long; a negative one drops outputs instead.
  SmallVector<int64_t> convPads(2 * r), resultShape = {x[0], x[1]},
                                        starts(2 + r, 0), sizes(x);
  for (int64_t i = 0; i < r; ++i) {
    int64_t k = w[2 + i], span = d[i] * (k - 1);
    int64_t begin = span - pads[i];
    int64_t end = x[2 + i] - (o[2 + i] - 1) * s[i] - 1 + pads[i];
    convPads[i] = std::max<int64_t>(begin, 0);
    convPads[r + i] = std::max<int64_t>(end, 0);
    starts[2 + i] = std::max<int64_t>(-begin, 0);
    resultShape.push_back(x[2 + i] + starts[2 + i] + std::max<int64_t>(-end, 0));
  }
  SmallVector<int64_t> ones(r, 1);
  Value dx = cg.conv(gd, wt, resultShape, ones, d, convPads, group);
  return cg.slice(dx, starts, sizes);
}

Value convInputGrad(ConvGrad &cg, ConvOp conv, Value g) {
  return transposedConv(cg, g, conv.getFilter(),
                        cg.gb.typeOf(conv.getInput()).getShape(),
                        conv.getStrides(), conv.getDilations(), conv.getPads(),
                        conv.getGroup());
}

/// dw[m, c, k] = sum over n, o of g[n, m, o] x[n, c, o s + k d - pad]: a conv
/// whose batch is x's channels and whose channels are the batch.
Value convFilterGrad(ConvGrad &cg, ConvOp conv, Value g) {
  auto xType = cg.gb.typeOf(conv.getInput());
  auto wType = cg.gb.typeOf(conv.getFilter());
  auto gType = cg.gb.typeOf(g);
  int64_t r = xType.getRank() - 2, group = conv.getGroup();
  ArrayRef<int64_t> x = xType.getShape(), w = wType.getShape(),
                    o = gType.getShape();
  ArrayRef<int64_t> s = conv.getStrides(), d = conv.getDilations(),
                    pads = conv.getPads();
  int64_t n = x[0], m = w[0], cPerGroup = w[1], mPerGroup = m / group;
  // x [N, G*Cg, S...] -> [Cg, G*N, S...]; g [N, G*Mg, O...] -> [G*Mg, N, O...].
  Value xt = cg.regroup(conv.getInput(), {n, group, cPerGroup}, {2, 1, 0},
                        {cPerGroup, group * n});
  Value gt = cg.regroup(g, {n, group, mPerGroup}, {1, 2, 0}, {m, n});

  // The window may fit more than K times (the forward's floor division
  // dropped input the filter never read): cut to K.
  SmallVector<int64_t> resultShape = {cPerGroup, m};
  for (int64_t i = 0; i < r; ++i)
    resultShape.push_back(
        (x[2 + i] + pads[i] + pads[r + i] - s[i] * (o[2 + i] - 1) - 1) / d[i] +
        1);
  Value dw = cg.conv(xt, gt, resultShape, d, s, pads, group);
  SmallVector<int64_t> starts(2 + r, 0), sizes = {cPerGroup, m};
  llvm::append_range(sizes, w.drop_front(2));
  dw = cg.slice(dw, starts, sizes);
  SmallVector<int64_t> back = {1, 0};
  for (int64_t i = 0; i < r; ++i)
    back.push_back(2 + i);
  return cg.gb.permute(dw, back);
}

/// Average pooling is a depthwise conv with a filter of ones, divided by
/// the window size (or, without count_include_pad, by how many of the
/// window's elements lie inside the input, as the forward divides): its
/// gradient is that conv's transpose applied to g / divisor.
Value avgPoolGrad(ConvGrad &cg, PoolOp pool, Value g) {
  auto xType = cg.gb.typeOf(pool.getInput());
  ArrayRef<int64_t> x = xType.getShape(), k = pool.getKernel(),
                    s = pool.getStrides(), d = pool.getDilations(),
                    pads = pool.getPads();
  ArrayRef<int64_t> o = cg.gb.typeOf(g).getShape();
  int64_t r = x.size() - 2, c = x[1];
  bool padded = llvm::any_of(pads, [](int64_t p) { return p != 0; });
  Value scaled;
  if (pool.getCountIncludePad() || !padded) {
    int64_t size = 1;
    for (int64_t v : k)
      size *= v;
    scaled = cg.gb.mulScalar(g, 1.0 / size);
  } else {
    // Elements of each window inside the input: a product over the dims.
    SmallVector<int64_t> countShape = {1, 1};
    llvm::append_range(countShape, o.drop_front(2));
    SmallVector<Attribute> counts;
    Type f = xType.getElementType();
    for (auto idx : llvm::seq<int64_t>(0, ShapedType::getNumElements(countShape))) {
      int64_t count = 1, rest = idx;
      for (int64_t i = r - 1; i >= 0; --i) {
        int64_t oi = rest % o[2 + i], inside = 0;
        rest /= o[2 + i];
        for (int64_t ki = 0; ki < k[i]; ++ki) {
          int64_t pos = oi * s[i] + ki * d[i] - pads[i];
          inside += pos >= 0 && pos < x[2 + i];
        }
        count *= inside;
      }
      counts.push_back(cg.gb.b.getFloatAttr(f, 1.0 / std::max<int64_t>(count, 1)));
    }
    Value inverse = ConstantOp::create(
        cg.gb.b, cg.gb.loc,
        DenseElementsAttr::get(RankedTensorType::get(countShape, f), counts));
    scaled = cg.gb.mul(g, inverse);
  }
  SmallVector<int64_t> filterShape = {c, 1};
  llvm::append_range(filterShape, k);
  Value ones = cg.filled(g, filterShape, 1.0);
  return transposedConv(cg, scaled, ones, x, s, d, pads, c);
}

/// Max pooling sends each output's gradient to the first element of its
/// window (in row-major window order, as PyTorch) that equals the maximum;
/// padding never wins. Per window offset k: the strided view of the padded
/// input that offset reads, compared with the result, and the gradient
/// where it is the first match. An offset t = k * dilation lands on the
/// input positions o * stride + t: the phase t % stride of the input's
/// grid, shifted by t / stride. The offsets' contributions are summed on
/// their phase's grid (output-sized), and the phases interleaved into the
/// input's shape once at the end: a 3x3, stride 2 window sums nine
/// quarter-size parts and moves the whole gradient once, where spreading
/// each part over the input (zeros between, shifted) would move it nine
/// times.
Value maxPoolGrad(ConvGrad &cg, PoolOp pool, Value g) {
  Grad &gb = cg.gb;
  auto xType = gb.typeOf(pool.getInput());
  ArrayRef<int64_t> x = xType.getShape(), k = pool.getKernel(),
                    s = pool.getStrides(), d = pool.getDilations(),
                    pads = pool.getPads();
  ArrayRef<int64_t> o = gb.typeOf(g).getShape();
  int64_t r = x.size() - 2;
  double lowest = -std::numeric_limits<double>::infinity();
  Value xp = pool.getInput();
  SmallVector<int64_t> padded(x);
  for (int64_t i = 0; i < r; ++i) {
    xp = cg.pad(xp, 2 + i, pads[i], pads[r + i], lowest);
    padded[2 + i] += pads[i] + pads[r + i];
  }
  // Each phase's grid: ceil(padded / stride) per spatial dim, enough for
  // every offset's shifted part.
  SmallVector<int64_t> gridShape(x.take_front(2));
  int64_t phases = 1;
  for (int64_t i = 0; i < r; ++i) {
    gridShape.push_back((padded[2 + i] + s[i] - 1) / s[i]);
    phases *= s[i];
  }
  SmallVector<Value> grids(phases);
  auto maskType = RankedTensorType::get(o, gb.b.getI1Type());
  Value y = pool.getResult(), taken;
  SmallVector<int64_t> offset(r, 0);
  for (int64_t n = 0, total = ShapedType::getNumElements(k); n < total; ++n) {
    for (int64_t i = r - 1, rest = n; i >= 0; --i) {
      offset[i] = rest % k[i];
      rest /= k[i];
    }
    SmallVector<int64_t> starts(2, 0), limits(x.take_front(2)), steps(2, 1);
    for (int64_t i = 0; i < r; ++i) {
      starts.push_back(offset[i] * d[i]);
      limits.push_back(offset[i] * d[i] + (o[2 + i] - 1) * s[i] + 1);
      steps.push_back(s[i]);
    }
    Value view = SliceOp::create(gb.b, gb.loc, cg.like(g, o), xp, starts,
                                 limits, steps);
    Value match = EqualOp::create(gb.b, gb.loc, maskType, view, y);
    Value first = match;
    if (taken) {
      first = AndOp::create(gb.b, gb.loc, maskType, match,
                            NotOp::create(gb.b, gb.loc, taken));
      taken = OrOp::create(gb.b, gb.loc, maskType, taken, match);
    } else {
      taken = match;
    }
    Value part = WhereOp::create(gb.b, gb.loc, gb.typeOf(g), first, g,
                                 gb.scalar(g, 0.0));
    int64_t phase = 0;
    for (int64_t i = 0; i < r; ++i) {
      int64_t t = offset[i] * d[i], shift = t / s[i];
      phase = phase * s[i] + t % s[i];
      part = cg.pad(part, 2 + i, shift, gridShape[2 + i] - shift - o[2 + i],
                    0.0);
    }
    grids[phase] = grids[phase] ? gb.add(grids[phase], part) : part;
  }
  for (Value &grid : grids)
    if (!grid)
      grid = cg.zeros(g, gridShape);
  // Interleave the phases, the last spatial dim first (the phase index's
  // fastest digit): [.., Q, ..] x stride -> [.., Q, stride, ..] -> [.., Q *
  // stride, ..].
  SmallVector<int64_t> shape(gridShape);
  for (int64_t i = r - 1; i >= 0; --i) {
    if (s[i] == 1)
      continue;
    SmallVector<int64_t> one(shape), wide(shape);
    one.insert(one.begin() + 3 + i, 1);
    wide.insert(wide.begin() + 3 + i, s[i]);
    shape[2 + i] *= s[i];
    SmallVector<Value> next;
    for (size_t j = 0; j < grids.size(); j += s[i]) {
      SmallVector<Value> parts;
      for (int64_t p = 0; p < s[i]; ++p)
        parts.push_back(cg.reshape(grids[j + p], one));
      Value joined = ConcatOp::create(gb.b, gb.loc, cg.like(g, wide), parts,
                                      gb.b.getI64IntegerAttr(3 + i));
      next.push_back(cg.reshape(joined, shape));
    }
    grids = std::move(next);
  }
  SmallVector<int64_t> begin(2, 0);
  for (int64_t i = 0; i < r; ++i)
    begin.push_back(pads[i]);
  return cg.slice(grids.front(), begin, x);
}

LogicalResult poolRule(Operation *op, Grad &gb, Value g,
                       SmallVectorImpl<Value> &grads) {
  auto pool = cast<PoolOp>(op);
  ConvGrad cg{gb};
  grads.push_back(pool.getKind() == "max" ? maxPoolGrad(cg, pool, g)
                                          : avgPoolGrad(cg, pool, g));
  return success();
}

LogicalResult convRule(Operation *op, Grad &gb, Value g,
                       SmallVectorImpl<Value> &grads) {
  auto conv = cast<ConvOp>(op);
  // Its slices, transposed convs and moves are the convolution's time in
  // tp-run --profile, as its forward lowering's are.
  Grad convGb{gb.b, tagLocation(gb.loc, "convolution")};
  ConvGrad cg{convGb};
  grads.push_back(convInputGrad(cg, conv, g));
  grads.push_back(convFilterGrad(cg, conv, g));
  return success();
}

} // namespace

void tp::attachConvVJPRules(MLIRContext *ctx) {
  attach<ConvOp, convRule>(ctx);
  attach<PoolOp, poolRule>(ctx);
}
