//===- SeparateHeads.cpp - keep batch and heads apart after a split -------===//
//
// nn.MultiheadAttention (as torch.onnx.export writes it) reshapes each of
// q, k and v from [S, B, heads * d] to [S, B * heads, d]: the batch and the
// heads merge into one dim. Split colwise, a device holds some heads of
// every batch entry, which is not a block of the merged dim, so propagation
// would gather q, k and v whole. This rewrite keeps the two apart: the
// reshape gives [S, B, heads, d], and the ops that follow (transposes,
// scalar elementwise ops, softmax, batched matmuls) work on the two dims
// where they worked on the merged one, up to the reshape that merges the
// heads back into the hidden dim. A user it does not know reads the merged
// form again through a reshape, so the rewrite never changes what is
// computed.
//
//===----------------------------------------------------------------------===//
#include "SeparateHeads.h"

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// A value of the rewritten region: its new form, in which the old dim
/// `merged` is two dims, `merged` (batch) and `merged + 1` (heads).
struct Separated {
  Value value;
  int64_t merged;
};

/// [.., B, heads * d, ..] -> [.., B * heads, d, ..]: the dim that merges
/// B (> 1) with heads (> 1), or -1.
int64_t mergedDim(ReshapeOp r, int64_t &heads) {
  auto in = r.getInput().getType().getShape();
  auto out = r.getType().getShape();
  if (in.size() != out.size())
    return -1;
  for (size_t j = 0; j + 1 < in.size(); ++j) {
    if (in.take_front(j) != out.take_front(j) ||
        in.drop_front(j + 2) != out.drop_front(j + 2))
      continue;
    if (in[j] > 1 && out[j] % in[j] == 0 && out[j] / in[j] > 1 &&
        out[j + 1] * (out[j] / in[j]) == in[j + 1]) {
      heads = out[j] / in[j];
      return int64_t(j);
    }
  }
  return -1;
}

/// Where `to` (of a reshape of `from`) merges dims k and k + 1 of `from`
/// into its dim k, both more than 1, and keeps the dims before: k, or -1.
int64_t mergedLeadingDims(Value from, RankedTensorType to) {
  auto in = cast<RankedTensorType>(from.getType()).getShape();
  auto out = to.getShape();
  for (size_t k = 0; k + 1 < in.size() && k < out.size(); ++k) {
    if (in.take_front(k) != out.take_front(k))
      break;
    if (in[k] > 1 && in[k + 1] > 1 && out[k] == in[k] * in[k + 1])
      return int64_t(k);
  }
  return -1;
}

/// `shape` with dim `merged` (B * heads) as the two dims B, heads.
SmallVector<int64_t> separate(ArrayRef<int64_t> shape, int64_t merged,
                              int64_t heads) {
  SmallVector<int64_t> out(shape);
  out[merged] = shape[merged] / heads;
  out.insert(out.begin() + merged + 1, heads);
  return out;
}

class HeadSeparator {
public:
  explicit HeadSeparator(OpBuilder &b) : b(b) {}

  /// The reshape `r` from a projection's output, if it merges batch and
  /// heads: starts a region.
  void start(ReshapeOp r) {
    int64_t heads;
    int64_t j = mergedDim(r, heads);
    if (j < 0)
      return;
    b.setInsertionPoint(r);
    auto type = r.getType().clone(separate(r.getType().getShape(), j, heads));
    region[r.getResult()] = {ReshapeOp::create(b, r.getLoc(), type,
                                               r.getInput()),
                             j};
    replaced.push_back(r);
  }

  /// Rewrites `op`, whose operands include region values, or makes it read
  /// their merged form.
  void visit(Operation *op) {
    b.setInsertionPoint(op);
    if (!rewrite(op))
      for (OpOperand &use : op->getOpOperands())
        if (auto it = region.find(use.get()); it != region.end())
          use.set(ReshapeOp::create(b, op->getLoc(), use.get().getType(),
                                    it->second.value));
  }

  bool inRegion(Operation *op) const {
    return llvm::any_of(op->getOperands(),
                        [&](Value v) { return region.count(v); });
  }

  /// Erases the ops whose values the region replaced.
  void finish() {
    for (Operation *op : llvm::reverse(replaced))
      if (op->use_empty())
        op->erase();
  }

private:
  bool rewrite(Operation *op) {
    if (auto r = dyn_cast<ReshapeOp>(op)) {
      Value in = region.lookup(r.getInput()).value;
      // Merging the heads back into the hidden dim may merge the sequence
      // with the batch too ([S, B, heads, d] -> [S * B, h], what
      // out_proj's Gemm reads): keep those two apart as well.
      if (int64_t k = mergedLeadingDims(in, r.getType()); k >= 0) {
        auto inShape = cast<RankedTensorType>(in.getType()).getShape();
        SmallVector<int64_t> shape(inShape.take_front(k + 2));
        shape.append(r.getType().getShape().begin() + k + 1,
                     r.getType().getShape().end());
        return add(op,
                   ReshapeOp::create(b, r.getLoc(), r.getType().clone(shape),
                                     in),
                   k);
      }
      // Otherwise the region ends here, with the same result.
      Value v = ReshapeOp::create(b, r.getLoc(), r.getType(), in);
      r.getResult().replaceAllUsesWith(v);
      replaced.push_back(op);
      return true;
    }
    if (auto t = dyn_cast<TransposeOp>(op)) {
      Separated in = region.lookup(t.getInput());
      SmallVector<int64_t> perm;
      int64_t merged = -1;
      for (int64_t p : t.getPerm()) {
        if (p == in.merged) {
          merged = perm.size();
          perm.append({p, p + 1});
        } else {
          perm.push_back(p > in.merged ? p + 1 : p);
        }
      }
      auto inShape = cast<RankedTensorType>(in.value.getType()).getShape();
      SmallVector<int64_t> shape;
      for (int64_t p : perm)
        shape.push_back(inShape[p]);
      return add(op, TransposeOp::create(b, t.getLoc(),
                                         t.getType().clone(shape), in.value,
                                         b.getDenseI64ArrayAttr(perm)),
                 merged);
    }
    if (auto c = dyn_cast<CastOp>(op)) {
      Separated in = region.lookup(c.getInput());
      auto shape = cast<RankedTensorType>(in.value.getType()).getShape();
      return add(op,
                 CastOp::create(b, c.getLoc(), c.getType().clone(shape),
                                in.value),
                 in.merged);
    }
    if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
      Separated in = region.lookup(op->getOperand(0));
      int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
      if (axis == in.merged)
        return false;
      Operation *clone = b.clone(*op);
      clone->setOperand(0, in.value);
      clone->setAttr("axis", b.getI64IntegerAttr(axis > in.merged ? axis + 1
                                                                  : axis));
      clone->getResult(0).setType(in.value.getType());
      return add(op, clone->getResult(0), in.merged);
    }
    if (auto m = dyn_cast<MatMulOp>(op)) {
      // A batch dim of both operands, at the same place, or a dim of the
      // lhs other than the contracted one times a matrix (a Linear's
      // weight).
      auto lhs = region.find(m.getLhs()), rhs = region.find(m.getRhs());
      int64_t rank = m.getType().getRank();
      if (lhs == region.end())
        return false;
      Value right = m.getRhs();
      if (rhs != region.end()) {
        if (lhs->second.merged != rhs->second.merged ||
            m.getLhs().getType().getRank() != m.getRhs().getType().getRank() ||
            lhs->second.merged >= rank - 2)
          return false;
        right = rhs->second.value;
      } else if (m.getRhs().getType().getRank() != 2 ||
                 lhs->second.merged >= rank - 1) {
        return false;
      }
      // The result's element type as before (f32 for mixed precision).
      return add(op,
                 MatMulOp::create(b, m.getLoc(), lhs->second.value, right,
                                  m.getType().getElementType()),
                 lhs->second.merged);
    }
    if (isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp>(op)) {
      // Region operands alike, and others that broadcast only over the
      // dims after the merged one (a bias) or are one element (a scale).
      Separated s;
      for (Value v : op->getOperands())
        if (auto it = region.find(v); it != region.end()) {
          if (s.value && (s.merged != it->second.merged ||
                          s.value.getType() != it->second.value.getType()))
            return false;
          s = it->second;
        }
      auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
      int64_t rank = resultType.getRank();
      if (rank != cast<RankedTensorType>(s.value.getType()).getRank() - 1)
        return false;
      auto trailing = [&](Value v) {
        return cast<RankedTensorType>(v.getType()).getRank() <
               rank - s.merged;
      };
      for (Value v : op->getOperands())
        if (!region.count(v) && !trailing(v) &&
            cast<RankedTensorType>(v.getType()).getNumElements() != 1)
          return false;
      // Right-aligned broadcasting reads them as before; a one-element
      // tensor of higher rank becomes rank 0.
      SmallVector<Value> operands;
      for (Value v : op->getOperands()) {
        auto type = cast<RankedTensorType>(v.getType());
        if (auto it = region.find(v); it != region.end())
          operands.push_back(it->second.value);
        else if (trailing(v))
          operands.push_back(v);
        else
          operands.push_back(ReshapeOp::create(b, op->getLoc(),
                                               type.clone(ArrayRef<int64_t>{}),
                                               v));
      }
      Operation *clone = b.clone(*op);
      clone->setOperands(operands);
      clone->getResult(0).setType(resultType.clone(
          cast<RankedTensorType>(s.value.getType()).getShape()));
      return add(op, clone->getResult(0), s.merged);
    }
    return false;
  }

  bool add(Operation *old, Value value, int64_t merged) {
    region[old->getResult(0)] = {value, merged};
    replaced.push_back(old);
    return true;
  }

  OpBuilder &b;
  llvm::DenseMap<Value, Separated> region;
  SmallVector<Operation *> replaced;
};

} // namespace

void mlir::tp::separateMergedHeads(func::FuncOp func,
                                   ArrayRef<Value> projections) {
  OpBuilder b(func.getContext());
  HeadSeparator separator(b);
  for (Value p : projections)
    for (Operation *u : llvm::make_early_inc_range(p.getUsers()))
      if (auto r = dyn_cast<ReshapeOp>(u))
        separator.start(r);
  // Block order is an order of the dataflow: every operand is rewritten
  // before its users.
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops)
    if (separator.inRegion(op))
      separator.visit(op);
  separator.finish();
}
