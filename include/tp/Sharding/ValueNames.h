//===- ValueNames.h - name values the way users know them ------*- C++ -*-===//
#ifndef TP_SHARDING_VALUENAMES_H
#define TP_SHARDING_VALUENAMES_H

#include "mlir/IR/Value.h"
#include <string>

namespace mlir::tp {

/// The ONNX node name of a location (`/fc1/Gemm`), or "" if it has none.
std::string onnxNodeName(Location loc);

/// How messages name a value: a weight by its PyTorch name with the ONNX
/// name beside it when they differ (`lm_head.weight (ONNX
/// onnx::MatMul_415)`), an input by its ONNX name, an op result by its op and ONNX node
/// (`tp.matmul at /fc1/Gemm`).
std::string describeValue(Value v);

} // namespace mlir::tp

#endif // TP_SHARDING_VALUENAMES_H
