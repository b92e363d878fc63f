//===- OutlineLoopNests.cpp - the tp-outline-loop-nests pass ---------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPOUTLINELOOPNESTS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The function's text with its name left out: equal for nests that do the
/// same work on buffers of the same types (every layer of a model has them).
static std::string bodyKey(func::FuncOp func) {
  StringAttr name = func.getSymNameAttr();
  func.setSymName("_");
  std::string text;
  llvm::raw_string_ostream os(text);
  func->print(os, OpPrintingFlags().useLocalScope().enableDebugInfo(false));
  func.setSymNameAttr(name);
  return text;
}

/// LLVM must neither inline the nest back (one function of thousands of
/// loops takes its loop passes minutes) nor export it.
static void keepOutOfLine(func::FuncOp func) {
  Builder b(func.getContext());
  func.setPrivate();
  func.setNoInline(true);
  func->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(func.getContext(),
                                       LLVM::Linkage::Internal));
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
}

/// Constants the nest reads from outside are cloned in front of it. The
/// outlined function then has them in its body instead of as arguments;
/// and outlining, which redirects every use of a value it captures, no
/// longer walks the thousands of uses a function's shared `%c0` has (that
/// made the pass quadratic: minutes for a 32-layer training step).
static void cloneConstantsInto(IRRewriter &rewriter, scf::ForOp loop,
                               Block *block) {
  DenseMap<Operation *, Operation *> clones;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(block);
  loop->walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>() ||
          loop->isAncestor(def))
        continue;
      Operation *&clone = clones[def];
      if (!clone)
        clone = rewriter.clone(*def);
      operand.set(clone->getResult(
          cast<OpResult>(operand.get()).getResultNumber()));
    }
  });
}

/// What is left of a function whose nests went out of line is one basic
/// block of allocations and calls. LLVM's code generator schedules a block
/// as one piece, in time that grows faster than the block (minutes for a
/// 32-layer training step), and gains nothing measurable on it: such a
/// function is compiled unoptimized (optnone). Not if a loop stayed in it.
static void leaveUnoptimizedIfStraightLine(func::FuncOp func) {
  bool loops = func.walk([](LoopLikeOpInterface) {
                     return WalkResult::interrupt();
                   }).wasInterrupted();
  if (loops || !func.getBody().hasOneBlock())
    return;
  Builder b(func.getContext());
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline"),
                                               b.getStringAttr("optnone")}));
}

struct TPOutlineLoopNestsPass
    : tp::impl::TPOutlineLoopNestsBase<TPOutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(module.getContext());
    // One function per distinct nest: a model's repeated layers compile once.
    llvm::StringMap<func::FuncOp> nestByBody;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      int count = 0;
      bool outlinedAny = false;
      for (auto loop :
           llvm::to_vector(func.getBody().front().getOps<scf::ForOp>())) {
        if (!loop->getResults().empty())
          continue;
        // The nest, alone in a region, outlined; the call stays behind.
        rewriter.setInsertionPoint(loop);
        auto region = scf::ExecuteRegionOp::create(rewriter, loop.getLoc(),
                                                   TypeRange{});
        Block *block = rewriter.createBlock(&region.getRegion());
        rewriter.setInsertionPointToEnd(block);
        auto yield = scf::YieldOp::create(rewriter, loop.getLoc());
        loop->moveBefore(yield);
        cloneConstantsInto(rewriter, loop, block);
        std::string name =
            (func.getSymName() + "_loop" + Twine(count++)).str();
        func::CallOp call;
        auto outlined = outlineSingleBlockRegion(
            rewriter, loop.getLoc(), region.getRegion(), name, &call);
        if (failed(outlined))
          return signalPassFailure();
        // The call alone replaces its region: thousands of regions would
        // each split the function's block in scf-to-cf (quadratic).
        call->moveBefore(region);
        rewriter.eraseOp(region);
        outlinedAny = true;
        keepOutOfLine(*outlined);
        auto [it, isNew] = nestByBody.try_emplace(bodyKey(*outlined), *outlined);
        if (!isNew) {
          call.setCallee(it->second.getSymName());
          rewriter.eraseOp(*outlined);
          --count;
        }
      }
      if (outlinedAny)
        leaveUnoptimizedIfStraightLine(func);
    }
  }
};

} // namespace
