//===- OnnxTensor.h - ONNX TensorProto files as arrays ---------*- C++ -*-===//
//
// The ONNX backend test data (`test_data_set_0/input_0.pb`, ...) stores each
// tensor as a serialized TensorProto; tp-run --test-data reads them here.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_ONNXTENSOR_H
#define TPRT_ONNXTENSOR_H

#include "tprt/Npy.h"

namespace tprt {

/// Reads a serialized onnx.TensorProto (f32, f64, f16, bf16, i64, i32):
/// its name (may be empty) and its data.
Status readTensorProto(const std::string &path, std::string &name,
                       NpyArray &out);

} // namespace tprt

#endif // TPRT_ONNXTENSOR_H
