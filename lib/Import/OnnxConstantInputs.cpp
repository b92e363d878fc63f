//===- OnnxConstantInputs.cpp - graph inputs bound at compile time --------===//
//
// Some models take as graph inputs what tp needs as constants: TopK's K,
// Resize's scales, Reshape's shape, Range's bounds (deployment exports and
// ONNX's own backend tests do). `tp-compile --constant-input k=k.npy` binds
// such an input to a value at compile time, as torch.export specializes a
// value: it becomes an initializer of the model in memory, read as a
// constant (never as a weight, even when float), and the compiled program
// no longer takes it. The value comes from a .npy file or an ONNX
// TensorProto (.pb, the backend tests' input_<i>.pb).
//
//===----------------------------------------------------------------------===//
#include "OnnxModelLoader.h"

#include "tprt/Npy.h"
#include "tprt/tprt.h"
#include "llvm/ADT/StringRef.h"

#include <fstream>
#include <iterator>

using namespace mlir;
using namespace mlir::tp;

namespace {

/// The ONNX element type of a .npy dtype (TPRT_*), or 0.
int32_t onnxTypeOf(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32:
    return onnx::TensorProto::FLOAT;
  case TPRT_F64:
    return onnx::TensorProto::DOUBLE;
  case TPRT_F16:
    return onnx::TensorProto::FLOAT16;
  case TPRT_I64:
    return onnx::TensorProto::INT64;
  case TPRT_I32:
    return onnx::TensorProto::INT32;
  case TPRT_I16:
    return onnx::TensorProto::INT16;
  case TPRT_I8:
    return onnx::TensorProto::INT8;
  case TPRT_BOOL:
    return onnx::TensorProto::BOOL;
  default:
    return 0;
  }
}

/// Reads `file` (.npy, else an ONNX TensorProto) into `tensor`.
std::string readTensor(const std::string &file, onnx::TensorProto &tensor) {
  if (llvm::StringRef(file).ends_with(".npy")) {
    tprt::NpyArray array;
    if (tprt::Status s = tprt::readNpy(file, array); !s)
      return s.message();
    int32_t type = onnxTypeOf(array.dtype);
    if (!type)
      return file + ": unsupported .npy element type";
    tensor.set_data_type(type);
    for (int64_t d : array.shape)
      tensor.add_dims(d);
    tensor.set_raw_data(array.data.data(), array.data.size());
    return "";
  }
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof())
    return file + ": cannot read the file";
  if (bytes.empty() || !tensor.ParseFromString(bytes))
    return file + ": neither a .npy file nor an ONNX TensorProto";
  return "";
}

} // namespace

std::string
tp::bindConstantInputs(onnx::GraphProto &graph,
                       const std::map<std::string, std::string> &files) {
  for (const auto &[name, file] : files) {
    const onnx::ValueInfoProto *input = nullptr;
    std::string names;
    for (const auto &in : graph.input()) {
      names += (names.empty() ? "" : ", ") + in.name();
      if (in.name() == name)
        input = &in;
    }
    if (!input)
      return "--constant-input names '" + name +
             "', which is not a graph input (inputs: " + names + ")";
    onnx::TensorProto tensor;
    if (std::string error = readTensor(file, tensor); !error.empty())
      return "--constant-input " + name + ": " + error;
    const auto &declared = input->type().tensor_type();
    if (declared.elem_type() != tensor.data_type())
      return "--constant-input " + name + ": " + file + " holds element type " +
             std::to_string(tensor.data_type()) +
             " but the input is declared with " +
             std::to_string(declared.elem_type()) +
             " (ONNX TensorProto.DataType codes)";
    if (declared.has_shape()) {
      bool same = declared.shape().dim_size() == tensor.dims_size();
      for (int i = 0; same && i < tensor.dims_size(); ++i)
        same = !declared.shape().dim(i).has_dim_value() ||
               declared.shape().dim(i).dim_value() == tensor.dims(i);
      if (!same) {
        std::string got;
        for (int64_t d : tensor.dims())
          got += (got.empty() ? "" : "x") + std::to_string(d);
        return "--constant-input " + name + ": " + file + " has shape [" +
               got + "], which the input's declared shape does not allow";
      }
    }
    tensor.set_name(name);
    *graph.add_initializer() = std::move(tensor);
  }
  return "";
}
