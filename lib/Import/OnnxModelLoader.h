//===- OnnxModelLoader.h - read and check ONNX files ----------*- C++ -*-===//
//
// The only code that calls into the ONNX library's throwing APIs (checker,
// shape inference); it is compiled with exceptions and turns them into
// messages.
//
//===----------------------------------------------------------------------===//
#ifndef TP_LIB_IMPORT_ONNXMODELLOADER_H
#define TP_LIB_IMPORT_ONNXMODELLOADER_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include <memory>
#include <map>
#include <string>

namespace mlir::tp {

/// The data of the large floating-point initializers that loadOnnxModel
/// left in the model file (OnnxWeightPayloads.cpp): their raw_data is a
/// one-byte stand-in. The compiler reads a weight's type and shape; a
/// reader of its values asks here.
struct OnnxWeightPayloads {
  /// The model file, mapped.
  std::unique_ptr<llvm::MemoryBuffer> file;
  /// Initializer -> its data in `file`. (The parse's initializers do not
  /// move: protobuf allocates each repeated message on its own.)
  llvm::DenseMap<const onnx::TensorProto *, llvm::StringRef> inFile;

  /// Puts `tensor`'s data back into it if it was left in the file.
  void restore(onnx::TensorProto &tensor);
  /// `tensor`'s raw data, in the file or in the tensor.
  llvm::StringRef rawData(const onnx::TensorProto &tensor) const;
};

/// Parses the binary model in `bytes` (`file`, mapped), leaving large
/// floating-point initializers' data there (recorded in `payloads`); the
/// graph's fields are read from `file`. False if the bytes are not a
/// well-formed protobuf message.
bool parseLeavingWeightPayloads(llvm::StringRef bytes,
                                llvm::sys::fs::file_t file,
                                onnx::ModelProto &model,
                                OnnxWeightPayloads &payloads);

/// Reads `path` (binary protobuf, or text syntax if it starts with `<`) and
/// runs onnx::checker. Returns an empty string on success, else the message.
/// Large weights' data stays in the file, in `payloads`.
std::string loadOnnxModel(const std::string &path, onnx::ModelProto &model,
                          OnnxWeightPayloads &payloads);

/// Runs ONNX shape inference in place (after the caller bound input dims).
/// Returns an empty string on success, else the message.
std::string inferOnnxShapes(onnx::ModelProto &model);

/// Turns the float Constant nodes that are read as a layer's parameters
/// (OnnxConstantWeights.cpp) into initializers of the same name, so that
/// plans split them and training updates them.
void promoteConstantWeights(onnx::GraphProto &graph);

/// Binds graph inputs to values at compile time (`--constant-input`,
/// OnnxConstantInputs.cpp): input name -> .npy or TensorProto file, added
/// as initializers. Returns an empty string on success, else the message.
std::string bindConstantInputs(onnx::GraphProto &graph,
                               const std::map<std::string, std::string> &files);

} // namespace mlir::tp

#endif // TP_LIB_IMPORT_ONNXMODELLOADER_H
