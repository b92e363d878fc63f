//===- Dropout.cpp - lower tp.dropout to a Philox linalg.generic ----------===//
//
// Each element's mask bit is drawn by Philox4x32-10 (Random123's
// philox4x32, what cuRAND and PyTorch's CUDA generator use) from a counter
// made of the element's global index, the Dropout's site and the run: no
// state but the run counter, the same bits on every mesh and in the
// backward pass. python/tp/dropout.py computes the same masks with numpy.
//
//===----------------------------------------------------------------------===//
#include "LinalgBuilders.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tp;

namespace {

// Random123's constants for philox4x32.
constexpr uint32_t kPhiloxM0 = 0xD2511F53, kPhiloxM1 = 0xCD9E8D57;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9, kPhiloxW1 = 0xBB67AE85;
constexpr int kPhiloxRounds = 10;

/// The first word of philox4x32-10(counter, key). The key is known when
/// compiling (the seed), so its schedule is constants.
Value philoxFirstWord(OpBuilder &b, Location loc, std::array<Value, 4> c,
                      uint64_t seed) {
  Type i32 = b.getI32Type();
  auto constant = [&](uint32_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, int64_t(v));
  };
  Value m0 = constant(kPhiloxM0), m1 = constant(kPhiloxM1);
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  for (int round = 0; round < kPhiloxRounds; ++round) {
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, c[2]);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]),
        constant(k0));
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]),
        constant(k1));
    c = {n0, p1.getLow(), n2, p0.getLow()};
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return c[0];
}

struct DropoutLowering : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    double ratio = op.getRatio().convertToDouble();
    // Kept when the word is at least ratio * 2^32: probability 1 - ratio.
    int64_t threshold = int64_t(std::llround(std::ldexp(ratio, 32)));
    // PyTorch scales by 1 / (1 - p) computed in the tensor's type.
    double scale = elementType.isF32() ? double(1.0f / float(1.0 - ratio))
                                       : 1.0 / (1.0 - ratio);
    ArrayRef<int64_t> global = op.getGlobalShape();
    SmallVector<int64_t> strides(global.size(), 1);
    for (int64_t d = int64_t(global.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * global[d + 1];
    uint64_t seed = uint64_t(op.getSeed());
    uint32_t site = uint32_t(op.getSite());
    bool hasOffsets = !op.getOffsets().empty();

    SmallVector<Value> inputs = {op.getInput(), op.getStep()};
    llvm::append_range(inputs, op.getOffsets());
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, inputs,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Type i64 = b.getI64Type(), i32 = b.getI32Type();
          // The element's row-major index in the whole tensor.
          Value index = arith::ConstantIntOp::create(b, loc, i64, 0);
          for (auto [d, stride] : llvm::enumerate(strides)) {
            Value i = arith::IndexCastOp::create(
                b, loc, i64, linalg::IndexOp::create(b, loc, d));
            if (hasOffsets)
              i = arith::AddIOp::create(b, loc, i, args[2 + d]);
            index = arith::AddIOp::create(
                b, loc, index,
                arith::MulIOp::create(
                    b, loc, i, arith::ConstantIntOp::create(b, loc, i64, stride)));
          }
          Value shift = arith::ConstantIntOp::create(b, loc, i64, 32);
          std::array<Value, 4> counter = {
              arith::TruncIOp::create(b, loc, i32, index),
              arith::TruncIOp::create(
                  b, loc, i32, arith::ShRUIOp::create(b, loc, index, shift)),
              arith::ConstantIntOp::create(b, loc, i32, int64_t(site)),
              arith::TruncIOp::create(b, loc, i32, args[1])};
          Value word = arith::ExtUIOp::create(
              b, loc, i64, philoxFirstWord(b, loc, counter, seed));
          Value keep = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::uge, word,
              arith::ConstantIntOp::create(b, loc, i64, threshold));
          Value scaled = arith::MulFOp::create(
              b, loc, args[0], buildScalar(b, loc, elementType, scale));
          return arith::SelectOp::create(
              b, loc, keep, scaled, buildScalar(b, loc, elementType, 0.0));
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void tp::populateDropoutLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<DropoutLowering>(patterns.getContext());
}
