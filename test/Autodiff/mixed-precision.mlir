// The training step of a tp-autocast graph: the backward pass's products
// take bf16 operands and sum in f32 (the output gradient rounded once per
// matmul), the values kept for them are the forward's bf16 copies, and
// the gradients of the f32 values behind the casts are the f32 sums: h's
// two gradients are added in f32, and no gradient is rounded to bf16 and
// widened back.
// RUN: tp-opt %s --tp-autocast=precision=bf16 --tp-autodiff='loss=mse optimizer=sgd lr=0.5' | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x8xf32> {tp.input = "x"}, %[[W1:[a-z0-9]+]]: tensor<8x8xf32> {tp.param = "w1"}, %[[W2:[a-z0-9]+]]: tensor<8x8xf32> {tp.param = "w2"}, %[[W3:[a-z0-9]+]]: tensor<8x8xf32> {tp.param = "w3"})
// CHECK-DAG: %[[W1H:.*]] = tp.cast %[[W1]] : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-DAG: %[[XH:.*]] = tp.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[H:.*]] = tp.matmul %[[XH]], %[[W1H]] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xf32>
// CHECK: %[[HH:.*]] = tp.cast %[[H]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// The output gradient, rounded for the products; a weight's bf16 copy is
// cast again rather than kept (tp-autodiff's rematerialization).
// CHECK: tp.reduce_mean
// CHECK: %[[SEED:.*]] = tp.mul
// CHECK: %[[GH:.*]] = tp.cast %[[SEED]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[W3H:.*]] = tp.cast %[[W3]] {tp.rematerialized} : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK: %[[W3T:.*]] = tp.transpose %[[W3H]]
// CHECK: %[[DH3:.*]] = tp.matmul %[[GH]], %[[W3T]] : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xf32>
// CHECK: %[[HT:.*]] = tp.transpose %[[HH]]
// w3's gradient is the product's f32 sum, as the update reads it:
// CHECK: %[[DW3:.*]] = tp.matmul %[[HT]], %[[GH]] : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xf32>
// CHECK: tp.mul %[[DW3]]
// CHECK: %[[DH2:.*]] = tp.matmul %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xf32>
// CHECK: %[[DW2:.*]] = tp.matmul %{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xf32>
// h's gradient: the two products summed in f32, rounded once for w1's.
// CHECK: %[[DH:.*]] = tp.add %[[DH3]], %[[DH2]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: %[[DHH:.*]] = tp.cast %[[DH]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[DW1:.*]] = tp.matmul %{{.*}}, %[[DHH]] : tensor<8x4xbf16>, tensor<4x8xbf16> -> tensor<8x8xf32>
// CHECK: return %{{.*}}, %[[DW1]], %[[DW2]], %[[DW3]],
// CHECK-NOT: bf16> -> tensor<{{.*}}xf32>
func.func @forward(%x: tensor<4x8xf32> {tp.input = "x"}, %w1: tensor<8x8xf32> {tp.param = "w1"},
                   %w2: tensor<8x8xf32> {tp.param = "w2"}, %w3: tensor<8x8xf32> {tp.param = "w3"}) -> (tensor<4x8xf32> {tp.output = "y"}) {
  %h = tp.matmul %x, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %a = tp.matmul %h, %w2 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %b = tp.matmul %h, %w3 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %y = tp.add %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
