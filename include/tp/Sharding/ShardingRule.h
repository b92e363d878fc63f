//===- ShardingRule.h - per-op sharding rules -----------------*- C++ -*-===//
//
// In the manner of Shardy's OpShardingRule: an op's tensor dims are
// expressed as "factors", einsum-like. matmul [b, m, k] x [k, n] -> [b, m, n]
// has factors b, m, n (parallel) and k (reduction: sharding it leaves the
// result a partial sum). A dim can be a compound of several factors, major
// first, which is how a reshape [4, 16, 64] -> [4, 16, 4, 16] keeps a
// hidden-dim sharding on the heads factor.
//
//===----------------------------------------------------------------------===//
#ifndef TP_SHARDING_SHARDINGRULE_H
#define TP_SHARDING_SHARDINGRULE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::tp {

enum class FactorKind {
  /// Appears in the results; sharding it needs no communication.
  Parallel,
  /// Summed over (contraction, ReduceSum/Mean, a vocab-split gather):
  /// sharding it makes the results partial sums.
  Reduction,
  /// Must be whole on every device (softmax axis, normalized dims, concat
  /// axis): propagation never shards it.
  Replicated,
};

/// One tensor dim's factors, major first (more than two only in reshapes).
using DimFactorList = SmallVector<int, 2>;
/// A tensor's factors, dim by dim. Sized so that a typical op's rule needs
/// no heap: a deep model's step has tens of thousands of them.
using TensorFactors = SmallVector<DimFactorList, 4>;

struct ShardingRule {
  SmallVector<int64_t, 8> sizes;
  SmallVector<FactorKind, 8> kinds;
  /// For every operand / result, for every dim, its factors (major first);
  /// empty for a dim of size 1 or a broadcast dim.
  SmallVector<TensorFactors, 2> operands;
  SmallVector<TensorFactors, 1> results;
  /// Propagation visits low priorities first: elementwise and reshape-like
  /// ops (0) before contractions and reductions (1).
  int priority = 0;

  int addFactor(int64_t size, FactorKind kind) {
    sizes.push_back(size);
    kinds.push_back(kind);
    return sizes.size() - 1;
  }
  int numFactors() const { return sizes.size(); }
};

/// The rule of a tp op, or std::nullopt if tp has none for it.
std::optional<ShardingRule> getShardingRule(Operation *op);

} // namespace mlir::tp

#endif // TP_SHARDING_SHARDINGRULE_H
