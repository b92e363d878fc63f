// tp.matmul becomes linalg.matmul (2-D), linalg.batch_matmul (3-D, equal
// batch) or a linalg.generic contraction with broadcast batch dims, always
// accumulating into a zero-filled tensor.
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @matmul_2d
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8x256xf32>
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<8x256xf32>)
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<8x64xf32>, tensor<64x256xf32>) outs(%[[ACC]] : tensor<8x256xf32>)
func.func @matmul_2d(%x: tensor<8x64xf32>, %w: tensor<64x256xf32>) -> tensor<8x256xf32> {
  %0 = tp.matmul %x, %w : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul
// CHECK: linalg.batch_matmul ins(%arg0, %arg1 : tensor<4x16x64xf32>, tensor<4x64x16xf32>)
func.func @batch_matmul(%q: tensor<4x16x64xf32>, %k: tensor<4x64x16xf32>) -> tensor<4x16x16xf32> {
  %0 = tp.matmul %q, %k : tensor<4x16x64xf32>, tensor<4x64x16xf32> -> tensor<4x16x16xf32>
  return %0 : tensor<4x16x16xf32>
}

// -----

// A 3-D activation times a 2-D weight (torch's Linear on [B, S, D]) is one
// GEMM on [B*S, D].
// CHECK-LABEL: func.func @matmul_3d_by_2d
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<4x16x64xf32> into tensor<64x64xf32>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[FLAT]], %arg1 : tensor<64x64xf32>, tensor<64x256xf32>)
// CHECK: tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2]] output_shape [4, 16, 256] : tensor<64x256xf32> into tensor<4x16x256xf32>
func.func @matmul_3d_by_2d(%x: tensor<4x16x64xf32>, %w: tensor<64x256xf32>) -> tensor<4x16x256xf32> {
  %0 = tp.matmul %x, %w : tensor<4x16x64xf32>, tensor<64x256xf32> -> tensor<4x16x256xf32>
  return %0 : tensor<4x16x256xf32>
}

// -----

// Attention's [B, H, S, D] products: one batch_matmul over B*H.
// CHECK-LABEL: func.func @matmul_4d_equal_batch
// CHECK: %[[Q:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]] : tensor<4x4x16x16xf32> into tensor<16x16x16xf32>
// CHECK: %[[K:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3]] : tensor<4x4x16x8xf32> into tensor<16x16x8xf32>
// CHECK: %[[S:.*]] = linalg.batch_matmul ins(%[[Q]], %[[K]] : tensor<16x16x16xf32>, tensor<16x16x8xf32>)
// CHECK: tensor.expand_shape %[[S]] {{\[\[}}0, 1], [2], [3]] output_shape [4, 4, 16, 8]
func.func @matmul_4d_equal_batch(%q: tensor<4x4x16x16xf32>, %k: tensor<4x4x16x8xf32>) -> tensor<4x4x16x8xf32> {
  %0 = tp.matmul %q, %k : tensor<4x4x16x16xf32>, tensor<4x4x16x8xf32> -> tensor<4x4x16x8xf32>
  return %0 : tensor<4x4x16x8xf32>
}

// -----

// Batch dims broadcast both ways: [4] against [2, 1].
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d4, d3)>
// CHECK-LABEL: func.func @matmul_broadcast_batch
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<2x4x16x16xf32>)
func.func @matmul_broadcast_batch(%q: tensor<4x16x64xf32>, %k: tensor<2x1x64x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = tp.matmul %q, %k : tensor<4x16x64xf32>, tensor<2x1x64x16xf32> -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_integer
// CHECK: arith.constant 0 : i32
// CHECK: linalg.matmul
func.func @matmul_integer(%x: tensor<2x3xi32>, %w: tensor<3x4xi32>) -> tensor<2x4xi32> {
  %0 = tp.matmul %x, %w : tensor<2x3xi32>, tensor<3x4xi32> -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}
