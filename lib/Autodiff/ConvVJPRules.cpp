//===- ConvVJPRules.cpp - the VJPs of convolution and pooling -------------===//
//
// A conv's two gradients are ops of their own, tp.conv_input_grad and
// tp.conv_filter_grad (PyTorch's convolution_backward): they shard as the
// conv does, run as a library's backward kernels on the CPU, and are
// written as tp.conv elsewhere (ExpandConvGradients.cpp). Average pooling
// is a depthwise conv with a filter of ones, so its gradient is that
// conv's input gradient; max pooling's goes to the first maximum of each
// window.
//
//===----------------------------------------------------------------------===//
#include "ConvGrad.h"
#include "tp/Sharding/ValueNames.h"

#include <limits>

using namespace mlir;
using namespace mlir::tp;

namespace {

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
  return ConvInputGradOp::create(
      cg.gb.b, cg.gb.loc, xType, scaled, ones, pool.getStridesAttr(),
      pool.getDilationsAttr(), pool.getPadsAttr(), cg.gb.b.getI64IntegerAttr(c));
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
  // The convolution's time in tp-run --profile, as its forward's.
  Location loc = tagLocation(gb.loc, "convolution");
  // Mixed precision (bf16 operands, f32 result), as tp.matmul's rule: the
  // gradients take the output's gradient in bf16 and sum in f32.
  Type in = conv.getInput().getType().getElementType();
  Type out = conv.getType().getElementType();
  Value gIn = gb.castTo(g, in);
  Value inputGrad = ConvInputGradOp::create(
      gb.b, loc, conv.getInput().getType().clone(out), gIn, conv.getFilter(),
      conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(),
      conv.getGroupAttr());
  Value filterGrad = ConvFilterGradOp::create(
      gb.b, loc, conv.getFilter().getType().clone(out), conv.getInput(), gIn,
      conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(),
      conv.getGroupAttr());
  grads.push_back(gb.castTo(inputGrad, in));
  grads.push_back(gb.castTo(filterGrad, in));
  return success();
}

} // namespace

void tp::attachConvVJPRules(MLIRContext *ctx) {
  attach<ConvOp, convRule>(ctx);
  attach<PoolOp, poolRule>(ctx);
}
