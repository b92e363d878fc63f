// tp-assign-stages: the plan's pipeline gives every ONNX node of the
// imported forward its stage (tp.pipeline's node_stages), from split_before
// or balanced at layer starts by FLOPs plus parameter bytes, with each
// stage's first module, FLOPs, parameter bytes and bytes sent on.
// RUN: tp-opt %s --split-input-file --tp-assign-stages="mesh=pp=2 pipeline=axis=pp,split_before=layers.1" | FileCheck %s --check-prefix=SPLIT
// RUN: tp-opt %s --split-input-file --tp-assign-stages="mesh=pp=2 pipeline=axis=pp,microbatches=2,schedule=1f1b" | FileCheck %s --check-prefix=BALANCED
// RUN: not tp-opt %s --split-input-file --tp-assign-stages="mesh=pp=2 pipeline=axis=pp,split_before=layers.2" 2>&1 | FileCheck %s --check-prefix=NOMODULE

// Two layers: each its own stage (1F1B unless the plan says otherwise).
// SPLIT-LABEL: module attributes {tp.pipeline = {axis = "pp", balanced = false
// SPLIT-SAME: first_modules = ["layers", "layers.1"]
// SPLIT-SAME: microbatches = 1 : i64
// SPLIT-SAME: node_stages = {"/layers.0/Relu" = 0 : i64, "/layers.0/fc/Gemm" = 0 : i64, "/layers.1/Relu" = 1 : i64, "/layers.1/fc/Gemm" = 1 : i64}
// SPLIT-SAME: param_bytes = array<i64: 4224, 4224>
// SPLIT-SAME: schedule = "1f1b"
// SPLIT-SAME: send_bytes = array<i64: 512, 0>
// BALANCED-LABEL: module attributes {tp.pipeline = {axis = "pp", balanced = true
// BALANCED-SAME: first_modules = ["layers", "layers.1"]
// BALANCED-SAME: microbatches = 2 : i64
// BALANCED-SAME: schedule = "1f1b"
// NOMODULE: error: pipeline split_before 'layers.2' (--pipeline) names no module of the model; closest: layers.0, layers.1, layers
module {
  func.func @forward(%x: tensor<4x32xf32> {tp.input = "x"}, %w0: tensor<32x32xf32> {tp.param = "layers.0.fc.weight"}, %b0: tensor<32xf32> {tp.param = "layers.0.fc.bias"}, %w1: tensor<32x32xf32> {tp.param = "layers.1.fc.weight"}, %b1: tensor<32xf32> {tp.param = "layers.1.fc.bias"}) -> (tensor<4x32xf32> {tp.output = "y"}) {
    %0 = tp.transpose %w0 {perm = array<i64: 1, 0>} : tensor<32x32xf32> -> tensor<32x32xf32> loc("/layers.0/fc/Gemm")
    %1 = tp.matmul %x, %0 : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32> loc("/layers.0/fc/Gemm")
    %2 = tp.add %1, %b0 : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32> loc("/layers.0/fc/Gemm")
    %3 = tp.relu %2 : tensor<4x32xf32> loc("/layers.0/Relu")
    %4 = tp.transpose %w1 {perm = array<i64: 1, 0>} : tensor<32x32xf32> -> tensor<32x32xf32> loc("/layers.1/fc/Gemm")
    %5 = tp.matmul %3, %4 : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32> loc("/layers.1/fc/Gemm")
    %6 = tp.add %5, %b1 : tensor<4x32xf32>, tensor<32xf32> -> tensor<4x32xf32> loc("/layers.1/fc/Gemm")
    %7 = tp.relu %6 : tensor<4x32xf32> loc("/layers.1/Relu")
    return %7 : tensor<4x32xf32>
  }
}
