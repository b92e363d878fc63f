//===- Pipelines.cpp - named tp pass pipelines ----------------------------===//
#include "tp/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "tp/Conversion/Passes.h"
#include "tp/Sharding/Passes.h"

using namespace mlir;

// Written as pipeline text so that it reads like the mlir-opt command a
// compiler engineer would type.
static constexpr const char *kLowerToRuntimeCalls =
    "tp-lower-to-linalg,func.func(tp-fuse-elementwise),"
    "tp-lower-collectives";
static constexpr const char *kBufferizeToLLVM =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    // Results become caller-provided buffers; temporaries are freed.
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},"
    "buffer-deallocation-pipeline,tp-lower-matmul-to-blas,"
    "func.func(convert-linalg-to-loops),tp-outline-loop-nests,"
    "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
    // math-to-llvm first (rsqrt, exp, ...), then libm for the rest (erf).
    "convert-math-to-llvm,convert-math-to-libm,"
    // bf16 conversions as integer arithmetic (no libgcc __truncsfbf2).
    "func.func(arith-expand{include-bf16}),"
    "finalize-memref-to-llvm,convert-vector-to-llvm,convert-to-llvm,"
    "reconcile-unrealized-casts";

// Parsing fails only if a pass is not registered (registerTPPasses and
// registerAllPasses must have run).
LogicalResult tp::buildLowerToRuntimeCallsPipeline(OpPassManager &pm) {
  return parsePassPipeline(kLowerToRuntimeCalls, pm, llvm::errs());
}

LogicalResult tp::buildBufferizeToLLVMPipeline(OpPassManager &pm) {
  return parsePassPipeline(kBufferizeToLLVM, pm, llvm::errs());
}

LogicalResult tp::buildLowerToLLVMPipeline(OpPassManager &pm) {
  return success(succeeded(buildLowerToRuntimeCallsPipeline(pm)) &&
                 succeeded(buildBufferizeToLLVMPipeline(pm)));
}

void tp::buildShardingPipeline(OpPassManager &pm,
                               const TPApplyPlanOptions &plan) {
  pm.addPass(createTPApplyPlan(plan));
  pm.addPass(createTPPropagateSharding());
  pm.addPass(createTPPartition());
  pm.addPass(createTPLowerToLinalg());
}

namespace {
/// The options of tp-apply-plan, for the pipeline.
struct ShardingPipelineOptions
    : PassPipelineOptions<ShardingPipelineOptions> {
  Option<std::string> plan{*this, "plan", llvm::cl::desc("Plan file (JSON)")};
  ListOption<std::string> mesh{*this, "mesh",
                               llvm::cl::desc("Mesh axes, e.g. dp=2,tp=4")};
  ListOption<std::string> entries{
      *this, "entry", llvm::cl::desc("Plan entries, e.g. fc1=colwise")};
  Option<std::string> dataParallel{
      *this, "data-parallel",
      llvm::cl::desc("Mesh axis splitting the inputs' batch dim")};
  ListOption<std::string> inputs{*this, "inputs",
                                 llvm::cl::desc("Input layouts, e.g. x=sequence")};
  ListOption<std::string> outputs{
      *this, "outputs", llvm::cl::desc("Output layouts, e.g. y=sequence")};
};
} // namespace

void tp::registerTPPipelines() {
  PassPipelineRegistration<ShardingPipelineOptions>(
      "tp-sharding-pipeline",
      "Plan, propagate, partition and lower to linalg: the per-device "
      "program (tp-apply-plan, tp-propagate-sharding, tp-partition, "
      "tp-lower-to-linalg)",
      [](OpPassManager &pm, const ShardingPipelineOptions &o) {
        TPApplyPlanOptions plan;
        plan.planFile = o.plan;
        plan.meshSpec.assign(o.mesh.begin(), o.mesh.end());
        plan.entries.assign(o.entries.begin(), o.entries.end());
        plan.dataParallel = o.dataParallel;
        plan.inputs.assign(o.inputs.begin(), o.inputs.end());
        plan.outputs.assign(o.outputs.begin(), o.outputs.end());
        buildShardingPipeline(pm, plan);
      });
  PassPipelineRegistration<>(
      "tp-lower-to-llvm",
      "Lower tp ops on static shapes to the LLVM dialect for the CPU: "
      "tp-lower-to-linalg, one-shot bufferization, loops, LLVM",
      [](OpPassManager &pm) { (void)buildLowerToLLVMPipeline(pm); });
}
