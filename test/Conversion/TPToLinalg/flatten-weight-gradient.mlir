// tp-lower-to-linalg: a weight gradient as tp-autodiff writes it, a batched
// x^T dy summed over the batch, becomes one GEMM over the flattened batch
// (x as [B*S, K] read transposed, dy as [B*S, N]); other sums of products
// keep their batched form.
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[DY:.*]]: tensor<2x8x32xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK-DAG: %[[XF:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x8x64xf32> into tensor<16x64xf32>
// CHECK-DAG: %[[DYF:.*]] = tensor.collapse_shape %[[DY]] {{\[\[}}0, 1], [2]] : tensor<2x8x32xf32> into tensor<16x32xf32>
// CHECK: %[[G:.*]] = linalg.matmul indexing_maps = [#[[AT]], #[[B]], #{{.*}}] ins(%[[XF]], %[[DYF]] : tensor<16x64xf32>, tensor<16x32xf32>) outs(%{{.*}} : tensor<64x32xf32>)
// CHECK-NOT: linalg.generic
// CHECK: tensor.expand_shape %[[G]] {{\[\[}}0, 1], [2]] output_shape [1, 64, 32]
func.func @weight_gradient(%x: tensor<2x8x64xf32>, %dy: tensor<2x8x32xf32>) -> tensor<1x64x32xf32> {
  %xt = tp.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x8x64xf32> -> tensor<2x64x8xf32>
  %p = tp.matmul %xt, %dy : tensor<2x64x8xf32>, tensor<2x8x32xf32> -> tensor<2x64x32xf32>
  %g = tp.reduce_sum %p {axes = array<i64: 0>, keepdims = true} : tensor<2x64x32xf32> -> tensor<1x64x32xf32>
  return %g : tensor<1x64x32xf32>
}

// -----

// Summed over a non-batch dim: not a flattened product.
// CHECK-LABEL: func.func @other_sum
// CHECK: linalg.batch_matmul
// CHECK: linalg.generic
// CHECK-SAME: "reduction"
func.func @other_sum(%x: tensor<2x8x64xf32>, %dy: tensor<2x8x32xf32>) -> tensor<2x64x1xf32> {
  %xt = tp.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x8x64xf32> -> tensor<2x64x8xf32>
  %p = tp.matmul %xt, %dy : tensor<2x64x8xf32>, tensor<2x8x32xf32> -> tensor<2x64x32xf32>
  %g = tp.reduce_sum %p {axes = array<i64: 2>, keepdims = true} : tensor<2x64x32xf32> -> tensor<2x64x1xf32>
  return %g : tensor<2x64x1xf32>
}
