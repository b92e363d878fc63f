//===- Outlining.cpp - what the outlining passes share --------------------===//
#include "Outlining.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

std::string tp::functionBodyKey(func::FuncOp func) {
  StringAttr name = func.getSymNameAttr();
  func.setSymName("_");
  std::string text;
  llvm::raw_string_ostream os(text);
  // Verified already; printing would verify each layer again.
  func->print(os, OpPrintingFlags().useLocalScope().enableDebugInfo(false).assumeVerified());
  func.setSymNameAttr(name);
  return text;
}

void tp::keepOutOfLine(func::FuncOp func) {
  Builder b(func.getContext());
  func.setPrivate();
  func.setNoInline(true);
  func->setAttr("llvm.linkage", LLVM::LinkageAttr::get(
                                    func.getContext(), LLVM::Linkage::Internal));
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
}

void tp::cloneConstantsInto(RewriterBase &rewriter, Operation *scope,
                            Block *block) {
  DenseMap<Operation *, Operation *> clones;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(block);
  scope->walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>() ||
          scope->isAncestor(def))
        continue;
      Operation *&clone = clones[def];
      if (!clone)
        clone = rewriter.clone(*def);
      operand.set(
          clone->getResult(cast<OpResult>(operand.get()).getResultNumber()));
    }
  });
}
