// tp-expand-conv-gradients: a conv's gradients written as tp.conv, for
// targets with no library of convolution gradients (CUDA). The input's
// gradient (stride 2) is the output gradient with a zero between its
// elements (concat with zeros, reshape, slice per spatial dim) convolved
// at stride 1 with the filter's channels swapped and flipped in space
// (gathers of reversed indices), padded by K - 1; the filter's gradient
// is the input, batch and channels swapped, convolved with the output
// gradient as filter, the forward's stride become the dilation. The
// e2e tests run both against PyTorch on the CUDA pipeline's loops
// (test/e2e/gpu-loops-on-cpu.test).
// RUN: tp-opt %s --tp-expand-conv-gradients | FileCheck %s

// CHECK-LABEL: func.func @input_grad
// CHECK-NOT: tp.conv_input_grad
// CHECK: tp.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3, 4>} : tensor<1x4x3x3x3xf32> -> tensor<1x3x4x3x3xf32>
// CHECK: tp.gather %{{.*}}, %{{.*}} {axis = 2 : i64}
// CHECK: tp.gather %{{.*}}, %{{.*}} {axis = 3 : i64}
// CHECK: tp.concat %{{.*}}, %{{.*}} {axis = 3 : i64}
// CHECK: tp.concat %{{.*}}, %{{.*}} {axis = 4 : i64}
// CHECK: %[[DX:.*]] = tp.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>} : tensor<1x4x3x3xf32>, tensor<3x4x3x3xf32> -> tensor<1x3x5x5xf32>
// CHECK: return %[[DX]]
func.func @input_grad(%g: tensor<1x4x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x5x5xf32> {
  %dx = tp.conv_input_grad %g, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : tensor<1x4x2x2xf32>, tensor<4x3x3x3xf32> -> tensor<1x3x5x5xf32>
  return %dx : tensor<1x3x5x5xf32>
}

// CHECK-LABEL: func.func @filter_grad
// CHECK-NOT: tp.conv_filter_grad
// CHECK: tp.transpose %{{.*}} {perm = array<i64: 2, 1, 0, 3, 4>} : tensor<2x1x3x5x5xf32> -> tensor<3x1x2x5x5xf32>
// CHECK: tp.transpose %{{.*}} {perm = array<i64: 1, 2, 0, 3, 4>} : tensor<2x1x4x2x2xf32> -> tensor<1x4x2x2x2xf32>
// CHECK: tp.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<3x2x5x5xf32>, tensor<4x2x2x2xf32> -> tensor<3x4x3x3xf32>
// CHECK: tp.transpose %{{.*}} {perm = array<i64: 1, 0, 2, 3>} : tensor<3x4x3x3xf32> -> tensor<4x3x3x3xf32>
func.func @filter_grad(%x: tensor<2x3x5x5xf32>, %g: tensor<2x4x2x2xf32>) -> tensor<4x3x3x3xf32> {
  %dw = tp.conv_filter_grad %x, %g {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : tensor<2x3x5x5xf32>, tensor<2x4x2x2xf32> -> tensor<4x3x3x3xf32>
  return %dw : tensor<4x3x3x3xf32>
}

// Mixed precision: bf16 operands, f32 gradients; the convs the gradients
// become keep the f32 result (their operands' copies move bf16).
// CHECK-LABEL: func.func @mixed_precision
// CHECK: tp.conv %{{.*}}, %{{.*}} {{.*}} : tensor<2x4x7x7xbf16>, tensor<3x4x3x3xbf16> -> tensor<2x3x8x8xf32>
// CHECK: tp.conv %{{.*}}, %{{.*}} {{.*}} : tensor<3x2x8x8xbf16>, tensor<4x2x4x4xbf16> -> tensor<3x4x4x4xf32>
// CHECK: tp.slice %{{.*}} : tensor<3x4x4x4xf32> -> tensor<3x4x3x3xf32>
// CHECK: tp.transpose %{{.*}} : tensor<3x4x3x3xf32> -> tensor<4x3x3x3xf32>
func.func @mixed_precision(%x: tensor<2x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %g: tensor<2x4x4x4xbf16>) -> (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) {
  %dx = tp.conv_input_grad %g, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<2x4x4x4xbf16>, tensor<4x3x3x3xbf16> -> tensor<2x3x8x8xf32>
  %dw = tp.conv_filter_grad %x, %g {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<2x3x8x8xbf16>, tensor<2x4x4x4xbf16> -> tensor<4x3x3x3xf32>
  return %dx, %dw : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
}
