//===- OutlineLoopNests.cpp - the tp-outline-loop-nests pass ---------------===//
#include "tp/Conversion/Passes.h"
#include "Outlining.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
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
static void leaveUnoptimizedIfStraightLine(func::FuncOp func) {
  bool loops = func.walk([](LoopLikeOpInterface) {
                     return WalkResult::interrupt();
                   }).wasInterrupted();
  if (loops || !func.getBody().hasOneBlock())
    return;
  Builder b(func.getContext());
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline"),
                                               b.getStringAttr("optnone")}));
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
      for (auto loop :
           llvm::to_vector(func.getBody().front().getOps<scf::ForOp>())) {
        if (!loop->getResults().empty())
          continue;
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
  }
};

} // namespace
