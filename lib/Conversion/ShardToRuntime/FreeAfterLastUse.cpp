//===- FreeAfterLastUse.cpp - the tp-free-after-last-use pass --------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFREEAFTERLASTUSE
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The last op of `block` that uses `buffer`, a view of it, or a value
/// computed from either (nullptr: no use but `except`), or failure when a
/// use may alias it in another way.
FailureOr<Operation *> lastUse(Value buffer, Block *block, Operation *except) {
  Operation *last = nullptr;
  SmallVector<Value> views = {buffer};
  llvm::DenseSet<Value> seen = {buffer};
  while (!views.empty()) {
    Value v = views.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == except)
        continue;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top)
        return failure();
      if (!last || last->isBeforeInBlock(top))
        last = top;
      // A view reads the same bytes; any other op with a memref result
      // might return the buffer itself. Other results may carry its
      // address (a collective's call takes the pointer that
      // extract_aligned_pointer_as_index gives): their uses count too.
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          !(view && view.getViewSource() == v) &&
          llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        return failure();
      for (Value r : user->getResults())
        if (seen.insert(r).second)
          views.push_back(r);
    }
  }
  return last;
}

/// The buffer's one memref.dealloc when it is in `op`'s block and `op` is
/// the buffer's last use before it; nullptr otherwise.
memref::DeallocOp freedRightAfter(Value buffer, Operation *op) {
  std::optional<Operation *> free = memref::findDealloc(buffer);
  auto dealloc = free ? dyn_cast_or_null<memref::DeallocOp>(*free) : nullptr;
  if (!dealloc || dealloc->getBlock() != op->getBlock())
    return nullptr;
  FailureOr<Operation *> last = lastUse(buffer, op->getBlock(), dealloc);
  return succeeded(last) && *last == op ? dealloc : nullptr;
}

struct TPFreeAfterLastUsePass
    : tp::impl::TPFreeAfterLastUseBase<TPFreeAfterLastUsePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal()) {
        if (func.isPublic())
          writeResultsInPlaceOfCopies(func);
        freeAfterLastUse(func);
      }
    freeInCallees(module);
  }

  /// buffer-results-to-out-params copies a step's result into its output
  /// parameter when the result is not the step's own allocation, as when a
  /// call (a layer's backward function) returns it: the step then holds
  /// every such weight gradient twice, the call's output until the copy at
  /// its end and the parameter. Where the buffer is the step's allocation,
  /// copied last and freed after, the parameter takes its place.
  static void writeResultsInPlaceOfCopies(func::FuncOp func) {
    Block &entry = func.getBody().front();
    SmallVector<memref::CopyOp> copies;
    for (auto copy : entry.getOps<memref::CopyOp>())
      copies.push_back(copy);
    for (memref::CopyOp copy : copies) {
      auto out = dyn_cast<BlockArgument>(copy.getTarget());
      auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
      if (!out || out.getOwner() != &entry || !out.hasOneUse() || !alloc ||
          alloc->getBlock() != &entry || alloc.getType() != out.getType())
        continue;
      memref::DeallocOp dealloc = freedRightAfter(alloc, copy);
      if (!dealloc)
        continue;
      copy.erase();
      dealloc.erase();
      alloc.getResult().replaceAllUsesWith(out);
      alloc.erase();
    }
  }

  /// A call that is the last reader of a temporary keeps it alive until it
  /// returns, though the callee (a layer's function, a layer's backward
  /// pass reading the activations its forward kept) may be done with it
  /// long before. Where every call of a private function passes, at one
  /// argument, a buffer that the caller frees right after the call, the
  /// callee frees it after its own last use instead.
  static void freeInCallees(ModuleOp module) {
    llvm::DenseMap<StringRef, SmallVector<func::CallOp>> calls;
    module.walk([&](func::CallOp call) {
      calls[call.getCallee()].push_back(call);
    });
    for (auto callee : module.getOps<func::FuncOp>()) {
      auto it = calls.find(callee.getSymName());
      if (callee.isExternal() || callee.isPublic() ||
          !callee.getBody().hasOneBlock() || it == calls.end())
        continue;
      // A function also named elsewhere (not by a call) keeps its ways.
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(callee, module);
      if (!uses ||
          size_t(std::distance(uses->begin(), uses->end())) !=
              it->second.size())
        continue;
      Block &body = callee.getBody().front();
      for (BlockArgument arg : body.getArguments()) {
        if (!isa<MemRefType>(arg.getType()))
          continue;
        FailureOr<Operation *> last = lastUse(arg, &body, nullptr);
        if (failed(last) ||
            (*last && (*last)->hasTrait<OpTrait::IsTerminator>()))
          continue;
        SmallVector<memref::DeallocOp> callerFrees;
        for (func::CallOp call : it->second) {
          memref::DeallocOp dealloc = givenUpAt(call, arg.getArgNumber());
          if (!dealloc)
            break;
          callerFrees.push_back(dealloc);
        }
        if (callerFrees.size() != it->second.size())
          continue;
        OpBuilder b(callee.getContext());
        if (*last)
          b.setInsertionPointAfter(*last);
        else
          b.setInsertionPointToStart(&body);
        memref::DeallocOp::create(b, callerFrees.front().getLoc(), arg);
        for (memref::DeallocOp dealloc : callerFrees)
          dealloc.erase();
      }
    }
  }

  /// The dealloc of the buffer `call` passes at `operand` when the buffer
  /// is the caller's own allocation, passed there only, and `call` is its
  /// last use; nullptr otherwise.
  static memref::DeallocOp givenUpAt(func::CallOp call, unsigned operand) {
    Value buffer = call.getOperand(operand);
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != call->getBlock() ||
        llvm::count(call.getOperands(), buffer) != 1)
      return nullptr;
    return freedRightAfter(buffer, call);
  }

  static void freeAfterLastUse(func::FuncOp func) {
    // Every place first, then the moves: a move invalidates the block's op
    // order, which each isBeforeInBlock would then recompute (quadratic in
    // a deep step's thousands of buffers).
    SmallVector<std::pair<Operation *, Operation *>> moves;
    func.walk([&](memref::DeallocOp dealloc) {
      auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
      Block *block = dealloc->getBlock();
      if (!alloc || alloc->getBlock() != block)
        return;
      FailureOr<Operation *> last = lastUse(alloc, block, dealloc);
      if (failed(last))
        return;
      moves.push_back({dealloc, *last ? *last : alloc.getOperation()});
    });
    for (auto [dealloc, after] : moves)
      dealloc->moveAfter(after);
  }
};

} // namespace
