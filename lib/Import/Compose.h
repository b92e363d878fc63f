//===- Compose.h - helpers of the handlers written as compositions -*- C++ -*-===//
//
// Shared by the op files (Onnx*Ops.cpp, OnnxResampling.cpp): handlers that
// build an ONNX op out of several tp ops.
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_IMPORT_COMPOSE_H
#define TP_LIB_IMPORT_COMPOSE_H

#include "NodeImporter.h"
#include "tp/Dialect/TP/IR/TPShapes.h"

namespace mlir::tp {

/// Shorthand: append a created value to the node's outputs.
inline LogicalResult emit(NodeImporter &n, FailureOr<Value> v) {
  if (failed(v))
    return failure();
  n.outputs.push_back(*v);
  return success();
}

/// `t`'s element type with another shape.
inline RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

/// A 0-d constant of `like`'s element type.
inline Value scalarLike(NodeImporter &n, Value like, double v) {
  auto t = RankedTensorType::get({}, n.typeOf(like).getElementType());
  return n.constant(
      DenseElementsAttr::get(t, n.b.getFloatAttr(t.getElementType(), v)));
}

/// Elementwise builders for compositions; a failure (operands that do not
/// broadcast) has been reported against the node and sticks.
struct Compose {
  NodeImporter &n;
  bool failed = false;

  template <typename OpTy> Value bin(Value a, Value b) {
    if (failed || !a || !b)
      return failed = true, Value();
    auto r = n.createInferred<OpTy>(a, b);
    if (mlir::failed(r))
      return failed = true, Value();
    return *r;
  }
  template <typename OpTy> Value un(Value a) {
    if (failed || !a)
      return failed = true, Value();
    auto r = n.create<OpTy>(a.getType(), a);
    if (mlir::failed(r))
      return failed = true, Value();
    return *r;
  }
  Value c(Value like, double v) { return scalarLike(n, like, v); }
  Value positive(Value x) { return cmp<GreaterOp>(x, c(x, 0.0)); }
  template <typename OpTy> Value cmp(Value a, Value b) {
    if (failed)
      return Value();
    std::string why;
    auto t = inferBinaryOpType(a.getType(), b.getType(), broadcastShapes, why);
    if (!t)
      return n.error() << why, failed = true, Value();
    auto r = n.create<OpTy>(RankedTensorType::get(t.getShape(), n.b.getI1Type()),
                            a, b);
    return mlir::failed(r) ? (failed = true, Value()) : *r;
  }
  Value where(Value cond, Value a, Value b) {
    if (failed)
      return Value();
    std::string why;
    auto shape = broadcastShapes(n.typeOf(cond).getShape(),
                                 n.typeOf(a).getShape(), why);
    if (shape)
      shape = broadcastShapes(*shape, n.typeOf(b).getShape(), why);
    if (!shape)
      return n.error() << why, failed = true, Value();
    auto r = n.create<WhereOp>(withShape(n.typeOf(a), *shape), cond, a, b);
    return mlir::failed(r) ? (failed = true, Value()) : *r;
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (failed || !v)
      return failed = true, Value();
    auto r = mlir::tp::reshape(n, v, shape);
    return mlir::failed(r) ? (failed = true, Value()) : *r;
  }
  LogicalResult emit(Value v) {
    if (failed || !v)
      return failure();
    n.outputs.push_back(v);
    return success();
  }
};

} // namespace mlir::tp

#endif // TP_LIB_IMPORT_COMPOSE_H
