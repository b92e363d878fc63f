//===- Autocast.cpp - matmuls and convolutions on bf16 operands -----------===//
//
// torch.autocast's rule for the ops that dominate a step: the products of
// a matmul or convolution take bf16 operands (twice the hardware's f32
// rate, half the bytes) and are summed in f32; the result stays f32, so
// every other op, and the weights, keep f32. Each value is rounded once,
// however many products read it.
//
//===----------------------------------------------------------------------===//
#include "tp/Plan/Passes.h"

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::tp {
#define GEN_PASS_DEF_TPAUTOCAST
#include "tp/Plan/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isF32Tensor(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF32();
}

/// A weight argument read only by its bf16 copy becomes a bf16 argument.
void storeWeightsInBf16(func::FuncOp func) {
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    if (!func.getArgAttr(arg.getArgNumber(), "tp.param") || !arg.hasOneUse())
      continue;
    auto copy = dyn_cast<CastOp>(*arg.getUsers().begin());
    if (!copy || !copy.getType().getElementType().isBF16())
      continue;
    arg.setType(copy.getType());
    copy.getResult().replaceAllUsesWith(arg);
    copy.erase();
  }
  func.setType(FunctionType::get(func.getContext(), entry.getArgumentTypes(),
                                 func.getResultTypes()));
}

struct TPAutocastPass : tp::impl::TPAutocastBase<TPAutocastPass> {
  using Base::Base;

  void runOnOperation() override {
    if (precision == "f32")
      return;
    if (precision != "bf16") {
      getOperation().emitError("tp-autocast: precision must be f32 or bf16, "
                               "got '")
          << precision << "'";
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    Type bf16 = b.getBF16Type();
    // tp-autodiff keeps the activations of a bf16 step in bf16.
    getOperation()->setAttr("tp.precision", b.getStringAttr(precision));
    getOperation().walk([&](func::FuncOp func) {
      DenseMap<Value, Value> rounded;
      SmallVector<Operation *> bypassed;
      // The value's bf16 copy, made right after its definition (at the
      // function's start for an argument) and named after its first reader.
      // A transpose or reshape moves the copy instead: rounded before it,
      // a weight's [out, in] transpose stays a GEMM flag (no transposed
      // copy), and an activation's moves half the bytes.
      std::function<Value(Value, Location)> roundedOf = [&](Value v,
                                                           Location reader) {
        if (Value r = rounded.lookup(v))
          return r;
        auto t = cast<RankedTensorType>(v.getType());
        Operation *def = v.getDefiningOp();
        Value r;
        if (def && isa<TransposeOp, ReshapeOp>(def)) {
          bypassed.push_back(def);
          Value in = roundedOf(def->getOperand(0), reader);
          b.setInsertionPointAfter(def);
          r = moveOnto(b, def, in);
        } else {
          if (def)
            b.setInsertionPointAfter(def);
          else
            b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
          r = CastOp::create(b, reader, t.clone(bf16), v);
        }
        rounded[v] = r;
        return r;
      };
      func.walk([&](Operation *op) {
        if (!isa<MatMulOp, ConvOp>(op) || !isF32Tensor(op->getResult(0)) ||
            !llvm::all_of(op->getOperands(), isF32Tensor))
          return;
        for (OpOperand &operand : op->getOpOperands())
          operand.set(roundedOf(operand.get(), op->getLoc()));
      });
      // The f32 transposes and reshapes nothing reads any more (recorded
      // from a chain's last to its first, so erased in that order).
      for (Operation *op : bypassed)
        if (op->use_empty())
          op->erase();
      if (bf16Weights)
        storeWeightsInBf16(func);
    });
  }
};

} // namespace
