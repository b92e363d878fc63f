//===- PlanPeakMemory.cpp - the tp-plan-peak-memory pass -------------------===//
//
// The peak of temporary bytes a step holds, from its allocations and
// deallocations in program order, once every pass that moves them has run
// (tp-free-after-last-use frees each buffer after its last use;
// tp-fuse-parallel-loops then hoists the allocations between the loops it
// merges and sinks their frees). tp-run --profile compares it with what
// the step allocated.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPPLANPEAKMEMORY
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The runtime's host allocator rounds every block up to this.
constexpr int64_t kGranule = 64;

/// The bytes the runtime's allocator hands out for `alloc` (0 for a
/// dynamic shape).
int64_t allocationBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape())
    return 0;
  // Index buffers (buffer deallocation's bookkeeping around a pipeline's
  // stage dispatch) hold 64-bit words.
  int64_t bits =
      type.getElementType().isIndex() ? 64 : type.getElementTypeBitWidth();
  int64_t bytes = type.getNumElements() * llvm::divideCeil(bits, 8);
  // finalize-memref-to-llvm{use-aligned-alloc} rounds the size up to the
  // alignment, and the runtime's allocator to its 64-byte granule.
  return llvm::alignTo(bytes, std::max<int64_t>(
                                  kGranule, alloc.getAlignment().value_or(0)));
}

/// The buffers callees free for their callers (tp-free-after-last-use
/// moves such a free into the callee): a private function's dealloc of
/// its argument frees what its calls pass there, a caller's allocation.
struct FreedArgs {
  /// Bytes freed, by the callee's argument.
  llvm::DenseMap<BlockArgument, int64_t> args;
  /// Bytes each call of the callee frees, by callee.
  llvm::StringMap<int64_t> perCall;
};

FreedArgs freedInCallees(ModuleOp module) {
  llvm::StringMap<func::CallOp> aCall;
  module.walk([&](func::CallOp call) {
    aCall.try_emplace(call.getCallee(), call);
  });
  FreedArgs freed;
  for (auto callee : module.getOps<func::FuncOp>()) {
    auto call = aCall.find(callee.getSymName());
    if (callee.isExternal() || callee.isPublic() || call == aCall.end())
      continue;
    for (BlockArgument arg : callee.getArguments()) {
      if (!llvm::any_of(arg.getUsers(), llvm::IsaPred<memref::DeallocOp>))
        continue;
      auto alloc = call->second.getOperand(arg.getArgNumber())
                       .getDefiningOp<memref::AllocOp>();
      if (!alloc)
        continue;
      int64_t bytes = allocationBytes(alloc);
      freed.args[arg] = bytes;
      freed.perCall[callee.getSymName()] += bytes;
    }
  }
  return freed;
}

/// Live bytes along the entry block (the step's buffers; a nested block's
/// temporaries count at their op, a callee's at its call, less the
/// arguments it frees once it returns).
int64_t plannedPeak(func::FuncOp func,
                    const llvm::DenseMap<StringRef, int64_t> &callees,
                    const FreedArgs &freedArgs,
                    llvm::StringMap<int64_t> *atCalls) {
  int64_t live = 0, peak = 0;
  for (Operation &op : func.getBody().front()) {
    op.walk([&](Operation *nested) {
      if (auto call = dyn_cast<func::CallOp>(nested)) {
        int64_t here = live + callees.lookup(call.getCallee());
        peak = std::max(peak, here);
        if (atCalls && callees.count(call.getCallee()))
          (*atCalls)[call.getCallee()] =
              std::max((*atCalls)[call.getCallee()], here);
        live -= freedArgs.perCall.lookup(call.getCallee());
      } else if (auto a = dyn_cast<memref::AllocOp>(nested)) {
        peak = std::max(peak, live += allocationBytes(a));
      } else if (auto d = dyn_cast<memref::DeallocOp>(nested)) {
        if (auto a = d.getMemref().getDefiningOp<memref::AllocOp>())
          live -= allocationBytes(a);
        else if (auto arg = dyn_cast<BlockArgument>(d.getMemref()))
          live -= freedArgs.args.lookup(arg);
      }
    });
  }
  return peak;
}

struct TPPlanPeakMemoryPass
    : tp::impl::TPPlanPeakMemoryBase<TPPlanPeakMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FreedArgs freedArgs = freedInCallees(module);
    // Layers' functions (tp-outline-repeated-layers) first: a call holds
    // the callee's temporaries at their peak on top of the caller's.
    llvm::DenseMap<StringRef, int64_t> calleePeaks;
    int64_t peak = 0;
    // The step's peak while it calls each callee: a pipeline stage's
    // (tp-split-stages' dispatch calls one per device).
    llvm::StringMap<int64_t> atCalls;
    for (bool entry : {false, true})
      for (auto func : module.getOps<func::FuncOp>()) {
        if (func.isExternal() || func.isPublic() != entry)
          continue;
        int64_t p = plannedPeak(func, calleePeaks, freedArgs,
                                entry ? &atCalls : nullptr);
        if (entry)
          peak = std::max(peak, p);
        else
          calleePeaks[func.getSymName()] = p;
      }
    Builder b(&getContext());
    module->setAttr("tp.peak_temporary_bytes", b.getI64IntegerAttr(peak));
    SmallVector<NamedAttribute> calls;
    for (auto &[callee, bytes] : atCalls)
      calls.push_back(b.getNamedAttr(callee, b.getI64IntegerAttr(bytes)));
    if (!calls.empty())
      module->setAttr("tp.peak_bytes_at_calls", b.getDictionaryAttr(calls));
  }
};

} // namespace
