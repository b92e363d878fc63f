//===- Pipelines.cpp - named tp pass pipelines ----------------------------===//
#include "tp/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;

// Written as pipeline text so that it reads like the mlir-opt command a
// compiler engineer would type.
static constexpr const char *kLowerToLLVM =
    "tp-lower-to-linalg,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(convert-linalg-to-loops),"
    "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
    // math-to-llvm first (rsqrt, exp, ...), then libm for the rest (erf).
    "convert-math-to-llvm,convert-math-to-libm,"
    "finalize-memref-to-llvm,convert-vector-to-llvm,convert-to-llvm,"
    "reconcile-unrealized-casts";

void tp::buildLowerToLLVMPipeline(OpPassManager &pm) {
  if (failed(parsePassPipeline(kLowerToLLVM, pm)))
    llvm::report_fatal_error("tp: the tp-lower-to-llvm pipeline text is "
                             "invalid (a pass was renamed upstream?)");
}

void tp::registerTPPipelines() {
  PassPipelineRegistration<>(
      "tp-lower-to-llvm",
      "Lower tp ops on static shapes to the LLVM dialect for the CPU: "
      "tp-lower-to-linalg, one-shot bufferization, loops, LLVM",
      buildLowerToLLVMPipeline);
}
