//===- Sharding.h - meshes and tensor layouts -----------------*- C++ -*-===//
//
// The C++ side of tp's sharding vocabulary. The mesh lives in the module as
// upstream's `shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}`;
// a tensor's layout is a `#tp.sharding` attribute (axes by name) and here a
// TensorSharding (axes by index), in PyTorch DTensor's terms: each dim is
// Shard over some mesh axes or Replicate, and the whole tensor may be
// Partial(sum) over further axes.
//
//===----------------------------------------------------------------------===//
#ifndef TP_SHARDING_SHARDING_H
#define TP_SHARDING_SHARDING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tp {

/// Attribute names tp's sharding passes use.
constexpr llvm::StringLiteral kMeshSymbol = "mesh";
constexpr llvm::StringLiteral kAxisNamesAttr = "tp.axis_names";
/// On func args / results and single-result ops: the plan's layout.
constexpr llvm::StringLiteral kShardingAttr = "tp.sharding";
/// Why a value has its layout (plan entry or propagation step).
constexpr llvm::StringLiteral kOriginAttr = "tp.sharding_origin";
/// On the module: the plan's wildcard entries an exact entry overrode on
/// some module (tp-apply-plan), which --report lists.
constexpr llvm::StringLiteral kPlanOverridesAttr = "tp.plan_overrides";
/// Set by propagation on every op: what it reads and produces.
constexpr llvm::StringLiteral kInShardingsAttr = "tp.in_shardings";
constexpr llvm::StringLiteral kOutShardingsAttr = "tp.out_shardings";

struct Mesh {
  SmallVector<std::string> names;
  SmallVector<int64_t> sizes;

  int64_t numDevices() const;
  std::optional<int> axisIndex(StringRef name) const;
  /// `dp=2,tp=4`
  std::string describe() const;
};

/// The mesh of `module`, or an error if it has none.
FailureOr<Mesh> getMesh(ModuleOp module);

/// Whether `func`'s body reads and makes ranked tensors only, as the global
/// program does before tp-partition; else `pass`'s error naming the op or
/// argument (tp-opt on an already partitioned or lowered program).
LogicalResult checkGlobalTensors(func::FuncOp func, StringRef pass);
/// Adds (or replaces) the module's mesh.
void setMesh(ModuleOp module, const Mesh &mesh);

/// The bytes of a statically shaped tensor (a byte at least per element);
/// 0 for other types.
int64_t staticBytes(Type type);

/// The names of `func`'s weights and optimizer state (its tp.param and
/// tp.state arguments): a training step's results named after one of them
/// (its gradient "grad_<name>", its update "<name>") keep its layout.
llvm::StringSet<> weightAndStateNames(func::FuncOp func);

struct TensorSharding {
  /// Per tensor dim, the mesh axes splitting it, major first.
  SmallVector<SmallVector<int>> dims;
  /// Mesh axes over which the tensor is a partial sum.
  SmallVector<int> partial;

  static TensorSharding replicated(int64_t rank);
  bool isReplicated() const;
  bool operator==(const TensorSharding &o) const {
    return dims == o.dims && partial == o.partial;
  }
  bool operator!=(const TensorSharding &o) const { return !(*this == o); }

  /// Product of the mesh sizes splitting dim `d`.
  int64_t splitFactor(int d, const Mesh &mesh) const;
  /// The per-device shape of a tensor with global `shape`.
  SmallVector<int64_t> localShape(ArrayRef<int64_t> shape,
                                  const Mesh &mesh) const;
  /// The per-device type.
  RankedTensorType localType(RankedTensorType global, const Mesh &mesh) const;

  ShardingAttr toAttr(MLIRContext *ctx, const Mesh &mesh) const;
  /// Reads an attribute; fails with `error` for unknown axes or wrong rank.
  static FailureOr<TensorSharding> fromAttr(ShardingAttr attr,
                                            const Mesh &mesh, int64_t rank,
                                            std::string &error);
  /// `[{}, {"tp"}]` as in the attribute, for messages and reports.
  std::string describe(const Mesh &mesh) const;
};

} // namespace mlir::tp

#endif // TP_SHARDING_SHARDING_H
