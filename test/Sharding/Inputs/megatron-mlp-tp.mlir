// docs/examples/megatron-mlp.mlir with tp's own annotations instead of
// shard.shard ops.
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @mlp(%x: tensor<8x64xf32>,
               %w1: tensor<64x256xf32> {tp.param = "fc1.weight", tp.sharding = #tp.sharding<[{}, {"tp"}]>},
               %b1: tensor<256xf32> {tp.param = "fc1.bias", tp.sharding = #tp.sharding<[{"tp"}]>},
               %w2: tensor<256x64xf32> {tp.param = "fc2.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>},
               %b2: tensor<64xf32> {tp.param = "fc2.bias", tp.sharding = #tp.sharding<[{}]>}) -> tensor<8x64xf32> {
  %h0 = tp.matmul %x, %w1 : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
  %h1 = tp.add %h0, %b1 : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
  %h = tp.relu %h1 : tensor<8x256xf32>
  %y0 = tp.matmul %h, %w2 : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32>
  %y = tp.add %y0, %b2 : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
