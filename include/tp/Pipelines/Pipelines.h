//===- Pipelines.h - named tp pass pipelines ------------------*- C++ -*-===//
//
// Pipelines are registered by name so that tp-opt and tp-compile run exactly
// the same passes.
//
//===----------------------------------------------------------------------===//
#ifndef TP_PIPELINES_PIPELINES_H
#define TP_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "tp/Plan/Passes.h"

namespace mlir::tp {

/// `tp-lower-to-llvm`: tp ops on (local) static shapes -> linalg, shard
/// collectives -> tprt calls, -> buffers (results become out-parameters,
/// temporaries are freed) -> loops -> the LLVM dialect, for the CPU.
/// Transcendentals without an LLVM intrinsic (erf) become libm calls.
LogicalResult buildLowerToLLVMPipeline(OpPassManager &pm);

/// Its two halves: tensors in linalg with collectives as tprt calls (the
/// function keeps its signature and tp attributes), then buffers to LLVM.
LogicalResult buildLowerToRuntimeCallsPipeline(OpPassManager &pm);
LogicalResult buildBufferizeToLLVMPipeline(OpPassManager &pm);

/// `tp-sharding-pipeline`: tp-apply-plan -> tp-propagate-sharding ->
/// tp-partition -> tp-lower-to-linalg: the per-device program on local
/// shapes with shard collectives, as `tp-compile --emit=sharded` writes it.
void buildShardingPipeline(OpPassManager &pm, const TPApplyPlanOptions &plan);

/// Registers every named tp pipeline with the global registry.
void registerTPPipelines();

} // namespace mlir::tp

#endif // TP_PIPELINES_PIPELINES_H
