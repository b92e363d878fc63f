// tp-autodiff's recompute (torch.utils.checkpoint per module): the backward
// pass reads copies of a checkpointed module's values, recomputed from the
// module's inputs right before the first backward op that needs one; the
// forward's own values then have only forward readers. The copies carry
// tp.recomputed (CSE keeps them apart) and the module list is recorded.
// (rematerialize=false: the elementwise rematerialization, on by default,
// would recompute these elementwise layers by itself.)
// RUN: tp-opt %s -split-input-file --tp-autodiff='optimizer=none rematerialize=false recompute=layers.*' | FileCheck %s
// RUN: not tp-opt %s -split-input-file --tp-autodiff='optimizer=none rematerialize=false recompute=layer.0' 2>&1 | FileCheck %s --check-prefix=NOMATCH

// Two layers out = tanh(in * w) * in: tanh's backward and the product's read
// the tanh, which each layer recomputes from its input and weight. Layer 0's
// output is layer 1's checkpoint: kept, and read by the backward as it is.
// CHECK-LABEL: module attributes {tp.recomputed_modules = ["layers.0", "layers.1"]}
// CHECK: func.func @train_step(%[[X:.*]]: tensor<4xf32> {tp.input = "x"}, %[[W0:.*]]: tensor<4xf32> {tp.param = "layers.0.w"}, %[[W1:.*]]: tensor<4xf32> {tp.param = "layers.1.w"})
// The forward pass:
// CHECK: %[[M0:.*]] = tp.mul %[[X]], %[[W0]]
// CHECK: %[[A0:.*]] = tp.tanh %[[M0]]
// CHECK: %[[H:.*]] = tp.mul %[[A0]], %[[X]]
// CHECK: %[[M1:.*]] = tp.mul %[[H]], %[[W1]]
// CHECK: %[[A1:.*]] = tp.tanh %[[M1]]
// CHECK: %[[Y:.*]] = tp.mul %[[A1]], %[[H]]
// The loss reads the forward's output; layer 1's backward the copy of its
// tanh, recomputed from the checkpoint %[[H]]:
// CHECK: tp.mul %[[Y]], %[[Y]]
// CHECK: %[[RM1:.*]] = tp.mul %[[H]], %[[W1]] {tp.recomputed}
// CHECK: %[[RA1:.*]] = tp.tanh %[[RM1]] {tp.recomputed}
// CHECK-NOT: tp.mul %[[RA1]], %[[H]] {tp.recomputed}
// CHECK: tp.mul %{{.*}}, %[[RA1]]
// Layer 0's backward: its copy comes after layer 1's backward.
// CHECK: %[[RM0:.*]] = tp.mul %[[X]], %[[W0]] {tp.recomputed}
// CHECK: %[[RA0:.*]] = tp.tanh %[[RM0]] {tp.recomputed}
// CHECK: tp.mul %{{.*}}, %[[RA0]]
// CHECK-NOT: %[[A0]]
// CHECK: return
// NOMATCH: error: recompute entry 'layer.0' matches no module; closest: layers.0, layers, layers.1
module {
  func.func @forward(%x: tensor<4xf32> {tp.input = "x"}, %w0: tensor<4xf32> {tp.param = "layers.0.w"}, %w1: tensor<4xf32> {tp.param = "layers.1.w"}) -> (tensor<4xf32> {tp.output = "y"}) {
    %m0 = tp.mul %x, %w0 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32> loc("/layers.0/Mul")
    %a0 = tp.tanh %m0 : tensor<4xf32> loc("/layers.0/Tanh")
    %h = tp.mul %a0, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32> loc("/layers.0/Mul_1")
    %m1 = tp.mul %h, %w1 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32> loc("/layers.1/Mul")
    %a1 = tp.tanh %m1 : tensor<4xf32> loc("/layers.1/Tanh")
    %y = tp.mul %a1, %h : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32> loc("/layers.1/Mul_1")
    return %y : tensor<4xf32>
  }
}

// -----

// A checkpointed module whose values the backward pass does not read (a
// product's backward reads only the operands, here the checkpoint and a
// weight) has nothing to recompute.
// CHECK-LABEL: module {
// CHECK-NOT: tp.recomputed
// CHECK: return
module {
  func.func @forward(%x: tensor<4xf32> {tp.input = "x"}, %w0: tensor<4xf32> {tp.param = "layers.0.w"}) -> (tensor<4xf32> {tp.output = "y"}) {
    %m0 = tp.mul %x, %w0 : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32> loc("/layers.0/Mul")
    return %m0 : tensor<4xf32>
  }
}
