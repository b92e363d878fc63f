//===- tp-opt.cpp - mlir-opt with every tp dialect and pass ---------------===//
//
// Like mlir-opt: all upstream dialects, extensions and passes (shard, linalg,
// bufferization, gpu, nvvm, mpi, ...) plus tp's own.
//
//===----------------------------------------------------------------------===//
#include "tp/InitTP.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::tp::registerTPPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::tp::registerTPDialects(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tp optimizer driver: tp and upstream MLIR passes\n",
      registry));
}
