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

/// Which machine the program runs on.
struct Target {
  bool cuda = false;
  /// CPU: the CUDA target's kernel loops (tp-prepare-gpu-buffers, parallel
  /// loops tiled into blocks of `blockSize` threads) run on the host, with
  /// OpenBLAS GEMMs and host collectives: the GPU-specific rewrites checked
  /// against references where there is no GPU.
  bool gpuLoopsOnCpu = false;
  /// CPU: a model's layers that repeat at least this many times are
  /// compiled once (tp-outline-repeated-layers); 0: never.
  unsigned outlineLayers = 2;
  /// CPU: loop nests of at least this many iterations run in parallel
  /// (tp-linalg-to-loops' min-parallel-iterations); 0: none.
  int64_t parallelLoops = 32768;
  /// CUDA: the GPU architecture the kernels are compiled for.
  std::string arch = "sm_90";
  /// CUDA: threads per block of the generated kernels.
  int64_t blockSize = 256;
  /// CUDA: the toolkit whose ptxas and libdevice build the kernels; empty:
  /// see cudaToolkitPath.
  std::string cudaPath;
};

/// `path`, else $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH, else /usr/local/cuda.
/// (MLIR's own lookup stops at the variables and then links no libdevice,
/// so kernels calling expf or powf fail in ptxas.)
std::string cudaToolkitPath(StringRef path);

/// The kernels' binaries (`format`: "bin" cubins, "isa" PTX) by
/// gpu-module-to-binary with the target's toolkit (cudaToolkitPath).
void addCudaModuleToBinary(OpPassManager &pm, const Target &target,
                           StringRef format);

/// `tp-lower-to-llvm` (CPU) and `tp-lower-to-cuda`: tp ops on (local)
/// static shapes -> linalg, shard collectives -> runtime calls, -> buffers
/// (results become out-parameters, temporaries are freed) -> the LLVM
/// dialect. CPU: loops, OpenBLAS GEMMs, libm for transcendentals without an
/// LLVM intrinsic (erf). CUDA: cuBLAS GEMMs, kernels embedded as cubins.
LogicalResult buildLowerToLLVMPipeline(OpPassManager &pm,
                                       const Target &target);

/// Its two halves: tensors in linalg with collectives as tprt calls (the
/// function keeps its signature and tp attributes), then buffers to LLVM.
/// With `packStepArguments` (a program's one public function, the step),
/// the step takes the runtime's array of descriptor pointers
/// (tp-pack-step-arguments) instead of one argument per buffer.
LogicalResult buildLowerToRuntimeCallsPipeline(OpPassManager &pm,
                                               const Target &target);
LogicalResult buildBufferizeToLLVMPipeline(OpPassManager &pm,
                                           const Target &target,
                                           bool packStepArguments = false);

/// The CUDA second half in the stages `tp-compile --emit` can stop after:
///  - buffers to the gpu dialect: cuBLAS calls for matmuls, kernels
///    (gpu.module / gpu.launch_func) for every other linalg op;
///  - kernels to NVVM for `target.arch` (PTX 8.0);
///  - then (in buildBufferizeToLLVMPipeline) host code to LLVM (mgpu*
///    launches, the runtime's allocator) and the kernels to cubins (ptxas).
LogicalResult buildCudaBufferizeToGpuPipeline(OpPassManager &pm,
                                              const Target &target);
LogicalResult buildCudaKernelsToNVVMPipeline(OpPassManager &pm,
                                             const Target &target);

/// `tp-sharding-pipeline`: tp-apply-plan -> tp-propagate-sharding ->
/// tp-partition -> tp-lower-to-linalg: the per-device program on local
/// shapes with shard collectives, as `tp-compile --emit=sharded` writes it.
void buildShardingPipeline(OpPassManager &pm, const TPApplyPlanOptions &plan);

/// Registers every named tp pipeline with the global registry.
void registerTPPipelines();

} // namespace mlir::tp

#endif // TP_PIPELINES_PIPELINES_H
