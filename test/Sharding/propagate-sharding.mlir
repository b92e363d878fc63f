// tp-propagate-sharding: per-op rules turn annotations into every op's
// tp.in_shardings (what it reads) and tp.out_shardings (what it makes).
// RUN: tp-opt %s -split-input-file --tp-propagate-sharding | FileCheck %s

// A split bias splits the add's other operand and result (broadcasting maps
// the bias's dim 0 to the result's dim 1); relu follows.
// CHECK-LABEL: func.func @elementwise_broadcast
// CHECK-SAME: -> (tensor<8x64xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>, tp.sharding_origin = "propagated through func.return from tp.relu"})
// CHECK: tp.add {{.*}}tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>, #tp.sharding<[{"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.sharding_origin = ["propagated through tp.add from m.bias"]
// CHECK: tp.relu {{.*}}tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @elementwise_broadcast(%x: tensor<8x64xf32>, %b: tensor<64xf32> {tp.param = "m.bias", tp.sharding = #tp.sharding<[{"tp"}]>}) -> tensor<8x64xf32> {
  %0 = tp.add %x, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %1 = tp.relu %0 : tensor<8x64xf32>
  return %1 : tensor<8x64xf32>
}

// -----

// Reshape [4,16,64] -> [4,16,4,16]: the hidden dim's split goes to the heads
// factor; transpose moves it; softmax over the last dim keeps it.
// CHECK-LABEL: func.func @reshape_heads
// CHECK: tp.reshape {{.*}}tp.out_shardings = [#tp.sharding<[{}, {}, {"tp"}, {}]>]
// CHECK: tp.transpose {{.*}}tp.out_shardings = [#tp.sharding<[{}, {"tp"}, {}, {}]>]
// CHECK: tp.softmax {{.*}}tp.in_shardings = [#tp.sharding<[{}, {"tp"}, {}, {}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}, {}, {}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @reshape_heads(%x: tensor<4x16x64xf32> {tp.sharding = #tp.sharding<[{}, {}, {"tp"}]>}) -> tensor<4x4x16x16xf32> {
  %0 = tp.reshape %x : tensor<4x16x64xf32> -> tensor<4x16x4x16xf32>
  %1 = tp.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<4x16x4x16xf32> -> tensor<4x4x16x16xf32>
  %2 = tp.softmax %1 {axis = 3 : i64} : tensor<4x4x16x16xf32>
  return %2 : tensor<4x4x16x16xf32>
}

// -----

// Softmax over a split axis (vocab-parallel logits) stays split; partition
// all-reduces its max and sum instead of gathering the logits.
// CHECK-LABEL: func.func @softmax_split_axis
// CHECK: tp.softmax {{.*}}tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @softmax_split_axis(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> tensor<8x64xf32> {
  %0 = tp.softmax %x {axis = 1 : i64} : tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// A split contracted dim makes the matmul's result a partial sum.
// CHECK-LABEL: func.func @contraction_partial
// CHECK: tp.matmul {{.*}}tp.in_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>, #tp.sharding<[{"tp"}, {}]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {}], partial = {"tp"}>], tp.sharding_origin = ["partial sum: the summed dim is split like operand m.weight"]
// CHECK: return {tp.in_shardings = [#tp.sharding<[{"dp"}, {}]>]}
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @contraction_partial(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}, %w: tensor<64x32xf32> {tp.param = "m.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>}) -> tensor<8x32xf32> {
  %0 = tp.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A sum over a split dim is partial; a max reads it whole.
// CHECK-LABEL: func.func @reductions
// CHECK: tp.reduce_sum {{.*}}tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}], partial = {"tp"}>]
// CHECK: tp.reduce_max {{.*}}tp.in_shardings = [#tp.sharding<[{}, {}]>], tp.out_shardings = [#tp.sharding<[{}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @reductions(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = tp.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<8x64xf32> -> tensor<8xf32>
  %1 = tp.reduce_max %x {axes = array<i64: 1>, keepdims = false} : tensor<8x64xf32> -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Weight annotations beat activation annotations for the same mesh axis:
// the column split wins and the sequence-split input is read whole
// (Megatron-SP's all_gather).
// CHECK-LABEL: func.func @weights_win
// CHECK: tp.matmul {{.*}}tp.in_shardings = [#tp.sharding<[{}, {}, {}]>, #tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {}, {"tp"}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @weights_win(%x: tensor<4x16x64xf32> {tp.input = "x", tp.sharding = #tp.sharding<[{}, {"tp"}, {}]>}, %w: tensor<64x256xf32> {tp.param = "fc.weight", tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> tensor<4x16x256xf32> {
  %0 = tp.matmul %x, %w : tensor<4x16x64xf32>, tensor<64x256xf32> -> tensor<4x16x256xf32>
  return %0 : tensor<4x16x256xf32>
}

// -----

// LayerNorm on a sequence-split input: the split dim is not normalized, so
// it stays split; scale and bias are read whole.
// CHECK-LABEL: func.func @layer_norm
// CHECK: tp.layer_norm {{.*}}tp.in_shardings = [#tp.sharding<[{}, {"tp"}, {}]>, #tp.sharding<[{}]>, #tp.sharding<[{}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}, {}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @layer_norm(%x: tensor<4x16x64xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}, {}]>}, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<4x16x64xf32> {
  %0 = tp.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32>
  return %0 : tensor<4x16x64xf32>
}


// -----

// GatherElements: a dim the indices share with the data stays split on
// both (each device gathers from its rows); along the axis the data is whole
// (the indices are global positions) while the indices may be split.
// CHECK-LABEL: func.func @gather_elements
// CHECK: tp.gather_elements {{.*}}tp.in_shardings = [#tp.sharding<[{"dp"}, {}]>, #tp.sharding<[{"dp"}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @gather_elements(%x: tensor<8x10xf32> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}, %i: tensor<8x4xi64> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}) -> tensor<8x4xf32> {
  %0 = tp.gather_elements %x, %i {axis = 1 : i64} : tensor<8x10xf32>, tensor<8x4xi64> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// [2, 2] -> [4] with the minor dim split: no block of the result dim is one
// device's, so the reshape reads it whole (partition gathers it) instead of
// reading a split operand into a whole result.
// CHECK-LABEL: func.func @reshape_minor_split
// CHECK: tp.reshape {{.*}}tp.in_shardings = [#tp.sharding<[{}, {}]>], tp.out_shardings = [#tp.sharding<[{}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @reshape_minor_split(%x: tensor<2x2xf32> {tp.sharding = #tp.sharding<[{}, {"dp"}]>}) -> tensor<4xf32> {
  %0 = tp.reshape %x : tensor<2x2xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// ReduceProd has no partial form: a split reduced dim is read whole (the
// kept dim may stay split).
// CHECK-LABEL: func.func @reduce_prod_split
// CHECK: tp.reduce_prod {{.*}}tp.in_shardings = [#tp.sharding<[{"dp"}, {}]>], tp.out_shardings = [#tp.sharding<[{"dp"}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @reduce_prod_split(%x: tensor<8x16xf32> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}) -> tensor<8xf32> {
  %0 = tp.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : tensor<8x16xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Dropout is elementwise in its input (its mask is drawn by global index);
// the run counter stays whole.
// CHECK-LABEL: func.func @dropout_follows_input
// CHECK: tp.dropout {{.*}}tp.in_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>, #tp.sharding<[]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @dropout_follows_input(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}, %step: tensor<i64>) -> tensor<8x64xf32> {
  %y = tp.dropout %x, %step {global_shape = array<i64: 8, 64>, ratio = 5.000000e-01 : f64, seed = 0 : i64, site = 0 : i64} : tensor<8x64xf32>, tensor<i64> -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
