// The sharding rules of a conv's gradients, through propagation and
// partitioning: with the batch split (data parallelism) the input's
// gradient stays split and the filter's is a partial sum over the batch,
// all-reduced; a depthwise filter gradient follows a channel split, with
// as many groups locally as it has channels.
// RUN: tp-opt %s -split-input-file --tp-propagate-sharding --tp-partition | FileCheck %s

// CHECK-LABEL: func.func @conv_gradients_data_parallel
// CHECK: tp.conv_input_grad %arg2, %arg1 {{.*}} : tensor<4x32x6x6xf32>, tensor<32x16x3x3xf32> -> tensor<4x16x6x6xf32>
// CHECK: %[[DW:.*]] = tp.conv_filter_grad %arg0, %arg2 {{.*}} : tensor<4x16x6x6xf32>, tensor<4x32x6x6xf32> -> tensor<32x16x3x3xf32>
// CHECK: shard.all_reduce %[[DW]] on @mesh grid_axes = [0] : tensor<32x16x3x3xf32> -> tensor<32x16x3x3xf32>
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @conv_gradients_data_parallel(%x: tensor<8x16x6x6xf32> {tp.sharding = #tp.sharding<[{"dp"}, {}, {}, {}]>}, %w: tensor<32x16x3x3xf32>, %g: tensor<8x32x6x6xf32> {tp.sharding = #tp.sharding<[{"dp"}, {}, {}, {}]>}) -> (tensor<8x16x6x6xf32>, tensor<32x16x3x3xf32>) {
  %dx = tp.conv_input_grad %g, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<8x32x6x6xf32>, tensor<32x16x3x3xf32> -> tensor<8x16x6x6xf32>
  %dw = tp.conv_filter_grad %x, %g {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<8x16x6x6xf32>, tensor<8x32x6x6xf32> -> tensor<32x16x3x3xf32>
  return %dx, %dw : tensor<8x16x6x6xf32>, tensor<32x16x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @depthwise_channels
// CHECK: %[[G:.*]] = shard.all_slice %arg2 on @mesh grid_axes = [1] slice_axis = 1 : tensor<8x16x6x6xf32> -> tensor<8x4x6x6xf32>
// CHECK: tp.conv_filter_grad %arg0, %[[G]] {dilations = array<i64: 1, 1>, group = 4 : i64, {{.*}}} : tensor<8x4x6x6xf32>, tensor<8x4x6x6xf32> -> tensor<4x1x3x3xf32>
// CHECK-NOT: shard.all_reduce
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @depthwise_channels(%x: tensor<8x16x6x6xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}, {}, {}]>}, %w: tensor<16x1x3x3xf32>, %g: tensor<8x16x6x6xf32>) -> (tensor<8x16x6x6xf32>, tensor<16x1x3x3xf32>) {
  %dx = tp.conv_input_grad %g, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 16 : i64} : tensor<8x16x6x6xf32>, tensor<16x1x3x3xf32> -> tensor<8x16x6x6xf32>
  %dw = tp.conv_filter_grad %x, %g {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 16 : i64} : tensor<8x16x6x6xf32>, tensor<8x16x6x6xf32> -> tensor<16x1x3x3xf32>
  return %dx, %dw : tensor<8x16x6x6xf32>, tensor<16x1x3x3xf32>
}
