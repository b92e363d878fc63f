// tp-lower-to-linalg: float sums of more than 1024 terms are cascaded, as
// PyTorch's are, so that no chain of float additions is longer than 1024:
// each long dim in blocks of 256 (zero-padded to whole blocks), then the
// block sums; several reduced dims one at a time, the innermost first.
// Shorter sums, and max / integer reductions, stay one generic.
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// 5000 terms: padded to 5120 = 20 blocks of 256, the blocks summed, then
// the 20 block sums.
// CHECK-LABEL: func.func @long_row
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0] high[0, 120]
// CHECK: } : tensor<2x5000xf32> to tensor<2x5120xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2]] output_shape [2, 20, 256] : tensor<2x5120xf32> into tensor<2x20x256xf32>
// CHECK: %[[B:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<2x20x256xf32>) outs(%{{.*}} : tensor<2x20xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[B]] : tensor<2x20xf32>) outs(%{{.*}} : tensor<2xf32>)
func.func @long_row(%x: tensor<2x5000xf32>) -> tensor<2xf32> {
  %0 = tp.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<2x5000xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A mean over every dim of [4, 512, 256] (524,288 terms, once one chain):
// dim 2 (256), then dim 1 (512), then dim 0; no chain is longer than 512.
// CHECK-LABEL: func.func @mean_of_all
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x512x256xf32>) outs(%{{.*}} : tensor<4x512xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x512xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
func.func @mean_of_all(%x: tensor<4x512x256xf32>) -> tensor<f32> {
  %0 = tp.reduce_mean %x {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<4x512x256xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// 1024 terms, a max, an integer sum: one generic each.
// CHECK-LABEL: func.func @short_and_other_kinds
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1024xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x5000xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2x5000xi64>) outs(%{{.*}} : tensor<2xi64>)
func.func @short_and_other_kinds(%a: tensor<2x1024xf32>, %b: tensor<2x5000xf32>, %c: tensor<2x5000xi64>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi64>) {
  %0 = tp.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : tensor<2x1024xf32> -> tensor<2xf32>
  %1 = tp.reduce_max %b {axes = array<i64: 1>, keepdims = false} : tensor<2x5000xf32> -> tensor<2xf32>
  %2 = tp.reduce_sum %c {axes = array<i64: 1>, keepdims = false} : tensor<2x5000xi64> -> tensor<2xi64>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xi64>
}
