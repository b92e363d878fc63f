//===- ConvToDnnl.cpp - f32 convs and their gradients -> tprt_conv calls --===//
//
// A convolution is the one kernel of a CNN that a library does far better
// than im2col and a GEMM: oneDNN's direct kernels (PyTorch's) block the
// channels by the vector width and never build the columns, and its
// backward kernels need none of the zero-inserted, flipped and transposed
// copies that writing a gradient as a conv takes. Each conv-family op
// becomes one call on its operands' buffers, as tp-lower-collectives makes
// a collective's. Mixed precision's convs (bf16 operands, f32 result) run
// on oneDNN's bf16 kernels (TPRT_CONV_BF16); f16 operands are widened to
// f32 first.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Runtime/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPLOWERCONVTODNNL
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// The conv a conv-family op belongs to: its input, filter and output
/// shapes, attributes and the TPRT_CONV_* kind.
struct ConvShapes {
  ArrayRef<int64_t> input, filter, output, strides, dilations, pads;
  int64_t group;
  int32_t kind;
};

template <typename Op>
ConvShapes shapesOf(Op op, ArrayRef<int64_t> input, ArrayRef<int64_t> filter,
                    ArrayRef<int64_t> output, int32_t kind) {
  return {input,           filter,        output,        op.getStrides(),
          op.getDilations(), op.getPads(), int64_t(op.getGroup()), kind};
}

std::optional<ConvShapes> convShapes(Operation *op) {
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (auto c = dyn_cast<ConvOp>(op))
    return shapesOf(c, shape(c.getInput()), shape(c.getFilter()),
                    shape(c.getResult()), TPRT_CONV_FORWARD);
  if (auto c = dyn_cast<ConvInputGradOp>(op))
    return shapesOf(c, shape(c.getResult()), shape(c.getFilter()),
                    shape(c.getOutputGrad()), TPRT_CONV_INPUT_GRAD);
  if (auto c = dyn_cast<ConvFilterGradOp>(op))
    return shapesOf(c, shape(c.getInput()), shape(c.getResult()),
                    shape(c.getOutputGrad()), TPRT_CONV_FILTER_GRAD);
  return std::nullopt;
}

/// tprt_conv's shape array (tprt.h's TPRT_CONV_* layout).
SmallVector<int64_t> shapeArray(const ConvShapes &s) {
  int64_t r = s.input.size() - 2;
  SmallVector<int64_t> v(TPRT_CONV_SHAPE_SIZE, 0);
  v[TPRT_CONV_RANK] = r;
  v[TPRT_CONV_GROUP] = s.group;
  v[TPRT_CONV_N] = s.input[0];
  v[TPRT_CONV_C] = s.input[1];
  v[TPRT_CONV_M] = s.filter[0];
  for (int64_t i = 0; i < r; ++i) {
    v[TPRT_CONV_SPATIAL + i] = s.input[2 + i];
    v[TPRT_CONV_KERNEL + i] = s.filter[2 + i];
    v[TPRT_CONV_OUTPUT + i] = s.output[2 + i];
    v[TPRT_CONV_STRIDES + i] = s.strides[i];
    v[TPRT_CONV_DILATIONS + i] = s.dilations[i];
    v[TPRT_CONV_PADS_BEGIN + i] = s.pads[i];
    v[TPRT_CONV_PADS_END + i] = s.pads[r + i];
  }
  return v;
}

struct TPLowerConvToDnnlPass
    : tp::impl::TPLowerConvToDnnlBase<TPLowerConvToDnnlPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, ConvShapes>> convs;
    module.walk([&](Operation *op) {
      auto s = convShapes(op);
      int64_t spatial = s ? int64_t(s->input.size()) - 2 : 0;
      if (s && spatial >= 1 && spatial <= 3 &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        convs.push_back({op, *s});
    });
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    for (auto &[op, s] : convs) {
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      auto buffer = [&](Value tensor) {
        auto t = cast<RankedTensorType>(tensor.getType());
        if (t.getElementType().isF16()) {
          t = t.clone(b.getF32Type());
          tensor = CastOp::create(b, loc, t, tensor);
        }
        return bufferAddress(
            b, loc,
            bufferization::ToBufferOp::create(
                b, loc, MemRefType::get(t.getShape(), t.getElementType()),
                tensor, /*readOnly=*/true));
      };
      auto shapeType = RankedTensorType::get({TPRT_CONV_SHAPE_SIZE}, i64);
      Value shape = arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(shapeType, ArrayRef<int64_t>(shapeArray(s))));
      auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
      Value out = memref::AllocOp::create(
          b, loc,
          MemRefType::get(resultType.getShape(), resultType.getElementType()));
      SmallVector<Value> args = {
          arith::ConstantIntOp::create(
              b, loc,
              s.kind | (getElementTypeOrSelf(op->getOperand(0).getType()).isBF16()
                            ? TPRT_CONV_BF16
                            : 0),
              32),
          buffer(op->getOperand(0)), buffer(op->getOperand(1)),
          bufferAddress(b, loc, out),
          buffer(shape)};
      func::CallOp::create(
          b, loc,
          declareRuntimeFunction(module, kConvFn, ValueRange(args).getTypes()),
          args);
      op->getResult(0).replaceAllUsesWith(bufferization::ToTensorOp::create(
          b, loc, resultType, out, /*restrict=*/true, /*writable=*/true));
      op->erase();
    }
  }
};

} // namespace
