// tp.dropout becomes one linalg.generic: the element's row-major index in
// the global shape (this block's offsets added to linalg.index), ten
// Philox4x32 rounds (two 32x32->64 products each) whose key schedule is
// constants (the seed is known), then keep = first word >= ratio * 2^32 and
// y = keep ? x * (1 / (1 - ratio)) : 0.
// RUN: tp-opt %s -split-input-file --tp-lower-to-linalg | FileCheck %s

// seed = 2^32 + 5: key words 5 and 1; site 3; ratio 1/4.
// CHECK-LABEL: func.func @dropout_block
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %arg1, %arg2, %arg3 : tensor<4x8xf32>, tensor<i64>, tensor<i64>, tensor<i64>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[STEP:.*]]: i64, %[[ROW0:.*]]: i64, %[[COL0:.*]]: i64
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[I64:.*]] = arith.index_cast %[[I]]
// CHECK: %[[ROW:.*]] = arith.addi %[[I64]], %[[ROW0]]
// CHECK: arith.muli %[[ROW]], %c16_i64
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[J64:.*]] = arith.index_cast %[[J]]
// CHECK: arith.addi %[[J64]], %[[COL0]]
// CHECK: arith.constant 3 : i32
// CHECK: arith.trunci %[[STEP]] : i64 to i32
// CHECK-COUNT-2: arith.mului_extended
// CHECK: arith.constant 5 : i32
// CHECK: arith.constant 1 : i32
// CHECK-COUNT-18: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: %[[WORD:.*]] = arith.extui
// CHECK: %[[KEEP:.*]] = arith.cmpi uge, %[[WORD]], %c1073741824_i64
// CHECK: %[[SCALED:.*]] = arith.mulf %[[X]], %cst : f32
// CHECK: arith.select %[[KEEP]], %[[SCALED]], %cst
func.func @dropout_block(%x: tensor<4x8xf32>, %step: tensor<i64>, %r: tensor<i64>, %c: tensor<i64>) -> tensor<4x8xf32> {
  %y = tp.dropout %x, %step offsets(%r, %c : tensor<i64>, tensor<i64>) {global_shape = array<i64: 8, 16>, ratio = 2.500000e-01 : f64, seed = 4294967301 : i64, site = 3 : i64} : tensor<4x8xf32>, tensor<i64> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A global tensor (no offsets): the index is linalg.index alone. The scale
// is float32's 1 / (1 - 0.1), as PyTorch computes it.
// CHECK-LABEL: func.func @dropout_global
// CHECK: ins(%arg0, %arg1 : tensor<16xf32>, tensor<i64>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK-NEXT: %[[I64:.*]] = arith.index_cast %[[I]]
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: arith.muli %[[I64]]
// CHECK: arith.cmpi uge, %{{.*}}, %c429496730_i64
// CHECK: arith.constant 1.11111116 : f32
func.func @dropout_global(%x: tensor<16xf32>, %step: tensor<i64>) -> tensor<16xf32> {
  %y = tp.dropout %x, %step {global_shape = array<i64: 16>, ratio = 1.000000e-01 : f64, seed = 0 : i64, site = 0 : i64} : tensor<16xf32>, tensor<i64> -> tensor<16xf32>
  return %y : tensor<16xf32>
}
