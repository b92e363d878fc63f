//===- StageResultsToOutParams.cpp - tp-stage-results-to-out-params -------===//
//
// After bufferization a pipeline's dispatch reads
//
//   %r:n = scf.index_switch %stage
//   case 0 { %a = memref.alloc; call @step_stage0(..., %a, ...);
//            %e = memref.alloc;           // a result stage 1 computes
//            scf.yield %a, %e, %w, ... }  // %w: an argument passed through
//   ...
//   memref.copy %r#0, %out0; memref.copy %r#1, %out1; ...
//
// The stage functions write into the output parameters directly; the
// stand-ins and the copies go. When every result is so redirected, the
// module gets `tp.stage_buffers_only` (the step's output buffers, by
// argument number): a stage's ranks touch only the arguments it reads and
// the results it writes (the manifest tells tp-run).
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSTAGERESULTSTOOUTPARAMS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The buffer a case yields, through casts.
Value yieldedBuffer(Region &region, unsigned index) {
  Value v = region.front().getTerminator()->getOperand(index);
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  return v;
}

/// Redirects result `res` of `dispatch` into the output parameter the step
/// copies it to (its argument number in `outs`); false (nothing changed)
/// where the pattern differs.
bool redirect(Block &entry, scf::IndexSwitchOp dispatch, OpResult res,
              SmallVectorImpl<int64_t> &outs) {
  if (!res.hasOneUse())
    return false;
  auto copy = dyn_cast<memref::CopyOp>(*res.getUsers().begin());
  if (!copy || copy.getSource() != res)
    return false;
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  if (!out || out.getOwner() != &entry)
    return false;
  // Per case: a buffer it allocated for this result (a stage function's
  // output parameter, or a stand-in nothing writes), or an argument of
  // the step (another stage's weight, passed through).
  SmallVector<memref::AllocOp> allocs;
  for (Region &region : dispatch->getRegions()) {
    Value v = yieldedBuffer(region, res.getResultNumber());
    if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &entry)
      continue;
    auto alloc = v.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getParentRegion() != &region ||
        alloc.getType() != out.getType())
      return false;
    for (Operation *user : alloc->getUsers())
      if (!isa<memref::CastOp, func::CallOp, scf::YieldOp>(user))
        return false;
    allocs.push_back(alloc);
  }
  for (memref::AllocOp alloc : allocs) {
    alloc.replaceAllUsesWith(out);
    alloc.erase();
  }
  copy.erase();
  outs.push_back(out.getArgNumber());
  return true;
}

struct TPStageResultsToOutParamsPass
    : tp::impl::TPStageResultsToOutParamsBase<TPStageResultsToOutParamsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module->hasAttr("tp.pipeline"))
      return;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      Block &entry = func.getBody().front();
      bool all = true;
      SmallVector<int64_t> outs;
      for (auto dispatch : llvm::to_vector(entry.getOps<scf::IndexSwitchOp>()))
        for (OpResult res : dispatch->getResults())
          all &= redirect(entry, dispatch, res, outs);
      // Only then may a stage's ranks go without the arguments it does not
      // read (`tp.stages`) and the results it does not write. The step's
      // output buffers are listed (tp-find-in-place-updates reads them).
      if (all) {
        llvm::sort(outs);
        module->setAttr("tp.stage_buffers_only",
                        DenseI64ArrayAttr::get(&getContext(), outs));
      }
      else
        for (unsigned a = 0; a < func.getNumArguments(); ++a)
          func.removeArgAttr(a, "tp.stages");
    }
  }
};

} // namespace
