//===- ExpandConvGradients.cpp - conv gradients as tp.conv ----------------===//
//
// Both gradients of a convolution are convolutions themselves, so where no
// library runs them (the CUDA target; convs of more than 3 spatial dims),
// tp.conv_input_grad and tp.conv_filter_grad are written as tp.conv (plus
// reshapes, transposes and slices), which lowers wherever the forward conv
// does:
//   - the input's gradient is the output's gradient, with stride - 1 zeros
//     inserted between its elements, convolved with the filter flipped in
//     space and with its in and out channels swapped (a transposed conv);
//   - the filter's gradient is the input convolved with the output's
//     gradient, batch and channels swapped, the forward's stride becoming
//     the dilation and its dilation the stride.
// Groups stay groups in both.
//
//===----------------------------------------------------------------------===//
#include "ConvGrad.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPEXPANDCONVGRADIENTS
#include "tp/Autodiff/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// The transpose of a conv of `filter` ([M, C/G, K...]) on an input of
/// `xShape` ([N, C, S...]), applied to `g` ([N, M, O...]):
/// dx[n, c, i] = sum over o, k with o s + k d - pad = i of g[n, m, o] w[m, c, k],
/// a stride-1 conv of g dilated by s with w flipped and transposed per group.
Value transposedConv(ConvGrad &cg, Value g, Value filter,
                     ArrayRef<int64_t> x, ArrayRef<int64_t> s,
                     ArrayRef<int64_t> d, ArrayRef<int64_t> pads,
                     int64_t group, Type result) {
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
  Value dx = cg.conv(gd, wt, resultShape, ones, d, convPads, group, result);
  return cg.slice(dx, starts, sizes);
}

/// dw[m, c, k] = sum over n, o of g[n, m, o] x[n, c, o s + k d - pad]: a conv
/// whose batch is x's channels and whose channels are the batch.
Value filterGradAsConv(ConvGrad &cg, ConvFilterGradOp op) {
  Value g = op.getOutputGrad();
  auto xType = cg.gb.typeOf(op.getInput());
  auto wType = cg.gb.typeOf(op.getResult());
  auto gType = cg.gb.typeOf(g);
  int64_t r = xType.getRank() - 2, group = op.getGroup();
  ArrayRef<int64_t> x = xType.getShape(), w = wType.getShape(),
                    o = gType.getShape();
  ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations(),
                    pads = op.getPads();
  int64_t n = x[0], m = w[0], cPerGroup = w[1], mPerGroup = m / group;
  // x [N, G*Cg, S...] -> [Cg, G*N, S...]; g [N, G*Mg, O...] -> [G*Mg, N, O...].
  Value xt = cg.regroup(op.getInput(), {n, group, cPerGroup}, {2, 1, 0},
                        {cPerGroup, group * n});
  Value gt = cg.regroup(g, {n, group, mPerGroup}, {1, 2, 0}, {m, n});

  // The window may fit more than K times (the forward's floor division
  // dropped input the filter never read): cut to K.
  SmallVector<int64_t> resultShape = {cPerGroup, m};
  for (int64_t i = 0; i < r; ++i)
    resultShape.push_back(
        (x[2 + i] + pads[i] + pads[r + i] - s[i] * (o[2 + i] - 1) - 1) / d[i] +
        1);
  Value dw = cg.conv(xt, gt, resultShape, d, s, pads, group,
                     wType.getElementType());
  SmallVector<int64_t> starts(2 + r, 0), sizes = {cPerGroup, m};
  llvm::append_range(sizes, w.drop_front(2));
  dw = cg.slice(dw, starts, sizes);
  SmallVector<int64_t> back = {1, 0};
  for (int64_t i = 0; i < r; ++i)
    back.push_back(2 + i);
  return cg.gb.permute(dw, back);
}

struct TPExpandConvGradientsPass
    : tp::impl::TPExpandConvGradientsBase<TPExpandConvGradientsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> grads;
    getOperation().walk([&](Operation *op) {
      if (isa<ConvInputGradOp, ConvFilterGradOp>(op))
        grads.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : grads) {
      b.setInsertionPoint(op);
      Grad gb{b, op->getLoc()};
      ConvGrad cg{gb};
      Value expanded;
      if (auto in = dyn_cast<ConvInputGradOp>(op))
        expanded = transposedConv(
            cg, in.getOutputGrad(), in.getFilter(), cg.gb.typeOf(in).getShape(),
            in.getStrides(), in.getDilations(), in.getPads(), in.getGroup(),
            cg.gb.typeOf(in).getElementType());
      else
        expanded = filterGradAsConv(cg, cast<ConvFilterGradOp>(op));
      op->getResult(0).replaceAllUsesWith(expanded);
      op->erase();
    }
  }
};

} // namespace
