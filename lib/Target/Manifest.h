//===- Manifest.h - describe a program for tp-run --------------*- C++ -*-===//
#ifndef TP_LIB_TARGET_MANIFEST_H
#define TP_LIB_TARGET_MANIFEST_H

#include "tp/Target/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

namespace mlir::tp {

/// manifest.json: mesh, entry point, every argument and result with its
/// ONNX name, kind, dtype, global and local shape and sharding, the model
/// file and its SHA-256, the collective sites and the axis masks used.
FailureOr<llvm::json::Object>
buildManifest(ModuleOp module, func::FuncOp func,
              const std::vector<TensorInfo> &global, StringRef modelPath,
              StringRef modelSha256, StringRef target);

} // namespace mlir::tp

#endif // TP_LIB_TARGET_MANIFEST_H
