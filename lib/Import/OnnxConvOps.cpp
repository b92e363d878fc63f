//===- OnnxConvOps.cpp - convolution and pooling -> tp ops ----------------===//
//
// Conv, MaxPool, AveragePool and the global pools. The window attributes
// (auto_pad, ceil_mode) become explicit pads here, so that tp.conv and
// tp.pool have one meaning; a Conv's bias is an add along the channels; a
// global pool is a keepdims reduction over the spatial dims. (ConvTranspose
// is OnnxResampling.cpp.)
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Window attributes of Conv / MaxPool / AveragePool resolved to explicit
/// pads: auto_pad (SAME_UPPER / SAME_LOWER / VALID) and ceil_mode (extra
/// end padding so that ONNX's floor formula gives the ceil result).
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};

FailureOr<Window> windowAttrs(NodeImporter &n, ArrayRef<int64_t> spatial,
                              ArrayRef<int64_t> kernel) {
  size_t r = spatial.size();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = n.intsAttr("strides").value_or(SmallVector<int64_t>(r, 1));
  w.dilations = n.intsAttr("dilations").value_or(SmallVector<int64_t>(r, 1));
  w.pads = n.intsAttr("pads").value_or(SmallVector<int64_t>(2 * r, 0));
  if (w.kernel.size() != r || w.strides.size() != r ||
      w.dilations.size() != r || w.pads.size() != 2 * r)
    return n.error() << "kernel_shape, strides, dilations and pads must "
                        "cover the " << r << " spatial dims",
           failure();
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  for (size_t i = 0; i < r; ++i) {
    int64_t span = w.dilations[i] * (w.kernel[i] - 1) + 1;
    if (autoPad == "VALID") {
      w.pads[i] = w.pads[r + i] = 0;
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + span - spatial[i]);
      int64_t small = total / 2;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : total - small;
      w.pads[r + i] = total - w.pads[i];
    } else if (autoPad != "NOTSET") {
      return n.error() << "unknown auto_pad '" << autoPad << "'", failure();
    }
    if (n.intAttr("ceil_mode", 0)) {
      int64_t padded = spatial[i] + w.pads[i] + w.pads[r + i];
      int64_t out = (padded - span + w.strides[i] - 1) / w.strides[i] + 1;
      // The last window must start inside the input or its begin padding.
      if ((out - 1) * w.strides[i] >= spatial[i] + w.pads[i])
        --out;
      w.pads[r + i] +=
          std::max<int64_t>(0, (out - 1) * w.strides[i] + span - padded);
    }
  }
  return w;
}

LogicalResult conv(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  auto wt = n.requiredInput(1, "W");
  if (failed(x) || failed(wt))
    return failure();
  RankedTensorType xt = n.typeOf(*x), ft = n.typeOf(*wt);
  if (xt.getRank() < 3 || ft.getRank() != xt.getRank())
    return n.error() << "needs X [N, C, S...] and W [M, C/group, K...], got "
                     << xt << " and " << ft;
  auto w = windowAttrs(n, xt.getShape().drop_front(2),
                       ft.getShape().drop_front(2));
  if (failed(w))
    return failure();
  std::string why;
  auto spatial = windowOutputShape(xt.getShape().drop_front(2), w->kernel,
                                   w->strides, w->dilations, w->pads, why);
  if (!spatial)
    return n.error() << why;
  SmallVector<int64_t> shape = {xt.getDimSize(0), ft.getDimSize(0)};
  llvm::append_range(shape, *spatial);
  auto y = n.create<ConvOp>(withShape(xt, shape), *x, *wt,
                            n.b.getDenseI64ArrayAttr(w->strides),
                            n.b.getDenseI64ArrayAttr(w->dilations),
                            n.b.getDenseI64ArrayAttr(w->pads),
                            n.b.getI64IntegerAttr(n.intAttr("group", 1)));
  if (failed(y) || !n.input(2))
    return emit(n, y);
  // Bias [M] -> [M, 1, ...] added along the channels.
  SmallVector<int64_t> biasShape(shape.size() - 1, 1);
  biasShape[0] = shape[1];
  auto bias = reshape(n, n.input(2), biasShape);
  if (failed(bias))
    return failure();
  return emit(n, n.createInferred<AddOp>(*y, *bias));
}

template <bool IsMax> LogicalResult pool(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  if (IsMax && n.outputUsed(1))
    return n.error() << "the Indices output is not supported";
  RankedTensorType xt = n.typeOf(*x);
  auto kernel = n.intsAttr("kernel_shape");
  if (!kernel || xt.getRank() < 3)
    return n.error() << "needs kernel_shape and an input [N, C, S...], got "
                     << xt;
  auto w = windowAttrs(n, xt.getShape().drop_front(2), *kernel);
  if (failed(w))
    return failure();
  std::string why;
  auto spatial = windowOutputShape(xt.getShape().drop_front(2), w->kernel,
                                   w->strides, w->dilations, w->pads, why);
  if (!spatial)
    return n.error() << why;
  SmallVector<int64_t> shape(xt.getShape().take_front(2));
  llvm::append_range(shape, *spatial);
  return emit(n, n.create<PoolOp>(
                     withShape(xt, shape), *x,
                     n.b.getStringAttr(IsMax ? "max" : "avg"),
                     n.b.getDenseI64ArrayAttr(w->kernel),
                     n.b.getDenseI64ArrayAttr(w->strides),
                     n.b.getDenseI64ArrayAttr(w->dilations),
                     n.b.getDenseI64ArrayAttr(w->pads),
                     n.b.getBoolAttr(n.intAttr("count_include_pad", 0))));
}

/// GlobalAveragePool / GlobalMaxPool: a keepdims reduction over S....
template <typename ReduceOpTy> LogicalResult globalPool(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  RankedTensorType xt = n.typeOf(*x);
  if (xt.getRank() < 3)
    return n.error() << "needs an input [N, C, S...], got " << xt;
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, xt.getRank()));
  return emit(n, n.create<ReduceOpTy>(
                     withShape(xt, reducedShape(xt.getShape(), axes, true)), *x,
                     n.b.getDenseI64ArrayAttr(axes), n.b.getBoolAttr(true)));
}

/// The convolution and pooling op types.
const OnnxOpEntry kOps[] = {
    {"AveragePool", 1, pool<false>},
    {"Conv", 1, conv},
    {"GlobalAveragePool", 1, globalPool<ReduceMeanOp>},
    {"GlobalMaxPool", 1, globalPool<ReduceMaxOp>},
    {"MaxPool", 1, pool<true>},
};

} // namespace

ArrayRef<OnnxOpEntry> tp::convOnnxOps() { return kOps; }
