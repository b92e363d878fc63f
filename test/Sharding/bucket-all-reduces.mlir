// tp-bucket-all-reduces: all_reduces over the same mesh axes that nothing
// reads in between become one all_reduce of their flattened concatenation,
// up to bucket-mb; ops that read a bucketed result move after the bucket.
// RUN: tp-opt %s --split-input-file --tp-bucket-all-reduces | FileCheck %s
// RUN: tp-opt %s --split-input-file --tp-bucket-all-reduces=bucket-mb=0.0001 | FileCheck %s --check-prefix=SMALL
// RUN: tp-opt %s --split-input-file --tp-bucket-all-reduces=bucket-mb=0 | FileCheck %s --check-prefix=OFF

// Three dp gradients; the update of the first sits between them and moves.
// CHECK-LABEL: func.func @gradients
// CHECK-NOT: shard.all_reduce
// CHECK: %[[A:.*]] = tp.reshape %arg0 : tensor<4x8xf32> -> tensor<32xf32>
// CHECK: %[[C:.*]] = tp.reshape %arg2 : tensor<2x2xf32> -> tensor<4xf32>
// CHECK: %[[J:.*]] = tp.concat %[[A]], %arg1, %[[C]] {axis = 0 : i64}
// CHECK: %[[R:.*]] = shard.all_reduce %[[J]] on @mesh grid_axes = [0] : tensor<44xf32> -> tensor<44xf32>
// CHECK: tp.slice %[[R]] {limits = array<i64: 32>, starts = array<i64: 0>, steps = array<i64: 1>}
// CHECK: tp.slice %[[R]] {limits = array<i64: 40>, starts = array<i64: 32>, steps = array<i64: 1>}
// CHECK: tp.slice %[[R]] {limits = array<i64: 44>, starts = array<i64: 40>, steps = array<i64: 1>}
// CHECK: tp.sub %arg3
// CHECK-NOT: shard.all_reduce
// CHECK: return
// 0.0001 MiB = 104 bytes: the 128-byte gradient stays alone, the next two
// (32 + 16 bytes) share a bucket.
// SMALL-LABEL: func.func @gradients
// SMALL: shard.all_reduce %arg0 on @mesh grid_axes = [0] : tensor<4x8xf32>
// SMALL: shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<12xf32>
// SMALL-NOT: shard.all_reduce
// OFF-LABEL: func.func @gradients
// OFF-COUNT-3: shard.all_reduce
shard.grid @mesh(shape = 2x2) {tp.axis_names = ["dp", "tp"]}
func.func @gradients(%g1: tensor<4x8xf32>, %g2: tensor<8xf32>, %g3: tensor<2x2xf32>, %w: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<2x2xf32>) {
  %a = shard.all_reduce %g1 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  %u = tp.sub %w, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = shard.all_reduce %g2 on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  %c = shard.all_reduce %g3 on @mesh grid_axes = [0] : tensor<2x2xf32> -> tensor<2x2xf32>
  return %u, %b, %c : tensor<4x8xf32>, tensor<8xf32>, tensor<2x2xf32>
}

// -----

// Different mesh axes never share a bucket, nor does an all_reduce whose
// input reads an earlier one's result.
// SMALL-LABEL: func.func @apart
// OFF-LABEL: func.func @apart
// CHECK-LABEL: func.func @apart
// CHECK: shard.all_reduce %arg0 on @mesh grid_axes = [0]
// CHECK: shard.all_reduce %arg1 on @mesh grid_axes = [1]
// CHECK: %[[T:.*]] = tp.mul
// CHECK: shard.all_reduce %[[T]] on @mesh grid_axes = [0]
shard.grid @mesh(shape = 2x2) {tp.axis_names = ["dp", "tp"]}
func.func @apart(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  %b = shard.all_reduce %y on @mesh grid_axes = [1] : tensor<8xf32> -> tensor<8xf32>
  %t = tp.mul %a, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %c = shard.all_reduce %t on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  return %c, %b : tensor<8xf32>, tensor<8xf32>
}
