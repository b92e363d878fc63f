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
  // finalize-memref-to-llvm aligns by hand: it asks for `alignment` bytes
  // more.
  return llvm::alignTo(bytes + alloc.getAlignment().value_or(0), kGranule);
}

struct TPFreeAfterLastUsePass
    : tp::impl::TPFreeAfterLastUseBase<TPFreeAfterLastUsePass> {
  void runOnOperation() override {
    // Layers' functions (tp-outline-repeated-layers) first: a call holds
    // the callee's temporaries at their peak on top of the caller's.
    llvm::DenseMap<StringRef, int64_t> calleePeaks;
    int64_t peak = 0;
    // The step's peak while it calls each callee: a pipeline stage's
    // (tp-split-stages' dispatch calls one per device).
    llvm::StringMap<int64_t> atCalls;
    for (bool entry : {false, true})
      for (auto func : getOperation().getOps<func::FuncOp>()) {
        if (func.isExternal() || func.isPublic() != entry)
          continue;
        freeAfterLastUse(func);
        int64_t p = plannedPeak(func, calleePeaks, entry ? &atCalls : nullptr);
        if (entry)
          peak = std::max(peak, p);
        else
          calleePeaks[func.getSymName()] = p;
      }
    Builder b(&getContext());
    getOperation()->setAttr("tp.peak_temporary_bytes",
                            b.getI64IntegerAttr(peak));
    SmallVector<NamedAttribute> calls;
    for (auto &[callee, bytes] : atCalls)
      calls.push_back(b.getNamedAttr(callee, b.getI64IntegerAttr(bytes)));
    if (!calls.empty())
      getOperation()->setAttr("tp.peak_bytes_at_calls",
                              b.getDictionaryAttr(calls));
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
  /// block's temporaries count at their op, a callee's at its call).
  static int64_t plannedPeak(func::FuncOp func,
                             const llvm::DenseMap<StringRef, int64_t> &callees,
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
        } else if (auto a = dyn_cast<memref::AllocOp>(nested)) {
          peak = std::max(peak, live += allocationBytes(a));
        } else if (auto d = dyn_cast<memref::DeallocOp>(nested)) {
          if (auto a = d.getMemref().getDefiningOp<memref::AllocOp>())
            live -= allocationBytes(a);
        }
      });
    }
    return peak;
  }
};

} // namespace
