// tp-fuse-elementwise: elementwise chains fuse into one linalg.generic, and
// a Linear on [B, S, D] (a matmul between a collapse and an expand) stays a
// named linalg.matmul for tp-lower-matmul-to-blas; upstream's
// linalg-fuse-elementwise-ops turns it into a generic contraction.
// RUN: tp-opt %s --tp-lower-to-linalg --tp-fuse-elementwise | FileCheck %s
// RUN: tp-opt %s --tp-lower-to-linalg --linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=UPSTREAM

// CHECK-LABEL: func.func @linear_bias_relu
// CHECK: tensor.collapse_shape %arg0 {{.*}} : tensor<4x16x64xf32> into tensor<64x64xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %arg1 : tensor<64x64xf32>, tensor<64x32xf32>)
// The bias add and the relu: one generic.
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// UPSTREAM-LABEL: func.func @linear_bias_relu
// UPSTREAM-NOT: linalg.matmul
// UPSTREAM: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
func.func @linear_bias_relu(%x: tensor<4x16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<4x16x32xf32> {
  %m = tp.matmul %x, %w : tensor<4x16x64xf32>, tensor<64x32xf32> -> tensor<4x16x32xf32>
  %a = tp.add %m, %b : tensor<4x16x32xf32>, tensor<32xf32> -> tensor<4x16x32xf32>
  %r = tp.relu %a : tensor<4x16x32xf32>
  return %r : tensor<4x16x32xf32>
}
