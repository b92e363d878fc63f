// Upstream MLIR's own sharding-propagation + shard-partition on the Megatron
// MLP (column-split then row-split weights) give local weight shards and
// exactly one all_reduce: the partial sums of the row-parallel matmul.
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition,canonicalize))' | FileCheck %s
// (upstream-agreement.test runs the docs example through both upstream's
// passes and tp's.)

// CHECK-LABEL: func.func @mlp_linalg
// CHECK-SAME: %{{.*}}: tensor<8x16xf32>, %{{.*}}: tensor<16x16xf32>, %{{.*}}: tensor<16x16xf32>
// CHECK-NOT: shard.all_
// CHECK: linalg.matmul {{.*}} tensor<8x16xf32>, tensor<16x16xf32>
// CHECK-NOT: shard.all_
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK-NEXT: %[[R:.*]] = shard.all_reduce %[[P]] on @mesh grid_axes = [0] : tensor<8x16xf32> -> tensor<8x16xf32>
// CHECK-NOT: shard.all_
// CHECK: return %[[R]]
shard.grid @mesh(shape = 2)
func.func @mlp_linalg(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %s1 = shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding
  %w1s = shard.shard %w1 to %s1 annotate_for_users : tensor<16x32xf32>
  %s2 = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %w2s = shard.shard %w2 to %s2 annotate_for_users : tensor<32x16xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%h, %w2s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
