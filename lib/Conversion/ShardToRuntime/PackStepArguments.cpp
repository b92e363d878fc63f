//===- PackStepArguments.cpp - tp-pack-step-arguments ---------------------===//
//
// The runtime calls every program as `tp_entry(void **args)`, args[i]
// pointing at the i-th memref descriptor (inputs, weights, then output
// buffers). This pass gives the step that signature before it is lowered
// to LLVM:
//
//   func.func @step(%args: !llvm.ptr) {
//     %slot0 = llvm.getelementptr %args[0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
//     %ptr0 = llvm.load %slot0 : !llvm.ptr -> !llvm.ptr
//     %desc0 = llvm.load %ptr0 : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, ...)>
//     %arg0 = builtin.unrealized_conversion_cast %desc0 : ... to memref<...>
//     ...
//
// so that convert-to-llvm converts a signature of one argument. (The
// conversion driver's replacement of each block argument asks the block
// for its op order, which the casts it inserts keep invalidating: time
// proportional to arguments times ops, 6.5 s of a 96-layer training step's
// compile.)
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPPACKSTEPARGUMENTS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

LogicalResult pack(func::FuncOp func, const LLVMTypeConverter &converter) {
  if (func.getNumResults() != 0)
    return func.emitError("internal: tp-pack-step-arguments expects the "
                          "step's results as output parameters");
  MLIRContext *ctx = func.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  Block &entry = func.front();
  unsigned n = func.getNumArguments();
  if (failed(func.insertArgument(n, ptr, DictionaryAttr::get(ctx),
                                 func.getLoc())))
    return failure();
  Value args = entry.getArgument(n);
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  for (unsigned i = 0; i < n; ++i) {
    BlockArgument arg = entry.getArgument(i);
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      return func.emitError("internal: tp-pack-step-arguments expects memref "
                            "arguments, got ")
             << arg.getType();
    Location loc = arg.getLoc();
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, args,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value descPtr = LLVM::LoadOp::create(b, loc, ptr, slot);
    Value desc =
        LLVM::LoadOp::create(b, loc, converter.convertType(type), descPtr);
    Value memref =
        UnrealizedConversionCastOp::create(b, loc, type, desc).getResult(0);
    arg.replaceAllUsesWith(memref);
  }
  llvm::BitVector erase(n + 1, true);
  erase.reset(n);
  return func.eraseArguments(erase);
}

struct TPPackStepArgumentsPass
    : tp::impl::TPPackStepArgumentsBase<TPPackStepArgumentsPass> {
  void runOnOperation() override {
    LLVMTypeConverter converter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          failed(pack(func, converter)))
        return signalPassFailure();
  }
};

} // namespace
