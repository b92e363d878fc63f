// tp-autodiff's elementwise rematerialization: a forward value the backward
// pass reads, computed by elementwise ops from values kept anyway, is
// recomputed before its first backward reader (tp.rematerialized) instead
// of kept from the forward pass; with rematerialize=false it is kept.
// RUN: tp-opt %s -split-input-file --tp-autodiff='optimizer=none' | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-autodiff='optimizer=none rematerialize=false' | FileCheck %s --check-prefix=OFF

// A decomposed GELU, g = y (1 + erf(y / sqrt 2)) / 2, of y = x * w, read by
// the product with w2 (whose backward reads g): the backward pass reads
// copies of y and every GELU value, recomputed from the input and weight.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32> {tp.input = "x"}, %[[W:.*]]: tensor<8xf32> {tp.param = "w"}, %[[W2:.*]]: tensor<8xf32> {tp.param = "w2"})
// CHECK: %[[Y:.*]] = tp.mul %[[X]], %[[W]] :
// CHECK: %[[D:.*]] = tp.div %[[Y]], %[[C:.*]] :
// CHECK: %[[E:.*]] = tp.erf %[[D]] :
// CHECK: %[[E1:.*]] = tp.add %[[E]], %{{.*}} :
// CHECK: %[[P:.*]] = tp.mul %[[Y]], %[[E1]] :
// CHECK: %[[G:.*]] = tp.mul %[[P]], %{{.*}} :
// CHECK: %[[OUT:.*]] = tp.mul %[[G]], %[[W2]] :
// The backward pass:
// CHECK: %[[RY:.*]] = tp.mul %[[X]], %[[W]] {tp.rematerialized}
// CHECK-NEXT: %[[RD:.*]] = tp.div %[[RY]], %[[C]] {tp.rematerialized}
// CHECK-NEXT: %[[RE:.*]] = tp.erf %[[RD]] {tp.rematerialized}
// CHECK-NEXT: %[[RE1:.*]] = tp.add %[[RE]], %{{.*}} {tp.rematerialized}
// CHECK-NEXT: %[[RP:.*]] = tp.mul %[[RY]], %[[RE1]] {tp.rematerialized}
// CHECK-NEXT: %[[RG:.*]] = tp.mul %[[RP]], %{{.*}} {tp.rematerialized}
// CHECK-NEXT: tp.mul %{{.*}}, %[[RG]] :
// The forward's values are read by nothing after that:
// CHECK-NOT: {{%}}[[Y]]{{[^0-9]}}
// CHECK-NOT: {{%}}[[D]]{{[^0-9]}}
// CHECK-NOT: {{%}}[[E1]]{{[^0-9]}}
// CHECK-NOT: {{%}}[[G]]{{[^0-9]}}
// CHECK: return
// OFF-LABEL: func.func @train_step
// OFF-NOT: tp.rematerialized
func.func @forward(%x: tensor<8xf32> {tp.input = "x"}, %w: tensor<8xf32> {tp.param = "w"}, %w2: tensor<8xf32> {tp.param = "w2"}) -> (tensor<8xf32> {tp.output = "out"}) {
  %y = tp.mul %x, %w : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %c = tp.constant dense<1.41421354> : tensor<f32>
  %d = tp.div %y, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %e = tp.erf %d : tensor<8xf32>
  %one = tp.constant dense<1.0> : tensor<f32>
  %e1 = tp.add %e, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %p = tp.mul %y, %e1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %half = tp.constant dense<0.5> : tensor<f32>
  %g = tp.mul %p, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %out = tp.mul %g, %w2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %out : tensor<8xf32>
}

// -----

// tanh of a matmul's output: the matmul's backward reads its operands, not
// its output, so the output would have to be kept to recompute the tanh:
// the tanh is kept instead.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: tp.rematerialized
// CHECK: return
func.func @forward(%x: tensor<2x4xf32> {tp.input = "x"}, %w: tensor<4x4xf32> {tp.param = "w"}, %w2: tensor<4xf32> {tp.param = "w2"}) -> (tensor<2x4xf32> {tp.output = "out"}) {
  %z = tp.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %t = tp.tanh %z : tensor<2x4xf32>
  %out = tp.mul %t, %w2 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %out : tensor<2x4xf32>
}
