//===- OutlineLoopNests.cpp - the tp-outline-loop-nests pass ---------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPOUTLINELOOPNESTS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct TPOutlineLoopNestsPass
    : tp::impl::TPOutlineLoopNestsBase<TPOutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(module.getContext());
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      int count = 0;
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
        std::string name =
            (func.getSymName() + "_loop" + Twine(count++)).str();
        func::CallOp call;
        auto outlined = outlineSingleBlockRegion(
            rewriter, loop.getLoc(), region.getRegion(), name, &call);
        if (failed(outlined))
          return signalPassFailure();
        (*outlined).setPrivate();
        (*outlined)->setAttr("no_inline", rewriter.getUnitAttr());
      }
    }
  }
};

} // namespace
