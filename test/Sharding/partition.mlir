// tp-partition: local types, and the cheapest resharding between what a
// value is made as and what its user reads, with upstream shard collectives
// on the mesh axes concerned. Also the ops whose local form differs.
// RUN: tp-opt %s -split-input-file --tp-partition | FileCheck %s

// On a dp x tp mesh: Partial -> Replicate is an all_reduce, Partial ->
// Shard a reduce_scatter, Shard -> Replicate all_gathers (innermost split
// first), Shard(1) -> Shard(0) an all_to_all, Replicate -> Shard a local
// all_slice; a value moved once is reused.
// CHECK-LABEL: func.func @reshards
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32> {{.*}}, %[[W:.*]]: tensor<16x64xf32> {{.*}}) -> (tensor<4x64xf32>, tensor<4x16xf32>, tensor<8x16xf32>, tensor<1x64xf32>)
// CHECK: %[[P:.*]] = tp.matmul %[[X]], %[[W]] : tensor<4x16xf32>, tensor<16x64xf32> -> tensor<4x64xf32>
// CHECK: %[[AR:.*]] = shard.all_reduce %[[P]] on @mesh grid_axes = [1] : tensor<4x64xf32> -> tensor<4x64xf32>
// CHECK: tp.neg %[[AR]]
// CHECK: %[[RS:.*]] = shard.reduce_scatter %[[P]] on @mesh grid_axes = [1] scatter_axis = 1 : tensor<4x64xf32> -> tensor<4x16xf32>
// CHECK: %[[B:.*]] = tp.neg %[[RS]] : tensor<4x16xf32>
// CHECK: %[[G0:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x16xf32> -> tensor<8x16xf32>
// CHECK: %[[G1:.*]] = shard.all_gather %[[G0]] on @mesh grid_axes = [1] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
// CHECK: %[[C:.*]] = tp.neg %[[G1]] : tensor<8x64xf32>
// CHECK: %[[A2A:.*]] = shard.all_to_all %[[X]] on @mesh grid_axes = [1] split_axis = 0 concat_axis = 1 : tensor<4x16xf32> -> tensor<1x64xf32>
// CHECK: %[[D:.*]] = tp.neg %[[A2A]] : tensor<1x64xf32>
// CHECK: %[[SL:.*]] = shard.all_slice %[[C]] on @mesh grid_axes = [1] slice_axis = 1 : tensor<8x64xf32> -> tensor<8x16xf32>
// CHECK: %[[E:.*]] = tp.neg %[[SL]] : tensor<8x16xf32>
// CHECK-NOT: shard.
// CHECK: %[[A2:.*]] = tp.neg %[[AR]] : tensor<4x64xf32>
// CHECK: return %[[A2]], %[[B]], %[[E]], %[[D]]
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @reshards(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}, %w: tensor<64x64xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}]>}) -> (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>) {
  %p = tp.matmul %x, %w {tp.in_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>, #tp.sharding<[{"tp"}, {}]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {}], partial = {"tp"}>]} : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32> loc("/make/Partial")
  %a = tp.neg %p {tp.in_shardings = [#tp.sharding<[{"dp"}, {}]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {}]>]} : tensor<8x64xf32> loc("/all/Reduce")
  %b = tp.neg %p {tp.in_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>]} : tensor<8x64xf32> loc("/reduce/Scatter")
  %c = tp.neg %x {tp.in_shardings = [#tp.sharding<[{}, {}]>], tp.out_shardings = [#tp.sharding<[{}, {}]>]} : tensor<8x64xf32> loc("/all/Gather")
  %d = tp.neg %x {tp.in_shardings = [#tp.sharding<[{"dp", "tp"}, {}]>], tp.out_shardings = [#tp.sharding<[{"dp", "tp"}, {}]>]} : tensor<8x64xf32> loc("/all/ToAll")
  %e = tp.neg %c {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]} : tensor<8x64xf32> loc("/all/Slice")
  %a2 = tp.neg %p {tp.in_shardings = [#tp.sharding<[{"dp"}, {}]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {}]>]} : tensor<8x64xf32> loc("/all/ReduceAgain")
  return {tp.in_shardings = [#tp.sharding<[{"dp"}, {}]>, #tp.sharding<[{"dp"}, {"tp"}]>, #tp.sharding<[{}, {"tp"}]>, #tp.sharding<[{"dp", "tp"}, {}]>]} %a2, %b, %e, %d : tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// ReduceMean over a split dim: each device sums its part and scales by the
// global count, so the partial sums add up to the mean.
// CHECK-LABEL: func.func @mean_over_split_dim
// CHECK: %[[S:.*]] = tp.reduce_sum %arg0 {axes = array<i64: 1>, keepdims = true} : tensor<8x16xf32> -> tensor<8x1xf32>
// CHECK: %[[N:.*]] = tp.constant dense<1.562500e-02> : tensor<f32>
// CHECK: %[[M:.*]] = tp.mul %[[S]], %[[N]]
// CHECK: shard.all_reduce %[[M]] on @mesh grid_axes = [0]
shard.grid @mesh(shape = 4) {tp.axis_names = ["tp"]}
func.func @mean_over_split_dim(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> tensor<8x1xf32> {
  %m = tp.reduce_mean %x {axes = array<i64: 1>, keepdims = true, tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {}], partial = {"tp"}>]} : tensor<8x64xf32> -> tensor<8x1xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {}]>]} %m : tensor<8x1xf32>
}

// -----

// Vocab-parallel embedding: each device looks the ids up in its slice of
// the table (rows from its index times the slice size), zeros for ids
// outside it, and the partial lookups are summed. Negative ids count from
// the end of the whole table first.
// CHECK-LABEL: func.func @vocab_parallel_embedding
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<4x16xi64>, %[[T:[^:]*]]: tensor<250x64xf32>
// CHECK: %[[I:.*]] = shard.process_multi_index on @mesh axes = [0] : index
// CHECK: %[[ROWS:.*]] = arith.constant 250 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[I]], %[[ROWS]] : index
// CHECK: %[[OFF64:.*]] = arith.index_cast %[[OFF]] : index to i64
// CHECK: %[[OFFT:.*]] = tensor.from_elements %[[OFF64]] : tensor<i64>
// CHECK: %[[NEG:.*]] = tp.less %[[IDS]]
// CHECK: %[[WRAPPED:.*]] = tp.where %[[NEG]], %{{.*}}, %[[IDS]]
// CHECK: %[[E:.*]] = tp.masked_gather %[[T]], %[[WRAPPED]], %[[OFFT]] {axis = 0 : i64} : tensor<250x64xf32>, tensor<4x16xi64>, tensor<i64> -> tensor<4x16x64xf32>
// CHECK: shard.all_reduce %[[E]] on @mesh grid_axes = [0] : tensor<4x16x64xf32> -> tensor<4x16x64xf32>
shard.grid @mesh(shape = 4) {tp.axis_names = ["tp"]}
func.func @vocab_parallel_embedding(%ids: tensor<4x16xi64>, %table: tensor<1000x64xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}]>}) -> tensor<4x16x64xf32> {
  %e = tp.gather %table, %ids {axis = 0 : i64, tp.in_shardings = [#tp.sharding<[{"tp"}, {}]>, #tp.sharding<[{}, {}]>], tp.out_shardings = [#tp.sharding<[{}, {}, {}], partial = {"tp"}>]} : tensor<1000x64xf32>, tensor<4x16xi64> -> tensor<4x16x64xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {}, {}]>]} %e : tensor<4x16x64xf32>
}

// -----

// A slice along a whole dim of a tensor split on another dim keeps the split
// dim whole, locally.
// CHECK-LABEL: func.func @slice_keeps_split_dim
// CHECK: tp.slice %arg0 {limits = array<i64: 2, 32>, starts = array<i64: 0, 16>, steps = array<i64: 1, 1>} : tensor<2x64xf32> -> tensor<2x16xf32>
shard.grid @mesh(shape = 4) {tp.axis_names = ["tp"]}
func.func @slice_keeps_split_dim(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}]>}) -> tensor<8x16xf32> {
  %s = tp.slice %x {starts = array<i64: 0, 16>, limits = array<i64: 8, 32>, steps = array<i64: 1, 1>, tp.in_shardings = [#tp.sharding<[{"tp"}, {}]>], tp.out_shardings = [#tp.sharding<[{"tp"}, {}]>]} : tensor<8x64xf32> -> tensor<8x16xf32>
  return {tp.in_shardings = [#tp.sharding<[{"tp"}, {}]>]} %s : tensor<8x16xf32>
}

// -----

// LogSoftmax over vocab-split logits (the core of Megatron's vocab-parallel
// cross entropy): the row max is all-reduced with max, the sum of
// exponentials with sum; the logits are never gathered.
// CHECK-LABEL: func.func @vocab_parallel_log_softmax
// CHECK-SAME: %[[X:.*]]: tensor<8x250xf32>
// CHECK: %[[M:.*]] = tp.reduce_max %[[X]] {axes = array<i64: 1>, keepdims = true} : tensor<8x250xf32> -> tensor<8x1xf32>
// CHECK: %[[GM:.*]] = shard.all_reduce %[[M]] on @mesh grid_axes = [0] reduction = max : tensor<8x1xf32> -> tensor<8x1xf32>
// CHECK: %[[SH:.*]] = tp.sub %[[X]], %[[GM]] : tensor<8x250xf32>, tensor<8x1xf32> -> tensor<8x250xf32>
// CHECK: %[[E:.*]] = tp.exp %[[SH]]
// CHECK: %[[S:.*]] = tp.reduce_sum %[[E]] {axes = array<i64: 1>, keepdims = true}
// CHECK: %[[GS:.*]] = shard.all_reduce %[[S]] on @mesh grid_axes = [0] : tensor<8x1xf32> -> tensor<8x1xf32>
// CHECK: %[[L:.*]] = tp.log %[[GS]]
// CHECK: %[[Y:.*]] = tp.sub %[[SH]], %[[L]] : tensor<8x250xf32>, tensor<8x1xf32> -> tensor<8x250xf32>
// CHECK-NOT: shard.all_gather
// CHECK: return %[[Y]] : tensor<8x250xf32>
shard.grid @mesh(shape = 4) {tp.axis_names = ["tp"]}
func.func @vocab_parallel_log_softmax(%logits: tensor<8x1000xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> tensor<8x1000xf32> {
  %y = tp.log_softmax %logits {axis = 1 : i64, tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]} : tensor<8x1000xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>]} %y : tensor<8x1000xf32>
}

// -----

// One-hot over split classes: each device encodes the classes of its slice,
// starting at its index times the local depth (vocab-parallel cross entropy).
// CHECK-LABEL: func.func @one_hot_split_classes
// CHECK: %[[I:.*]] = shard.process_multi_index on @mesh axes = [0] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[I]], %c250 : index
// CHECK: %[[F:.*]] = arith.index_cast %[[FIRST]] : index to i64
// CHECK: %[[OFF0:.*]] = tensor.extract %{{.*}}[] : tensor<i64>
// CHECK: %[[OFF:.*]] = arith.addi %[[OFF0]], %[[F]] : i64
// CHECK: %[[T:.*]] = tensor.from_elements %[[OFF]] : tensor<i64>
// CHECK: tp.one_hot %arg0, %[[T]] : tensor<8xi64>, tensor<i64> -> tensor<8x250xf32>
// CHECK-NOT: shard.all
shard.grid @mesh(shape = 4) {tp.axis_names = ["tp"]}
func.func @one_hot_split_classes(%labels: tensor<8xi64>) -> (tensor<8x1000xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) {
  %z = tp.constant {tp.out_shardings = [#tp.sharding<[]>]} dense<0> : tensor<i64>
  %oh = tp.one_hot %labels, %z {tp.in_shardings = [#tp.sharding<[{}]>, #tp.sharding<[]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]} : tensor<8xi64>, tensor<i64> -> tensor<8x1000xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>]} %oh : tensor<8x1000xf32>
}

// -----

// The sum of two partial sums over the same axes stays partial: one
// all_reduce of the sum, not one per operand (gradients accumulated from
// several split matmuls).
// CHECK-LABEL: func.func @partial_plus_partial
// CHECK: %[[P:.*]] = tp.matmul %arg0, %arg1
// CHECK: %[[Q:.*]] = tp.matmul %arg0, %arg2
// CHECK: %[[S:.*]] = tp.add %[[P]], %[[Q]] : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: %[[R:.*]] = shard.all_reduce %[[S]] on @mesh grid_axes = [0]
// CHECK-NOT: shard.all_reduce
// CHECK: return %[[R]]
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @partial_plus_partial(%x: tensor<4x16xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}, %w1: tensor<16x8xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}]>}, %w2: tensor<16x8xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}]>}) -> tensor<4x8xf32> {
  %p = tp.matmul %x, %w1 {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>, #tp.sharding<[{"tp"}, {}]>], tp.out_shardings = [#tp.sharding<[{}, {}], partial = {"tp"}>]} : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %q = tp.matmul %x, %w2 {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>, #tp.sharding<[{"tp"}, {}]>], tp.out_shardings = [#tp.sharding<[{}, {}], partial = {"tp"}>]} : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %s = tp.add %p, %q {tp.in_shardings = [#tp.sharding<[{}, {}]>, #tp.sharding<[{}, {}]>], tp.out_shardings = [#tp.sharding<[{}, {}]>]} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {}]>]} %s : tensor<4x8xf32>
}

// -----

// Dropout draws by global index: each split dim gets this device's first
// index along it (its index along the dim's axes times the block size).
// CHECK-LABEL: func.func @dropout_offsets
// CHECK: %[[DP:.*]] = shard.process_multi_index on @mesh axes = [0] : index
// CHECK: %[[ROW:.*]] = arith.muli %[[DP]], %c4 : index
// CHECK: %[[ROW64:.*]] = arith.index_cast %[[ROW]] : index to i64
// CHECK: %[[ROWT:.*]] = tensor.from_elements %[[ROW64]] : tensor<i64>
// CHECK: %[[TP:.*]] = shard.process_multi_index on @mesh axes = [1] : index
// CHECK: %[[COL:.*]] = arith.muli %[[TP]], %c16 : index
// CHECK: %[[COL64:.*]] = arith.index_cast %[[COL]] : index to i64
// CHECK: %[[COLT:.*]] = tensor.from_elements %[[COL64]] : tensor<i64>
// CHECK: tp.dropout %arg0, %arg1 offsets(%[[ROWT]], %[[COLT]] : tensor<i64>, tensor<i64>) {global_shape = array<i64: 8, 64>, ratio = 5.000000e-01 : f64, seed = 0 : i64, site = 1 : i64} : tensor<4x16xf32>, tensor<i64> -> tensor<4x16xf32>
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @dropout_offsets(%x: tensor<8x64xf32> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}, %step: tensor<i64>) -> (tensor<8x64xf32> {tp.sharding = #tp.sharding<[{"dp"}, {"tp"}]>}) {
  %y = tp.dropout %x, %step {global_shape = array<i64: 8, 64>, ratio = 5.000000e-01 : f64, seed = 0 : i64, site = 1 : i64, tp.in_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>, #tp.sharding<[]>], tp.out_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>]} : tensor<8x64xf32>, tensor<i64> -> tensor<8x64xf32>
  return {tp.in_shardings = [#tp.sharding<[{"dp"}, {"tp"}]>]} %y : tensor<8x64xf32>
}

// -----

// A Dropout on a whole tensor stays global: no offsets.
// CHECK-LABEL: func.func @dropout_whole
// CHECK-NOT: process_multi_index
// CHECK: tp.dropout %arg0, %arg1 {global_shape
shard.grid @mesh(shape = 4) {tp.axis_names = ["tp"]}
func.func @dropout_whole(%x: tensor<8x64xf32>, %step: tensor<i64>) -> tensor<8x64xf32> {
  %y = tp.dropout %x, %step {global_shape = array<i64: 8, 64>, ratio = 5.000000e-01 : f64, seed = 0 : i64, site = 0 : i64, tp.in_shardings = [#tp.sharding<[{}, {}]>, #tp.sharding<[]>], tp.out_shardings = [#tp.sharding<[{}, {}]>]} : tensor<8x64xf32>, tensor<i64> -> tensor<8x64xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {}]>]} %y : tensor<8x64xf32>
}
