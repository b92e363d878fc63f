//===- OnnxModelLoader.cpp - read and check ONNX files --------------------===//
#include "OnnxModelLoader.h"

#include "onnx/checker.h"
#include "tprt/OnnxText.h"
#include "onnx/shape_inference/implementation.h"

#include <fstream>
#include <sstream>

std::string mlir::tp::loadOnnxModel(const std::string &path,
                                    onnx::ModelProto &model) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return path + ": cannot open file";
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = buffer.str();
  if (bytes.empty())
    return path + ": empty file, not an ONNX model";

  bool text = tprt::looksLikeOnnxText(bytes);
  if (text) {
    std::string error;
    if (!tprt::parseOnnxText(bytes, model, error))
      return path + ": not a valid ONNX text model: " + error;
  } else if (!model.ParseFromString(bytes)) {
    return path + ": not an ONNX model (the protobuf does not parse; is the "
                  "file truncated?)";
  }
  if (!model.has_graph() || model.ir_version() == 0)
    return path + ": not an ONNX model (no graph or no ir_version)";

  try {
    // The path form knows the model's folder, where external data lives.
    if (text)
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
