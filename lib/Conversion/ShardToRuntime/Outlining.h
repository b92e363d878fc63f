//===- Outlining.h - what the outlining passes share -----------*- C++ -*-===//
//
// tp-outline-loop-nests and tp-outline-repeated-layers both move a piece of
// a function into a function of its own, share it among pieces that are the
// same, and keep LLVM from inlining it back.
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_CONVERSION_SHARDTORUNTIME_OUTLINING_H
#define TP_LIB_CONVERSION_SHARDTORUNTIME_OUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {

/// Outlined pieces that do the same work on values of the same types: the
/// same function type and attributes (but the name), and bodies equal op
/// by op up to locations. (Printing each function to text as a key took a
/// fifth of tp-outline-repeated-layers on a deep step.)
class EquivalentFunctions {
public:
  /// The first function added that equals `func`; else `func`, now added.
  func::FuncOp lookupOrAdd(func::FuncOp func);

private:
  DenseMap<unsigned, SmallVector<func::FuncOp, 1>> byHash;
};

/// Private, internal for LLVM, and `noinline`: LLVM must neither inline the
/// function back (that would undo the sharing, and one function of thousands
/// of loops takes LLVM's loop passes minutes) nor export it.
void keepOutOfLine(func::FuncOp func);

/// The name of the `index`-th loop nest outlined from `func`, and whether
/// a function is such a nest (tp-trace-kernel-sites brackets their calls).
std::string loopNestName(func::FuncOp func, int index);
bool isOutlinedLoopNest(func::FuncOp func);

/// Every call of an outlined loop nest in `module`, in order, with the
/// nest it calls (callees found through one symbol table).
SmallVector<std::pair<func::CallOp, func::FuncOp>>
loopNestCalls(ModuleOp module);

/// Constants that ops under `scope` read from outside it are cloned at the
/// start of `block`. The outlined function then has them in its body instead
/// of as arguments; and outlining, which redirects every use of a value it
/// captures, no longer walks the thousands of uses a function's shared
/// `%c0` has (that made outlining quadratic: minutes for a 32-layer step).
void cloneConstantsInto(RewriterBase &rewriter, Operation *scope,
                        Block *block);

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_SHARDTORUNTIME_OUTLINING_H
