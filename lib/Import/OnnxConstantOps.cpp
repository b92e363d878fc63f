//===- OnnxConstantOps.cpp - Constant, Shape, ConstantOfShape, Size -------===//
//
// Shapes are static once imported, so the ops that make constants or read
// shapes become tp.constant: Constant in each of its dense forms, Shape
// (with opset 15's start and end), ConstantOfShape and Size.
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

LogicalResult constantOp(NodeImporter &n) {
  MLIRContext *ctx = n.b.getContext();
  if (const auto *a = n.attr("value")) {
    std::string error;
    DenseElementsAttr attr = convertOnnxTensor(a->t(), ctx, error);
    if (!attr)
      return n.error() << error;
    n.outputs.push_back(n.constant(attr));
    return success();
  }
  auto f32 = n.b.getF32Type();
  auto i64 = n.b.getI64Type();
  if (const auto *a = n.attr("value_float")) {
    n.outputs.push_back(n.constant(
        DenseElementsAttr::get(RankedTensorType::get({}, f32), a->f())));
    return success();
  }
  if (const auto *a = n.attr("value_int")) {
    n.outputs.push_back(n.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, i64), int64_t(a->i()))));
    return success();
  }
  if (const auto *a = n.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    n.outputs.push_back(n.constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, f32), ArrayRef(v))));
    return success();
  }
  if (const auto *a = n.attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    n.outputs.push_back(n.constant(DenseElementsAttr::get(
        RankedTensorType::get({int64_t(v.size())}, i64), ArrayRef(v))));
    return success();
  }
  return n.error() << "unsupported Constant form (sparse or string value)";
}

/// Shapes are static, so Shape is a constant (opset 15 adds start / end).
LogicalResult shape(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> dims = n.typeOf(*x).getShape();
  int64_t rank = dims.size();
  auto clamp = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t start = clamp(n.intAttr("start", 0));
  int64_t end = clamp(n.intAttr("end", rank));
  SmallVector<int64_t> v(dims.begin() + start,
                         dims.begin() + std::max(start, end));
  n.outputs.push_back(n.constant(DenseElementsAttr::get(
      RankedTensorType::get({int64_t(v.size())}, n.b.getI64Type()),
      ArrayRef(v))));
  return success();
}

LogicalResult constantOfShape(NodeImporter &n) {
  auto dims = n.constantInts(n.input(0), "shape");
  if (failed(dims))
    return failure();
  DenseElementsAttr value;
  if (const auto *a = n.attr("value")) {
    std::string error;
    value = convertOnnxTensor(a->t(), n.b.getContext(), error);
    if (!value)
      return n.error() << error;
  } else {
    value = DenseElementsAttr::get(RankedTensorType::get({1}, n.b.getF32Type()),
                                   0.0f);
  }
  auto type = RankedTensorType::get(*dims, value.getElementType());
  n.outputs.push_back(n.constant(
      DenseElementsAttr::get(type, value.getValues<Attribute>()[0])));
  return success();
}

/// Static shapes: Size is a constant.
LogicalResult size(NodeImporter &n) {
  auto x = n.requiredInput(0, "data");
  if (failed(x))
    return failure();
  auto t = RankedTensorType::get({}, n.b.getI64Type());
  n.outputs.push_back(n.constant(DenseElementsAttr::get(
      t, n.b.getI64IntegerAttr(n.typeOf(*x).getNumElements()).getValue())));
  return success();
}

/// The constant-making op types.
const OnnxOpEntry kOps[] = {
    {"Constant", 1, constantOp},
    {"ConstantOfShape", 9, constantOfShape},
    {"Shape", 1, shape},
    {"Size", 1, size},
};

} // namespace

ArrayRef<OnnxOpEntry> tp::constantOnnxOps() { return kOps; }
