// tp.conv with one group lowers to im2col (one linalg.generic copying the
// padded input's windows into columns) and one linalg.matmul (an OpenBLAS
// call). The columns' layout is chosen so that the copy's innermost loop
// runs along a long row of the input: the output's last dim when the
// output is wider than the filter (a forward conv, an input's gradient),
// else the filter's (a filter's gradient, whose "filter" is the output's
// gradient, 16 wide here).
// RUN: tp-opt %s --tp-lower-to-linalg | FileCheck %s

// Output-major columns [C, KH, KW, N, OH, OW]: the filter [M, C*KH*KW]
// times them gives [M, N*OH*OW]; whole rows of OW move to [N, M, OH, OW].
// CHECK-DAG: #[[OUT_MAJOR:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[WIN_MAJOR:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-LABEL: func.func @forward
// CHECK: %[[PADDED:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[COLS:.*]] = linalg.generic {indexing_maps = [#[[OUT_MAJOR]], #{{.*}}]{{.*}} ins(%[[PADDED]] : tensor<2x8x18x18xf32>)
// CHECK: } -> tensor<8x3x3x2x16x16xf32>
// CHECK: %[[FILTER:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<16x8x3x3xf32> into tensor<16x72xf32>
// CHECK: %[[COLS2D:.*]] = tensor.collapse_shape %[[COLS]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<8x3x3x2x16x16xf32> into tensor<72x512xf32>
// CHECK: %[[PRODUCT:.*]] = linalg.matmul ins(%[[FILTER]], %[[COLS2D]] : tensor<16x72xf32>, tensor<72x512xf32>)
// CHECK: %[[MNO:.*]] = tensor.expand_shape %[[PRODUCT]] {{.*}} into tensor<16x2x16x16xf32>
// CHECK: linalg.transpose ins(%[[MNO]] : tensor<16x2x16x16xf32>) outs(%{{.*}} : tensor<2x16x16x16xf32>) permutation = [1, 0, 2, 3]
func.func @forward(%x: tensor<2x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<2x16x16x16xf32> {
  %y = tp.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<2x8x16x16xf32>, tensor<16x8x3x3xf32> -> tensor<2x16x16x16xf32>
  return %y : tensor<2x16x16x16xf32>
}

// One image: the product is already [1, M, OH, OW], no transpose.
// CHECK-LABEL: func.func @one_image
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x27xf32>, tensor<27x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @one_image(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = tp.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// A filter's gradient (input [C, N, H, W], the output's gradient as the
// filter): window-major columns [C, 3, 3, N, 16, 16] (the conv's batch,
// its output, its channels, its filter: innermost the 16 wide filter
// row), times the filter read transposed.
// CHECK-LABEL: func.func @filter_gradient
// CHECK: %[[COLS:.*]] = linalg.generic {indexing_maps = [#[[WIN_MAJOR]], #{{.*}}]
// CHECK: } -> tensor<8x3x3x2x16x16xf32>
// CHECK: %[[COLS2D:.*]] = tensor.collapse_shape %[[COLS]] {{.*}} into tensor<72x512xf32>
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[COLS2D]], %{{.*}} : tensor<72x512xf32>, tensor<16x512xf32>)
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
func.func @filter_gradient(%x: tensor<8x2x16x16xf32>, %g: tensor<16x2x16x16xf32>) -> tensor<8x16x3x3xf32> {
  %y = tp.conv %x, %g {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<8x2x16x16xf32>, tensor<16x2x16x16xf32> -> tensor<8x16x3x3xf32>
  return %y : tensor<8x16x3x3xf32>
}

// The filter's gradient turned to [M, C, KH, KW] (as the conv's VJP does):
// that transpose undoes the GEMM product's move, and neither is left.
// CHECK-LABEL: func.func @filter_gradient_turned
// CHECK: %[[PRODUCT:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<512x64xf32>, tensor<64x4608xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[RESULT:.*]] = tensor.expand_shape %[[PRODUCT]] {{.*}} into tensor<512x512x3x3xf32>
// CHECK: return %[[RESULT]]
func.func @filter_gradient_turned(%x: tensor<512x16x2x2xf32>, %g: tensor<512x16x2x2xf32>) -> tensor<512x512x3x3xf32> {
  %y = tp.conv %x, %g {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : tensor<512x16x2x2xf32>, tensor<512x16x2x2xf32> -> tensor<512x512x3x3xf32>
  %t = tp.transpose %y {perm = array<i64: 1, 0, 2, 3>} : tensor<512x512x3x3xf32> -> tensor<512x512x3x3xf32>
  return %t : tensor<512x512x3x3xf32>
}
