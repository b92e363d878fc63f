// Round trip of every tp op through the parser and printer, once in the
// generic form too, so the custom assembly formats print what they parse.
// RUN: tp-opt %s | tp-opt | FileCheck %s
// RUN: tp-opt %s --mlir-print-op-generic | tp-opt | FileCheck %s

// CHECK-LABEL: func.func @constant
func.func @constant() -> tensor<2xf32> {
  // CHECK: tp.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = tp.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}

// CHECK-LABEL: func.func @binary_broadcast
func.func @binary_broadcast(%a: tensor<8x64xf32>, %b: tensor<64xf32>, %s: tensor<f32>) -> tensor<8x64xf32> {
  // CHECK: tp.add %{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %0 = tp.add %a, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  // CHECK: tp.sub %{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
  %1 = tp.sub %0, %s : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xf32>
  // CHECK: tp.mul %{{.*}}, %{{.*}} : tensor<64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %2 = tp.mul %b, %1 : tensor<64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  // CHECK: tp.div %{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %3 = tp.div %2, %0 : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return %3 : tensor<8x64xf32>
}

// Size-1 dims stretch in both directions (ONNX multidirectional broadcasting).
// CHECK-LABEL: func.func @binary_both_stretch
func.func @binary_both_stretch(%a: tensor<4x1xi64>, %b: tensor<1x3xi64>) -> tensor<4x3xi64> {
  // CHECK: tp.add %{{.*}}, %{{.*}} : tensor<4x1xi64>, tensor<1x3xi64> -> tensor<4x3xi64>
  %0 = tp.add %a, %b : tensor<4x1xi64>, tensor<1x3xi64> -> tensor<4x3xi64>
  return %0 : tensor<4x3xi64>
}

// CHECK-LABEL: func.func @relu
func.func @relu(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  // CHECK: tp.relu %{{.*}} : tensor<8x256xf32>
  %0 = tp.relu %x : tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// Mixed precision (tp-autocast): bf16 operands, an f32 result.
// CHECK-LABEL: func.func @mixed_precision
func.func @mixed_precision(%x: tensor<8x64xbf16>, %w: tensor<64x256xbf16>,
                           %img: tensor<1x3x8x8xbf16>, %f: tensor<4x3x3x3xbf16>,
                           %g: tensor<1x4x8x8xbf16>) -> (tensor<8x256xf32>, tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>) {
  // CHECK: tp.matmul %{{.*}}, %{{.*}} : tensor<8x64xbf16>, tensor<64x256xbf16> -> tensor<8x256xf32>
  %0 = tp.matmul %x, %w : tensor<8x64xbf16>, tensor<64x256xbf16> -> tensor<8x256xf32>
  // CHECK: tp.conv {{.*}} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x8x8xf32>
  %1 = tp.conv %img, %f {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x8x8xf32>
  // CHECK: tp.conv_input_grad {{.*}} : tensor<1x4x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x3x8x8xf32>
  %2 = tp.conv_input_grad %g, %f {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x4x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x3x8x8xf32>
  return %0, %1, %2 : tensor<8x256xf32>, tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%x: tensor<8x64xf32>, %w: tensor<64x256xf32>,
                  %q: tensor<4x16x64xf32>, %k: tensor<2x1x64x16xf32>) -> (tensor<8x256xf32>, tensor<4x16x256xf32>, tensor<2x4x16x16xf32>) {
  // CHECK: tp.matmul %{{.*}}, %{{.*}} : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
  %0 = tp.matmul %x, %w : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
  // CHECK: tp.matmul %{{.*}}, %{{.*}} : tensor<4x16x64xf32>, tensor<64x256xf32> -> tensor<4x16x256xf32>
  %1 = tp.matmul %q, %w : tensor<4x16x64xf32>, tensor<64x256xf32> -> tensor<4x16x256xf32>
  // CHECK: tp.matmul %{{.*}}, %{{.*}} : tensor<4x16x64xf32>, tensor<2x1x64x16xf32> -> tensor<2x4x16x16xf32>
  %2 = tp.matmul %q, %k : tensor<4x16x64xf32>, tensor<2x1x64x16xf32> -> tensor<2x4x16x16xf32>
  return %0, %1, %2 : tensor<8x256xf32>, tensor<4x16x256xf32>, tensor<2x4x16x16xf32>
}

// CHECK-LABEL: func.func @unary_and_cast
func.func @unary_and_cast(%x: tensor<4xf32>, %i: tensor<4xi64>, %c: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: tp.neg
  %0 = tp.neg %x : tensor<4xf32>
  // CHECK: tp.sqrt
  %1 = tp.sqrt %0 : tensor<4xf32>
  // CHECK: tp.erf
  %2 = tp.erf %1 : tensor<4xf32>
  // CHECK: tp.tanh
  %3 = tp.tanh %2 : tensor<4xf32>
  // CHECK: tp.sigmoid
  %4 = tp.sigmoid %3 : tensor<4xf32>
  // CHECK: tp.exp
  %5 = tp.exp %4 : tensor<4xf32>
  // CHECK: tp.log
  %6 = tp.log %5 : tensor<4xf32>
  // CHECK: tp.reciprocal
  %7 = tp.reciprocal %6 : tensor<4xf32>
  // CHECK: tp.pow %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %8 = tp.pow %7, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: tp.max
  %9 = tp.max %8, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: tp.min
  %10 = tp.min %9, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: tp.cast %{{.*}} : tensor<4xi64> -> tensor<4xf32>
  %11 = tp.cast %i : tensor<4xi64> -> tensor<4xf32>
  // CHECK: tp.where %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %12 = tp.where %c, %10, %11 : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %12, %11 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<4x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<4x16x64xf32>, tensor<4x16x1xf32>) {
  // CHECK: tp.softmax %{{.*}} {axis = 2 : i64} : tensor<4x16x64xf32>
  %0 = tp.softmax %x {axis = 2 : i64} : tensor<4x16x64xf32>
  // CHECK: tp.log_softmax %{{.*}} {axis = 1 : i64} : tensor<4x16x64xf32>
  %1 = tp.log_softmax %0 {axis = 1 : i64} : tensor<4x16x64xf32>
  // CHECK: tp.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32>
  %2 = tp.layer_norm %1, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32>
  // CHECK: tp.reduce_sum %{{.*}} {axes = array<i64: 2>, keepdims = true} : tensor<4x16x64xf32> -> tensor<4x16x1xf32>
  %3 = tp.reduce_sum %2 {axes = array<i64: 2>, keepdims = true} : tensor<4x16x64xf32> -> tensor<4x16x1xf32>
  // CHECK: tp.reduce_mean
  %4 = tp.reduce_mean %3 {axes = array<i64: 0, 1>, keepdims = true} : tensor<4x16x1xf32> -> tensor<1x1x1xf32>
  // CHECK: tp.reduce_max
  %5 = tp.reduce_max %3 {axes = array<i64: 1>, keepdims = true} : tensor<4x16x1xf32> -> tensor<4x1x1xf32>
  return %2, %3 : tensor<4x16x64xf32>, tensor<4x16x1xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<4x16x64xf32>, %t: tensor<100x64xf32>, %ids: tensor<4x16xi64>, %r: tensor<1x64xf32>, %pick: tensor<100x2xi64>) -> (tensor<4x4x16x16xf32>, tensor<8x16x64xf32>, tensor<4x16x32xf32>, tensor<4x16x64xf32>, tensor<8x64xf32>, tensor<100x2xf32>) {
  // CHECK: tp.reshape %{{.*}} : tensor<4x16x64xf32> -> tensor<4x16x4x16xf32>
  %0 = tp.reshape %x : tensor<4x16x64xf32> -> tensor<4x16x4x16xf32>
  // CHECK: tp.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>}
  %1 = tp.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<4x16x4x16xf32> -> tensor<4x4x16x16xf32>
  // CHECK: tp.concat %{{.*}}, %{{.*}} {axis = 0 : i64}
  %2 = tp.concat %x, %x {axis = 0 : i64} : tensor<4x16x64xf32>, tensor<4x16x64xf32> -> tensor<8x16x64xf32>
  // CHECK: tp.slice %{{.*}} {limits = array<i64: 4, 16, 64>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 2>}
  %3 = tp.slice %x {starts = array<i64: 0, 0, 0>, limits = array<i64: 4, 16, 64>, steps = array<i64: 1, 1, 2>} : tensor<4x16x64xf32> -> tensor<4x16x32xf32>
  // CHECK: tp.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<100x64xf32>, tensor<4x16xi64> -> tensor<4x16x64xf32>
  %4 = tp.gather %t, %ids {axis = 0 : i64} : tensor<100x64xf32>, tensor<4x16xi64> -> tensor<4x16x64xf32>
  // CHECK: tp.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<100x64xf32>, tensor<100x2xi64> -> tensor<100x2xf32>
  %g = tp.gather_elements %t, %pick {axis = 1 : i64} : tensor<100x64xf32>, tensor<100x2xi64> -> tensor<100x2xf32>
  // CHECK: tp.expand %{{.*}} : tensor<1x64xf32> -> tensor<8x64xf32>
  %5 = tp.expand %r : tensor<1x64xf32> -> tensor<8x64xf32>
  return %1, %2, %3, %4, %5, %g : tensor<4x4x16x16xf32>, tensor<8x16x64xf32>, tensor<4x16x32xf32>, tensor<4x16x64xf32>, tensor<8x64xf32>, tensor<100x2xf32>
}

// CHECK-LABEL: func.func @masked_gather
func.func @masked_gather(%t: tensor<500x64xf32>, %ids: tensor<4x16xi64>, %off: tensor<i64>) -> tensor<4x16x64xf32> {
  // CHECK: tp.masked_gather %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<500x64xf32>, tensor<4x16xi64>, tensor<i64> -> tensor<4x16x64xf32>
  %0 = tp.masked_gather %t, %ids, %off {axis = 0 : i64} : tensor<500x64xf32>, tensor<4x16xi64>, tensor<i64> -> tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}

// CHECK-LABEL: func.func @one_hot
func.func @one_hot(%labels: tensor<8xi64>, %off: tensor<i64>) -> tensor<8x10xf32> {
  // CHECK: tp.one_hot %{{.*}}, %{{.*}} : tensor<8xi64>, tensor<i64> -> tensor<8x10xf32>
  %0 = tp.one_hot %labels, %off : tensor<8xi64>, tensor<i64> -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// CHECK-LABEL: func.func @sharding_attr
// CHECK-SAME: tp.sharding = #tp.sharding<[{"dp", "tp"}, {}], partial = {"x"}>
func.func @sharding_attr(%x: tensor<8x4xf32> {tp.sharding = #tp.sharding<[{"dp", "tp"}, {}], partial = {"x"}>}) -> tensor<8x4xf32> {
  return %x : tensor<8x4xf32>
}

// A conv and its two gradients (the input's shape is the input gradient's
// result type; the conv's output the gradients' output-gradient operand).
// CHECK-LABEL: func.func @conv_and_gradients
func.func @conv_and_gradients(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %g: tensor<2x6x5x5xf32>) -> (tensor<2x6x5x5xf32>, tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) {
  // CHECK: tp.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x5x5xf32>
  %y = tp.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x5x5xf32>
  // CHECK: tp.conv_input_grad %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  %dx = tp.conv_input_grad %g, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  // CHECK: tp.conv_filter_grad %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x9x9xf32>, tensor<2x6x5x5xf32> -> tensor<6x2x3x3xf32>
  %dw = tp.conv_filter_grad %x, %g {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x4x9x9xf32>, tensor<2x6x5x5xf32> -> tensor<6x2x3x3xf32>
  return %y, %dx, %dw : tensor<2x6x5x5xf32>, tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>
}
