// Reshape, transpose, concat, slice and gather lowerings.
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// Reshapes use one collapse or expand when the dims group, else go through
// the flat tensor.
// CHECK-LABEL: func.func @reshapes
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [4, 16, 4, 16] : tensor<4x16x64xf32> into tensor<4x16x4x16xf32>
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<4x16x64xf32> into tensor<64x64xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK: tensor.collapse_shape %arg2 [] : tensor<1x1xf32> into tensor<f32>
func.func @reshapes(%x: tensor<4x16x64xf32>, %y: tensor<2x3xf32>, %z: tensor<1x1xf32>) -> (tensor<4x16x4x16xf32>, tensor<64x64xf32>, tensor<3x2xf32>, tensor<f32>) {
  %0 = tp.reshape %x : tensor<4x16x64xf32> -> tensor<4x16x4x16xf32>
  %1 = tp.reshape %x : tensor<4x16x64xf32> -> tensor<64x64xf32>
  %2 = tp.reshape %y : tensor<2x3xf32> -> tensor<3x2xf32>
  %3 = tp.reshape %z : tensor<1x1xf32> -> tensor<f32>
  return %0, %1, %2, %3 : tensor<4x16x4x16xf32>, tensor<64x64xf32>, tensor<3x2xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x4x16x16xf32>
// CHECK: linalg.transpose ins(%arg0 : tensor<4x16x4x16xf32>) outs(%[[INIT]] : tensor<4x4x16x16xf32>) permutation = [0, 2, 1, 3]
func.func @transpose(%x: tensor<4x16x4x16xf32>) -> tensor<4x4x16x16xf32> {
  %0 = tp.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<4x16x4x16xf32> -> tensor<4x4x16x16xf32>
  return %0 : tensor<4x4x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @concat_slice
// CHECK: tensor.concat dim(1) %arg0, %arg0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
// CHECK: tensor.extract_slice %arg0[1, 0] [3, 4] [1, 2] : tensor<4x8xf32> to tensor<3x4xf32>
func.func @concat_slice(%x: tensor<4x8xf32>) -> (tensor<4x16xf32>, tensor<3x4xf32>) {
  %0 = tp.concat %x, %x {axis = 1 : i64} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  %1 = tp.slice %x {starts = array<i64: 1, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<3x4xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<3x4xf32>
}

// -----

// Embedding lookup: negative ids wrap around, then tensor.extract per element.
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic {indexing_maps = [#[[IDS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<4x16xi64>)
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[I]], %{{.*}}
// CHECK: %[[WRAP:.*]] = arith.addi %[[I]], %{{.*}}
// CHECK: %[[ROW:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[I]]
// CHECK: %[[COL:.*]] = linalg.index 2 : index
// CHECK: tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<100x64xf32>
func.func @gather(%table: tensor<100x64xf32>, %ids: tensor<4x16xi64>) -> tensor<4x16x64xf32> {
  %0 = tp.gather %table, %ids {axis = 0 : i64} : tensor<100x64xf32>, tensor<4x16xi64> -> tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}

// -----

// Constant indices that step evenly (a flip, as a conv's input gradient
// flips the filter; a wrapped negative index counts from the end) read the
// data through an affine map; uneven constant indices are a gather still.
// CHECK-DAG: #[[FLIP:.*]] = affine_map<(d0, d1, d2) -> (d0, -d1 + 2, d2)>
// CHECK-DAG: #[[EVERY_OTHER:.*]] = affine_map<(d0, d1) -> (d0 * 2 + 1, d1)>
// CHECK-LABEL: func.func @gather_progressions
// CHECK: linalg.generic {indexing_maps = [#[[FLIP]], #{{.*}}], {{.*}} ins(%arg0 : tensor<4x3x3xf32>)
// CHECK-NOT: tensor.extract
// CHECK: linalg.generic {indexing_maps = [#[[EVERY_OTHER]], #{{.*}}], {{.*}} ins(%arg1 : tensor<8x5xf32>)
// CHECK-NOT: tensor.extract
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<3xi64>)
// CHECK: tensor.extract %arg1
func.func @gather_progressions(%w: tensor<4x3x3xf32>, %x: tensor<8x5xf32>) -> (tensor<4x3x3xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %flip = tp.constant dense<[2, 1, 0]> : tensor<3xi64>
  %0 = tp.gather %w, %flip {axis = 1 : i64} : tensor<4x3x3xf32>, tensor<3xi64> -> tensor<4x3x3xf32>
  %odd = tp.constant dense<[1, 3, -3]> : tensor<3xi64>
  %1 = tp.gather %x, %odd {axis = 0 : i64} : tensor<8x5xf32>, tensor<3xi64> -> tensor<3x5xf32>
  %uneven = tp.constant dense<[0, 1, 3]> : tensor<3xi64>
  %2 = tp.gather %x, %uneven {axis = 0 : i64} : tensor<8x5xf32>, tensor<3xi64> -> tensor<3x5xf32>
  return %0, %1, %2 : tensor<4x3x3xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// GatherElements: one element per index, the other coordinates the
// result's own.
// CHECK-LABEL: func.func @gather_elements
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<4x2xi64>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[COL:.*]] = arith.select %{{.*}}, %{{.*}}, %[[I]] : index
// CHECK: %[[ROW:.*]] = linalg.index 0 : index
// CHECK: tensor.extract %arg0[%[[ROW]], %[[COL]]] : tensor<4x10xf32>
func.func @gather_elements(%x: tensor<4x10xf32>, %i: tensor<4x2xi64>) -> tensor<4x2xf32> {
  %0 = tp.gather_elements %x, %i {axis = 1 : i64} : tensor<4x10xf32>, tensor<4x2xi64> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// One-hot: 1 where the label equals the class index plus the offset.
// CHECK-LABEL: func.func @one_hot
// CHECK: %[[OFF:.*]] = tensor.extract %arg1[] : tensor<i64>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<8xi64>) outs(%{{.*}} : tensor<8x10xf32>)
// CHECK: ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[CI:.*]] = arith.index_cast %[[C]] : index to i64
// CHECK: %[[G:.*]] = arith.addi %[[CI]], %[[OFF]] : i64
// CHECK: %[[HIT:.*]] = arith.cmpi eq, %[[ID]], %[[G]] : i64
// CHECK: arith.select %[[HIT]], %{{.*}}, %{{.*}} : f32
func.func @one_hot(%labels: tensor<8xi64>, %off: tensor<i64>) -> tensor<8x10xf32> {
  %0 = tp.one_hot %labels, %off : tensor<8xi64>, tensor<i64> -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}
