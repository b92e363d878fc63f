//===- OnnxModelLoader.cpp - read and check ONNX files --------------------===//
#include "OnnxModelLoader.h"

#include "onnx/checker.h"
#include "tprt/ExternalData.h"
#include "tprt/Paths.h"
#include "tprt/OnnxText.h"
#include "onnx/shape_inference/implementation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <limits>

/// parseLeavingWeightPayloads, with the file opened for the reads of its
/// graph walk.
static bool parseFromFile(const std::string &path, llvm::StringRef bytes,
                          onnx::ModelProto &model,
                          mlir::tp::OnnxWeightPayloads &payloads) {
  llvm::Expected<llvm::sys::fs::file_t> file =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!file) {
    llvm::consumeError(file.takeError());
    return false;
  }
  bool parsed =
      mlir::tp::parseLeavingWeightPayloads(bytes, *file, model, payloads);
  llvm::sys::fs::closeFile(*file);
  return parsed;
}

std::string mlir::tp::loadOnnxModel(const std::string &path,
                                    onnx::ModelProto &model,
                                    OnnxWeightPayloads &payloads) {
  // Mapped, not copied: a deep model's file is hundreds of MB, most of it
  // weights' data that the parse below leaves there.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return path + ": cannot open file";
  llvm::StringRef bytes = (*file)->getBuffer();
  if (bytes.empty())
    return path + ": empty file, not an ONNX model";

  bool text = tprt::looksLikeOnnxText(std::string_view(bytes.data(), bytes.size()));
  if (text) {
    std::string error;
    if (!tprt::parseOnnxText(bytes.str(), model, error))
      return path + ": not a valid ONNX text model: " + error;
  } else if (bytes.size() > size_t(std::numeric_limits<int>::max())) {
    return path + ": larger than protobuf's 2 GB limit; save the weights as "
                  "ONNX external data";
  } else if (!parseFromFile(path, bytes, model, payloads)) {
    // Parsed whole by protobuf, which says what it could of a bad file.
    model.Clear();
    payloads.inFile.clear();
    if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
      return path + ": not an ONNX model (the protobuf does not parse; is "
                    "the file truncated?)";
  }
  if (payloads.inFile.empty())
    file->reset();
  else
    payloads.file = std::move(*file);
  if (!model.has_graph() || model.ir_version() == 0)
    return path + ": not an ONNX model (no graph or no ir_version)";

  // The path form knows the model's folder, where external data lives,
  // but reads and parses the file again: seconds for a deep model whose
  // weights are in it. Such a model is checked in memory.
  bool externalData = llvm::any_of(
      model.graph().initializer(), [](const onnx::TensorProto &t) {
        return t.data_location() == onnx::TensorProto::EXTERNAL;
      });
  // Confined to the model's folder before the checker looks for the files.
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    uint64_t size;
    if (!tprt::onnxTensorBytes(t, size))
      return path + ": initializer '" + t.name() +
             "' keeps data of no fixed size, or too large, as external data";
    tprt::ExternalDataRange range;
    if (tprt::Status s =
            tprt::resolveExternalData(t, tprt::folderOf(path), size, range);
        !s)
      return path + ": " + s.message();
  }
  try {
    if (text || !externalData)
      onnx::checker::check_model(model);
    else
      onnx::checker::check_model(path);
  } catch (const std::exception &e) {
    return path + ": the model fails the ONNX checker: " + e.what();
  }
  return {};
}

std::string mlir::tp::inferOnnxShapes(onnx::ModelProto &model) {
  try {
    onnx::ShapeInferenceOptions options{/*check_type=*/true,
                                        /*error_mode=*/0,
                                        /*enable_data_propagation=*/false};
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       options);
  } catch (const std::exception &e) {
    return std::string("ONNX shape inference fails: ") + e.what();
  }
  return {};
}
