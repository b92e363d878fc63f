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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPEXPANDARITH
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// f32 -> bf16, rounded to nearest even, as upstream's expansion but
/// without its select on the narrowed lanes: LLVM's x86 back end
/// scalarizes a select of i16 lanes under a float compare's mask (one
/// conversion took 10x a copy's time). A NaN gets its quiet bit set and no
/// rounding bias (so it cannot carry into the exponent), as the hardware's
/// conversion (VCVTNEPS2BF16) does: NaN stays NaN with its sign, and
/// PyTorch's canonical NaN (0x7FC00000) becomes its 0x7FC0.
struct TruncFToBF16 : OpRewritePattern<arith::TruncFOp> {
  TruncFToBF16(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getIn().getType(), out = op.getType();
    if (!getElementTypeOrSelf(in).isF32() ||
        !getElementTypeOrSelf(out).isBF16())
      return failure();
    Location loc = op.getLoc();
    auto like = [&](Type element) -> Type {
      if (auto v = dyn_cast<VectorType>(in))
        return v.clone(element);
      return element;
    };
    Type i32 = like(rewriter.getI32Type()), i16 = like(rewriter.getI16Type());
    auto constant = [&](int64_t v) -> Value {
      TypedAttr value = rewriter.getI32IntegerAttr(v);
      if (auto vector = dyn_cast<VectorType>(i32))
        value = DenseElementsAttr::get(vector, value);
      return arith::ConstantOp::create(rewriter, loc, value);
    };
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, op.getIn());
    // 1 for a NaN, 0 otherwise.
    Value nan = arith::ExtUIOp::create(
        rewriter, loc, i32,
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO,
                              op.getIn(), op.getIn()));
    // The bias 0x7FFF + (bit 16) rounds to nearest, ties to even; a NaN's
    // is shifted out (0) and its quiet bit (22) set.
    Value lsb = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, bits, constant(16)),
        constant(1));
    Value bias = arith::ShRUIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, lsb, constant(0x7FFF)),
        arith::ShLIOp::create(rewriter, loc, nan, constant(4)));
    Value quiet = arith::OrIOp::create(
        rewriter, loc, bits,
        arith::ShLIOp::create(rewriter, loc, nan, constant(22)));
    Value rounded = arith::AddIOp::create(rewriter, loc, quiet, bias);
    Value high = arith::TruncIOp::create(
        rewriter, loc, i16,
        arith::ShRUIOp::create(rewriter, loc, rounded, constant(16)));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, out, high);
    return success();
  }
};

struct TPExpandArithPass : tp::impl::TPExpandArithBase<TPExpandArithPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    patterns.add<TruncFToBF16>(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
