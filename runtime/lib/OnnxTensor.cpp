//===- OnnxTensor.cpp - ONNX TensorProto files as arrays -------------------===//
#include "tprt/OnnxTensor.h"
#include "tprt/DType.h"

#include "onnx/onnx_pb.h"

#include <cstring>
#include <fstream>
#include <iterator>

using namespace tprt;

namespace {

int32_t tprtDtype(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return TPRT_F32;
  case onnx::TensorProto::DOUBLE:
    return TPRT_F64;
  case onnx::TensorProto::FLOAT16:
    return TPRT_F16;
  case onnx::TensorProto::BFLOAT16:
  // ONNX 1.12's backend test data stores bfloat16 tensors as UINT16; tp has
  // no uint16, so these bits are read as what they are.
  case onnx::TensorProto::UINT16:
    return TPRT_BF16;
  case onnx::TensorProto::INT64:
    return TPRT_I64;
  case onnx::TensorProto::INT32:
    return TPRT_I32;
  case onnx::TensorProto::INT16:
    return TPRT_I16;
  case onnx::TensorProto::INT8:
    return TPRT_I8;
  case onnx::TensorProto::BOOL:
    return TPRT_BOOL;
  default:
    return -1;
  }
}

template <typename Field>
void copyField(const Field &field, size_t elementSize, std::vector<char> &out) {
  out.resize(field.size() * elementSize);
  for (int i = 0; i < field.size(); ++i) {
    auto v = field.Get(i);
    std::memcpy(out.data() + i * elementSize, &v, elementSize);
  }
}

} // namespace

Status tprt::readTensorProto(const std::string &path, std::string &name,
                             NpyArray &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot read");
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes))
    return Status::error(path + ": not a serialized onnx.TensorProto");
  out.dtype = tprtDtype(t.data_type());
  if (out.dtype < 0)
    return Status::error(path + ": ONNX data type " +
                         std::to_string(t.data_type()) +
                         " is not supported by tp-run (f32, f64, f16, bf16, "
                         "i64, i32, i16, i8, bool)");
  name = t.name();
  out.shape.assign(t.dims().begin(), t.dims().end());
  int64_t count = 1;
  for (int64_t d : out.shape)
    count *= d;
  size_t es = dtypeSize(out.dtype);
  if (t.has_raw_data()) {
    out.data.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    switch (out.dtype) {
    case TPRT_F32:
      copyField(t.float_data(), 4, out.data);
      break;
    case TPRT_F64:
      copyField(t.double_data(), 8, out.data);
      break;
    case TPRT_I64:
      copyField(t.int64_data(), 8, out.data);
      break;
    default: {
      // i32, i16, i8, bool, and f16 / bf16 bit patterns live in int32_data.
      out.data.resize(t.int32_data_size() * es);
      for (int i = 0; i < t.int32_data_size(); ++i) {
        int32_t v = t.int32_data(i);
        std::memcpy(out.data.data() + i * es, &v, es);
      }
    }
    }
  }
  if (out.data.size() != size_t(count) * es)
    return Status::error(path + ": holds " + std::to_string(out.data.size()) +
                         " bytes, expected " + std::to_string(count * es) +
                         " for " + out.shapeString() + " " +
                         dtypeName(out.dtype));
  return Status::ok();
}
