// tp elementwise ops become linalg.generic; ONNX broadcasting is spelled out
// in the indexing maps (missing leading dims dropped, stretched size-1 dims
// read index 0).
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_bias
// CHECK-NOT: tp.
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<8x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[BIAS]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8x64xf32>, tensor<64xf32>) outs(%[[INIT]] : tensor<8x64xf32>)
// CHECK: arith.addf
func.func @add_bias(%a: tensor<8x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  %0 = tp.add %a, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @stretch_both_integer
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #{{.*}}]
// CHECK: arith.divsi
func.func @stretch_both_integer(%a: tensor<4x1xi64>, %b: tensor<1x3xi64>) -> tensor<4x3xi64> {
  %0 = tp.div %a, %b : tensor<4x1xi64>, tensor<1x3xi64> -> tensor<4x3xi64>
  return %0 : tensor<4x3xi64>
}

// -----

// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @sub_mul_div_scalar
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]], #{{.*}}]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.divf
func.func @sub_mul_div_scalar(%a: tensor<2x3xf32>, %s: tensor<f32>) -> tensor<2x3xf32> {
  %0 = tp.sub %a, %s : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %1 = tp.mul %0, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = tp.div %1, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @integer_ops
// CHECK: arith.addi
// CHECK: arith.subi
// CHECK: arith.muli
func.func @integer_ops(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tp.add %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %1 = tp.sub %0, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %2 = tp.mul %1, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %2 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @relu
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<8x256xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf %{{.*}}, %[[ZERO]] : f32
func.func @relu(%x: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %0 = tp.relu %x : tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NOT: tp.constant
func.func @constant() -> tensor<2xf32> {
  %c = tp.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
