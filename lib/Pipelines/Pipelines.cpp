//===- Pipelines.cpp - named tp pass pipelines ----------------------------===//
#include "tp/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "tp/Conversion/Passes.h"
#include "tp/Sharding/Passes.h"

#include <cstdlib>

using namespace mlir;

// Written as pipeline text so that it reads like the mlir-opt command a
// compiler engineer would type.
// Convolutions first: on the CPU oneDNN runs them and their gradients
// (tp-lower-conv-to-dnnl); what it does not take, and every conv gradient
// on the CUDA target, is written as tp.conv, which lowers to im2col and a
// GEMM.
static constexpr const char *kCpuConvs =
    "tp-lower-conv-to-dnnl,tp-expand-conv-gradients,";
static constexpr const char *kGpuConvs = "tp-expand-conv-gradients,";
static constexpr const char *kLowerToRuntimeCalls =
    "tp-lower-to-linalg,func.func(tp-fuse-elementwise),"
    "tp-lower-collectives{target=%s}";
// On the CPU, a model's repeated layers are compiled once: outlined on
// the per-device tp ops, so that the lowering to linalg and the fusion
// (which grew faster than depth) also see each distinct layer once.
static constexpr const char *kOutlineRepeatedLayers =
    "tp-outline-repeated-layers{min-repeats=%s}";
static constexpr const char *kBufferize =
    // The step's own boundary first: one-shot would relate each of its
    // results to each of its arguments (quadratic in a deep step's weights).
    "tp-bufferize-step-signature,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    // Results become caller-provided buffers; temporaries are freed.
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs},"
    // A pipeline's stages write the step's results themselves.
    "tp-stage-results-to-out-params,"
    // buffer-deallocation-pipeline, spelled out for
    // tp-free-distinct-allocations (linear where the simplification after
    // it is quadratic in a block's buffers).
    "func.func(expand-realloc{emit-deallocs=false},canonicalize,"
    "ownership-based-buffer-deallocation,canonicalize,"
    "tp-free-distinct-allocations,buffer-deallocation-simplification),"
    "bufferization-lower-deallocations,func.func(cse,canonicalize),"
    "tp-free-after-last-use,"
    "tp-find-in-place-updates,";
static constexpr const char *kCpuLinalgToLoops =
    "tp-lower-matmul-to-blas,"
    "func.func(tp-linalg-to-loops{min-parallel-iterations=%s},"
    "tp-fuse-parallel-loops),"
    // The peak of temporaries once the fusion moved allocations and frees.
    "tp-plan-peak-memory,"
    "tp-outline-loop-nests,"
    "tp-trace-kernel-sites";
static constexpr const char *kCpuLoopsToLLVM =
    "func.func(tp-approximate-math),"
    "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
    // math-to-llvm first (rsqrt, exp, ...), then libm for the rest (erf).
    "convert-math-to-llvm,convert-math-to-libm,"
    // bf16 arithmetic in f32 registers, rounded back after each op (as
    // PyTorch's CPU kernels do), and bf16 conversions as integer
    // arithmetic (no libgcc __truncsfbf2); min and max kept for LLVM,
    // which vectorizes their reductions.
    "func.func(arith-emulate-unsupported-floats{source-types=bf16 "
    "target-type=f32},tp-expand-arith),"
    // Private functions take static buffers as bare pointers; buffers come
    // from the runtime's caching allocator (tprt.h) through aligned_alloc,
    // whose pointer is both the descriptor's allocated and aligned one, as
    // a callee that frees a bare-pointer argument needs.
    "tp-bare-pointer-calls,"
    "finalize-memref-to-llvm{use-generic-functions use-aligned-alloc},"
    "%sconvert-to-llvm,"
    "reconcile-unrealized-casts,"
    // Most allocations' descriptors are read back for their pointers only.
    "tp-fold-descriptor-reads";

// The CUDA target, in the stages tp-compile --emit can stop after.
// Matmuls go to cuBLAS; every other linalg op becomes a parallel loop,
// tiled into blocks of threads (the part --gpu-loops-on-cpu runs on the
// host, which uploads constants with memref.copy), then a kernel.
// Indexed by Target::gpuLoopsOnCpu: cuBLAS and gpu.memcpy, or OpenBLAS and
// memref.copy.
static constexpr const char *kGpuLoops[] = {
    "tp-lower-matmul-to-blas{target=cuda},tp-prepare-gpu-buffers,",
    "tp-lower-matmul-to-blas,tp-prepare-gpu-buffers{host-upload},"};
static constexpr const char *kTiledGpuLoops =
    "func.func(convert-linalg-to-parallel-loops,"
    "tp-tile-parallel-loops-for-gpu{block-size=%s})";
static constexpr const char *kCudaLoopsToKernels =
    "func.func(gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
    "gpu-kernel-outlining,lower-affine,canonicalize,cse";
// sm_90 needs PTX 8.0 (LLVM's default, PTX 6.0, does not know the chip).
static constexpr const char *kCudaKernelsToNVVM =
    "convert-scf-to-cf,expand-strided-metadata,"
    "nvvm-attach-target{chip=%s features=+ptx80 O=3},"
    "gpu.module(convert-gpu-to-nvvm,canonicalize,cse,"
    "reconcile-unrealized-casts)";
// Host code as on the CPU, except that allocations call the runtime's
// allocator (GPU memory, which host code only passes on) and kernel
// launches and constant uploads become mgpu* calls (tprt's CUDA runtime
// provides them).
static constexpr const char *kCudaHostToLLVM =
    "convert-math-to-llvm,convert-math-to-libm,"
    "func.func(arith-expand{include-bf16}),"
    "%sfinalize-memref-to-llvm{use-generic-functions use-aligned-alloc},"
    "gpu-to-llvm,"
    "convert-to-llvm,reconcile-unrealized-casts";

// Parsing fails only if a pass is not registered (registerTPPasses and
// registerAllPasses must have run). `%s` in `text` becomes `value`.
static LogicalResult parse(OpPassManager &pm, StringRef text,
                           StringRef value = "") {
  auto [before, after] = text.split("%s");
  std::string pipeline = before.str();
  if (before.size() != text.size())
    pipeline += value.str() + after.str();
  return parsePassPipeline(pipeline, pm, llvm::errs());
}

LogicalResult tp::buildLowerToRuntimeCallsPipeline(OpPassManager &pm,
                                                   const tp::Target &target) {
  bool cpu = !target.cuda && !target.gpuLoopsOnCpu;
  if (cpu && target.outlineLayers &&
      failed(parse(pm, kOutlineRepeatedLayers,
                   std::to_string(target.outlineLayers))))
    return failure();
  return parse(pm, std::string(cpu ? kCpuConvs : kGpuConvs) +
                       kLowerToRuntimeCalls,
               target.cuda ? "cuda" : "cpu");
}

/// Bufferization and the CUDA target's parallel loops, tiled into blocks.
static LogicalResult buildBufferizeToGpuLoops(OpPassManager &pm,
                                              const tp::Target &target) {
  return parse(pm,
               std::string(kBufferize) + "tp-plan-peak-memory," +
                   kGpuLoops[target.gpuLoopsOnCpu] +
                   kTiledGpuLoops,
               std::to_string(target.blockSize));
}

LogicalResult tp::buildCudaBufferizeToGpuPipeline(OpPassManager &pm,
                                                  const tp::Target &target) {
  return success(succeeded(buildBufferizeToGpuLoops(pm, target)) &&
                 succeeded(parse(pm, kCudaLoopsToKernels)));
}

LogicalResult tp::buildCudaKernelsToNVVMPipeline(OpPassManager &pm,
                                                 const tp::Target &target) {
  return parse(pm, kCudaKernelsToNVVM, target.arch);
}

LogicalResult tp::buildBufferizeToLLVMPipeline(OpPassManager &pm,
                                               const tp::Target &target,
                                               bool packStepArguments) {
  StringRef pack = packStepArguments ? "tp-pack-step-arguments," : "";
  if (target.gpuLoopsOnCpu)
    return success(succeeded(buildBufferizeToGpuLoops(pm, target)) &&
                   succeeded(parse(pm, kCpuLoopsToLLVM, pack)));
  if (!target.cuda) {
    // Two texts, one `%s` each.
    return success(
        succeeded(parse(pm, std::string(kBufferize) + kCpuLinalgToLoops,
                        std::to_string(target.parallelLoops))) &&
        succeeded(parse(pm, kCpuLoopsToLLVM, pack)));
  }
  if (failed(buildCudaBufferizeToGpuPipeline(pm, target)) ||
      failed(buildCudaKernelsToNVVMPipeline(pm, target)) ||
      failed(parse(pm, kCudaHostToLLVM, pack)))
    return failure();
  // ptxas assembles each kernel module into a cubin, embedded.
  addCudaModuleToBinary(pm, target, "bin");
  return success();
}

std::string tp::cudaToolkitPath(StringRef path) {
  if (!path.empty())
    return path.str();
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v)
      return v;
  return "/usr/local/cuda";
}

void tp::addCudaModuleToBinary(OpPassManager &pm, const Target &target,
                               StringRef format) {
  GpuModuleToBinaryPassOptions options;
  options.compilationTarget = format.str();
  options.toolkitPath = cudaToolkitPath(target.cudaPath);
  pm.addPass(createGpuModuleToBinaryPass(options));
}

LogicalResult tp::buildLowerToLLVMPipeline(OpPassManager &pm,
                                           const Target &target) {
  return success(succeeded(buildLowerToRuntimeCallsPipeline(pm, target)) &&
                 succeeded(buildBufferizeToLLVMPipeline(pm, target)));
}

void tp::buildShardingPipeline(OpPassManager &pm,
                               const TPApplyPlanOptions &plan) {
  pm.addPass(createTPApplyPlan(plan));
  pm.addPass(createTPPropagateSharding());
  pm.addPass(createTPPadUneven());
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
/// The options of tp-lower-to-cuda.
struct CudaPipelineOptions : PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU architecture"),
                           llvm::cl::init("sm_90")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("The CUDA toolkit (ptxas, libdevice); default: "
                     "$CUDA_ROOT, $CUDA_HOME, $CUDA_PATH, else "
                     "/usr/local/cuda")};
};
} // namespace

void tp::registerTPPipelines() {
  PassPipelineRegistration<ShardingPipelineOptions>(
      "tp-sharding-pipeline",
      "Plan, propagate, partition and lower to linalg: the per-device "
      "program (tp-apply-plan, tp-propagate-sharding, tp-pad-uneven, "
      "tp-partition, tp-lower-to-linalg)",
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
  PassPipelineRegistration<CudaPipelineOptions>(
      "tp-lower-to-cuda",
      "Lower tp ops on static shapes for NVIDIA GPUs: matmuls to cuBLAS "
      "calls, the rest to kernels (parallel loops, blocks of threads, "
      "NVVM, a cubin assembled by ptxas), host code to LLVM with mgpu* "
      "launches and tprt_cuda_* collectives",
      [](OpPassManager &pm, const CudaPipelineOptions &o) {
        Target target;
        target.cuda = true;
        target.arch = o.chip;
        target.blockSize = o.blockSize;
        target.cudaPath = o.cudaPath;
        (void)buildLowerToLLVMPipeline(pm, target);
      });
  PassPipelineRegistration<>(
      "tp-lower-to-llvm",
      "Lower tp ops on static shapes to the LLVM dialect for the CPU: "
      "tp-lower-to-linalg, one-shot bufferization, loops, LLVM",
      [](OpPassManager &pm) { (void)buildLowerToLLVMPipeline(pm, Target()); });
}
