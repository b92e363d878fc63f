//===- FoldDescriptorReads.cpp - tp-fold-descriptor-reads -----------------===//
//
// finalize-memref-to-llvm builds a descriptor for every allocation
// (allocated and aligned pointer, offset, sizes, strides: a poison struct
// and one insertvalue per field, each size and stride a constant). In a
// training step whose layers take their buffers as bare pointers
// (tp-bare-pointer-calls), nearly all that is read back is the aligned
// pointer, for a call, and the allocated one, for the free: the rest is
// dead, ~17 of the ~22 ops of each of a 96-layer step's 1,257 allocations.
// Canonicalization removes them too, but it is a fixed-point rewrite over
// every op; this is one walk: each extractvalue of a field that an
// insertvalue chain wrote reads the inserted value, then the ops left
// without users are erased, last first.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFOLDDESCRIPTORREADS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Whether one position is a prefix of the other: an insertvalue there
/// writes part or all of what the extractvalue reads.
bool overlaps(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t n = std::min(a.size(), b.size());
  return a.take_front(n) == b.take_front(n);
}

/// The value `extract` reads, if an insertvalue of its chain wrote exactly
/// that field.
Value insertedValue(LLVM::ExtractValueOp extract) {
  ArrayRef<int64_t> position = extract.getPosition();
  auto insert = extract.getContainer().getDefiningOp<LLVM::InsertValueOp>();
  while (insert) {
    if (insert.getPosition() == position)
      return insert.getValue();
    if (overlaps(insert.getPosition(), position))
      return {};
    insert = insert.getContainer().getDefiningOp<LLVM::InsertValueOp>();
  }
  return {};
}

struct TPFoldDescriptorReadsPass
    : tp::impl::TPFoldDescriptorReadsBase<TPFoldDescriptorReadsPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::LLVMFuncOp func) {
      bool folded = false;
      func.walk([&](LLVM::ExtractValueOp extract) {
        if (Value value = insertedValue(extract)) {
          extract.replaceAllUsesWith(value);
          folded = true;
        }
      });
      if (!folded)
        return;
      // Last op first, so that an op's users are gone before it is asked.
      for (Block &block : func.getBody())
        for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
          if (isOpTriviallyDead(&op))
            op.erase();
    });
  }
};

} // namespace
