//===- InPlaceUpdates.cpp - the tp-find-in-place-updates pass --------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFINDINPLACEUPDATES
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The first op of `out`'s block that uses it; null if a use is elsewhere.
Operation *firstUser(BlockArgument out) {
  Block *block = out.getOwner();
  Operation *first = nullptr;
  for (Operation *user : out.getUsers()) {
    Operation *top = block->findAncestorOpInBlock(*user);
    if (!top)
      return nullptr;
    if (!first || top->isBeforeInBlock(first))
      first = top;
  }
  return first;
}

/// The elementwise op that writes `out` in one pass, when it is the first
/// op that uses `out`; null otherwise.
linalg::GenericOp firstWriter(BlockArgument out) {
  auto writer = dyn_cast_or_null<linalg::GenericOp>(firstUser(out));
  if (!writer || writer.getNumDpsInits() != 1 ||
      writer.getDpsInitOperand(0)->get() != out ||
      writer.getNumParallelLoops() != writer.getNumLoops() ||
      !writer.getMatchingIndexingMap(writer.getDpsInitOperand(0)).isIdentity())
    return {};
  return writer;
}

bool readBefore(BlockArgument in, Operation *writer,
                llvm::DenseSet<Value> *derived = nullptr);

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
  return reads && readBefore(in, writer);
}

/// Whether every use of `in` (or of a value computed from it) is `writer`
/// or comes before it: nothing reads the old value after the writer has
/// overwritten it. `derived` receives `in` and the values computed from it.
bool readBefore(BlockArgument in, Operation *writer,
                llvm::DenseSet<Value> *derived) {
  Block *block = in.getOwner();
  SmallVector<Value> values = {in};
  llvm::DenseSet<Value> local;
  llvm::DenseSet<Value> &seen = derived ? *derived : local;
  seen.insert(in);
  while (!values.empty()) {
    Value v = values.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == writer)
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

using Pairs = SmallVector<std::pair<unsigned, unsigned>>;

/// (output argument, argument) of every in-place update of `func`.
/// `callees` caches the pairs of the private functions it calls.
Pairs inPlacePairs(func::FuncOp func, DenseMap<Operation *, Pairs> &callees);

/// The pairs of `func` whose output's first user is a call of a private
/// function (a repeated layer's, tp-outline-repeated-layers) that updates
/// it in place from an argument of `func`, read by nothing after the call.
Pairs pairsThroughCalls(func::FuncOp func,
                        DenseMap<Operation *, Pairs> &callees) {
  Pairs pairs;
  for (BlockArgument out : func.getArguments()) {
    auto call = dyn_cast_or_null<func::CallOp>(firstUser(out));
    if (!call || llvm::count(call.getOperands(), out) != 1)
      continue;
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal() || callee.isPublic())
      continue;
    if (!callees.count(callee))
      callees[callee] = inPlacePairs(callee, callees);
    for (auto [o, i] : callees[callee]) {
      auto in = dyn_cast<BlockArgument>(call.getOperand(i));
      llvm::DenseSet<Value> derived;
      if (call.getOperand(o) != out || !in || in.getOwner() != out.getOwner() ||
          in.getArgNumber() >= out.getArgNumber() ||
          in.getType() != out.getType() || !readBefore(in, call, &derived))
        continue;
      // The callee sees the old value only as its argument `i` (another
      // argument, a view of it, say, could be read after the update).
      bool aliased = false;
      for (auto [k, operand] : llvm::enumerate(call.getOperands()))
        aliased |= k != i && derived.contains(operand);
      if (!aliased)
        pairs.push_back({out.getArgNumber(), in.getArgNumber()});
    }
  }
  return pairs;
}

Pairs inPlacePairs(func::FuncOp func, DenseMap<Operation *, Pairs> &callees) {
  Pairs pairs = pairsThroughCalls(func, callees);
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
      if (updatesInPlace(writer, out, func.getArgument(i)))
        pairs.push_back({out.getArgNumber(), i});
  }
  return pairs;
}

/// A pipeline's step calls one stage function per device, passing its own
/// arguments and output buffers (tp-stage-results-to-out-params): a pair
/// holds for the step when every stage function that writes the output
/// may update it in place from that argument.
SmallVector<std::pair<unsigned, unsigned>>
stagePairs(func::FuncOp step, ArrayRef<int64_t> outputs) {
  Block &entry = step.getBody().front();
  llvm::DenseSet<int64_t> isOutput(outputs.begin(), outputs.end());
  // Per output of the step: per call that writes it, the step arguments
  // it may be updated from in place.
  llvm::DenseMap<unsigned, SmallVector<llvm::SmallSet<int64_t, 2>>> sources;
  step.walk([&](func::CallOp call) {
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return;
    auto stepArg = [&](Value v) -> int64_t {
      auto arg = dyn_cast<BlockArgument>(v);
      return arg && arg.getOwner() == &entry ? arg.getArgNumber() : -1;
    };
    DenseMap<Operation *, Pairs> callees;
    SmallVector<std::pair<unsigned, unsigned>> inPlace =
        inPlacePairs(callee, callees);
    // Every output buffer of the step the call writes.
    for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
      int64_t out = stepArg(operand);
      if (out < 0 || !isOutput.contains(out))
        continue;
      llvm::SmallSet<int64_t, 2> from;
      for (auto [o, in] : inPlace)
        if (o == i)
          if (int64_t a = stepArg(call.getOperand(in)); a >= 0)
            from.insert(a);
      sources[out].push_back(std::move(from));
    }
  });
  SmallVector<std::pair<unsigned, unsigned>> pairs;
  for (auto &[out, writers] : sources)
    for (int64_t in : writers.front())
      if (llvm::all_of(writers, [&](auto &w) { return w.contains(in); }))
        pairs.push_back({out, unsigned(in)});
  llvm::sort(pairs);
  return pairs;
}

struct TPFindInPlaceUpdatesPass
    : tp::impl::TPFindInPlaceUpdatesBase<TPFindInPlaceUpdatesPass> {
  void runOnOperation() override {
    Builder b(&getContext());
    SmallVector<Attribute> pairs;
    auto outputs = getOperation()->getAttrOfType<DenseI64ArrayAttr>(
        "tp.stage_buffers_only");
    DenseMap<Operation *, Pairs> callees;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (auto [out, in] : outputs ? stagePairs(func, outputs.asArrayRef())
                                    : inPlacePairs(func, callees))
        pairs.push_back(b.getDenseI64ArrayAttr({int64_t(out), int64_t(in)}));
    }
    getOperation()->setAttr("tp.in_place_updates", b.getArrayAttr(pairs));
  }
};

} // namespace
