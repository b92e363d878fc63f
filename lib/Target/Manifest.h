//===- Manifest.h - describe a program for tp-run --------------*- C++ -*-===//
#ifndef TP_LIB_TARGET_MANIFEST_H
#define TP_LIB_TARGET_MANIFEST_H

#include "tp/Target/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir::tp {

/// One argument or result of the step in manifest.json.
struct ManifestEntry {
  /// Its ONNX name, kind, dtype, global shape and PyTorch names.
  TensorInfo global;
  SmallVector<int64_t> localShape;
  /// For each dim, the mesh axes that split it.
  SmallVector<SmallVector<std::string, 1>> sharding;
  /// Pipeline stages: the stage whose value of a result counts; the stages
  /// that read an argument or write a result, where not all do.
  std::optional<int64_t> stage;
  SmallVector<int64_t> stages;
  /// A result the runtime writes into its argument's buffer.
  bool inPlace = false;

  /// Bytes on one device.
  int64_t localBytes() const;
};

/// manifest.json: mesh, entry point, every argument and result with its
/// ONNX name, kind, dtype, global and local shape and sharding, the model
/// file and its SHA-256, the collective sites and the axis masks used.
/// The entries are kept out of the JSON tree: each json::Object holds a
/// hash table of at least 64 slots (~4 KB), which for a deep training
/// step's thousands of entries was tens of MB of fresh pages.
struct Manifest {
  /// Every field but "arguments" and "results".
  llvm::json::Object fields;
  std::vector<ManifestEntry> arguments, results;

  /// The JSON text as llvm::json writes it (keys sorted, indented by 2).
  std::string render() const;
};

/// A module attribute the lowering left for the manifest (site names and
/// phases: an array of strings; microbatches: a dense i64 array) as JSON;
/// empty where the module has none.
llvm::json::Array moduleStrings(ModuleOp module, StringRef name);
llvm::json::Array moduleIntegers(ModuleOp module, StringRef name);

FailureOr<Manifest> buildManifest(ModuleOp module, func::FuncOp func,
                                  const std::vector<TensorInfo> &global,
                                  StringRef modelPath, StringRef modelSha256,
                                  StringRef target);

} // namespace mlir::tp

#endif // TP_LIB_TARGET_MANIFEST_H
