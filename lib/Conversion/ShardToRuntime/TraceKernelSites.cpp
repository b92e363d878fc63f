//===- TraceKernelSites.cpp - the tp-trace-kernel-sites pass --------------===//
#include "tp/Conversion/Passes.h"
#include "tp/Runtime/RuntimeABI.h"
#include "tp/Sharding/ValueNames.h"
#include "Outlining.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPTRACEKERNELSITES
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct TPTraceKernelSitesPass
    : tp::impl::TPTraceKernelSitesBase<TPTraceKernelSitesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    auto calls = tp::loopNestCalls(module);
    if (calls.empty())
      return;
    func::FuncOp begin = tp::declareRuntimeFunction(module, tp::kKernelBeginFn, {i64});
    func::FuncOp end = tp::declareRuntimeFunction(module, tp::kKernelEndFn, {i64});
    SmallVector<Attribute> sites, phases;
    SmallVector<int64_t> microbatches;
    for (func::CallOp call : llvm::make_first_range(calls)) {
      // Named by its ONNX node, else by the nest's function.
      std::string name = tp::onnxNodeName(call.getLoc());
      if (name.empty())
        name = call.getCallee().str();
      Location loc = call.getLoc();
      // A parallel nest's chunks are timed together, on the rank's thread.
      Operation *nest =
          call->getParentOfType<func::FuncOp>().getBody().front()
              .findAncestorOpInBlock(*call);
      b.setInsertionPoint(nest);
      Value site = arith::ConstantIntOp::create(b, loc, i64, sites.size());
      func::CallOp::create(b, loc, begin, site);
      b.setInsertionPointAfter(nest);
      func::CallOp::create(b, loc, end, site);
      sites.push_back(b.getStringAttr(name));
      phases.push_back(b.getStringAttr(tp::stepPhase(loc)));
      microbatches.push_back(tp::microbatchOf(loc));
    }
    module->setAttr("tp.kernel_sites", b.getArrayAttr(sites));
    // Where each call stands in a step: the trace's phase and microbatch
    // spans.
    module->setAttr("tp.kernel_phases", b.getArrayAttr(phases));
    module->setAttr("tp.kernel_microbatches",
                    b.getDenseI64ArrayAttr(microbatches));
  }
};

} // namespace
