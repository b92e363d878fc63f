//===- Plan.h - parallelize plans -----------------------------*- C++ -*-===//
//
// A plan says, in PyTorch's terms, how to parallelize a model:
//
//   {"mesh": {"dp": 2, "tp": 4},
//    "plan": {"fc1": "colwise", "fc2": "rowwise", "layers.*.norm": "sequence"},
//    "data_parallel": "dp",
//    "recompute": ["layers.*"],
//    "pipeline": {"axis": "pp", "split_before": ["layers.4"],
//                 "microbatches": 8, "schedule": "1f1b"},
//    "inputs": {"x": "replicate"}, "outputs": {"y": "replicate"}}
//
// or the same on the command line (--mesh dp=2,tp=4 --plan-entry
// fc1=colwise --data-parallel dp), whose entries add to or override the
// file's. docs/Plans.md is the user documentation.
//
//===----------------------------------------------------------------------===//
#ifndef TP_PLAN_PLAN_H
#define TP_PLAN_PLAN_H

#include "mlir/Support/LLVM.h"
#include <optional>
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir::tp {

struct PlanEntry {
  /// Module path pattern: `fc1`, `layers.*.attn.q` (`*` is one path part).
  std::string pattern;
  /// colwise | rowwise | sequence | replicate, optionally `@axis`.
  std::string style;
  /// Where the entry was written, for messages: `plan.json` or `--plan-entry`.
  std::string source;
};

/// Pipeline parallelism: consecutive modules on the stages of a mesh axis,
/// the batch in microbatches (`"pipeline": {"axis": "pp", "split_before":
/// ["layers.4"], "microbatches": 8, "schedule": "1f1b"}`).
struct PipelinePlan {
  /// The mesh axis whose coordinate is the stage; "" without a pipeline.
  std::string axis;
  /// Module paths that begin stages 1, 2, ... in model order; empty: tp
  /// balances the stages by FLOPs and parameter bytes.
  std::vector<std::string> splitBefore;
  int64_t microbatches = 1;
  /// gpipe | 1f1b.
  std::string schedule = "1f1b";
  /// Where the pipeline was given, for messages: the plan file's path or
  /// `--pipeline`.
  std::string source;

  bool enabled() const { return !axis.empty(); }
};

struct Plan {
  /// Mesh axes in order (major first).
  std::vector<std::pair<std::string, int64_t>> mesh;
  std::vector<PlanEntry> entries;
  std::string dataParallel;
  /// Training-mode BatchNormalization's statistics over the whole batch
  /// (SyncBatchNorm) rather than each data-parallel rank's part (DDP).
  bool syncBatchNorm = false;
  /// Training: modules whose activations are recomputed in the backward
  /// pass instead of kept (torch.utils.checkpoint), as module patterns.
  std::vector<std::string> recompute;
  PipelinePlan pipeline;
  /// Mixed precision: "bf16" (tp-autocast) or "" / "f32".
  std::string precision;
  /// The data-parallel gradient all-reduce's element type: "bf16" halves
  /// its bytes; "" / "f32" reduces in f32.
  std::string gradReduceDtype;
  /// Graph input / output name -> replicate | sequence | shard(d)[@axis].
  std::vector<std::pair<std::string, std::string>> inputs, outputs;

  /// Adds or replaces the entry for `pattern`.
  void setEntry(PlanEntry entry);
};

/// Reads a plan file into `plan`; returns an error message (with line and
/// column for malformed JSON) on failure.
std::optional<std::string> readPlanFile(StringRef path, Plan &plan);

/// `dp=2,tp=4` -> plan.mesh (replacing the file's mesh).
std::optional<std::string> parseMeshSpec(StringRef spec, Plan &plan);

/// A pass's `plan` and `mesh` options: the file (if any), then the mesh
/// over its mesh.
std::optional<std::string> readPlanOptions(StringRef planFile,
                                           ArrayRef<std::string> meshSpec,
                                           Plan &plan);

/// `axis=pp,split_before=layers.4+layers.8,microbatches=8,schedule=gpipe`
/// (tp-compile --pipeline) -> plan.pipeline, over the file's keys.
std::optional<std::string> parsePipelineSpec(StringRef spec, Plan &plan);

/// `fc1=colwise` -> an entry that overrides the file's for the same pattern.
/// Also used for `x=sequence` input / output specs (into `into`).
std::optional<std::string>
parseAssignment(StringRef spec, StringRef what,
                std::vector<std::pair<std::string, std::string>> &into);

/// `*` in a plan pattern stands for one module path part.
bool matchesPattern(StringRef pattern, StringRef module);

/// A wildcard entry that also matched a module an exact entry names: the
/// exact entry applies there (--report lists these).
struct PlanOverride {
  std::string module, exact, wildcard;
};

/// Which plan entry applies to which module.
struct PlanMatches {
  /// Per entry, the modules it applies to, in the order they were given.
  std::vector<std::vector<std::string>> applies;
  /// Per entry, whether it matched any module at all (an exact entry may
  /// have taken every module a pattern matched).
  std::vector<bool> matchedAny;
  std::vector<PlanOverride> overrides;
};

/// Decides which entry applies to each of `modules`. One entry matching is
/// the rule; when several do, an entry that names the module exactly (no
/// `*`) wins over the wildcards (recorded in `overrides`), and two wildcard
/// entries matching one module are an error naming both entries and the
/// module: the result must not depend on the order of a plan's keys.
std::optional<std::string> resolvePlanEntries(ArrayRef<PlanEntry> entries,
                                              ArrayRef<std::string> modules,
                                              PlanMatches &out);

/// The (at most) three of `modules` closest to `pattern` by edit distance,
/// comma-separated: what a message suggests for an entry that matches none.
std::string closestModules(StringRef pattern, ArrayRef<std::string> modules);

/// The PyTorch names of weight argument `i` of the imported function: the
/// importer's tp.torch_names (several for a tied weight), else its ONNX name.
SmallVector<StringRef> pytorchNames(func::FuncOp func, unsigned i);

/// Module path -> the weight arguments that belong to it: a weight belongs
/// to the module of each of its PyTorch names (a tied weight to several).
llvm::StringMap<SmallVector<unsigned>> weightsByModule(func::FuncOp func);

/// Among `params` (the weights of `module`), the one PyTorch names
/// `module.leaf` (`fc1.weight`).
std::optional<unsigned> moduleWeight(func::FuncOp func,
                                     ArrayRef<unsigned> params,
                                     StringRef module, StringRef leaf);

/// The weight and bias a colwise / rowwise style splits: `module.weight`
/// and `module.bias`, or, for nn.MultiheadAttention, its fused input
/// projection `module.in_proj_weight` and `module.in_proj_bias` (its output
/// projection is the submodule `module.out_proj`).
struct ProjectionWeights {
  std::optional<unsigned> weight, bias;
};
ProjectionWeights projectionWeights(func::FuncOp func,
                                    ArrayRef<unsigned> params,
                                    StringRef module);

/// Adds `--plan-entry` style entries (module=style[@axis]) to `plan`;
/// returns an error message for one without '='.
std::optional<std::string> addEntries(ArrayRef<std::string> entries,
                                      Plan &plan);

/// How many groups of the batch training-mode BatchNormalization takes its
/// statistics over: the data-parallel axis's size (DDP: each rank its own),
/// or 1 with SyncBatchNorm, without data parallelism or on one device.
int64_t batchNormGroups(const Plan &plan);

} // namespace mlir::tp

#endif // TP_PLAN_PLAN_H
