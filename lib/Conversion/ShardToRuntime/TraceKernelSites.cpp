//===- TraceKernelSites.cpp - the tp-trace-kernel-sites pass --------------===//
#include "tp/Conversion/Passes.h"
#include "tp/Runtime/RuntimeABI.h"
#include "tp/Sharding/ValueNames.h"
#include "Outlining.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPTRACEKERNELSITES
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Whether `op` computes on data: arithmetic with a float or integer (not
/// index, not i1) operand or result. Selects, constants and index
/// arithmetic only move or address data (im2col's padding, a transpose).
bool computesOnData(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      isa<arith::ConstantOp, arith::SelectOp, arith::IndexCastOp,
          arith::IndexCastUIOp>(op))
    return false;
  auto isData = [](Type t) {
    t = getElementTypeOrSelf(t);
    return isa<FloatType>(t) || (t.isInteger() && !t.isInteger(1));
  };
  return llvm::any_of(op->getOperandTypes(), isData) ||
         llvm::any_of(op->getResultTypes(), isData);
}

/// The induction variables of the nest's loops that `v` depends on.
DenseSet<Value> inductionVariablesOf(ValueRange values) {
  DenseSet<Value> ivs, seen;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (isa<scf::ForOp>(arg.getOwner()->getParentOp()))
        ivs.insert(arg);
      continue;
    }
    llvm::append_range(work, v.getDefiningOp()->getOperands());
  }
  return ivs;
}

/// Whether a store of the nest writes the same element on several
/// iterations of a loop around it: an accumulation.
bool accumulates(memref::StoreOp store) {
  DenseSet<Value> ivs = inductionVariablesOf(store.getIndices());
  for (auto loop = store->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (!ivs.contains(loop.getInductionVar()))
      return true;
  return false;
}

/// What an outlined loop nest does, as tp-run --profile totals it:
/// "reduction" (an accumulator carried by a loop, or an element stored on
/// several iterations), "elementwise" (computes on data), else "copy"
/// (transposes, im2col, concatenations, fills).
StringRef nestFamily(func::FuncOp nest) {
  bool computes = false, reduces = false;
  nest.walk([&](Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op))
      reduces |= loop.getNumRegionIterArgs() > 0;
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      reduces |= accumulates(store);
    else
      computes |= computesOnData(op);
  });
  return reduces ? "reduction" : computes ? "elementwise" : "copy";
}

struct TPTraceKernelSitesPass
    : tp::impl::TPTraceKernelSitesBase<TPTraceKernelSitesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    Type i64 = b.getI64Type();
    // Loop-nest calls with their callee, and GEMM and convolution calls (no
    // callee to read) that stand in their function's body.
    SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
    for (auto [call, callee] : tp::loopNestCalls(module))
      calls.push_back({call, callee});
    module.walk([&](func::CallOp call) {
      if ((call.getCallee() == tp::kSgemmFn ||
           call.getCallee() == tp::kSgemmBatchedFn ||
           call.getCallee() == tp::kGemmBf16Fn ||
           call.getCallee() == tp::kConvFn) &&
          isa<func::FuncOp>(call->getParentOp()))
        calls.push_back({call, nullptr});
    });
    if (calls.empty())
      return;
    func::FuncOp begin = tp::declareRuntimeFunction(module, tp::kKernelBeginFn, {i64});
    func::FuncOp end = tp::declareRuntimeFunction(module, tp::kKernelEndFn, {i64});
    SmallVector<Attribute> sites, phases, families;
    SmallVector<int64_t> microbatches;
    // A repeated layer's nests are one function called per layer: each
    // function is read once.
    DenseMap<Operation *, StringRef> nestFamilies;
    auto familyOf = [&](func::CallOp call, func::FuncOp callee) -> StringRef {
      if (call.getCallee() == tp::kConvFn ||
          tp::hasTag(call.getLoc(), "convolution"))
        return "convolution";
      if (!callee)
        return "gemm";
      auto it = nestFamilies.find(callee);
      if (it == nestFamilies.end())
        it = nestFamilies.try_emplace(callee, nestFamily(callee)).first;
      return it->second;
    };
    for (auto [call, callee] : calls) {
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
      families.push_back(b.getStringAttr(familyOf(call, callee)));
    }
    module->setAttr("tp.kernel_sites", b.getArrayAttr(sites));
    // Where each call stands in a step: the trace's phase and microbatch
    // spans.
    module->setAttr("tp.kernel_phases", b.getArrayAttr(phases));
    module->setAttr("tp.kernel_microbatches",
                    b.getDenseI64ArrayAttr(microbatches));
    // What each does, for tp-run --profile's time by kernel family.
    module->setAttr("tp.kernel_families", b.getArrayAttr(families));
  }
};

} // namespace
