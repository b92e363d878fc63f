// tp-lower-to-linalg reads a GEMM operand that is a transpose of its last two
// dims through a transposed indexing map (BLAS and cuBLAS take it as a
// flag) instead of materializing the transpose; a transpose that something
// else reads stays for that reader. A transpose of a GEMM's product, when
// nothing else reads the product, is the GEMM's own (operands swapped).
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// A Linear layer as PyTorch exports it: x @ W^T.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x64xf32>, %[[W:.*]]: tensor<256x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.empty() : tensor<64x256xf32>
// CHECK: %[[XF:.*]] = tensor.collapse_shape %[[X]]
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%[[XF]], %[[W]] : tensor<16x64xf32>, tensor<256x64xf32>)
func.func @linear(%x: tensor<2x8x64xf32>, %w: tensor<256x64xf32>) -> tensor<2x8x256xf32> {
  %wt = tp.transpose %w {perm = array<i64: 1, 0>} : tensor<256x64xf32> -> tensor<64x256xf32>
  %0 = tp.matmul %x, %wt : tensor<2x8x64xf32>, tensor<64x256xf32> -> tensor<2x8x256xf32>
  return %0 : tensor<2x8x256xf32>
}

// -----

// A weight gradient: x^T @ dy, with the transpose of x also returned.
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @transposed_lhs_also_read
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xf32>, %[[DY:.*]]: tensor<16x32xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<16x64xf32>)
// CHECK: %[[G:.*]] = linalg.matmul indexing_maps = [#[[AT]], #[[B]], #{{.*}}] ins(%[[X]], %[[DY]] : tensor<16x64xf32>, tensor<16x32xf32>)
// CHECK: return %[[G]], %[[T]]
func.func @transposed_lhs_also_read(%x: tensor<16x64xf32>, %dy: tensor<16x32xf32>) -> (tensor<64x32xf32>, tensor<64x16xf32>) {
  %xt = tp.transpose %x {perm = array<i64: 1, 0>} : tensor<16x64xf32> -> tensor<64x16xf32>
  %0 = tp.matmul %xt, %dy : tensor<64x16xf32>, tensor<16x32xf32> -> tensor<64x32xf32>
  return %0, %xt : tensor<64x32xf32>, tensor<64x16xf32>
}

// -----

// Attention scores q @ k^T on [B, H, S, D]: one batch_matmul over B*H that
// reads k (collapsed the same way) transposed.
// CHECK-DAG: #[[QM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[KTM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @attention_scores
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.empty() : tensor<2x4x16x8xf32>
// CHECK-DAG: %[[QF:.*]] = tensor.collapse_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
// CHECK-DAG: %[[KF:.*]] = tensor.collapse_shape %[[K]] {{\[\[}}0, 1], [2], [3]] : tensor<2x4x8x16xf32> into tensor<8x8x16xf32>
// CHECK: linalg.batch_matmul indexing_maps = [#[[QM]], #[[KTM]], #{{.*}}] ins(%[[QF]], %[[KF]] : tensor<8x8x16xf32>, tensor<8x8x16xf32>)
func.func @attention_scores(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>) -> tensor<2x4x8x8xf32> {
  %kt = tp.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %0 = tp.matmul %q, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// Other permutations are data movement, not a transposed GEMM operand.
// CHECK-LABEL: func.func @other_permutation
// CHECK: linalg.transpose
// CHECK-SAME: permutation = [1, 0, 2]
// CHECK: linalg.batch_matmul ins(
func.func @other_permutation(%a: tensor<4x2x8xf32>, %b: tensor<2x8x3xf32>) -> tensor<2x4x3xf32> {
  %at = tp.transpose %a {perm = array<i64: 1, 0, 2>} : tensor<4x2x8xf32> -> tensor<2x4x8xf32>
  %0 = tp.matmul %at, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32> -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// The same transpose on both sides (a^T a^T): read transposed twice, gone.
// CHECK-LABEL: func.func @same_transpose_twice
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%arg0, %arg0 : tensor<8x8xf32>, tensor<8x8xf32>)
func.func @same_transpose_twice(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %at = tp.transpose %a {perm = array<i64: 1, 0>} : tensor<8x8xf32> -> tensor<8x8xf32>
  %0 = tp.matmul %at, %at : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// A Linear layer's forward and its input's gradient: x @ W^T, then
// dy @ (W^T)^T. The backward's transpose of the transposed weight is read
// transposed, and that read of a transpose again: both GEMMs read W itself
// (the first transposed, the second as it is), and no transposed copy of W
// is kept from the forward to the backward.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @linear_and_input_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<256x64xf32>, %[[DY:.*]]: tensor<16x256xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[BT]], #{{.*}}] ins(%[[X]], %[[W]] : tensor<16x64xf32>, tensor<256x64xf32>)
// CHECK: linalg.matmul ins(%[[DY]], %[[W]] : tensor<16x256xf32>, tensor<256x64xf32>)
func.func @linear_and_input_gradient(%x: tensor<16x64xf32>, %w: tensor<256x64xf32>, %dy: tensor<16x256xf32>) -> (tensor<16x256xf32>, tensor<16x64xf32>) {
  %wt = tp.transpose %w {perm = array<i64: 1, 0>} : tensor<256x64xf32> -> tensor<64x256xf32>
  %y = tp.matmul %x, %wt : tensor<16x64xf32>, tensor<64x256xf32> -> tensor<16x256xf32>
  %wtt = tp.transpose %wt {perm = array<i64: 1, 0>} : tensor<64x256xf32> -> tensor<256x64xf32>
  %dx = tp.matmul %dy, %wtt : tensor<16x256xf32>, tensor<256x64xf32> -> tensor<16x64xf32>
  return %y, %dx : tensor<16x256xf32>, tensor<16x64xf32>
}

// -----

// The weight's gradient, (x^T dy)^T for a weight stored [out, in]: the GEMM
// computes the transposed product itself, dy^T x (its operands swapped,
// each read the other way, into a zero-filled [out, in] init), instead of
// a strided copy of its product.
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xf32>, %[[DY:.*]]: tensor<16x256xf32>)
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.matmul
// CHECK: %[[E:.*]] = tensor.empty() : tensor<256x64xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<256x64xf32>)
// CHECK: %[[G:.*]] = linalg.matmul indexing_maps = [#[[AT]], #[[B]], #{{.*}}] ins(%[[DY]], %[[X]] : tensor<16x256xf32>, tensor<16x64xf32>) outs(%[[Z]] : tensor<256x64xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: return %[[G]]
func.func @weight_gradient(%x: tensor<16x64xf32>, %dy: tensor<16x256xf32>) -> tensor<256x64xf32> {
  %xt = tp.transpose %x {perm = array<i64: 1, 0>} : tensor<16x64xf32> -> tensor<64x16xf32>
  %g = tp.matmul %xt, %dy : tensor<64x16xf32>, tensor<16x256xf32> -> tensor<64x256xf32>
  %gt = tp.transpose %g {perm = array<i64: 1, 0>} : tensor<64x256xf32> -> tensor<256x64xf32>
  return %gt : tensor<256x64xf32>
}

// -----

// A product that something else reads too keeps its transpose.
// CHECK-LABEL: func.func @product_also_read
// CHECK: %[[G:.*]] = linalg.matmul
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[G]]
// CHECK: return %[[G]], %[[T]]
func.func @product_also_read(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>) -> (tensor<16x32xf32>, tensor<32x16xf32>) {
  %g = tp.matmul %a, %b : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %gt = tp.transpose %g {perm = array<i64: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
  return %g, %gt : tensor<16x32xf32>, tensor<32x16xf32>
}
