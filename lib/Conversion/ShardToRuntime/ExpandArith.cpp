//===- ExpandArith.cpp - the tp-expand-arith pass -------------------------===//
//
// Upstream's arith-expand for the CPU's LLVM lowering, but for min and max:
// the ceil / floor divisions and bf16 conversions LLVM has no instruction
// for become integer arithmetic, while arith.maxnumf / maximumf / ... stay
// and become LLVM's maxnum / maximum intrinsics, whose reductions LLVM
// vectorizes (expanded into compares and selects, a row's max stayed one
// element at a time).
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPEXPANDARITH
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct TPExpandArithPass : tp::impl::TPExpandArithBase<TPExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
