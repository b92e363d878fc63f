// tp-autodiff places each weight's optimizer update right after the last op
// it waits for (its gradient and the last reader of the weight), named after
// the gradient's module scope, so that a repeated layer's updates belong to
// its backward ops (tp-outline-repeated-layers outlines them together). The
// last layer's update comes before the first layer's backward ops; a weight
// read after its gradient is ready is updated after that read. AdamW's step
// count and bias corrections go first. A pipeline keeps the updates at the
// end (tp-split-stages orders a stage's ops).
// RUN: tp-opt %s -split-input-file --tp-autodiff='loss=mse optimizer=sgd lr=0.5' --mlir-print-debuginfo | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-autodiff='loss=mse optimizer=adamw lr=0.5' --mlir-print-debuginfo | FileCheck %s --check-prefix=ADAMW

// Two layers y = x * w0 * w1; layer 1's update follows its gradient and
// the last read of w1 (layer 1's backward dy * w1), before layer 0's
// backward ops.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3xf32> {tp.input = "x"}
// CHECK-SAME: %[[W0:[a-z0-9]+]]: tensor<3xf32> {tp.param = "layers.0.weight"}
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<3xf32> {tp.param = "layers.1.weight"}
// CHECK: tp.reduce_mean
// CHECK: %[[DH:.*]] = tp.mul %{{.*}}, %[[W1]] {{.*}} loc(#[[L1:loc[0-9]*]])
// CHECK: %[[G1:.*]] = tp.reshape {{.*}} -> tensor<3xf32> loc(#[[L1]])
// CHECK-NEXT: tp.constant dense<5.000000e-01> : tensor<f32> loc(#[[U1:loc[0-9]*]])
// CHECK-NEXT: tp.mul %[[G1]], {{.*}} loc(#[[U1]])
// CHECK-NEXT: %[[NEW1:.*]] = tp.sub %[[W1]], {{.*}} loc(#[[U1]])
// CHECK-NEXT: tp.mul %[[DH]], %[[X]] {{.*}} loc(#[[L0:loc[0-9]*]])
// CHECK: %[[G0:.*]] = tp.reshape {{.*}} -> tensor<3xf32> loc(#[[L0]])
// CHECK-NEXT: tp.constant dense<5.000000e-01> : tensor<f32> loc(#[[U0:loc[0-9]*]])
// CHECK-NEXT: tp.mul %[[G0]], {{.*}} loc(#[[U0]])
// CHECK-NEXT: %[[NEW0:.*]] = tp.sub %[[W0]], {{.*}} loc(#[[U0]])
// CHECK-NEXT: return {{.*}}, %[[G0]], %[[G1]], %[[NEW0]], %[[NEW1]]
// Backward ops keep their forward op's ONNX node, tagged "backward" for
// tp-run --trace's phases; the loss and the updates are tagged too.
// CHECK-DAG: #[[L1]] = loc("/layers.1/Mul"(#[[BWD:loc[0-9]*]]))
// CHECK-DAG: #[[L0]] = loc("/layers.0/Mul"(#[[BWD]]))
// CHECK-DAG: #[[BWD]] = loc(fused<"backward">
// CHECK-DAG: loc(fused<"loss">
// CHECK-DAG: loc(fused<"update">
// CHECK-DAG: #[[U1]] = loc("/layers.1/optimizer sgd"
// CHECK-DAG: #[[U0]] = loc("/layers.0/optimizer sgd"

// The step count's loc (named "optimizer adamw") is printed before the module.
// ADAMW: #[[OPT:loc[0-9]*]] = loc("optimizer adamw"
// ADAMW-LABEL: func.func @train_step
// ADAMW-NEXT: tp.constant dense<1.000000e+00> : tensor<f32> loc(#[[OPT]])
// ADAMW-NEXT: tp.add %arg3, {{.*}} loc(#[[OPT]])
// ADAMW: tp.mul %arg0, %arg1 : {{.*}} loc(#[[L0:loc[0-9]*]])
// ADAMW: tp.sub %arg2, {{.*}} loc(#[[A1:loc[0-9]*]])
// ADAMW: tp.sqrt {{.*}} loc(#[[A1]])
// ADAMW: tp.sub {{.*}} loc(#[[A1]])
// ADAMW-NEXT: tp.mul %{{.*}}, %arg0 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32> loc(#[[B0:loc[0-9]*]])
// ADAMW-DAG: #[[A1]] = loc("/layers.1/optimizer adamw"
// ADAMW-DAG: #[[L0]] = loc("/layers.0/Mul")
// ADAMW-DAG: #[[B0]] = loc("/layers.0/Mul"(#{{loc[0-9]*}}))
func.func @forward(%x: tensor<2x3xf32> {tp.input = "x"}, %w0: tensor<3xf32> {tp.param = "layers.0.weight"}, %w1: tensor<3xf32> {tp.param = "layers.1.weight"}) -> (tensor<2x3xf32> {tp.output = "y"}) {
  %h = tp.mul %x, %w0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32> loc("/layers.0/Mul")
  %y = tp.mul %h, %w1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32> loc("/layers.1/Mul")
  return %y : tensor<2x3xf32>
}

// -----

// A pipeline: the updates stay after the whole backward pass.
// CHECK-LABEL: func.func @train_step
// CHECK: tp.reduce_mean
// CHECK: tp.mul %{{.*}}, %arg0 : tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: tp.reshape
// CHECK-NEXT: tp.constant dense<5.000000e-01> : tensor<f32> loc(#[[P:loc[0-9]*]])
// CHECK: tp.sub %arg1
// CHECK: tp.sub %arg2
// CHECK-NEXT: return
// CHECK-DAG: #[[P]] = loc("optimizer sgd"
module attributes {tp.pipeline = {microbatches = 1 : i64}} {
  func.func @forward(%x: tensor<2x3xf32> {tp.input = "x"}, %w0: tensor<3xf32> {tp.param = "layers.0.weight"}, %w1: tensor<3xf32> {tp.param = "layers.1.weight"}) -> (tensor<2x3xf32> {tp.output = "y"}) {
    %h = tp.mul %x, %w0 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32> loc("/layers.0/Mul")
    %y = tp.mul %h, %w1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32> loc("/layers.1/Mul")
    return %y : tensor<2x3xf32>
  }
}
