//===- OnnxImporter.h - ONNX model -> tp dialect --------------*- C++ -*-===//
//
// Reads an ONNX model (binary protobuf, or ONNX's text syntax when the file
// starts with `<`), checks it with onnx::checker, and imports its graph as
// one func.func in the tp dialect with static shapes.
//
// Function signature, in this fixed order:
//   1. the graph inputs that are not initializers, in graph order, each with
//      `{tp.input = "<onnx name>"}`;
//   2. the floating-point initializers (the weights), in initializer order,
//      each with `{tp.param = "<onnx name>"}`; their data stays in the ONNX
//      file and is loaded by the runtime.
// Integer initializers (shapes, indices) become tp.constant ops. Results are
// the graph outputs, each with `{tp.output = "<onnx name>"}`. Every op's
// location is its ONNX node name, e.g. loc("/fc1/Gemm").
//
//===----------------------------------------------------------------------===//
#ifndef TP_IMPORT_ONNXIMPORTER_H
#define TP_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include <map>

namespace mlir::tp {

struct OnnxImportOptions {
  /// Static shapes for graph inputs (`--shape x=8x64`); required for every
  /// input with a symbolic or unknown dim.
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Graph inputs bound to a value at compile time (`--constant-input
  /// k=k.npy`): name -> .npy or ONNX TensorProto file. They become
  /// constants; the program no longer takes them.
  std::map<std::string, std::string> constantInputs;
  /// BatchNormalization: "" follows the model (training mode when the node
  /// says so: training_mode = 1, or running statistics as outputs before
  /// opset 14), "train" treats every one as in training (model.train()),
  /// "eval" every one as in inference.
  std::string batchNorm;
  /// Dropout: "" follows the model (a training-mode Dropout with a ratio
  /// above 0 draws masks: tp.dropout), "eval" makes every one the identity
  /// (model.eval()).
  std::string dropout;
  /// Training-mode Dropout's masks are keyed by this seed (`--seed`).
  int64_t seed = 0;
  /// The parameters an eval-mode export merged by value get their own
  /// initializers back (tprt/UntieMerged.h): they are trained apart.
  bool untieMerged = false;
  /// Training-mode batch statistics are computed over this many groups of
  /// the batch (DDP: one per data-parallel rank, each its own statistics;
  /// 1: over the whole batch, as one device or SyncBatchNorm).
  int64_t batchNormGroups = 1;
  /// Whether the running statistics that training-mode BatchNormalization
  /// updates become results of the function (`tp.buffer_update`), fed
  /// back to the next run as PyTorch's forward in train() updates them;
  /// tp-autodiff carries them from step to step.
  bool bufferUpdates = true;
  /// Name of the imported function.
  std::string functionName = "forward";
};

/// The state argument (and result) counting a program's runs, which keys
/// training-mode Dropout's masks (tp.dropout's `step`).
constexpr const char kDropoutStepName[] = "dropout.step";

/// The ONNX opsets (default domain) the importer accepts.
constexpr int64_t kMinOnnxOpset = 1;
constexpr int64_t kMaxOnnxOpset = 17;

/// Imports `path`. On failure emits diagnostics (each naming the file, node
/// or input concerned) and returns null.
OwningOpRef<ModuleOp> importOnnxFile(MLIRContext *context, StringRef path,
                                     const OnnxImportOptions &options);

/// Every supported ONNX op type (default domain) with the first opset whose
/// semantics the importer handles.
ArrayRef<std::pair<StringRef, int64_t>> supportedOnnxOps();

/// Parses a `--constant-input` value `name=file` into `options`; returns an
/// error message on malformed input.
std::optional<std::string> parseConstantInputBinding(StringRef binding,
                                                     OnnxImportOptions &options);

/// Parses `--shape` values such as `x=8x64` into `options`; returns an error
/// message on malformed input.
std::optional<std::string> parseShapeBinding(StringRef binding,
                                             OnnxImportOptions &options);

} // namespace mlir::tp

#endif // TP_IMPORT_ONNXIMPORTER_H
