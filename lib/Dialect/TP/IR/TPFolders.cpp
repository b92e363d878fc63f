//===- TPFolders.cpp - constant folding shared by tp ops ------------------===//
#include "tp/Dialect/TP/IR/TPFolders.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include <cmath>

using namespace mlir;
using namespace mlir::tp;

// Folding creates new attributes; keep it to shape-sized tensors.
static constexpr int64_t kMaxFoldElements = 1 << 12;

namespace {
/// Reads element `i` of a constant that either has the result's shape or a
/// single element.
template <typename T> struct ElementReader {
  SmallVector<T> values;
  T operator[](int64_t i) const {
    return values.size() == 1 ? values[0] : values[i];
  }
};
} // namespace

template <typename T>
static std::optional<ElementReader<T>> read(DenseElementsAttr attr,
                                            int64_t numResultElements) {
  int64_t n = attr.getNumElements();
  if (n != 1 && n != numResultElements)
    return std::nullopt;
  ElementReader<T> r;
  if (attr.isSplat())
    r.values.push_back(attr.getSplatValue<T>());
  else
    r.values.assign(attr.getValues<T>().begin(), attr.getValues<T>().end());
  return r;
}

static std::optional<APInt> applyInt(Operation *op, const APInt &a,
                                     const APInt &b) {
  if (isa<AddOp>(op))
    return a + b;
  if (isa<SubOp>(op))
    return a - b;
  if (isa<MulOp>(op))
    return a * b;
  if (isa<DivOp>(op))
    return b.isZero() ? std::nullopt : std::optional<APInt>(a.sdiv(b));
  if (isa<MaxOp>(op))
    return a.sge(b) ? a : b;
  if (isa<MinOp>(op))
    return a.sle(b) ? a : b;
  return std::nullopt; // Pow on integers is not folded.
}

static APFloat applyFloat(Operation *op, APFloat a, const APFloat &b) {
  if (isa<AddOp>(op))
    a.add(b, APFloat::rmNearestTiesToEven);
  else if (isa<SubOp>(op))
    a.subtract(b, APFloat::rmNearestTiesToEven);
  else if (isa<MulOp>(op))
    a.multiply(b, APFloat::rmNearestTiesToEven);
  else if (isa<DivOp>(op))
    a.divide(b, APFloat::rmNearestTiesToEven);
  else if (isa<MaxOp>(op))
    a = llvm::maximum(a, b);
  else if (isa<MinOp>(op))
    a = llvm::minimum(a, b);
  else { // PowOp
    bool lost;
    double r = std::pow(a.convertToDouble(), b.convertToDouble());
    APFloat res(r);
    res.convert(a.getSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return res;
  }
  return a;
}

OpFoldResult tp::foldBinaryOp(Operation *op, Attribute lhsAttr,
                              Attribute rhsAttr) {
  auto lhs = dyn_cast_if_present<DenseElementsAttr>(lhsAttr);
  auto rhs = dyn_cast_if_present<DenseElementsAttr>(rhsAttr);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!lhs || !rhs || type.getNumElements() > kMaxFoldElements)
    return {};
  int64_t n = type.getNumElements();
  Type elemType = type.getElementType();
  if (isa<IntegerType>(elemType)) {
    auto a = read<APInt>(lhs, n), b = read<APInt>(rhs, n);
    if (!a || !b)
      return {};
    SmallVector<APInt> out;
    for (int64_t i = 0; i < n; ++i) {
      auto v = applyInt(op, (*a)[i], (*b)[i]);
      if (!v)
        return {};
      out.push_back(*v);
    }
    return DenseElementsAttr::get(type, out);
  }
  auto a = read<APFloat>(lhs, n), b = read<APFloat>(rhs, n);
  if (!a || !b)
    return {};
  SmallVector<APFloat> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(applyFloat(op, (*a)[i], (*b)[i]));
  return DenseElementsAttr::get(type, out);
}
