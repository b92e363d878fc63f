// tp-autocast{precision=bf16}: matmuls and convolutions on f32 operands read
// them rounded to bf16 (one tp.cast per value, right after its definition,
// at the function's start for an argument) and keep their f32 result;
// every other op stays f32. precision=f32 changes nothing; another
// precision is an error.
// RUN: tp-opt %s -split-input-file --tp-autocast=precision=bf16 | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-autocast=precision=f32 | FileCheck %s --check-prefix=F32
// RUN: tp-opt %s -split-input-file --tp-autocast="precision=bf16 bf16-weights" | FileCheck %s --check-prefix=WEIGHTS
// RUN: tp-opt %s -split-input-file --tp-autocast=precision=bf16 | FileCheck %s --check-prefix=GONE
// RUN: not tp-opt %s -split-input-file --tp-autocast=precision=fp8 2>&1 | FileCheck %s --check-prefix=BAD
// GONE-NOT: tensor<8x2x16xf32>
// BAD: error: tp-autocast: precision must be f32 or bf16, got 'fp8'

// x is read by two matmuls (q and k, say) and rounded once; the weights are
// rounded at the start; softmax and the add stay f32.
// CHECK-LABEL: func.func @linear_and_attention
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[W1:.*]]: tensor<16x16xf32>, %[[W2:.*]]: tensor<16x16xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK-DAG: %[[W2H:.*]] = tp.cast %[[W2]] : tensor<16x16xf32> -> tensor<16x16xbf16>
// CHECK-DAG: %[[W1H:.*]] = tp.cast %[[W1]] : tensor<16x16xf32> -> tensor<16x16xbf16>
// CHECK-DAG: %[[XH:.*]] = tp.cast %[[X]] : tensor<2x8x16xf32> -> tensor<2x8x16xbf16>
// CHECK: %[[Q:.*]] = tp.matmul %[[XH]], %[[W1H]] : tensor<2x8x16xbf16>, tensor<16x16xbf16> -> tensor<2x8x16xf32>
// CHECK: %[[K:.*]] = tp.matmul %[[XH]], %[[W2H]] : tensor<2x8x16xbf16>, tensor<16x16xbf16> -> tensor<2x8x16xf32>
// A transpose (or reshape) is rounded before, not after: k is rounded and
// the transpose moves bf16 (the f32 one goes).
// CHECK-NEXT: %[[KH:.*]] = tp.cast %[[K]] : tensor<2x8x16xf32> -> tensor<2x8x16xbf16>
// CHECK-NEXT: %[[QB:.*]] = tp.add %[[Q]], %[[B]] : tensor<2x8x16xf32>, tensor<16xf32>
// CHECK-NEXT: %[[QBH:.*]] = tp.cast %[[QB]] : tensor<2x8x16xf32> -> tensor<2x8x16xbf16>
// CHECK-NEXT: %[[KTH:.*]] = tp.transpose %[[KH]] {perm = array<i64: 0, 2, 1>} : tensor<2x8x16xbf16> -> tensor<2x16x8xbf16>
// CHECK-NEXT: %[[S:.*]] = tp.matmul %[[QBH]], %[[KTH]] : tensor<2x8x16xbf16>, tensor<2x16x8xbf16> -> tensor<2x8x8xf32>
// CHECK-NEXT: tp.softmax %[[S]] {axis = 2 : i64} : tensor<2x8x8xf32>
// CHECK-NEXT: return
// F32-LABEL: func.func @linear_and_attention
// F32-NOT: tp.cast
// F32: tp.matmul %arg0, %arg1 : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
func.func @linear_and_attention(%x: tensor<2x8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x16xf32>, %b: tensor<16xf32>) -> tensor<2x8x8xf32> {
  %q = tp.matmul %x, %w1 : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %k = tp.matmul %x, %w2 : tensor<2x8x16xf32>, tensor<16x16xf32> -> tensor<2x8x16xf32>
  %qb = tp.add %q, %b : tensor<2x8x16xf32>, tensor<16xf32> -> tensor<2x8x16xf32>
  %kt = tp.transpose %k {perm = array<i64: 0, 2, 1>} : tensor<2x8x16xf32> -> tensor<2x16x8xf32>
  %s = tp.matmul %qb, %kt : tensor<2x8x16xf32>, tensor<2x16x8xf32> -> tensor<2x8x8xf32>
  %p = tp.softmax %s {axis = 2 : i64} : tensor<2x8x8xf32>
  return %p : tensor<2x8x8xf32>
}

// -----

// A convolution likewise; a matmul already in bf16 (a bf16 model) and an
// integer one are left alone.
// CHECK-LABEL: func.func @conv_and_others
// CHECK-DAG: %[[WH:.*]] = tp.cast %arg1 : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xbf16>
// CHECK-DAG: %[[XH:.*]] = tp.cast %arg0 : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xbf16>
// CHECK: tp.conv %[[XH]], %[[WH]] {{.*}} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16> -> tensor<1x4x8x8xf32>
// CHECK: tp.matmul %arg2, %arg3 : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xbf16>
// CHECK: tp.matmul %arg4, %arg5 : tensor<2x3xi32>, tensor<3x4xi32> -> tensor<2x4xi32>
func.func @conv_and_others(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>, %i: tensor<2x3xi32>, %j: tensor<3x4xi32>) -> (tensor<1x4x8x8xf32>, tensor<2x4xbf16>, tensor<2x4xi32>) {
  %y = tp.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  %h = tp.matmul %a, %b : tensor<2x3xbf16>, tensor<3x4xbf16> -> tensor<2x4xbf16>
  %n = tp.matmul %i, %j : tensor<2x3xi32>, tensor<3x4xi32> -> tensor<2x4xi32>
  return %y, %h, %n : tensor<1x4x8x8xf32>, tensor<2x4xbf16>, tensor<2x4xi32>
}

// -----

// A Linear's [out, in] weight read through a transpose and the input
// through a transpose and a reshape: rounded at their source, so the
// transpose stays a GEMM flag on the bf16 copy, and the f32 chain goes.
// CHECK-LABEL: func.func @linear_weight_transposed
// CHECK-DAG: %[[WH:.*]] = tp.cast %arg1 : tensor<32x16xf32> -> tensor<32x16xbf16>
// CHECK-DAG: %[[XH:.*]] = tp.cast %arg0 : tensor<2x8x16xf32> -> tensor<2x8x16xbf16>
// CHECK-DAG: %[[WT:.*]] = tp.transpose %[[WH]] {perm = array<i64: 1, 0>} : tensor<32x16xbf16> -> tensor<16x32xbf16>
// CHECK-DAG: %[[XT:.*]] = tp.transpose %[[XH]] {perm = array<i64: 1, 0, 2>} : tensor<2x8x16xbf16> -> tensor<8x2x16xbf16>
// CHECK-DAG: %[[X2:.*]] = tp.reshape %[[XT]] : tensor<8x2x16xbf16> -> tensor<16x16xbf16>
// CHECK: tp.matmul %[[X2]], %[[WT]] : tensor<16x16xbf16>, tensor<16x32xbf16> -> tensor<16x32xf32>
// CHECK-NOT: tp.transpose {{.*}}xf32>
// CHECK-NOT: tp.reshape {{.*}}xf32>
func.func @linear_weight_transposed(%x: tensor<2x8x16xf32>, %w: tensor<32x16xf32>) -> tensor<16x32xf32> {
  %wt = tp.transpose %w {perm = array<i64: 1, 0>} : tensor<32x16xf32> -> tensor<16x32xf32>
  %xt = tp.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x8x16xf32> -> tensor<8x2x16xf32>
  %x2 = tp.reshape %xt : tensor<8x2x16xf32> -> tensor<16x16xf32>
  %y = tp.matmul %x2, %wt : tensor<16x16xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// bf16-weights (a forward-only program): a weight read only through its
// bf16 copy becomes a bf16 argument; the bias, read in f32, stays f32.
// CHECK-LABEL: func.func @stored_weights
// CHECK-SAME: %arg1: tensor<32x16xf32> {tp.param = "fc.weight"}
// WEIGHTS-LABEL: func.func @stored_weights
// WEIGHTS-SAME: (%arg0: tensor<16x16xf32>, %arg1: tensor<32x16xbf16> {tp.param = "fc.weight"}, %arg2: tensor<32xf32> {tp.param = "fc.bias"})
// WEIGHTS-NOT: tp.cast %arg1
// WEIGHTS: %[[WT:.*]] = tp.transpose %arg1 {perm = array<i64: 1, 0>} : tensor<32x16xbf16> -> tensor<16x32xbf16>
// WEIGHTS: tp.matmul %{{.*}}, %[[WT]]
func.func @stored_weights(%x: tensor<16x16xf32>, %w: tensor<32x16xf32> {tp.param = "fc.weight"}, %b: tensor<32xf32> {tp.param = "fc.bias"}) -> tensor<16x32xf32> {
  %wt = tp.transpose %w {perm = array<i64: 1, 0>} : tensor<32x16xf32> -> tensor<16x32xf32>
  %y = tp.matmul %x, %wt : tensor<16x16xf32>, tensor<16x32xf32> -> tensor<16x32xf32>
  %z = tp.add %y, %b : tensor<16x32xf32>, tensor<32xf32> -> tensor<16x32xf32>
  return %z : tensor<16x32xf32>
}
