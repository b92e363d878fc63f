//===- FreeDistinctAllocations.cpp - tp-free-distinct-allocations ---------===//
//
// ownership-based-buffer-deallocation ends a block with one
// bufferization.dealloc of every buffer the block owns. Upstream's
// buffer-deallocation-simplification then asks, for each pair of them,
// whether they may alias (to split the op): a training step's block owns
// thousands of buffers, and the question is asked millions of times (23 s
// of a 96-layer step's compile). When a buffer is an allocation of the
// function that appears once in the op and is freed unconditionally, the
// answer is known without asking: it is freed on its own. This pass does
// that in one walk and leaves the rest (arguments, conditional ownership,
// retained values) to the upstream passes.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFREEDISTINCTALLOCATIONS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The memref.alloc whose buffer `v` is (through its base buffer and
/// views), or null.
memref::AllocOp allocationOf(Value v) {
  while (true) {
    if (auto alloc = v.getDefiningOp<memref::AllocOp>())
      return alloc;
    if (auto meta = v.getDefiningOp<memref::ExtractStridedMetadataOp>()) {
      v = meta.getSource();
      continue;
    }
    auto view = v.getDefiningOp<ViewLikeOpInterface>();
    if (!view)
      return nullptr;
    v = view.getViewSource();
  }
}

/// Splits off `dealloc`'s unconditionally freed distinct allocations as
/// memref.dealloc ops before it; erases it when nothing is left.
void freeDistinctAllocations(bufferization::DeallocOp dealloc) {
  // Retained values would need the aliasing answer for their results.
  if (!dealloc.getRetained().empty())
    return;
  llvm::DenseMap<Operation *, unsigned> count;
  SmallVector<memref::AllocOp> allocs;
  for (auto [m, condition] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
    memref::AllocOp alloc = allocationOf(m);
    // A buffer of unknown origin (a block argument, a call's result) may
    // be one of the allocations: only upstream's analysis can tell.
    if (!alloc && !matchPattern(condition, m_Zero()))
      return;
    allocs.push_back(alloc);
    if (alloc)
      ++count[alloc];
  }
  SmallVector<Value> keptMemrefs, keptConditions;
  OpBuilder b(dealloc);
  for (auto [m, condition, alloc] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions(), allocs)) {
    if (alloc && count[alloc] == 1 && matchPattern(condition, m_One())) {
      memref::DeallocOp::create(b, dealloc.getLoc(), alloc.getResult());
      continue;
    }
    keptMemrefs.push_back(m);
    keptConditions.push_back(condition);
  }
  if (keptMemrefs.size() == dealloc.getMemrefs().size())
    return;
  if (keptMemrefs.empty()) {
    dealloc.erase();
    return;
  }
  dealloc.getMemrefsMutable().assign(keptMemrefs);
  dealloc.getConditionsMutable().assign(keptConditions);
}

struct TPFreeDistinctAllocationsPass
    : tp::impl::TPFreeDistinctAllocationsBase<TPFreeDistinctAllocationsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation().walk(
        [&](bufferization::DeallocOp d) { deallocs.push_back(d); });
    for (bufferization::DeallocOp d : deallocs)
      freeDistinctAllocations(d);
  }
};

} // namespace
