//===- InPlaceUpdates.cpp - the tp-find-in-place-updates pass --------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFINDINPLACEUPDATES
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The elementwise op that writes `out` in one pass reading `in` at the
/// same index (an optimizer's update of a weight), when it is the first
/// op that uses `out` and every use of `in` (or of a value computed from
/// it) comes before it; null otherwise.
linalg::GenericOp inPlaceWriter(BlockArgument out, BlockArgument in) {
  Block *block = out.getOwner();
  Operation *first = nullptr;
  for (Operation *user : out.getUsers()) {
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top)
      return {};
    if (!first || top->isBeforeInBlock(first))
      first = top;
  }
  auto writer = dyn_cast_or_null<linalg::GenericOp>(first);
  if (!writer || writer.getNumDpsInits() != 1 ||
      writer.getDpsInitOperand(0)->get() != out ||
      writer.getNumParallelLoops() != writer.getNumLoops() ||
      in.getType() != out.getType())
    return {};
  auto identity = [&](OpOperand *operand) {
    return writer.getMatchingIndexingMap(operand).isIdentity();
  };
  if (!identity(writer.getDpsInitOperand(0)))
    return {};
  bool reads = false;
  for (OpOperand *operand : writer.getDpsInputOperands())
    if (operand->get() == in) {
      if (!identity(operand))
        return {};
      reads = true;
    }
  if (!reads)
    return {};
  // Nothing reads the old value after the writer has overwritten it.
  SmallVector<Value> values = {in};
  llvm::DenseSet<Value> seen = {in};
  while (!values.empty()) {
    Value v = values.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == writer.getOperation())
        continue;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top || !top->isBeforeInBlock(writer))
        return {};
      for (Value r : user->getResults())
        if (seen.insert(r).second)
          values.push_back(r);
    }
  }
  return writer;
}

struct TPFindInPlaceUpdatesPass
    : tp::impl::TPFindInPlaceUpdatesBase<TPFindInPlaceUpdatesPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    SmallVector<Attribute> pairs;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      auto args = func.getArguments();
      for (BlockArgument out : args)
        for (BlockArgument in : args.take_front(out.getArgNumber()))
          if (inPlaceWriter(out, in))
            pairs.push_back(b.getDenseI64ArrayAttr(
                {int64_t(out.getArgNumber()), int64_t(in.getArgNumber())}));
    }
    getOperation()->setAttr("tp.in_place_updates", b.getArrayAttr(pairs));
  }
};

} // namespace
