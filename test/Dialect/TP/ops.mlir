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
