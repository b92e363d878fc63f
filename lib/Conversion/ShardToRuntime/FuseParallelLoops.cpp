//===- FuseParallelLoops.cpp - the tp-fuse-parallel-loops pass ------------===//
//
// A softmax is five loop nests over the same rows (scale, max, exp, sum,
// divide), a layer norm four, and each sweeps the whole tensor: a tensor
// that does not fit in the cache comes from memory five times. Adjacent
// parallel nests (tp-linalg-to-loops' scf.parallel over the same rows)
// become one nest whose iteration runs every nest's body on its row in
// turn, so that a row is read from memory once and the later bodies find
// it in the core's cache.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFUSEPARALLELLOOPS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// A 1-D parallel loop's rows: the indices its iteration stands for (the
/// delinearized induction variable, or the variable itself) and the
/// range they run over.
struct Rows {
  affine::AffineDelinearizeIndexOp delinearize;
  SmallVector<Value> indices;
  SmallVector<int64_t> shape;
};

std::optional<Rows> rowsOf(scf::ParallelOp loop) {
  if (loop.getNumLoops() != 1 || loop.getNumResults() != 0)
    return std::nullopt;
  auto constant = [](Value v) { return getConstantIntValue(v); };
  std::optional<int64_t> lb = constant(loop.getLowerBound()[0]),
                         ub = constant(loop.getUpperBound()[0]),
                         step = constant(loop.getStep()[0]);
  if (!lb || !ub || !step || *lb != 0 || *step != 1)
    return std::nullopt;
  Value iv = loop.getInductionVars()[0];
  Rows rows;
  auto d = dyn_cast<affine::AffineDelinearizeIndexOp>(loop.getBody()->front());
  if (d && d.getLinearIndex() == iv && iv.hasOneUse() &&
      d.getDynamicBasis().empty()) {
    rows.delinearize = d;
    rows.indices = llvm::to_vector_of<Value>(d.getResults());
    rows.shape = llvm::to_vector(d.getStaticBasis());
  } else {
    rows.indices = {iv};
    rows.shape = {*ub};
  }
  return rows;
}

/// A load or store in a nest's body.
struct Access {
  Value memref;
  ValueRange indices;
  bool write;
};

/// The loads and stores of `loop`'s body; none if it touches memory any
/// other way (a call, a copy).
std::optional<SmallVector<Access>> accessesOf(scf::ParallelOp loop) {
  SmallVector<Access> accesses;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      accesses.push_back({load.getMemRef(), load.getIndices(), false});
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      accesses.push_back({store.getMemRef(), store.getIndices(), true});
    else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
             !isMemoryEffectFree(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return accesses;
}

/// The buffer a memref views; every function argument counts as one
/// buffer (the caller's buffers may be views of one another).
Value bufferOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return isa<BlockArgument>(v) ? Value() : v;
}

/// Whether running `second`'s body right after `first`'s, row by row, is
/// what running `first` then `second` does: every buffer one of them
/// writes and the other touches is touched, in both, through one view and
/// only within the iteration's own row (the view's leading indices are the
/// row's).
bool rowLocal(scf::ParallelOp first, const Rows &firstRows,
              scf::ParallelOp second, const Rows &secondRows) {
  std::optional<SmallVector<Access>> a = accessesOf(first),
                                     b = accessesOf(second);
  if (!a || !b)
    return false;
  DenseMap<Value, std::pair<bool, bool>> written; // buffer -> {in a, in b}
  for (auto [accesses, inFirst] : {std::pair(&*a, true), std::pair(&*b, false)})
    for (const Access &x : *accesses) {
      auto &w = written[bufferOf(x.memref)];
      (inFirst ? w.first : w.second) |= x.write;
    }
  auto touches = [](ArrayRef<Access> accesses, Value buffer) {
    return llvm::any_of(accesses, [&](const Access &x) {
      return bufferOf(x.memref) == buffer;
    });
  };
  for (auto &[buffer, w] : written) {
    bool shared = (w.first && touches(*b, buffer)) ||
                  (w.second && touches(*a, buffer));
    if (!shared)
      continue;
    Value view;
    for (auto [accesses, rows] :
         {std::pair(&*a, &firstRows), std::pair(&*b, &secondRows)})
      for (const Access &x : *accesses) {
        if (bufferOf(x.memref) != buffer)
          continue;
        if (view && x.memref != view)
          return false;
        view = x.memref;
        if (x.indices.size() < rows->indices.size() ||
            !llvm::equal(x.indices.take_front(rows->indices.size()),
                         rows->indices))
          return false;
      }
  }
  return true;
}

/// Ops between two nests that may move out of the way: allocations and
/// ops that touch no memory go before the first, frees after the second.
bool movable(Operation *op) {
  return isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op) ||
         isMemoryEffectFree(op);
}

/// `second`'s body appended to `first`'s, on the same row indices; the
/// ops between them moved out of the way first.
void fuse(RewriterBase &rewriter, scf::ParallelOp first, const Rows &firstRows,
          scf::ParallelOp second, const Rows &secondRows,
          ArrayRef<Operation *> between) {
  for (Operation *op : between) {
    if (isa<memref::DeallocOp>(op))
      rewriter.moveOpAfter(op, second);
    else
      rewriter.moveOpBefore(op, first);
  }
  Block *body = first.getBody();
  if (secondRows.delinearize) {
    rewriter.replaceOp(secondRows.delinearize, firstRows.indices);
  }
  rewriter.eraseOp(body->getTerminator());
  rewriter.mergeBlocks(second.getBody(), body, first.getInductionVars());
  first->setLoc(rewriter.getFusedLoc({first.getLoc(), second.getLoc()}));
  rewriter.eraseOp(second);
}

struct TPFuseParallelLoopsPass
    : tp::impl::TPFuseParallelLoopsBase<TPFuseParallelLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](Block *block) {
      scf::ParallelOp current;
      std::optional<Rows> currentRows;
      SmallVector<Operation *> between;
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        auto loop = dyn_cast<scf::ParallelOp>(op);
        if (!loop) {
          if (current && !movable(&op))
            current = nullptr;
          between.push_back(&op);
          continue;
        }
        std::optional<Rows> rows = rowsOf(loop);
        if (current && rows && rows->shape == currentRows->shape &&
            rowLocal(current, *currentRows, loop, *rows)) {
          fuse(rewriter, current, *currentRows, loop, *rows, between);
        } else {
          current = rows ? loop : nullptr;
          currentRows = rows;
        }
        between.clear();
      }
    });
  }
};

} // namespace
