//===- OnnxResampling.cpp - Resize and ConvTranspose from tp ops ----------===//
//
// The upsampling ops of segmentation heads, UNets and detection necks,
// written with ops tp already lowers, shards and differentiates:
//
// - Resize (nearest, linear) is separable: along each resized axis it is a
//   Gather of constant source indices, and for `linear` the blend of two
//   such Gathers with constant weights. The coordinate transformations and
//   rounding modes are ONNX's, evaluated here on the static shapes.
// - ConvTranspose is a stride-1 Conv of the input with zeros inserted
//   between its elements, over the kernel flipped and with its channel dims
//   swapped (per group), padded by dilation * (kernel - 1) - pad.
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"
#include <cmath>

using namespace mlir;
using namespace mlir::tp;

namespace {

Value indexConstant(NodeImporter &n, ArrayRef<int64_t> values) {
  auto t = RankedTensorType::get({int64_t(values.size())}, n.b.getI64Type());
  return n.constant(DenseElementsAttr::get(t, values));
}

/// `v` gathered along `axis` at the constant `indices`.
FailureOr<Value> gatherAxis(NodeImporter &n, Value v, int64_t axis,
                            ArrayRef<int64_t> indices) {
  RankedTensorType t = n.typeOf(v);
  SmallVector<int64_t> shape(t.getShape());
  shape[axis] = indices.size();
  return n.create<GatherOp>(withShape(t, shape), v, indexConstant(n, indices),
                            n.b.getI64IntegerAttr(axis));
}

/// A float constant [1, .., values, .., 1] that broadcasts along `axis`.
Value weightsAlong(NodeImporter &n, RankedTensorType like, int64_t axis,
                   ArrayRef<double> values) {
  SmallVector<int64_t> shape(like.getRank(), 1);
  shape[axis] = values.size();
  auto t = RankedTensorType::get(shape, like.getElementType());
  SmallVector<Attribute> attrs;
  for (double v : values)
    attrs.push_back(n.b.getFloatAttr(like.getElementType(), v));
  return n.constant(DenseElementsAttr::get(t, attrs));
}

/// A constant float attribute input (Resize's scales), or nothing.
std::optional<SmallVector<double>> constantFloats(Value v) {
  DenseFPElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> out;
  for (const APFloat &f : attr.getValues<APFloat>())
    out.push_back(f.convertToDouble());
  return out;
}

} // namespace

LogicalResult tp::importResize(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  if (failed(x))
    return failure();
  RankedTensorType xt = n.typeOf(*x);
  int64_t rank = xt.getRank();
  std::string mode = n.stringAttr("mode", "nearest");
  std::string coords =
      n.stringAttr("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.stringAttr("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    return n.error() << "mode '" << mode
                     << "' is not supported (nearest and linear are)";
  static const char *kCoords[] = {"half_pixel", "pytorch_half_pixel",
                                  "align_corners", "asymmetric",
                                  "tf_half_pixel_for_nn"};
  if (!llvm::is_contained(kCoords, coords))
    return n.error() << "coordinate_transformation_mode '" << coords
                     << "' is not supported";
  if (n.intAttr("antialias", 0) || n.attr("axes") ||
      n.stringAttr("keep_aspect_ratio_policy", "stretch") != "stretch")
    return n.error() << "antialias, axes and keep_aspect_ratio_policy are "
                        "not supported";

  // Output sizes and the scales the coordinate transformation divides by.
  SmallVector<int64_t> outShape;
  SmallVector<double> scales;
  Value scalesIn = n.input(2), sizesIn = n.input(3);
  if (scalesIn && n.typeOf(scalesIn).getNumElements() == 0)
    scalesIn = Value();
  if (sizesIn) {
    auto sizes = n.constantInts(sizesIn, "sizes");
    if (failed(sizes))
      return failure();
    if (int64_t(sizes->size()) != rank)
      return n.error() << "sizes has " << sizes->size()
                       << " entries for an input of rank " << rank;
    outShape = *sizes;
    for (int64_t d = 0; d < rank; ++d)
      scales.push_back(double(outShape[d]) / xt.getDimSize(d));
  } else if (scalesIn) {
    auto given = constantFloats(scalesIn);
    if (!given)
      return n.error() << "the scales input must be a compile-time constant";
    if (int64_t(given->size()) != rank)
      return n.error() << "scales has " << given->size()
                       << " entries for an input of rank " << rank;
    scales = *given;
    for (int64_t d = 0; d < rank; ++d)
      outShape.push_back(int64_t(std::floor(xt.getDimSize(d) * scales[d])));
  } else {
    return n.error() << "needs scales or sizes";
  }

  Value y = *x;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = xt.getDimSize(d), out = outShape[d];
    if (out <= 0)
      return n.error() << "output dim " << d << " would be " << out;
    if (in == out && scales[d] == 1.0)
      continue;
    // Source coordinate of each output position.
    SmallVector<double> src;
    for (int64_t i = 0; i < out; ++i) {
      double s = scales[d], c;
      if (coords == "half_pixel")
        c = (i + 0.5) / s - 0.5;
      else if (coords == "pytorch_half_pixel")
        c = out > 1 ? (i + 0.5) / s - 0.5 : 0;
      else if (coords == "align_corners")
        c = out == 1 ? 0 : double(i) * (in - 1) / (out - 1);
      else if (coords == "asymmetric")
        c = i / s;
      else // tf_half_pixel_for_nn
        c = (i + 0.5) / s;
      src.push_back(c);
    }
    auto clampIndex = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    if (mode == "nearest") {
      SmallVector<int64_t> idx;
      for (double c : src) {
        double r;
        if (nearest == "floor")
          r = std::floor(c);
        else if (nearest == "ceil")
          r = std::ceil(c);
        else if (nearest == "round_prefer_ceil")
          r = std::floor(c + 0.5);
        else // round_prefer_floor: halves go down
          r = std::ceil(c - 0.5);
        idx.push_back(clampIndex(int64_t(r)));
      }
      auto g = gatherAxis(n, y, d, idx);
      if (failed(g))
        return failure();
      y = *g;
      continue;
    }
    // linear: x[i0] * (1 - w) + x[i1] * w, the coordinate clamped to the
    // input (edge values beyond it, as ONNX's reference and PyTorch do).
    SmallVector<int64_t> i0, i1;
    SmallVector<double> w0, w1;
    for (double c : src) {
      c = std::clamp(c, 0.0, double(in - 1));
      int64_t lo = int64_t(std::floor(c));
      i0.push_back(lo);
      i1.push_back(clampIndex(lo + 1));
      w1.push_back(c - lo);
      w0.push_back(1 - (c - lo));
    }
    auto g0 = gatherAxis(n, y, d, i0);
    auto g1 = gatherAxis(n, y, d, i1);
    if (failed(g0) || failed(g1))
      return failure();
    RankedTensorType gt = n.typeOf(*g0);
    auto a = n.createInferred<MulOp>(*g0, weightsAlong(n, gt, d, w0));
    auto b = n.createInferred<MulOp>(*g1, weightsAlong(n, gt, d, w1));
    if (failed(a) || failed(b))
      return failure();
    auto sum = n.createInferred<AddOp>(*a, *b);
    if (failed(sum))
      return failure();
    y = *sum;
  }
  n.outputs.push_back(y);
  return success();
}

/// `v` with `stride - 1` zeros after each element along `axis`, the trailing
/// ones dropped: [.., L, ..] -> [.., (L - 1) * stride + 1, ..].
static FailureOr<Value> insertZeros(NodeImporter &n, Value v, int64_t axis,
                                    int64_t stride) {
  RankedTensorType t = n.typeOf(v);
  SmallVector<int64_t> shape(t.getShape());
  int64_t len = shape[axis];
  shape.insert(shape.begin() + axis + 1, 1);
  auto col = reshape(n, v, shape);
  if (failed(col))
    return failure();
  shape[axis + 1] = stride - 1;
  Value zeros = n.constant(DenseElementsAttr::get(
      withShape(t, shape), n.b.getZeroAttr(t.getElementType())));
  shape[axis + 1] = stride;
  auto both = n.create<ConcatOp>(withShape(t, shape),
                                 ValueRange{*col, zeros},
                                 n.b.getI64IntegerAttr(axis + 1));
  if (failed(both))
    return failure();
  SmallVector<int64_t> flat(t.getShape());
  flat[axis] = len * stride;
  auto spread = reshape(n, *both, flat);
  if (failed(spread))
    return failure();
  SmallVector<int64_t> starts(t.getRank(), 0), limits(flat), steps(t.getRank(), 1);
  limits[axis] = (len - 1) * stride + 1;
  SmallVector<int64_t> out(flat);
  out[axis] = limits[axis];
  return n.create<SliceOp>(withShape(t, out), *spread,
                           n.b.getDenseI64ArrayAttr(starts),
                           n.b.getDenseI64ArrayAttr(limits),
                           n.b.getDenseI64ArrayAttr(steps));
}

LogicalResult tp::importConvTranspose(NodeImporter &n) {
  auto x = n.requiredInput(0, "X");
  auto wt = n.requiredInput(1, "W");
  if (failed(x) || failed(wt))
    return failure();
  RankedTensorType xt = n.typeOf(*x), ft = n.typeOf(*wt);
  int64_t rank = xt.getRank(), ns = rank - 2;
  int64_t group = n.intAttr("group", 1);
  if (rank < 3 || ft.getRank() != rank || group < 1 ||
      ft.getDimSize(0) != xt.getDimSize(1) || xt.getDimSize(1) % group)
    return n.error() << "needs X [N, C, S...] and W [C, M/group, K...] with C "
                        "divisible by group, got "
                     << xt << " and " << ft << " (group " << group << ")";
  auto get = [&](StringRef name, int64_t dflt, int64_t count) {
    SmallVector<int64_t> v = n.intsAttr(name).value_or(SmallVector<int64_t>());
    if (v.empty())
      v.assign(count, dflt);
    return v;
  };
  SmallVector<int64_t> kernel(ft.getShape().drop_front(2));
  SmallVector<int64_t> strides = get("strides", 1, ns),
                       dilations = get("dilations", 1, ns),
                       pads = get("pads", 0, 2 * ns),
                       outPad = get("output_padding", 0, ns);
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (int64_t(strides.size()) != ns || int64_t(dilations.size()) != ns ||
      int64_t(pads.size()) != 2 * ns || int64_t(outPad.size()) != ns)
    return n.error() << "strides, dilations, output_padding need one entry "
                        "and pads two per spatial dim";
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.error() << "auto_pad '" << autoPad << "' is not supported";
  if (autoPad == "VALID")
    pads.assign(2 * ns, 0);
  auto outputShape = n.intsAttr("output_shape");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (outputShape || same) {
    SmallVector<int64_t> target;
    for (int64_t d = 0; d < ns; ++d)
      target.push_back(outputShape ? (*outputShape)[outputShape->size() - ns + d]
                                   : xt.getDimSize(2 + d) * strides[d]);
    for (int64_t d = 0; d < ns; ++d) {
      int64_t total = strides[d] * (xt.getDimSize(2 + d) - 1) + outPad[d] +
                      (kernel[d] - 1) * dilations[d] + 1 - target[d];
      // Floor division, as ONNX's reference: a negative total (an output
      // longer than the full one) extends the end.
      bool upper = autoPad != "SAME_LOWER" && autoPad != "NOTSET";
      int64_t half = llvm::divideFloorSigned(total, 2);
      pads[d] = upper ? half : total - half;
      pads[ns + d] = total - pads[d];
    }
  }

  // The input with zeros inserted, cropped where a pad exceeds the kernel
  // reach (negative padding), and the padding the stride-1 conv needs.
  Value z = *x;
  SmallVector<int64_t> convPads(2 * ns);
  for (int64_t d = 0; d < ns; ++d) {
    if (strides[d] > 1) {
      auto spread = insertZeros(n, z, 2 + d, strides[d]);
      if (failed(spread))
        return failure();
      z = *spread;
    }
    int64_t reach = dilations[d] * (kernel[d] - 1);
    int64_t begin = reach - pads[d], end = reach - pads[ns + d] + outPad[d];
    if (begin < 0 || end < 0) {
      RankedTensorType zt = n.typeOf(z);
      SmallVector<int64_t> starts(rank, 0), limits(zt.getShape()),
          steps(rank, 1);
      starts[2 + d] = std::max<int64_t>(0, -begin);
      limits[2 + d] -= std::max<int64_t>(0, -end);
      if (starts[2 + d] >= limits[2 + d])
        return n.error() << "pads leave no output along spatial dim " << d;
      SmallVector<int64_t> shape(zt.getShape());
      shape[2 + d] = limits[2 + d] - starts[2 + d];
      auto cropped = n.create<SliceOp>(withShape(zt, shape), z,
                                       n.b.getDenseI64ArrayAttr(starts),
                                       n.b.getDenseI64ArrayAttr(limits),
                                       n.b.getDenseI64ArrayAttr(steps));
      if (failed(cropped))
        return failure();
      z = *cropped;
    }
    convPads[d] = std::max<int64_t>(0, begin);
    convPads[ns + d] = std::max<int64_t>(0, end);
  }

  // W [C, M/g, K...] -> flipped K, then [M, C/g, K...] per group.
  Value w = *wt;
  for (int64_t d = 0; d < ns; ++d) {
    SmallVector<int64_t> reversed;
    for (int64_t k = kernel[d] - 1; k >= 0; --k)
      reversed.push_back(k);
    auto flipped = gatherAxis(n, w, 2 + d, reversed);
    if (failed(flipped))
      return failure();
    w = *flipped;
  }
  int64_t c = ft.getDimSize(0), mg = ft.getDimSize(1), m = mg * group;
  SmallVector<int64_t> grouped = {group, c / group, mg};
  llvm::append_range(grouped, kernel);
  auto g = reshape(n, w, grouped);
  if (failed(g))
    return failure();
  SmallVector<int64_t> perm = {0, 2, 1}, swapped = {group, mg, c / group};
  for (int64_t d = 0; d < ns; ++d) {
    perm.push_back(3 + d);
    swapped.push_back(kernel[d]);
  }
  auto t = n.create<TransposeOp>(withShape(ft, swapped), *g,
                                 n.b.getDenseI64ArrayAttr(perm));
  if (failed(t))
    return failure();
  SmallVector<int64_t> convW = {m, c / group};
  llvm::append_range(convW, kernel);
  auto filter = reshape(n, *t, convW);
  if (failed(filter))
    return failure();

  RankedTensorType zt = n.typeOf(z);
  SmallVector<int64_t> shape = {xt.getDimSize(0), m};
  for (int64_t d = 0; d < ns; ++d)
    shape.push_back(zt.getDimSize(2 + d) + convPads[d] + convPads[ns + d] -
                    dilations[d] * (kernel[d] - 1));
  SmallVector<int64_t> ones(ns, 1);
  auto y = n.create<ConvOp>(withShape(xt, shape), z, *filter,
                            n.b.getDenseI64ArrayAttr(ones),
                            n.b.getDenseI64ArrayAttr(dilations),
                            n.b.getDenseI64ArrayAttr(convPads),
                            n.b.getI64IntegerAttr(group));
  if (failed(y))
    return failure();
  if (Value bias = n.input(2)) {
    SmallVector<int64_t> biasShape(rank - 1, 1);
    biasShape[0] = m;
    auto b = reshape(n, bias, biasShape);
    if (failed(b))
      return failure();
    y = n.createInferred<AddOp>(*y, *b);
    if (failed(y))
      return failure();
  }
  n.outputs.push_back(*y);
  return success();
}
