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

// -----

// CHECK-LABEL: func.func @unary_family
// CHECK: arith.negf
// CHECK: math.sqrt
// CHECK: math.erf
// CHECK: math.tanh
// sigmoid(x) = 1 / (1 + exp(-x))
// CHECK: %[[N:.*]] = arith.negf
// CHECK: %[[E:.*]] = math.exp %[[N]]
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]]
// CHECK: arith.divf %{{.*}}, %[[D]]
// CHECK: math.exp
// CHECK: math.log
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: arith.divf %[[ONE]], %{{.*}}
func.func @unary_family(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tp.neg %x : tensor<4xf32>
  %1 = tp.sqrt %0 : tensor<4xf32>
  %2 = tp.erf %1 : tensor<4xf32>
  %3 = tp.tanh %2 : tensor<4xf32>
  %4 = tp.sigmoid %3 : tensor<4xf32>
  %5 = tp.exp %4 : tensor<4xf32>
  %6 = tp.log %5 : tensor<4xf32>
  %7 = tp.reciprocal %6 : tensor<4xf32>
  return %7 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow_max_min
// CHECK: math.powf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.maxsi
// CHECK: arith.minsi
func.func @pow_max_min(%x: tensor<4xf32>, %e: tensor<f32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = tp.pow %x, %e : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = tp.max %0, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = tp.min %1, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %3 = tp.max %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %4 = tp.min %3, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %2, %4 : tensor<4xf32>, tensor<4xi64>
}

// -----

// tp.rem is C's remainder: the dividend's sign, for floats and integers.
// CHECK-LABEL: func.func @rem
// CHECK: arith.remf
// CHECK: arith.remsi
func.func @rem(%x: tensor<4xf32>, %d: tensor<f32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = tp.rem %x, %d : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = tp.rem %i, %i : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// Three-way broadcasting: condition [4, 1], x [4, 3], y scalar.
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @where
// CHECK: linalg.generic {indexing_maps = [#[[C]], #{{.*}}, #[[S]], #{{.*}}]
// CHECK: arith.select
func.func @where(%c: tensor<4x1xi1>, %x: tensor<4x3xf32>, %y: tensor<f32>) -> tensor<4x3xf32> {
  %0 = tp.where %c, %x, %y : tensor<4x1xi1>, tensor<4x3xf32>, tensor<f32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// ONNX Cast: bool is unsigned, float -> int truncates, narrowing floats round.
// CHECK-LABEL: func.func @casts
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.cmpf une
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extsi %{{.*}} : i32 to i64
func.func @casts(%i: tensor<4xi64>, %b: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf16>, tensor<4xi64>) {
  %0 = tp.cast %i : tensor<4xi64> -> tensor<4xf32>
  %1 = tp.cast %0 : tensor<4xf32> -> tensor<4xi32>
  %2 = tp.cast %b : tensor<4xi1> -> tensor<4xf32>
  %3 = tp.cast %2 : tensor<4xf32> -> tensor<4xi1>
  %4 = tp.cast %0 : tensor<4xf32> -> tensor<4xf16>
  %5 = tp.cast %1 : tensor<4xi32> -> tensor<4xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf16>, tensor<4xi64>
}

// -----

// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @expand
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #{{.*}}]
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
func.func @expand(%x: tensor<1x64xf32>) -> tensor<8x64xf32> {
  %0 = tp.expand %x : tensor<1x64xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}
