//===- BarePointerCalls.cpp - tp-bare-pointer-calls -----------------------===//
//
// convert-to-llvm passes a memref across a call as its whole descriptor:
// a 3-d buffer is 9 scalars, extracted from the caller's descriptor, passed
// and rebuilt in the callee. A training step calls each layer's forward and
// backward function once per layer with ~90 buffers, so most of its LLVM IR
// was that traffic. Where every buffer type is static, the callee needs
// only the aligned pointer: MLIR's `llvm.bareptr` convention, which this
// pass turns on per function (the option of the same name turns it on for
// every function, the step included, whose arguments come from the
// runtime as descriptors).
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPBAREPOINTERCALLS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// A memref the bare-pointer convention carries whole: the callee rebuilds
/// its descriptor from the pointer and the type alone.
bool staticBuffer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return !isa<UnrankedMemRefType>(type);
  return memref.hasStaticShape() &&
         LLVMTypeConverter::canConvertToBarePtr(memref);
}

bool barePointerSignature(func::FuncOp func) {
  FunctionType type = func.getFunctionType();
  return llvm::all_of(type.getInputs(), staticBuffer) &&
         llvm::all_of(type.getResults(), staticBuffer);
}

struct BarePointerCalls
    : tp::impl::TPBarePointerCallsBase<BarePointerCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Functions something other than a direct call names (a func.constant
    // taking its address) keep the descriptor convention.
    llvm::DenseSet<StringAttr> otherwiseUsed;
    module.walk([&](Operation *op) {
      if (isa<func::CallOp>(op))
        return;
      for (NamedAttribute attr : op->getAttrs())
        attr.getValue().walk([&](SymbolRefAttr ref) {
          otherwiseUsed.insert(ref.getRootReference());
        });
    });
    UnitAttr unit = UnitAttr::get(module.getContext());
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPrivate() && !func.isExternal() &&
          !otherwiseUsed.contains(func.getSymNameAttr()) &&
          barePointerSignature(func))
        func->setAttr("llvm.bareptr", unit);
  }
};

} // namespace
