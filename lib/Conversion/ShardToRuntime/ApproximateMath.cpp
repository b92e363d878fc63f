//===- ApproximateMath.cpp - the tp-approximate-math pass -----------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPAPPROXIMATEMATH
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

static bool approximated(StringRef opName) {
  return llvm::StringSwitch<bool>(opName)
      .Cases({"math.exp", "math.expm1", "math.log", "math.log1p", "math.log2",
              "math.erf", "math.tanh"},
             true)
      .Default(false);
}

struct TPApproximateMathPass
    : tp::impl::TPApproximateMathBase<TPApproximateMathPass> {
  void runOnOperation() override {
    // f32 only: the polynomials' coefficients are f32's.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (approximated(op->getName().getStringRef()) &&
          op->getNumResults() == 1 &&
          getElementTypeOrSelf(op->getResult(0).getType()).isF32())
        ops.push_back(op);
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
