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

/// The runtime's host allocator rounds every block up to this.
constexpr int64_t kGranule = 64;

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

/// The buffers callees free for their callers (freeInCallees).
struct FreedArgs {
  /// Bytes freed, by the callee's argument.
  llvm::DenseMap<BlockArgument, int64_t> args;
  /// Bytes each call of the callee frees, by callee.
  llvm::StringMap<int64_t> perCall;
};

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
    FreedArgs freedArgs = freeInCallees(module);
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
  static FreedArgs freeInCallees(ModuleOp module) {
    llvm::DenseMap<StringRef, SmallVector<func::CallOp>> calls;
    module.walk([&](func::CallOp call) {
      calls[call.getCallee()].push_back(call);
    });
    FreedArgs freed;
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
        int64_t bytes = allocationBytes(
            callerFrees.front().getMemref().getDefiningOp<memref::AllocOp>());
        freed.args[arg] = bytes;
        freed.perCall[callee.getSymName()] += bytes;
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
    return freed;
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

  /// Live bytes along the entry block (the step's buffers; a nested
  /// block's temporaries count at their op, a callee's at its call, less
  /// the arguments it frees once it returns).
  static int64_t plannedPeak(func::FuncOp func,
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
};

} // namespace
