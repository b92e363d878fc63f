//===- ValueNames.h - name values the way users know them ------*- C++ -*-===//
#ifndef TP_SHARDING_VALUENAMES_H
#define TP_SHARDING_VALUENAMES_H

#include "mlir/IR/Value.h"
#include <string>

namespace mlir::tp {

/// The ONNX node name of a location (`/fc1/Gemm`), or "" if it has none.
std::string onnxNodeName(Location loc);

/// Where an op stands in a training step, for tp-run --trace: its location
/// wrapped in a FusedLoc whose metadata is `tag` ("backward", "recompute",
/// "loss", "update", or "microbatch <i>" in a pipeline stage); names are unchanged
/// (onnxNodeName looks through it).
Location tagLocation(Location loc, StringRef tag);
/// The step phase of a location: "update", "backward", "recompute" or
/// "loss" if tagged so (a fused location: the latest of its parts', in that
/// order), else "forward".
std::string stepPhase(Location loc);
/// The pipeline microbatch a location is tagged with, or -1.
int64_t microbatchOf(Location loc);
/// Whether `loc` (or a location fused into it) carries `tag`; e.g. the
/// convolution lowering tags its ops "convolution" for tp-run --profile.
bool hasTag(Location loc, StringRef tag);

/// How messages name a value: a weight by its PyTorch name with the ONNX
/// name beside it when they differ (`lm_head.weight (ONNX
/// onnx::MatMul_415)`), an input by its ONNX name, an op result by its op and ONNX node
/// (`tp.matmul at /fc1/Gemm`).
std::string describeValue(Value v);

} // namespace mlir::tp

#endif // TP_SHARDING_VALUENAMES_H
