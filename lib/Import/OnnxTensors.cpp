//===- OnnxTensors.cpp - ONNX element types and tensor data ---------------===//
#include "NodeImporter.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

Type tp::convertOnnxElementType(int32_t t, MLIRContext *ctx) {
  Builder b(ctx);
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::string tp::onnxElementTypeName(int32_t t) {
  if (onnx::TensorProto::DataType_IsValid(t))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(t));
  return "data type " + std::to_string(t);
}

template <typename T, typename Field>
static DenseElementsAttr fromField(RankedTensorType type, const Field &field) {
  SmallVector<T> values(field.begin(), field.end());
  return DenseElementsAttr::get(type, ArrayRef<T>(values));
}

DenseElementsAttr tp::convertOnnxTensor(const onnx::TensorProto &tensor,
                                        MLIRContext *ctx, std::string &error) {
  Type elemType = convertOnnxElementType(tensor.data_type(), ctx);
  if (!elemType) {
    error = "unsupported element type " +
            onnxElementTypeName(tensor.data_type());
    return {};
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "tensor '" + tensor.name() +
            "' keeps its data outside the model file; only weights may";
    return {};
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(shape, elemType);
  int64_t n = type.getNumElements();

  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (elemType.isInteger(1)) { // ONNX bools are bytes; MLIR packs bits
      SmallVector<bool> values;
      for (char c : raw)
        values.push_back(c != 0);
      if (int64_t(values.size()) != n) {
        error = "tensor '" + tensor.name() + "' has the wrong data size";
        return {};
      }
      return DenseElementsAttr::get(type, ArrayRef<bool>(values));
    }
    int64_t bytes = n * ((elemType.getIntOrFloatBitWidth() + 7) / 8);
    if (int64_t(raw.size()) != bytes) {
      error = "tensor '" + tensor.name() + "' has " +
              std::to_string(raw.size()) + " bytes of data, expected " +
              std::to_string(bytes);
      return {};
    }
    return DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(raw.data(), raw.size()));
  }

  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (tensor.float_data_size() == n)
      return fromField<float>(type, tensor.float_data());
    break;
  case onnx::TensorProto::DOUBLE:
    if (tensor.double_data_size() == n)
      return fromField<double>(type, tensor.double_data());
    break;
  case onnx::TensorProto::INT64:
    if (tensor.int64_data_size() == n)
      return fromField<int64_t>(type, tensor.int64_data());
    break;
  case onnx::TensorProto::INT32:
    if (tensor.int32_data_size() == n)
      return fromField<int32_t>(type, tensor.int32_data());
    break;
  case onnx::TensorProto::INT16:
    if (tensor.int32_data_size() == n)
      return fromField<int16_t>(type, tensor.int32_data());
    break;
  case onnx::TensorProto::INT8:
    if (tensor.int32_data_size() == n)
      return fromField<int8_t>(type, tensor.int32_data());
    break;
  case onnx::TensorProto::BOOL:
    if (tensor.int32_data_size() == n)
      return fromField<bool>(type, tensor.int32_data());
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    if (tensor.int32_data_size() == n) { // 16-bit patterns in int32 fields
      SmallVector<APFloat> values;
      auto &sem = cast<FloatType>(elemType).getFloatSemantics();
      for (int32_t bits : tensor.int32_data())
        values.emplace_back(sem, APInt(16, uint16_t(bits)));
      return DenseElementsAttr::get(type, values);
    }
    break;
  default:
    break;
  }
  error = "tensor '" + tensor.name() + "' does not hold " + std::to_string(n) +
          " values of " + onnxElementTypeName(tensor.data_type());
  return {};
}
