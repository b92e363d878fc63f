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

/// The elementwise op that writes `out` in one pass, when it is the first
/// op that uses `out`; null otherwise.
linalg::GenericOp firstWriter(BlockArgument out) {
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
      !writer.getMatchingIndexingMap(writer.getDpsInitOperand(0)).isIdentity())
    return {};
  return writer;
}

/// Whether `writer` (the first writer of `out`) reads `in` at the same
/// index, and every use of `in` (or of a value computed from it) comes
/// before it: an optimizer's update of a weight, which may then write the
/// weight's own buffer.
bool updatesInPlace(linalg::GenericOp writer, BlockArgument out,
                    BlockArgument in) {
  if (in.getType() != out.getType())
    return false;
  bool reads = false;
  for (OpOperand *operand : writer.getDpsInputOperands())
    if (operand->get() == in) {
      if (!writer.getMatchingIndexingMap(operand).isIdentity())
        return false;
      reads = true;
    }
  if (!reads)
    return false;
  // Nothing reads the old value after the writer has overwritten it.
  Block *block = out.getOwner();
  SmallVector<Value> values = {in};
  llvm::DenseSet<Value> seen = {in};
  while (!values.empty()) {
    Value v = values.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == writer.getOperation())
        continue;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top || !top->isBeforeInBlock(writer))
        return false;
      for (Value r : user->getResults())
        if (seen.insert(r).second)
          values.push_back(r);
    }
  }
  return true;
}

struct TPFindInPlaceUpdatesPass
    : tp::impl::TPFindInPlaceUpdatesBase<TPFindInPlaceUpdatesPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    SmallVector<Attribute> pairs;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      // Each result's first writer, then the arguments it reads (linear in
      // the thousands of arguments of a deep model's step).
      for (BlockArgument out : func.getArguments()) {
        linalg::GenericOp writer = firstWriter(out);
        if (!writer)
          continue;
        SmallVector<unsigned> candidates;
        for (OpOperand *operand : writer.getDpsInputOperands())
          if (auto in = dyn_cast<BlockArgument>(operand->get());
              in && in.getOwner() == out.getOwner() &&
              in.getArgNumber() < out.getArgNumber())
            candidates.push_back(in.getArgNumber());
        llvm::sort(candidates);
        candidates.erase(llvm::unique(candidates), candidates.end());
        for (unsigned i : candidates)
          if (BlockArgument in = func.getArgument(i);
              updatesInPlace(writer, out, in))
          if (updatesInPlace(writer, out, in))
            pairs.push_back(b.getDenseI64ArrayAttr(
                {int64_t(out.getArgNumber()), int64_t(in.getArgNumber())}));
      }
    }
    getOperation()->setAttr("tp.in_place_updates", b.getArrayAttr(pairs));
  }
};

} // namespace
