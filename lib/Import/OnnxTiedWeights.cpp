//===- OnnxTiedWeights.cpp - weights the exporter copied ------------------===//
//
// torch.onnx.export's constant folding turns a Linear's `W^T` into a new
// initializer. When the Linear shares its weight with another module (GPT-2's
// LM head is the token embedding), the folded copy is a second, independent
// tensor in the file: training it apart from the original would give neither
// PyTorch's gradient (the sum over both uses) nor its update. A renamed
// initializer whose data is exactly the transpose of a named one is read as
// that transpose, so the tie is back.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

using namespace mlir;
using namespace mlir::tp;

/// The f32 data of an initializer stored in the file (not external), or
/// nothing.
static std::optional<std::vector<float>>
floatData(const onnx::TensorProto &t, const OnnxWeightPayloads &payloads) {
  if (t.data_type() != onnx::TensorProto::FLOAT ||
      t.data_location() == onnx::TensorProto::EXTERNAL)
    return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  std::vector<float> data(n);
  if (t.has_raw_data()) {
    StringRef raw = payloads.rawData(t);
    if (int64_t(raw.size()) != n * int64_t(sizeof(float)))
      return std::nullopt;
    std::memcpy(data.data(), raw.data(), n * sizeof(float));
  } else if (t.float_data_size() == n) {
    std::copy(t.float_data().begin(), t.float_data().end(), data.begin());
  } else {
    return std::nullopt;
  }
  return data;
}

/// PyTorch's parameter names are dotted paths (`transformer.wte.weight`);
/// folded initializers are named after the op (`onnx::MatMul_534`).
static bool isRenamed(StringRef name) {
  return name.contains("::") || !name.contains('.');
}

std::map<std::string, std::string>
tp::findTransposedCopies(const onnx::GraphProto &graph,
                         const OnnxWeightPayloads &payloads) {
  std::map<std::string, std::string> copies;
  SmallVector<const onnx::TensorProto *> named, renamed;
  for (const auto &init : graph.initializer())
    if (init.dims_size() == 2 && init.data_type() == onnx::TensorProto::FLOAT)
      (isRenamed(init.name()) ? renamed : named).push_back(&init);
  for (const onnx::TensorProto *copy : renamed) {
    std::optional<std::vector<float>> c;
    for (const onnx::TensorProto *orig : named) {
      if (orig->dims(0) != copy->dims(1) || orig->dims(1) != copy->dims(0))
        continue;
      if (!c && !(c = floatData(*copy, payloads)))
        break;
      std::optional<std::vector<float>> o = floatData(*orig, payloads);
      if (!o)
        continue;
      int64_t rows = orig->dims(0), cols = orig->dims(1);
      bool same = true;
      for (int64_t i = 0; same && i < rows; ++i)
        for (int64_t j = 0; same && j < cols; ++j)
          same = (*o)[i * cols + j] == (*c)[j * rows + i];
      if (same) {
        copies[copy->name()] = orig->name();
        break;
      }
    }
  }
  return copies;
}
