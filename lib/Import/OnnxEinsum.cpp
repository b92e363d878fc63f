//===- OnnxEinsum.cpp - ONNX Einsum as transposes, sums and a matmul -------===//
//
// One or two operands, each label at most once per operand, an explicit or
// implicit output: labels only one operand has and the output lacks are
// summed away first; two operands become one batched tp.matmul
// [batch, free(A), contracted] x [batch, contracted, free(B)]; a transpose
// gives the output's order. Everything stays in ops that shard and
// differentiate.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// An operand with one label per dim.
struct Labeled {
  Value value;
  std::string labels;
};

/// Sums away the dims whose label is not in `keep`.
FailureOr<Labeled> sumAllBut(NodeImporter &n, Labeled in, StringRef keep) {
  SmallVector<int64_t> axes;
  std::string kept;
  for (auto [d, l] : llvm::enumerate(in.labels))
    (keep.contains(l) ? kept.push_back(l) : axes.push_back(int64_t(d)));
  if (axes.empty())
    return in;
  auto sum = reduceOver<ReduceSumOp>(n, in.value, axes, false);
  if (failed(sum))
    return failure();
  return Labeled{*sum, kept};
}

/// `in` with its dims in the order of `order` (a permutation of its labels).
FailureOr<Value> permute(NodeImporter &n, const Labeled &in, StringRef order) {
  if (in.labels == order)
    return in.value;
  RankedTensorType type = n.typeOf(in.value);
  SmallVector<int64_t> perm, shape;
  for (char l : order) {
    int64_t d = in.labels.find(l);
    perm.push_back(d);
    shape.push_back(type.getDimSize(d));
  }
  return n.create<TransposeOp>(
      RankedTensorType::get(shape, type.getElementType()), in.value,
      n.b.getDenseI64ArrayAttr(perm));
}

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t p = 1;
  for (int64_t s : sizes)
    p *= s;
  return p;
}

} // namespace

LogicalResult mlir::tp::importEinsum(NodeImporter &n) {
  std::string equation = n.stringAttr("equation", "");
  equation.erase(llvm::remove_if(equation, llvm::isSpace), equation.end());
  auto [lhs, rhs] = StringRef(equation).split("->");
  bool explicitOutput = StringRef(equation).contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != n.inputs.size() || terms.empty() || terms.size() > 2)
    return n.error() << "equation '" << equation << "' has " << terms.size()
                     << " operand(s) for " << n.inputs.size()
                     << " input(s); tp imports Einsum of 1 or 2 operands";
  if (equation.find("...") != std::string::npos)
    return n.error() << "equation '" << equation
                     << "': ellipses (...) are not supported";

  SmallVector<Labeled> operands;
  llvm::StringMap<int64_t> sizes;
  for (auto [i, term] : llvm::enumerate(terms)) {
    Value v = n.inputs[i];
    RankedTensorType type = n.typeOf(v);
    if (int64_t(term.size()) != type.getRank())
      return n.error() << "equation term '" << term << "' has " << term.size()
                       << " labels for input " << i << " of shape "
                       << formatShape(type.getShape());
    for (auto [d, l] : llvm::enumerate(term)) {
      if (!llvm::isAlpha(l))
        return n.error() << "equation '" << equation << "': '" << l
                         << "' is not a label";
      if (term.count(l) > 1)
        return n.error() << "equation '" << equation << "': label '" << l
                         << "' repeats within an operand (diagonals are not "
                            "supported)";
      auto [it, fresh] = sizes.try_emplace(StringRef(&l, 1), type.getDimSize(d));
      if (!fresh && it->second != type.getDimSize(d))
        return n.error() << "equation '" << equation << "': label '" << l
                         << "' is " << it->second << " and "
                         << type.getDimSize(d);
    }
    operands.push_back({v, term.str()});
  }
  // Implicit output: the labels that appear once, in alphabetical order.
  std::string out = rhs.str();
  if (!explicitOutput) {
    for (const auto &entry : sizes)
      if (llvm::count(lhs, entry.getKey().front()) == 1)
        out.push_back(entry.getKey().front());
    llvm::sort(out);
  }
  for (char l : out)
    if (!sizes.count(StringRef(&l, 1)))
      return n.error() << "equation '" << equation << "': output label '"
                       << l << "' is in no operand";
  auto sizeOf = [&](char l) { return sizes.lookup(StringRef(&l, 1)); };

  // Labels an operand alone has and the output lacks are summed first.
  for (unsigned i = 0; i < operands.size(); ++i) {
    std::string keep = out;
    if (operands.size() == 2)
      keep += operands[1 - i].labels;
    auto summed = sumAllBut(n, operands[i], keep);
    if (failed(summed))
      return failure();
    operands[i] = *summed;
  }
  if (operands.size() == 1) {
    auto y = permute(n, operands[0], out);
    if (failed(y))
      return failure();
    n.outputs.push_back(*y);
    return success();
  }

  // [batch, free(A), contracted] x [batch, contracted, free(B)].
  const std::string &a = operands[0].labels, &b = operands[1].labels;
  std::string batch, freeA, freeB, contracted;
  for (char l : a)
    (b.find(l) == std::string::npos ? freeA
     : out.find(l) != std::string::npos ? batch
                                        : contracted)
        .push_back(l);
  for (char l : b)
    if (a.find(l) == std::string::npos)
      freeB.push_back(l);
  auto sizesOf = [&](StringRef labels) {
    SmallVector<int64_t> s;
    for (char l : labels)
      s.push_back(sizeOf(l));
    return s;
  };
  int64_t B = product(sizesOf(batch)), M = product(sizesOf(freeA)),
          N = product(sizesOf(freeB)), K = product(sizesOf(contracted));
  auto lhsT = permute(n, operands[0], batch + freeA + contracted);
  auto rhsT = permute(n, operands[1], batch + contracted + freeB);
  if (failed(lhsT) || failed(rhsT))
    return failure();
  auto lhs3 = reshape(n, *lhsT, {B, M, K});
  auto rhs3 = reshape(n, *rhsT, {B, K, N});
  if (failed(lhs3) || failed(rhs3))
    return failure();
  auto product3 = n.createInferred<MatMulOp>(*lhs3, *rhs3);
  if (failed(product3))
    return failure();
  std::string labels = batch + freeA + freeB;
  auto y = reshape(n, *product3, sizesOf(labels));
  if (failed(y))
    return failure();
  auto ordered = permute(n, {*y, labels}, out);
  if (failed(ordered))
    return failure();
  n.outputs.push_back(*ordered);
  return success();
}
