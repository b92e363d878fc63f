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
#include <map>
#include <string>

namespace mlir::tp {

/// Reads `path` (binary protobuf, or text syntax if it starts with `<`) and
/// runs onnx::checker. Returns an empty string on success, else the message.
std::string loadOnnxModel(const std::string &path, onnx::ModelProto &model);

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
