// The Megatron MLP (fc1 column-parallel, fc2 row-parallel) on 2 devices,
// written in the tp dialect with the weight shardings a plan would give.
// Run it with:
//   build/bin/tp-opt docs/examples/megatron-mlp.mlir \
//     --pass-pipeline='builtin.module(tp-lower-to-linalg,func.func(sharding-propagation,shard-partition,canonicalize))'
// The output is the per-device program: 64x128 / 128x64 weight shards and one
// shard.all_reduce of fc2's partial sums, before fc2's bias is added.
shard.grid @tp(shape = 2)

func.func @mlp(%x: tensor<8x64xf32>,
               %w1: tensor<64x256xf32>, %b1: tensor<256xf32>,
               %w2: tensor<256x64xf32>, %b2: tensor<64xf32>) -> tensor<8x64xf32> {
  // fc1: colwise, weight split on output features, bias likewise.
  %s_col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %w1s = shard.shard %w1 to %s_col annotate_for_users : tensor<64x256xf32>
  %s_vec = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %b1s = shard.shard %b1 to %s_vec annotate_for_users : tensor<256xf32>
  // fc2: rowwise, weight split on input features, bias replicated.
  %s_row = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %w2s = shard.shard %w2 to %s_row annotate_for_users : tensor<256x64xf32>
  %s_rep = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %b2s = shard.shard %b2 to %s_rep annotate_for_users : tensor<64xf32>

  %h0 = tp.matmul %x, %w1s : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
  %h1 = tp.add %h0, %b1s : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
  %h = tp.relu %h1 : tensor<8x256xf32>
  %y0 = tp.matmul %h, %w2s : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32>
  %y = tp.add %y0, %b2s : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
