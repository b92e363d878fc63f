//===- BufferizeStepSignature.cpp - tp-bufferize-step-signature -----------===//
//
// One-shot module bufferization records, for every function, which of its
// tensor results may alias or equal which of its tensor arguments, testing
// every pair: a training step takes thousands of weights and returns their
// updates, and that product grew with the square of depth. Only callers
// read it, and nothing calls the step. This pass gives the public
// functions the buffer signature one-shot would give them, so that
// one-shot bufferizes their bodies and calls but has no boundary to
// relate:
//
//   func @step(%w: tensor<4xf32>) -> tensor<4xf32> { ... return %u }
// becomes
//   func @step(%w: memref<4xf32>) -> memref<4xf32> {
//     %t = bufferization.to_tensor %w restrict writable
//     ...
//     %b = bufferization.to_buffer %u
//     return %b
//   }
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPBUFFERIZESTEPSIGNATURE
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The identity-layout buffer of a tensor type; null for other types.
MemRefType bufferTypeOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getEncoding())
    return nullptr;
  return MemRefType::get(tensor.getShape(), tensor.getElementType());
}

void bufferizeSignature(func::FuncOp func) {
  Block &entry = func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  UnitAttr unit = b.getUnitAttr();
  SmallVector<Type> inputs, results;
  for (BlockArgument arg : entry.getArguments()) {
    Type type = arg.getType();
    MemRefType buffer = bufferTypeOf(type);
    if (!buffer) {
      inputs.push_back(type);
      continue;
    }
    arg.setType(buffer);
    auto tensor = bufferization::ToTensorOp::create(b, arg.getLoc(), type, arg,
                                                    /*restrict=*/unit,
                                                    /*writable=*/unit);
    arg.replaceAllUsesExcept(tensor, tensor);
    inputs.push_back(buffer);
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  b.setInsertionPoint(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    Type type = operand.get().getType();
    MemRefType buffer = bufferTypeOf(type);
    if (!buffer) {
      results.push_back(type);
      continue;
    }
    operand.set(bufferization::ToBufferOp::create(b, ret.getLoc(), buffer,
                                                  operand.get()));
    results.push_back(buffer);
  }
  func.setType(FunctionType::get(func.getContext(), inputs, results));
}

struct TPBufferizeStepSignaturePass
    : tp::impl::TPBufferizeStepSignatureBase<TPBufferizeStepSignaturePass> {
  void runOnOperation() override {
    // A function something calls keeps its tensors: its callers bufferize
    // against its boundary.
    llvm::StringSet<> called;
    getOperation().walk(
        [&](func::CallOp call) { called.insert(call.getCallee()); });
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // A step of several blocks (none of tp's) is left to one-shot.
      if (!func.isPublic() || func.isExternal() ||
          called.contains(func.getSymName()) ||
          !func.getBody().hasOneBlock())
        continue;
      bufferizeSignature(func);
    }
  }
};

} // namespace
