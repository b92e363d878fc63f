//===- Outlining.cpp - what the outlining passes share --------------------===//
#include "Outlining.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

/// The function's attributes but its name.
static SmallVector<NamedAttribute> attrsButName(func::FuncOp func) {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : func->getAttrs())
    if (attr.getName() != func.getSymNameAttrName())
      attrs.push_back(attr);
  return attrs;
}

func::FuncOp tp::EquivalentFunctions::lookupOrAdd(func::FuncOp func) {
  llvm::hash_code hash = hash_value(func.getFunctionType());
  for (NamedAttribute attr : attrsButName(func))
    hash = llvm::hash_combine(hash, attr.getName(), attr.getValue());
  // The body's ops (the function's own name is not hashed).
  func.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::ignoreHashValue,
                  OperationEquivalence::IgnoreLocations));
  });
  SmallVector<func::FuncOp, 1> &same = byHash[unsigned(size_t(hash))];
  for (func::FuncOp seen : same)
    if (seen.getFunctionType() == func.getFunctionType() &&
        attrsButName(seen) == attrsButName(func) &&
        OperationEquivalence::isRegionEquivalentTo(
            &seen.getBody(), &func.getBody(),
            OperationEquivalence::IgnoreLocations))
      return seen;
  same.push_back(func);
  return func;
}

static constexpr llvm::StringLiteral kLoopSuffix = "_loop";

std::string tp::loopNestName(func::FuncOp func, int index) {
  return (func.getSymName() + kLoopSuffix + Twine(index)).str();
}

bool tp::isOutlinedLoopNest(func::FuncOp func) {
  StringRef name = func.getSymName();
  size_t at = name.rfind(kLoopSuffix);
  if (!func.isPrivate() || at == StringRef::npos)
    return false;
  StringRef number = name.drop_front(at + kLoopSuffix.size());
  return !number.empty() &&
         llvm::all_of(number, [](char c) { return c >= '0' && c <= '9'; });
}

SmallVector<std::pair<func::CallOp, func::FuncOp>>
tp::loopNestCalls(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<std::pair<func::CallOp, func::FuncOp>> calls;
  module.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && isOutlinedLoopNest(callee))
      calls.emplace_back(call, callee);
  });
  return calls;
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
