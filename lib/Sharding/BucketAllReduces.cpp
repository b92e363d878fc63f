//===- BucketAllReduces.cpp - the tp-bucket-all-reduces pass ---------------===//
//
// DDP's gradient buckets, done on the per-device program: all_reduces over
// the same mesh axes, of the same element type and reduction, are combined
// into one all_reduce of their concatenation, up to a size cap, as long as
// nothing between them reads one of their results. In a training step the
// weight gradients' data-parallel all_reduces are read only by the
// optimizer update, so they fill buckets; the forward's all_reduces, read
// right away, stay alone. A pipeline stage's sends and recvs end buckets.
//
//===----------------------------------------------------------------------===//
#include "tp/Sharding/Padding.h"
#include "tp/Sharding/Passes.h"
#include "tp/Sharding/Sharding.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_TPBUCKETALLREDUCES
#include "tp/Sharding/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

constexpr llvm::StringLiteral kBucketAttr = "tp.bucket";

int64_t bytesOf(shard::AllReduceOp op) { return staticBytes(op.getType()); }

/// Replaces the bucket's all_reduces by one over their flattened
/// concatenation, placed after the last of them. Ops between them that read
/// a bucketed result (directly or not) move after it, in order.
void fuse(ArrayRef<shard::AllReduceOp> bucket, int index) {
  shard::AllReduceOp first = bucket.front(), last = bucket.back();
  DenseSet<Operation *> members, moved;
  for (shard::AllReduceOp op : bucket)
    members.insert(op);
  SmallVector<Operation *> dependents;
  for (Operation *op = first->getNextNode(); op != last.getOperation();
       op = op->getNextNode()) {
    if (members.contains(op))
      continue;
    if (llvm::any_of(op->getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && (members.contains(def) || moved.contains(def));
        })) {
      moved.insert(op);
      dependents.push_back(op);
    }
  }
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  MLIRContext *ctx = b.getContext();
  Location loc = NameLoc::get(StringAttr::get(
      ctx, "gradient bucket " + std::to_string(index) + " (" +
               std::to_string(bucket.size()) + " all_reduces)"));
  Type elementType =
      cast<RankedTensorType>(last.getType()).getElementType();
  SmallVector<Value> flat;
  int64_t total = 0;
  for (shard::AllReduceOp op : bucket) {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t n = type.getNumElements();
    flat.push_back(type.getRank() == 1
                       ? op.getInput()
                       : ReshapeOp::create(
                             b, loc, RankedTensorType::get({n}, elementType),
                             op.getInput()));
    total += n;
  }
  auto flatType = RankedTensorType::get({total}, elementType);
  Value joined = ConcatOp::create(b, loc, flatType, flat, 0);
  auto reduced = shard::AllReduceOp::create(
      b, loc, flatType, last.getGridAttr(), last.getGridAxesAttr(), joined,
      last.getReductionAttr());
  reduced->setAttr(kBucketAttr, b.getUnitAttr());
  // Gradients of unevenly split weights: the bucket's real elements per
  // rank are its members'.
  size_t ranks = 0;
  for (shard::AllReduceOp op : bucket)
    if (auto counts = op->getAttrOfType<DenseI64ArrayAttr>(kRealElementsAttr))
      ranks = counts.size();
  if (ranks) {
    SmallVector<int64_t> real(ranks, 0);
    for (shard::AllReduceOp op : bucket) {
      auto counts = op->getAttrOfType<DenseI64ArrayAttr>(kRealElementsAttr);
      int64_t n = cast<RankedTensorType>(op.getType()).getNumElements();
      for (size_t r = 0; r < ranks; ++r)
        real[r] += counts ? counts[r] : n;
    }
    reduced->setAttr(kRealElementsAttr, b.getDenseI64ArrayAttr(real));
  }
  int64_t offset = 0;
  Operation *anchor = nullptr;
  for (shard::AllReduceOp op : bucket) {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t n = type.getNumElements();
    Value part = SliceOp::create(
        b, loc, RankedTensorType::get({n}, elementType), reduced,
        ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{offset + n},
        ArrayRef<int64_t>{1});
    Value back = part;
    if (type.getRank() != 1)
      back = ReshapeOp::create(b, loc, type, part);
    op.getResult().replaceAllUsesWith(back);
    anchor = back.getDefiningOp();
    offset += n;
  }
  for (Operation *op : dependents) {
    op->moveAfter(anchor);
    anchor = op;
  }
  for (shard::AllReduceOp op : bucket)
    op.erase();
}

/// A float all_reduce that is not itself a bucket: its grouping key (grid,
/// mesh axes, reduction, element type).
std::optional<std::string> bucketKey(Operation *op) {
  auto ar = dyn_cast<shard::AllReduceOp>(op);
  if (!ar || ar->hasAttr(kBucketAttr))
    return std::nullopt;
  Type element = cast<RankedTensorType>(ar.getType()).getElementType();
  if (!isa<FloatType>(element))
    return std::nullopt;
  std::string key;
  llvm::raw_string_ostream os(key);
  os << ar.getGrid() << " " << ar.getGridAxesAttr() << " "
     << int(ar.getReduction()) << " " << element;
  return key;
}

/// The first bucket of more than one all_reduce, in program order: per key,
/// all_reduces join the open bucket until one depends on a bucketed result
/// or the cap is reached.
SmallVector<shard::AllReduceOp> firstBucket(Block &block, int64_t cap) {
  struct Open {
    SmallVector<shard::AllReduceOp> members;
    int64_t bytes = 0;
    DenseSet<Operation *> reached; // members and ops that read them
  };
  std::map<std::string, Open> open;
  for (Operation &op : block) {
    // A pipeline stage's send or recv ends every bucket: fusing moves the
    // ops that read a bucketed value after the bucket, which must not take
    // a send past a recv (tp-split-stages' order is what keeps the stages
    // from waiting for each other).
    if (isa<shard::SendOp, shard::RecvOp>(op)) {
      SmallVector<shard::AllReduceOp> closed;
      for (auto &[k, bucket] : open)
        if (bucket.members.size() > 1 &&
            (closed.empty() ||
             bucket.members.back()->isBeforeInBlock(closed.back())))
          closed = bucket.members;
      if (!closed.empty())
        return closed;
      open.clear();
      continue;
    }
    std::optional<std::string> key = bucketKey(&op);
    for (auto &entry : open) {
      Open &bucket = entry.second;
      if (llvm::any_of(op.getOperands(), [&](Value v) {
            return bucket.reached.contains(v.getDefiningOp());
          }))
        bucket.reached.insert(&op);
    }
    if (!key)
      continue;
    auto ar = cast<shard::AllReduceOp>(op);
    Open &bucket = open[*key];
    if (!bucket.members.empty() &&
        (bucket.reached.contains(&op) || bucket.bytes + bytesOf(ar) > cap)) {
      if (bucket.members.size() > 1)
        return bucket.members;
      bucket = Open();
    }
    bucket.members.push_back(ar);
    bucket.bytes += bytesOf(ar);
    bucket.reached.insert(&op);
  }
  // The buckets still open at the end: the earliest-ending one first.
  SmallVector<shard::AllReduceOp> best;
  for (auto &[k, bucket] : open)
    if (bucket.members.size() > 1 &&
        (best.empty() || bucket.members.back()->isBeforeInBlock(best.back())))
      best = bucket.members;
  return best;
}

/// Whether `v` reaches a weight gradient the step returns (`grad_*`),
/// through the ops between a gradient's all_reduce and its result: shape
/// changes, slices and concatenations (a fused projection's parts), sums
/// (over broadcast dims, a tied weight's two uses), the data-parallel
/// mean's division, casts.
bool feedsGradientResult(Value v, func::FuncOp func, int depth = 0) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<func::ReturnOp>(user)) {
      auto name = func.getResultAttrOfType<StringAttr>(use.getOperandNumber(),
                                                       "tp.output");
      if (name && name.getValue().starts_with("grad_"))
        return true;
    } else if (depth < 8 &&
               isa<ReshapeOp, SliceOp, ConcatOp, TransposeOp, ExpandOp,
                   ReduceSumOp, AddOp, DivOp, MulOp, CastOp>(user) &&
               feedsGradientResult(user->getResult(0), func, depth + 1)) {
      return true;
    }
  }
  return false;
}

/// DDP's bf16_compress_hook: each f32 sum all_reduce of a weight gradient
/// moves bf16 (rounded before, widened after).
void compressGradientAllReduces(func::FuncOp func) {
  SmallVector<shard::AllReduceOp> gradients;
  func.walk([&](shard::AllReduceOp op) {
    auto type = cast<RankedTensorType>(op.getType());
    if (type.getElementType().isF32() &&
        op.getReduction() == shard::ReductionKind::Sum &&
        feedsGradientResult(op.getResult(), func))
      gradients.push_back(op);
  });
  for (shard::AllReduceOp op : gradients) {
    OpBuilder b(op);
    auto type = cast<RankedTensorType>(op.getType());
    auto half = type.clone(b.getBF16Type());
    Value rounded = CastOp::create(b, op.getLoc(), half, op.getInput());
    auto reduced = shard::AllReduceOp::create(
        b, op.getLoc(), half, op.getGridAttr(), op.getGridAxesAttr(), rounded,
        op.getReductionAttr());
    reduced->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    op.getResult().replaceAllUsesWith(
        CastOp::create(b, op.getLoc(), type, reduced.getResult()));
    op.erase();
  }
}

struct TPBucketAllReducesPass
    : tp::impl::TPBucketAllReducesBase<TPBucketAllReducesPass> {
  using TPBucketAllReducesBase::TPBucketAllReducesBase;

  void runOnOperation() override {
    if (gradReduceDtype != "f32" && gradReduceDtype != "bf16") {
      getOperation().emitError("tp-bucket-all-reduces: grad-reduce-dtype "
                               "must be f32 or bf16, got '")
          << gradReduceDtype << "'";
      return signalPassFailure();
    }
    if (gradReduceDtype == "bf16")
      for (auto func : getOperation().getOps<func::FuncOp>())
        if (!func.isExternal())
          compressGradientAllReduces(func);
    if (bucketMb <= 0)
      return;
    int64_t cap = int64_t(bucketMb * 1024 * 1024);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // One bucket at a time, each on the program the previous one left.
      int index = 0;
      while (true) {
        auto bucket = firstBucket(func.getBody().front(), cap);
        if (bucket.empty())
          break;
        fuse(bucket, ++index);
      }
      func.walk([](shard::AllReduceOp op) { op->removeAttr(kBucketAttr); });
    }
  }
};

} // namespace
