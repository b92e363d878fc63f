//===- OutlineLoopNests.cpp - the tp-outline-loop-nests pass ---------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
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
  func->print(os, OpPrintingFlags().useLocalScope());
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
        std::string name =
            (func.getSymName() + "_loop" + Twine(count++)).str();
        func::CallOp call;
        auto outlined = outlineSingleBlockRegion(
            rewriter, loop.getLoc(), region.getRegion(), name, &call);
        if (failed(outlined))
          return signalPassFailure();
        keepOutOfLine(*outlined);
        auto [it, isNew] = nestByBody.try_emplace(bodyKey(*outlined), *outlined);
        if (!isNew) {
          call.setCallee(it->second.getSymName());
          rewriter.eraseOp(*outlined);
          --count;
        }
      }
    }
  }
};

} // namespace
