//===- FoldTransposeIntoMatmul.cpp - GEMMs that read operands transposed --===//
//
// A Linear layer is exported as MatMul(x, Transpose(W)), attention as
// MatMul(q, Transpose(k)), and the backward pass multiplies by transposed
// activations and weights. Materialized, each of these transposes is a
// strided copy of a weight or activation on every step; BLAS and cuBLAS
// read either operand transposed for free. So a linalg.matmul /
// linalg.batch_matmul whose operand is a linalg.transpose of the last two
// dims (possibly behind a collapse_shape of the leading dims) reads the
// transpose's input through a transposed indexing map instead, and the
// transpose goes away once nothing else reads it. A GEMM that already
// reads that operand transposed reads the source as it is: the backward
// pass's product with the transpose of a weight that the forward pass read
// transposed would otherwise keep a transposed copy of the weight alive
// from the forward pass to the backward.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"
#include "tp/Conversion/TPToLinalg.h"
#include "tp/Dialect/TP/IR/TPShapes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// The untransposed source of `operand`, when it is a transpose of its last
/// two dims, optionally collapsed over leading dims only; the same
/// collapse is applied to the source. Null otherwise.
Value transposedSource(PatternRewriter &rewriter, Value operand,
                       llvm::SetVector<Operation *> &dead) {
  auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>();
  Value value = collapse ? collapse.getSrc() : operand;
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (!transpose)
    return {};
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t rank = perm.size();
  if (perm != ArrayRef(tp::swapLastTwo(rank)))
    return {};
  Value source = transpose.getInput();
  if (collapse) {
    // Only leading dims may merge: the last two stay dims of their own.
    auto groups = collapse.getReassociationIndices();
    if (groups.size() < 2 ||
        groups[groups.size() - 1] != ReassociationIndices{rank - 1} ||
        groups[groups.size() - 2] != ReassociationIndices{rank - 2})
      return {};
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto resultType = cast<RankedTensorType>(operand.getType());
    SmallVector<int64_t> shape(resultType.getShape());
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    source = tensor::CollapseShapeOp::create(
        rewriter, collapse.getLoc(),
        RankedTensorType::get(shape, sourceType.getElementType()), source,
        groups);
    dead.insert(collapse);
  }
  dead.insert(transpose);
  return source;
}

/// Which operands `op` reads transposed, if its maps are a GEMM's.
template <typename MatmulTy>
std::optional<std::pair<bool, bool>> gemmTransposes(MatmulTy op) {
  bool batched = std::is_same_v<MatmulTy, linalg::BatchMatmulOp>;
  for (bool a : {false, true})
    for (bool b : {false, true})
      if (op.getIndexingMapsArray() ==
          ArrayRef(tp::gemmIndexingMaps(op.getContext(), batched, a, b)))
        return std::make_pair(a, b);
  return std::nullopt;
}

template <typename MatmulTy>
struct FoldTransposeIntoMatmul : OpRewritePattern<MatmulTy> {
  using OpRewritePattern<MatmulTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulTy op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    bool batched = std::is_same_v<MatmulTy, linalg::BatchMatmulOp>;
    if (!op.hasPureTensorSemantics())
      return failure();
    // Which operands the GEMM already reads transposed (a transpose folded
    // before, or the backward pass's product with a transposed operand).
    std::optional<std::pair<bool, bool>> trans = gemmTransposes(op);
    if (!trans)
      return failure();
    // Both operands may be the same transpose: each op is erased once.
    llvm::SetVector<Operation *> dead;
    Value lhs = transposedSource(rewriter, op.getInputs()[0], dead);
    Value rhs = transposedSource(rewriter, op.getInputs()[1], dead);
    if (!lhs && !rhs)
      return failure();
    // A transposed read of a transpose reads its source as it is.
    auto folded = MatmulTy::create(
        rewriter, op.getLoc(), op.getResultTypes(),
        ValueRange{lhs ? lhs : op.getInputs()[0],
                   rhs ? rhs : op.getInputs()[1]},
        op.getOutputs());
    folded.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(
        tp::gemmIndexingMaps(ctx, batched, trans->first != bool(lhs),
                             trans->second != bool(rhs))));
    rewriter.replaceOp(op, folded->getResults());
    for (Operation *d : dead) {
      if (!d->use_empty())
        continue;
      // The transpose's tensor.empty init goes with it.
      Operation *init = nullptr;
      if (auto t = dyn_cast<linalg::TransposeOp>(d))
        init = t.getInit().getDefiningOp<tensor::EmptyOp>();
      rewriter.eraseOp(d);
      if (init && init->use_empty())
        rewriter.eraseOp(init);
    }
    return success();
  }
};

/// A transpose of a GEMM's product (a weight's gradient computed as
/// [in, out] and stored as the weight's [out, in]) is the product of the
/// operands swapped, each read the other way: (op(A) op(B))^T =
/// op(B)^T op(A)^T. The GEMM writes the transposed product itself (its
/// zero-filled init made in the transposed shape) instead of a strided
/// copy after it.
template <typename MatmulTy>
struct FoldTransposeOfMatmul : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    bool batched = std::is_same_v<MatmulTy, linalg::BatchMatmulOp>;
    int64_t rank = batched ? 3 : 2;
    auto op = transpose.getInput().template getDefiningOp<MatmulTy>();
    if (!op || !op.hasPureTensorSemantics() ||
        transpose.getPermutation() != ArrayRef(tp::swapLastTwo(rank)))
      return failure();
    // Only where nothing else reads the product (ops already dead aside).
    for (Operation *user : op->getUsers())
      if (user != transpose && !isOpTriviallyDead(user))
        return failure();
    std::optional<std::pair<bool, bool>> trans = gemmTransposes(op);
    auto fill = op.getOutputs()[0].template getDefiningOp<linalg::FillOp>();
    if (!trans || !fill || !fill.getOutputs()[0].template getDefiningOp<tensor::EmptyOp>())
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(transpose.getResult()[0].getType());
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    init = linalg::FillOp::create(rewriter, fill.getLoc(),
                                  fill.getInputs()[0], init)
               .getResult(0);
    auto swapped = MatmulTy::create(
        rewriter, loc, TypeRange{type},
        ValueRange{op.getInputs()[1], op.getInputs()[0]}, ValueRange{init});
    swapped.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(
        tp::gemmIndexingMaps(op.getContext(), batched, !trans->second,
                             !trans->first)));
    // What fed only the transpose goes with it, users first.
    SmallVector<Operation *> fed = {transpose.getInit().getDefiningOp(), op,
                                    fill, fill.getOutputs()[0].getDefiningOp()};
    rewriter.replaceOp(transpose, swapped->getResults());
    for (Operation *def : fed)
      if (def && def->use_empty())
        rewriter.eraseOp(def);
    return success();
  }
};

} // namespace

SmallVector<AffineMap, 3> tp::gemmIndexingMaps(MLIRContext *ctx, bool batched,
                                               bool transA, bool transB) {
  unsigned first = batched ? 1 : 0;
  AffineExpr m = getAffineDimExpr(first, ctx),
             n = getAffineDimExpr(first + 1, ctx),
             k = getAffineDimExpr(first + 2, ctx);
  auto operand = [&](AffineExpr rows, AffineExpr cols, bool transposed) {
    SmallVector<AffineExpr> exprs;
    if (batched)
      exprs.push_back(getAffineDimExpr(0, ctx));
    exprs.push_back(transposed ? cols : rows);
    exprs.push_back(transposed ? rows : cols);
    return AffineMap::get(first + 3, 0, exprs, ctx);
  };
  return {operand(m, k, transA), operand(k, n, transB),
          operand(m, n, false)};
}

void tp::populateFoldTransposeIntoMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldTransposeIntoMatmul<linalg::MatmulOp>,
               FoldTransposeIntoMatmul<linalg::BatchMatmulOp>>(
      patterns.getContext());
}

void tp::populateFoldTransposeOfMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldTransposeOfMatmul<linalg::MatmulOp>,
               FoldTransposeOfMatmul<linalg::BatchMatmulOp>>(
      patterns.getContext());
}
