//===- LinalgToLoops.cpp - the tp-linalg-to-loops pass --------------------===//
#include "tp/Conversion/Passes.h"
#include "FillBefore.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPLINALGTOLOOPS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Chunks enough to share among a machine's threads with little
/// imbalance: 16 split over 2 or 4 threads evenly, 17 over 2 at most 6% off.
constexpr int64_t kMinParallelTrips = 16;
/// At most this many iterations per parallel iteration (64 KiB of f32): a
/// row that stays in the core's cache from one nest to the next once
/// tp-fuse-parallel-loops runs a softmax's or a norm's nests row by row.
constexpr int64_t kMaxRowIterations = 16384;

/// How many of the op's outer loops run in parallel: leading parallel dims
/// until they make kMinParallelTrips iterations and leave at most
/// kMaxRowIterations inside, but never the innermost of several, which
/// stays a constant-bound loop for the vectorizer; none where the whole
/// nest runs fewer than `minIterations` times (a fork would cost more than
/// it saves) or a shape is not static. No more dims than that: a loop
/// coalesced from several recovers each index with a division per
/// iteration.
static unsigned parallelLoopCount(linalg::LinalgOp op, int64_t minIterations) {
  if (minIterations <= 0)
    return 0;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
    return 0;
  int64_t iterations = 1;
  for (int64_t r : ranges)
    iterations *= r;
  if (iterations < minIterations)
    return 0;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned candidates = ranges.size() > 1 ? ranges.size() - 1 : 1;
  unsigned count = 0;
  int64_t trips = 1, inner = iterations;
  while (count < candidates &&
         (trips < kMinParallelTrips || inner > kMaxRowIterations) &&
         iterators[count] == utils::IteratorType::parallel) {
    trips *= ranges[count];
    inner /= ranges[count++];
  }
  return trips > 1 ? count : 0;
}

/// A reduction whose parallel dims all come first and index its output one
/// to one (a row's max or sum, a norm's statistics).
static bool isRowReduction(linalg::LinalgOp op) {
  unsigned parallel = op.getNumParallelLoops();
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      parallel == 0)
    return false;
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if ((i < parallel) != (it == utils::IteratorType::parallel))
      return false;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  return out.isProjectedPermutation() && out.getNumResults() == parallel &&
         llvm::all_of(out.getResults(), [&](AffineExpr e) {
           return cast<AffineDimExpr>(e).getPosition() < parallel;
         });
}

/// The fill of a row reduction's output right before it, which its loop
/// nest absorbs: each row's accumulator is set where the row starts, in
/// the same parallel iteration, instead of by a sweep of its own.
static linalg::FillOp absorbedFill(linalg::LinalgOp op) {
  linalg::FillOp fill = tp::fillOfInitBefore(op);
  return fill && isRowReduction(op) ? fill : nullptr;
}

static bool isAbsorbed(linalg::FillOp fill) {
  for (Operation *next = fill->getNextNode(); next; next = next->getNextNode())
    if (auto op = dyn_cast<linalg::LinalgOp>(next); op || !isMemoryEffectFree(next))
      return op && absorbedFill(op) == fill;
  return false;
}

/// Stores the fill's value into the output element of the row that the
/// nest's innermost parallel loop runs, before the reduction loops.
static void storeFillInRow(RewriterBase &rewriter, linalg::LinalgOp op,
                           linalg::FillOp fill, linalg::LinalgLoops &loops) {
  unsigned parallel = op.getNumParallelLoops();
  auto row = cast<scf::ForOp>(loops[parallel - 1]);
  SmallVector<Value> indices;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (AffineExpr e : out.getResults())
    indices.push_back(
        cast<scf::ForOp>(loops[cast<AffineDimExpr>(e).getPosition()])
            .getInductionVar());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(row.getBody());
  memref::StoreOp::create(rewriter, fill.getLoc(), fill.getInputs()[0],
                          op.getDpsInits()[0], indices);
  rewriter.eraseOp(fill);
}

/// The perfectly nested `loops` (outermost first, each iteration
/// independent) as one 1-D scf.parallel over their linearized range, which
/// tp-outline-loop-nests splits into one chunk per thread.
static void toParallelLoop(RewriterBase &rewriter,
                           SmallVector<scf::ForOp> loops) {
  if (loops.size() > 1)
    (void)coalesceLoops(rewriter, loops);
  scf::ForOp loop = loops.front();
  rewriter.setInsertionPoint(loop);
  auto parallel = scf::ParallelOp::create(
      rewriter, loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *body = parallel.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.mergeBlocks(loop.getBody(), body, parallel.getInductionVars());
  // The for's yield becomes the parallel loop's (empty) reduce.
  Operation *yield = body->getTerminator();
  rewriter.setInsertionPoint(yield);
  scf::ReduceOp::create(rewriter, yield->getLoc());
  rewriter.eraseOp(yield);
  rewriter.eraseOp(loop);
}

/// A reduction's accumulating op (the one that combines an element with
/// the output's block argument) may be reassociated: LLVM then sums a row
/// in vector lanes, which it otherwise adds one element at a time in
/// order (a softmax's max and sum were most of its time). Vector lanes are
/// partial sums, no less accurate than one running sum.
static void allowReassociation(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return;
  Block *body = op.getBlock();
  for (BlockArgument acc : body->getArguments().take_back(op.getNumDpsInits()))
    for (Operation *user : acc.getUsers()) {
      auto fastMath = dyn_cast<arith::ArithFastMathInterface>(user);
      if (!fastMath ||
          !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp,
               arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(user))
        continue;
      user->setAttr(fastMath.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(
                        user->getContext(), fastMath.getFastMathFlagsAttr()
                                                    .getValue() |
                                                arith::FastMathFlags::reassoc));
    }
}

/// The innermost loop of a reduction whose accumulator stays at one
/// element carries it in a register: loaded before the loop, passed
/// through iter_args, stored after. LLVM then sees a reduction it
/// vectorizes (a row's max or sum); through memory each step waits for the
/// last one's store.
static void accumulateInRegister(RewriterBase &rewriter, scf::ForOp loop) {
  // The output's indices (affine.apply of the outer loops) go out first.
  moveLoopInvariantCode(loop);
  memref::LoadOp load;
  memref::StoreOp store;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto l = dyn_cast<memref::LoadOp>(op)) {
      bool invariant = loop.isDefinedOutsideOfLoop(l.getMemRef()) &&
                       llvm::all_of(l.getIndices(), [&](Value i) {
                         return loop.isDefinedOutsideOfLoop(i);
                       });
      if (invariant && load)
        return;
      if (invariant)
        load = l;
    } else if (auto st = dyn_cast<memref::StoreOp>(op)) {
      if (store)
        return;
      store = st;
    } else if (!isMemoryEffectFree(&op)) {
      return;
    }
  }
  // The same index, or the same affine.apply of the same loops.
  auto same = [](Value a, Value b) {
    Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
    return a == b ||
           (x && y && isa<affine::AffineApplyOp>(x) &&
            OperationEquivalence::isEquivalentTo(
                x, y, OperationEquivalence::IgnoreLocations));
  };
  if (!load || !store || store.getMemRef() != load.getMemRef() ||
      !llvm::equal(store.getIndices(), load.getIndices(), same))
    return;
  // The load moves before the loop as the iter_arg's init; the stored
  // value is yielded, and stored once after the loop.
  rewriter.moveOpBefore(load, loop);
  FailureOr<LoopLikeOpInterface> carried = loop.replaceWithAdditionalYields(
      rewriter, load.getResult(), /*replaceInitOperandUsesInLoop=*/true,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{store.getValueToStore()};
      });
  if (failed(carried))
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(*carried);
  memref::StoreOp::create(rewriter, store.getLoc(),
                          (*carried)->getResults().back(), load.getMemRef(),
                          load.getIndices());
  rewriter.eraseOp(store);
}

/// A linalg op on buffers becomes its scf.for nest; the outer loops of a
/// big enough nest whose iterations are independent become one
/// scf.parallel.
struct LinalgOpToLoops : OpInterfaceRewritePattern<linalg::LinalgOp> {
  LinalgOpToLoops(MLIRContext *ctx, int64_t minParallelIterations)
      : OpInterfaceRewritePattern(ctx),
        minParallelIterations(minParallelIterations) {}
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not on buffers");
    if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation());
        fill && isAbsorbed(fill))
      return rewriter.notifyMatchFailure(op, "absorbed by its reduction");
    linalg::FillOp fill = absorbedFill(op);
    allowReassociation(op);
    unsigned parallel = parallelLoopCount(op, minParallelIterations);
    FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToLoops(rewriter, op);
    if (failed(loops))
      return rewriter.notifyMatchFailure(op, "no loop nest");
    if (fill)
      storeFillInRow(rewriter, op, fill, *loops);
    if (op.getNumLoops() > 1 &&
        op.getIteratorTypesArray().back() == utils::IteratorType::reduction)
      accumulateInRegister(rewriter, cast<scf::ForOp>(loops->back()));
    rewriter.eraseOp(op);
    if (parallel && loops->size() >= parallel) {
      SmallVector<scf::ForOp> outer;
      for (Operation *loop : ArrayRef(*loops).take_front(parallel))
        outer.push_back(cast<scf::ForOp>(loop));
      toParallelLoop(rewriter, outer);
    }
    return success();
  }
  int64_t minParallelIterations;
};

/// A copy between strided views (a slice written into or read out of a
/// bigger buffer) as a linalg.copy, so that it becomes a loop nest too:
/// finalize-memref-to-llvm would call the C runner's memrefCopy, which
/// walks such a view an element at a time with its index arithmetic (a
/// tenth of a CNN's training step). Contiguous copies stay memcpys.
static void stridedCopiesToLinalg(Operation *root) {
  auto contiguous = [](Value v) {
    auto type = cast<MemRefType>(v.getType());
    return type.getLayout().isIdentity() ||
           memref::isStaticShapeAndContiguousRowMajor(type);
  };
  SmallVector<memref::CopyOp> copies;
  root->walk([&](memref::CopyOp copy) {
    if (!contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
}

struct TPLinalgToLoopsPass
    : tp::impl::TPLinalgToLoopsBase<TPLinalgToLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    stridedCopiesToLinalg(getOperation());
    // Upstream's convert-linalg-to-loops with the same patterns, applied
    // to the linalg ops and what they create rather than to every op of
    // the function, and without region simplification: on a deep
    // training step both are linear passes over tens of thousands of ops
    // that do not change.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    RewritePatternSet patterns(ctx);
    patterns.add<LinalgOpToLoops>(ctx, minParallelIterations);
    memref::DimOp::getCanonicalizationPatterns(patterns, ctx);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
    WalkResult left = getOperation()->walk([](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return WalkResult::advance();
      op.emitError("tp-linalg-to-loops: no loop nest for this op");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
