// Softmax, LayerNorm and reductions become reduction generics plus
// elementwise generics that read the reduced values through maps dropping
// the reduced dims.
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @softmax
// max over the axis, starting from -inf; the max of the numbers (maxnumf,
// which LLVM vectorizes): a row with a NaN comes out all NaN anyway, the
// NaN's exp making the sum NaN
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAXINIT:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<4x16x64xf32>) outs(%[[MAXINIT]] : tensor<4x16xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[SH:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[RED]], #[[ID]]]{{.*}} ins(%arg0, %[[MAX]] : tensor<4x16x64xf32>, tensor<4x16xf32>)
// CHECK: arith.subf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[SH]] : tensor<4x16x64xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[EXP]] : tensor<4x16x64xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]], #[[ID]]]{{.*}} ins(%[[EXP]], %[[SUM]] : tensor<4x16x64xf32>, tensor<4x16xf32>)
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %0 = tp.softmax %x {axis = 2 : i64} : tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}

// -----

// log_softmax = (x - max) - log(sum(exp(x - max))), on a middle axis here.
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @log_softmax
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.maxnumf
// CHECK: %[[SH:.*]] = linalg.generic
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[RED]], #{{.*}}]{{.*}} ins(%[[SH]], %[[SUM]] : tensor<4x16x64xf32>, tensor<4x64xf32>)
// CHECK: %[[L:.*]] = math.log
// CHECK: arith.subf %{{.*}}, %[[L]]
func.func @log_softmax(%x: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %0 = tp.log_softmax %x {axis = 1 : i64} : tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}

// -----

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[NORM:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-DAG: %[[INV:.*]] = arith.constant 1.562500e-02 : f32
// CHECK-DAG: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%arg0, %[[SUM]]
// CHECK: %[[MEAN:.*]] = arith.mulf %{{.*}}, %[[INV]]
// CHECK: arith.subf %{{.*}}, %[[MEAN]]
// CHECK: %[[SQ:.*]] = linalg.generic
// CHECK: %[[SSQ:.*]] = linalg.generic {{.*}} ins(%[[SQ]]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]], #[[NORM]], #[[NORM]], #[[ID]]]{{.*}} ins(%[[C]], %[[SSQ]], %arg1, %arg2
// CHECK: %[[VAR:.*]] = arith.mulf %{{.*}}, %[[INV]]
// CHECK: %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]]
// CHECK: math.rsqrt %[[VE]]
func.func @layer_norm(%x: tensor<4x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<4x16x64xf32> {
  %0 = tp.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}

// -----

// Reductions drop the dims, keepdims expands them back; mean scales by 1/N.
// CHECK-LABEL: func.func @reductions
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<4x16xf32>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: tensor.expand_shape %[[M]] {{\[\[}}0], [1, 2]] output_shape [4, 16, 1] : tensor<4x16xf32> into tensor<4x16x1xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction"]
// CHECK: arith.maximumf
// Integer mean divides.
// CHECK: arith.divsi
func.func @reductions(%x: tensor<4x16x64xf32>, %i: tensor<6xi64>) -> (tensor<4x16x1xf32>, tensor<16xf32>, tensor<f32>, tensor<i64>) {
  %0 = tp.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<4x16x64xf32> -> tensor<4x16x1xf32>
  %1 = tp.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : tensor<4x16x64xf32> -> tensor<16xf32>
  %2 = tp.reduce_max %x {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<4x16x64xf32> -> tensor<f32>
  %3 = tp.reduce_mean %i {axes = array<i64: 0>, keepdims = false} : tensor<6xi64> -> tensor<i64>
  return %0, %1, %2, %3 : tensor<4x16x1xf32>, tensor<16xf32>, tensor<f32>, tensor<i64>
}

// -----

// ReduceProd multiplies from 1, floats and integers.
// CHECK-LABEL: func.func @reduce_prod
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ONE]] : f32)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: %[[IONE:.*]] = arith.constant 1 : i32
// CHECK: linalg.fill ins(%[[IONE]] : i32)
// CHECK: arith.muli
func.func @reduce_prod(%x: tensor<4x16xf32>, %i: tensor<6xi32>) -> (tensor<4xf32>, tensor<i32>) {
  %0 = tp.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : tensor<4x16xf32> -> tensor<4xf32>
  %1 = tp.reduce_prod %i {axes = array<i64: 0>, keepdims = false} : tensor<6xi32> -> tensor<i32>
  return %0, %1 : tensor<4xf32>, tensor<i32>
}

// -----

// ArgMax: one reduction carrying the running maximum (from -inf) and its
// index; only a strictly greater element replaces them (the first index wins).
// CHECK-LABEL: func.func @arg_max
// CHECK: %[[V:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[I:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<4xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x10xf32>) outs(%[[V]], %[[I]] : tensor<4xf32>, tensor<4xi64>)
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[IN:.*]], %[[OUT:.*]] : f32
// CHECK: %[[IDX:.*]] = linalg.index 1 : index
// CHECK: arith.select %[[GT]], %[[IN]], %[[OUT]] : f32
// CHECK: return %[[R]]#1 : tensor<4xi64>
func.func @arg_max(%x: tensor<4x10xf32>) -> tensor<4xi64> {
  %0 = tp.arg_reduce %x {kind = "max", axis = 1 : i64, keepdims = false, select_last_index = false} : tensor<4x10xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
