// tp-lower-conv-to-dnnl: f32 convs of 1 to 3 spatial dims and both their
// gradients become tprt_conv calls on buffer addresses: the kind
// (TPRT_CONV_FORWARD 0, _INPUT_GRAD 1, _FILTER_GRAD 2), the two operands,
// the result buffer and a constant shape array in tprt.h's layout (rank,
// group, N, C, M, then three entries each for input, kernel and output
// sizes, strides, dilations, begin pads and end pads). Other convs stay.
// RUN: tp-opt %s --tp-lower-conv-to-dnnl | FileCheck %s

// CHECK-LABEL: func.func @conv_and_gradients
// CHECK-NOT: tp.conv
// The forward: input [2, 4, 9, 9], filter [6, 2, 3, 3] in 2 groups,
// output 5x5, stride 2, pads 1.
// CHECK: %[[SHAPE:.*]] = arith.constant dense<[2, 2, 2, 4, 6, 9, 9, 0, 3, 3, 0, 5, 5, 0, 2, 2, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0]> : tensor<26xi64>
// CHECK: %[[Y:.*]] = memref.alloc() : memref<2x6x5x5xf32>
// CHECK: %[[X:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x4x9x9xf32> to memref<2x4x9x9xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[W:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: %[[S:.*]] = bufferization.to_buffer %[[SHAPE]] read_only
// CHECK: call @tprt_conv(%c0_i32, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i64, i64, i64, i64) -> ()
// CHECK: bufferization.to_tensor %[[Y]] restrict writable : memref<2x6x5x5xf32> to tensor<2x6x5x5xf32>
// The input's gradient: the output gradient and the filter in, [2, 4, 9, 9] out.
// CHECK: %[[DX:.*]] = memref.alloc() : memref<2x4x9x9xf32>
// CHECK: call @tprt_conv(%c1_i32,
// CHECK: bufferization.to_tensor %[[DX]] restrict writable
// The filter's gradient: the input and the output gradient in.
// CHECK: %[[DW:.*]] = memref.alloc() : memref<6x2x3x3xf32>
// CHECK: call @tprt_conv(%c2_i32,
// CHECK: bufferization.to_tensor %[[DW]] restrict writable
func.func @conv_and_gradients(%x: tensor<2x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %g: tensor<2x6x5x5xf32>) -> (tensor<2x6x5x5xf32>, tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>) {
  %y = tp.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32> -> tensor<2x6x5x5xf32>
  %dx = tp.conv_input_grad %g, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x6x5x5xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x9xf32>
  %dw = tp.conv_filter_grad %x, %g {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x4x9x9xf32>, tensor<2x6x5x5xf32> -> tensor<6x2x3x3xf32>
  return %y, %dx, %dw : tensor<2x6x5x5xf32>, tensor<2x4x9x9xf32>, tensor<6x2x3x3xf32>
}

// A 1-d conv with a dilation and uneven pads: rank 1, one spatial entry each.
// CHECK-LABEL: func.func @conv1d
// CHECK: arith.constant dense<[1, 1, 1, 3, 8, 20, 0, 0, 5, 0, 0, 18, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 3, 0, 0]> : tensor<26xi64>
// CHECK: call @tprt_conv(%c0_i32,
func.func @conv1d(%x: tensor<1x3x20xf32>, %w: tensor<8x3x5xf32>) -> tensor<1x8x18xf32> {
  %y = tp.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 2>, pads = array<i64: 3, 3>, group = 1 : i64} : tensor<1x3x20xf32>, tensor<8x3x5xf32> -> tensor<1x8x18xf32>
  return %y : tensor<1x8x18xf32>
}

// oneDNN takes 1 to 3 spatial dims and, here, f32: a 4-d conv and an f16
// one stay for tp-lower-to-linalg.
// CHECK-LABEL: func.func @left_for_linalg
// CHECK-NOT: tprt_conv
// CHECK: tp.conv %arg0, %arg1
// CHECK: tp.conv %arg2, %arg3
func.func @left_for_linalg(%x: tensor<1x1x3x3x3x3xf32>, %w: tensor<1x1x2x2x2x2xf32>, %h: tensor<1x2x4x4xf16>, %v: tensor<2x2x3x3xf16>) -> (tensor<1x1x2x2x2x2xf32>, tensor<1x2x2x2xf16>) {
  %y = tp.conv %x, %w {strides = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0, 0, 0>, group = 1 : i64} : tensor<1x1x3x3x3x3xf32>, tensor<1x1x2x2x2x2xf32> -> tensor<1x1x2x2x2x2xf32>
  %z = tp.conv %h, %v {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 1 : i64} : tensor<1x2x4x4xf16>, tensor<2x2x3x3xf16> -> tensor<1x2x2x2xf16>
  return %y, %z : tensor<1x1x2x2x2x2xf32>, tensor<1x2x2x2xf16>
}

// Mixed precision (tp-autocast): bf16 operands and an f32 result call the
// bf16 convolution (TPRT_CONV_BF16 = 8 in the kind: 8, 9, 10); f16 ones are
// widened to f32 for the f32 call.
// CHECK-LABEL: func.func @mixed_precision
// CHECK: call @tprt_conv(%c8_i32,
// CHECK: call @tprt_conv(%c9_i32,
// CHECK: call @tprt_conv(%c10_i32,
// CHECK-DAG: %[[X:.*]] = tp.cast %arg4 : tensor<1x3x8x8xf16> -> tensor<1x3x8x8xf32>
// CHECK-DAG: %[[W:.*]] = tp.cast %arg5 : tensor<4x3x3x3xf16> -> tensor<4x3x3x3xf32>
// CHECK-DAG: bufferization.to_buffer %[[X]]
// CHECK-DAG: bufferization.to_buffer %[[W]]
// CHECK: call @tprt_conv(%c0_i32,
// CHECK-NOT: tp.conv
func.func @mixed_precision(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>, %g: tensor<1x4x8x8xbf16>, %xb: tensor<1x3x8x8xbf16>,
                           %h: tensor<1x3x8x8xf16>, %hw: tensor<4x3x3x3xf16>) -> (tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x8x8xf32>) {
  %y = tp.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x8x8xf32>
  %dx = tp.conv_input_grad %g, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x4x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x3x8x8xf32>
  %dw = tp.conv_filter_grad %xb, %g {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x3x8x8xbf16>, tensor<1x4x8x8xbf16> -> tensor<4x3x3x3xf32>
  %yh = tp.conv %h, %hw {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16> -> tensor<1x4x8x8xf32>
  return %y, %dx, %dw, %yh : tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x8x8xf32>
}
