//===- OnnxContractionOps.cpp - MatMul and Gemm -> tp.matmul --------------===//
//
// MatMul promotes rank-1 operands to rank 2 and drops the added dim again,
// as numpy does. Gemm stays transposes, a tp.matmul, scalings and an add,
// not one fused op, so that the plan and the sharding rules see a Linear
// layer's weight as the matmul's operand. (Einsum is OnnxEinsum.cpp.)
//
//===----------------------------------------------------------------------===//
#include "Compose.h"
#include "NodeImporter.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// numpy matmul; rank-1 operands are promoted to rank 2 and the added dim
/// removed again, as numpy does.
LogicalResult matmul(NodeImporter &n) {
  auto a = n.requiredInput(0, "A");
  auto b = n.requiredInput(1, "B");
  if (failed(a) || failed(b))
    return failure();
  Value lhs = *a, rhs = *b;
  bool lhsVec = n.typeOf(lhs).getRank() == 1, rhsVec = n.typeOf(rhs).getRank() == 1;
  if (lhsVec) {
    auto r = reshape(n, lhs, {1, n.typeOf(lhs).getDimSize(0)});
    if (failed(r))
      return failure();
    lhs = *r;
  }
  if (rhsVec) {
    auto r = reshape(n, rhs, {n.typeOf(rhs).getDimSize(0), 1});
    if (failed(r))
      return failure();
    rhs = *r;
  }
  auto y = n.createInferred<MatMulOp>(lhs, rhs);
  if (failed(y) || (!lhsVec && !rhsVec))
    return emit(n, y);
  SmallVector<int64_t> shape(n.typeOf(*y).getShape());
  if (rhsVec)
    shape.erase(shape.end() - 1);
  if (lhsVec)
    shape.erase(shape.end() - (rhsVec ? 1 : 2));
  return emit(n, reshape(n, *y, shape));
}

FailureOr<Value> transpose2d(NodeImporter &n, Value v) {
  auto t = n.typeOf(v);
  if (t.getRank() != 2) {
    n.error() << "Gemm operands must be 2-D, got " << t;
    return failure();
  }
  return n.create<TransposeOp>(withShape(t, {t.getDimSize(1), t.getDimSize(0)}),
                               v, n.b.getDenseI64ArrayAttr({1, 0}));
}

FailureOr<Value> scale(NodeImporter &n, Value v, float factor) {
  if (factor == 1.0f)
    return v;
  auto scalarType = RankedTensorType::get({}, n.typeOf(v).getElementType());
  Value s = n.constant(DenseElementsAttr::get(
      scalarType, n.b.getFloatAttr(scalarType.getElementType(), factor)));
  return n.createInferred<MulOp>(v, s);
}

/// Y = alpha * op(A) * op(B) + beta * C: transposes, a matmul and an add, so
/// that the plan and the sharding rules see the Linear layer's weight.
LogicalResult gemm(NodeImporter &n) {
  auto a = n.requiredInput(0, "A");
  auto b = n.requiredInput(1, "B");
  if (failed(a) || failed(b))
    return failure();
  Value lhs = *a, rhs = *b;
  if (n.intAttr("transA", 0)) {
    auto t = transpose2d(n, lhs);
    if (failed(t))
      return failure();
    lhs = *t;
  }
  if (n.intAttr("transB", 0)) {
    auto t = transpose2d(n, rhs);
    if (failed(t))
      return failure();
    rhs = *t;
  }
  auto y = n.createInferred<MatMulOp>(lhs, rhs);
  if (succeeded(y))
    y = scale(n, *y, n.floatAttr("alpha", 1.0f));
  if (failed(y))
    return failure();
  if (Value c = n.input(2)) {
    auto bias = scale(n, c, n.floatAttr("beta", 1.0f));
    if (failed(bias))
      return failure();
    y = n.createInferred<AddOp>(*y, *bias);
  }
  return emit(n, y);
}

/// The contraction op types.
const OnnxOpEntry kOps[] = {
    {"Gemm", 1, gemm},
    {"MatMul", 1, matmul},
};

} // namespace

ArrayRef<OnnxOpEntry> tp::contractionOnnxOps() { return kOps; }
