//===- TPShapes.cpp - ONNX shape rules shared by tp ops -------------------===//
#include "tp/Dialect/TP/IR/TPShapes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string tp::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return s;
}

SmallVector<int64_t> tp::swapLastTwo(int64_t rank) {
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

std::optional<SmallVector<int64_t>>
tp::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                    std::string &why) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align trailing dims; a missing leading dim acts as 1.
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1) {
      why = "shapes " + formatShape(lhs) + " and " + formatShape(rhs) +
            " do not broadcast: dim " + std::to_string(i) +
            " of the broadcast result would be " + std::to_string(l) +
            " and " + std::to_string(r);
      return std::nullopt;
    }
    out[i] = l == 1 ? r : l;
  }
  return out;
}

SmallVector<int64_t> tp::reducedShape(ArrayRef<int64_t> shape,
                                      ArrayRef<int64_t> axes, bool keepdims) {
  SmallVector<int64_t> out;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(axes, int64_t(d)))
      out.push_back(size);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

int64_t tp::reducedCount(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  int64_t n = 1;
  for (int64_t a : axes)
    n *= shape[a];
  return n;
}

std::optional<SmallVector<int64_t>>
tp::matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                std::string &why) {
  if (lhs.size() < 2 || rhs.size() < 2) {
    why = "operands must have rank >= 2, got " + formatShape(lhs) + " and " +
          formatShape(rhs);
    return std::nullopt;
  }
  int64_t k = lhs.back(), k2 = rhs[rhs.size() - 2];
  if (k != k2) {
    why = "contracted dims differ: " + formatShape(lhs) + " x " +
          formatShape(rhs) + " needs lhs dim -1 (" + std::to_string(k) +
          ") == rhs dim -2 (" + std::to_string(k2) + ")";
    return std::nullopt;
  }
  std::string batchWhy;
  auto batch = broadcastShapes(lhs.drop_back(2), rhs.drop_back(2), batchWhy);
  if (!batch) {
    why = "batch dims of " + formatShape(lhs) + " x " + formatShape(rhs) +
          " do not broadcast: " + batchWhy;
    return std::nullopt;
  }
  batch->push_back(lhs[lhs.size() - 2]);
  batch->push_back(rhs.back());
  return batch;
}

RankedTensorType tp::inferBinaryOpType(Type lhsType, Type rhsType,
                                       BinaryShapeFn shapeFn,
                                       std::string &why) {
  auto lhs = dyn_cast<RankedTensorType>(lhsType);
  auto rhs = dyn_cast<RankedTensorType>(rhsType);
  if (!lhs || !rhs) {
    why = "operands must be ranked tensors";
    return {};
  }
  if (lhs.getElementType() != rhs.getElementType()) {
    llvm::raw_string_ostream os(why);
    os << "operand element types differ: " << lhs.getElementType() << " vs "
       << rhs.getElementType();
    return {};
  }
  auto shape = shapeFn(lhs.getShape(), rhs.getShape(), why);
  if (!shape)
    return {};
  return RankedTensorType::get(*shape, lhs.getElementType());
}

LogicalResult tp::verifyBinaryOpType(Operation *op, BinaryShapeFn shapeFn) {
  std::string why;
  RankedTensorType inferred = inferBinaryOpType(
      op->getOperand(0).getType(), op->getOperand(1).getType(), shapeFn, why);
  if (!inferred)
    return op->emitOpError(why);
  if (inferred != op->getResult(0).getType())
    return op->emitOpError("result type ")
           << op->getResult(0).getType() << " does not match " << inferred
           << ", the type its operands give";
  return success();
}

std::optional<SmallVector<int64_t>>
tp::windowOutputShape(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                      ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                      ArrayRef<int64_t> pads, std::string &why) {
  size_t r = input.size();
  if (kernel.size() != r || strides.size() != r || dilations.size() != r ||
      pads.size() != 2 * r) {
    why = "expects " + std::to_string(r) + " kernel dims, strides and "
          "dilations and " + std::to_string(2 * r) + " pads";
    return std::nullopt;
  }
  SmallVector<int64_t> out;
  for (size_t i = 0; i < r; ++i) {
    int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    int64_t padded = input[i] + pads[i] + pads[r + i];
    if (strides[i] <= 0 || dilations[i] <= 0 || span > padded) {
      why = "spatial dim " + std::to_string(i) + ": a window of " +
            std::to_string(span) + " does not fit " + std::to_string(padded) +
            " (with padding), or a stride / dilation is not positive";
      return std::nullopt;
    }
    out.push_back((padded - span) / strides[i] + 1);
  }
  return out;
}
