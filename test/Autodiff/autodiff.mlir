// tp-autodiff: @forward becomes @train_step returning the loss, every
// weight's gradient and (with SGD) its update; an op without a VJP rule is an
// error naming its ONNX node.
// RUN: tp-opt %s -split-input-file --tp-autodiff='loss=mse optimizer=sgd lr=0.5' | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {tp.input = "x"}, %[[W:.*]]: tensor<3xf32> {tp.param = "m.weight"})
// CHECK-SAME: -> (tensor<f32> {tp.output = "loss"}, tensor<3xf32> {tp.output = "grad_m.weight"}, tensor<3xf32> {tp.output = "m.weight"})
// CHECK: %[[Y:.*]] = tp.mul %[[X]], %[[W]]
// mean(y^2) and its seed 2y/N:
// CHECK: %[[SQ:.*]] = tp.mul %[[Y]], %[[Y]]
// CHECK: %[[LOSS:.*]] = tp.reduce_mean %[[SQ]] {axes = array<i64: 0, 1>, keepdims = false}
// CHECK: %[[N:.*]] = tp.constant dense<0.333333343> : tensor<f32>
// CHECK: %[[SEED:.*]] = tp.mul %[[Y]], %[[N]]
// d(x*w)/dw = x, summed over the broadcast dim:
// CHECK: %[[GX:.*]] = tp.mul %[[SEED]], %[[X]]
// CHECK: %[[S:.*]] = tp.reduce_sum %[[GX]] {axes = array<i64: 0>, keepdims = true} : tensor<2x3xf32> -> tensor<1x3xf32>
// CHECK: %[[G:.*]] = tp.reshape %[[S]] : tensor<1x3xf32> -> tensor<3xf32>
// CHECK: %[[LR:.*]] = tp.constant dense<5.000000e-01>
// CHECK: %[[STEP:.*]] = tp.mul %[[G]], %[[LR]]
// CHECK: %[[NEW:.*]] = tp.sub %[[W]], %[[STEP]]
// CHECK: return %[[LOSS]], %[[G]], %[[NEW]]
// CHECK-NOT: func.func @forward
func.func @forward(%x: tensor<2x3xf32> {tp.input = "x"}, %w: tensor<3xf32> {tp.param = "m.weight"}) -> (tensor<2x3xf32> {tp.output = "y"}) {
  %y = tp.mul %x, %w : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

