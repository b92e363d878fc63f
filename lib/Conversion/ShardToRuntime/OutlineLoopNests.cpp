//===- OutlineLoopNests.cpp - the tp-outline-loop-nests pass ---------------===//
#include "tp/Conversion/Passes.h"
#include "tp/Runtime/RuntimeABI.h"
#include "Outlining.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPOUTLINELOOPNESTS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// What is left of a function whose nests went out of line is one basic
/// block of allocations and calls. LLVM's code generator schedules a block
/// as one piece, in time that grows faster than the block (minutes for a
/// 32-layer training step), and gains nothing measurable on it: such a
/// function is compiled unoptimized (optnone). Not if a loop stayed in it.
/// (An OpenMP region of calls is not a loop here: its body becomes a
/// function of its own when it is translated to LLVM IR.)
static void leaveUnoptimizedIfStraightLine(func::FuncOp func) {
  bool loops = func.walk([](Operation *op) {
                     if (isa<omp::ParallelOp>(op))
                       return WalkResult::skip();
                     return isa<LoopLikeOpInterface>(op)
                                ? WalkResult::interrupt()
                                : WalkResult::advance();
                   }).wasInterrupted();
  if (loops || !func.getBody().hasOneBlock())
    return;
  Builder b(func.getContext());
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline"),
                                               b.getStringAttr("optnone")}));
}

/// The buffer a memref is a view of: an allocation, a constant global, or
/// null where that is not known here (a function argument: the caller's
/// buffers may be one another's views).
static Operation *bufferRoot(Value v, SymbolTable &symbols) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return def;
    if (auto global = dyn_cast<memref::GetGlobalOp>(def)) {
      auto decl = symbols.lookup<memref::GlobalOp>(global.getName());
      return decl && decl.getConstant() ? decl.getOperation() : nullptr;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    v = view.getViewSource();
  }
  return nullptr;
}

/// A nest's buffer argument is `llvm.noalias` where, at every call, it is
/// a view of an allocation (or constant) that no other argument views.
/// Without it LLVM must assume a nest's stores may change what it loads
/// next: the SLP vectorizer leaves a short unrolled row (im2col's) as
/// scalar loads and stores, and the loop vectorizer guards every loop
/// with runtime overlap checks.
static void markNoAliasArguments(ModuleOp module) {
  SymbolTable symbols(module);
  DenseMap<Operation *, SmallVector<bool>> distinct;
  for (auto [call, callee] : tp::loopNestCalls(module)) {
    auto it = distinct.try_emplace(
        callee, SmallVector<bool>(call.getNumOperands(), true)).first;
    SmallVector<Operation *> roots;
    for (Value operand : call.getOperands())
      roots.push_back(isa<MemRefType>(operand.getType())
                            ? bufferRoot(operand, symbols)
                            : nullptr);
    for (auto [i, root] : llvm::enumerate(roots))
      if (!root || llvm::count(roots, root) > 1)
        it->second[i] = false;
  }
  for (auto &[op, args] : distinct) {
    auto callee = cast<func::FuncOp>(op);
    for (auto [i, noAlias] : llvm::enumerate(args))
      if (noAlias)
        callee.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                          UnitAttr::get(module.getContext()));
  }
}

/// A 1-D `scf.parallel` (tp-linalg-to-loops' independent outer loops) as
/// one contiguous chunk of its range per thread: an OpenMP parallel loop of
/// as many iterations as the runtime gives this rank threads
/// (`tprt_loop_threads`), each running an `scf.for` over its chunk, which
/// is then outlined as any nest. The outlined nest keeps its inner loops
/// whole (vectorized as before) and its `noalias` arguments: OpenMP's own
/// outlining of the region passes captured pointers without them.
static scf::ForOp toThreadChunks(RewriterBase &rewriter,
                                 scf::ParallelOp parallel) {
  Location loc = parallel.getLoc();
  auto module = parallel->getParentOfType<ModuleOp>();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(parallel);
  Value lb = parallel.getLowerBound()[0], ub = parallel.getUpperBound()[0],
        step = parallel.getStep()[0];
  func::FuncOp threadsFn = tp::declareRuntimeFunction(
      module, tp::kLoopThreadsFn, {}, {rewriter.getI64Type()});
  Value threads = func::CallOp::create(rewriter, loc, threadsFn).getResult(0);
  Value threadCount = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getIndexType(), threads);
  Value trip = arith::CeilDivUIOp::create(
      rewriter, loc, arith::SubIOp::create(rewriter, loc, ub, lb), step);
  Value chunk = arith::MulIOp::create(
      rewriter, loc,
      arith::CeilDivUIOp::create(rewriter, loc, trip, threadCount), step);
  Value numThreads =
      arith::TruncIOp::create(rewriter, loc, rewriter.getI32Type(), threads);

  auto team = omp::ParallelOp::create(rewriter, loc);
  team.getNumThreadsMutable().assign(numThreads);
  rewriter.createBlock(&team.getRegion());
  auto wsloop = omp::WsloopOp::create(rewriter, loc);
  omp::TerminatorOp::create(rewriter, loc);
  rewriter.createBlock(&wsloop.getRegion());
  auto chunks = omp::LoopNestOp::create(
      rewriter, loc, /*collapse_num_loops=*/1, ValueRange{lb}, ValueRange{ub},
      ValueRange{chunk}, /*loop_inclusive=*/false, /*tile_sizes=*/nullptr);
  Block *body = rewriter.createBlock(&chunks.getRegion(), {},
                                     {rewriter.getIndexType()}, {loc});
  Value lo = body->getArgument(0);
  Value hi = arith::MinSIOp::create(
      rewriter, loc, arith::AddIOp::create(rewriter, loc, lo, chunk), ub);
  auto loop = scf::ForOp::create(rewriter, loc, lo, hi, step);
  omp::YieldOp::create(rewriter, loc);
  // The parallel loop's body, but its reduce, runs over the chunk.
  Block *loopBody = loop.getBody();
  rewriter.eraseOp(loopBody->getTerminator());
  rewriter.mergeBlocks(parallel.getBody(), loopBody,
                       {loop.getInductionVar()});
  Operation *reduce = loopBody->getTerminator();
  rewriter.setInsertionPoint(reduce);
  scf::YieldOp::create(rewriter, reduce->getLoc());
  rewriter.eraseOp(reduce);
  rewriter.eraseOp(parallel);
  return loop;
}

/// The loop nests of `func` to outline, in order: its top-level scf.for
/// nests, and each 1-D scf.parallel's chunk loop (toThreadChunks).
static SmallVector<scf::ForOp> nestsToOutline(RewriterBase &rewriter,
                                              func::FuncOp func) {
  SmallVector<scf::ForOp> nests;
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (loop->getResults().empty())
        nests.push_back(loop);
    } else if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
      if (parallel.getNumLoops() == 1 && parallel->getResults().empty())
        nests.push_back(toThreadChunks(rewriter, parallel));
    }
  }
  return nests;
}

struct TPOutlineLoopNestsPass
    : tp::impl::TPOutlineLoopNestsBase<TPOutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(module.getContext());
    // One function per distinct nest: a model's repeated layers compile once.
    tp::EquivalentFunctions nests;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      int count = 0;
      bool outlinedAny = false;
      for (scf::ForOp loop : nestsToOutline(rewriter, func)) {
        // The nest, alone in a region, outlined; the call stays behind.
        rewriter.setInsertionPoint(loop);
        auto region = scf::ExecuteRegionOp::create(rewriter, loop.getLoc(),
                                                   TypeRange{});
        Block *block = rewriter.createBlock(&region.getRegion());
        rewriter.setInsertionPointToEnd(block);
        auto yield = scf::YieldOp::create(rewriter, loop.getLoc());
        loop->moveBefore(yield);
        tp::cloneConstantsInto(rewriter, loop, block);
        std::string name = tp::loopNestName(func, count++);
        func::CallOp call;
        auto outlined = outlineSingleBlockRegion(
            rewriter, loop.getLoc(), region.getRegion(), name, &call);
        if (failed(outlined))
          return signalPassFailure();
        // The call alone replaces its region: thousands of regions would
        // each split the function's block in scf-to-cf (quadratic).
        call->moveBefore(region);
        rewriter.eraseOp(region);
        outlinedAny = true;
        tp::keepOutOfLine(*outlined);
        func::FuncOp same = nests.lookupOrAdd(*outlined);
        if (same != *outlined) {
          call.setCallee(same.getSymName());
          rewriter.eraseOp(*outlined);
          --count;
        }
      }
      if (outlinedAny)
        leaveUnoptimizedIfStraightLine(func);
    }
    markNoAliasArguments(module);
  }
};

} // namespace
