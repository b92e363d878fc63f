// A bf16 training step (tp-autocast marks the module tp.precision = "bf16")
// keeps the f32 activations its backward pass reads as bf16 copies: tanh's
// result, which tanh's gradient reads, is rounded right after it is
// computed and widened right before its backward reader; the forward's
// own readers keep the f32 value. A reduction's statistics and tensors of
// fewer than 64 elements stay f32 (the mean below), and without the
// precision mark nothing changes.
// RUN: tp-opt %s --tp-autocast=precision=bf16 --tp-autodiff='loss=mse optimizer=sgd lr=0.5' | FileCheck %s
// RUN: tp-opt %s --tp-autodiff='loss=mse optimizer=sgd lr=0.5' | FileCheck %s --check-prefix=F32

// CHECK-LABEL: func.func @train_step
// CHECK: %[[H:.*]] = tp.matmul %{{.*}}, %{{.*}} : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xf32>
// CHECK-NEXT: %[[T:.*]] = tp.tanh %[[H]] : tensor<8x16xf32>
// CHECK-NEXT: %[[TK:.*]] = tp.cast %[[T]] : tensor<8x16xf32> -> tensor<8x16xbf16>
// CHECK: %[[M:.*]] = tp.reduce_mean %[[T]]
// CHECK-NOT: tp.cast %[[M]]
// CHECK: %[[TW:.*]] = tp.cast %[[TK]] : tensor<8x16xbf16> -> tensor<8x16xf32>
// CHECK: tp.mul %[[TW]], %[[TW]]
// F32-LABEL: func.func @train_step
// F32-NOT: bf16
func.func @forward(%x: tensor<8x16xf32> {tp.input = "x"}, %w1: tensor<16x16xf32> {tp.param = "w1"},
                   %w2: tensor<16x16xf32> {tp.param = "w2"}) -> (tensor<8x16xf32> {tp.output = "y"}) {
  %h = tp.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %t = tp.tanh %h : tensor<8x16xf32>
  %m = tp.reduce_mean %t {axes = array<i64: 1>, keepdims = true} : tensor<8x16xf32> -> tensor<8x1xf32>
  %c = tp.sub %t, %m : tensor<8x16xf32>, tensor<8x1xf32> -> tensor<8x16xf32>
  %y = tp.matmul %c, %w2 : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
