// tp-pad-uneven: a dim split k ways is padded at its end to a multiple of
// k (torch.chunk's blocks); reductions over padding select their neutral
// element first; a mean divides by the real count; a value read with other
// padding is cut and re-padded on a whole dim.
// RUN: tp-opt %s -split-input-file -verify-diagnostics --tp-pad-uneven | FileCheck %s
// RUN: tp-opt %s -split-input-file -verify-diagnostics --tp-pad-uneven --tp-partition | FileCheck %s --check-prefix=PART

// A rowwise contraction over 10 split 3 ways (4 + 4 + 2): both operands
// padded to 12 and their padding zeroed, so that junk (even inf or NaN)
// there cannot reach the partial sums; the arguments record their padding.
// CHECK-LABEL: func.func @rowwise_contraction
// CHECK-SAME: (%[[X:.*]]: tensor<4x12xf32> {tp.padded_dims = [array<i64: 4, 4>, array<i64: 10, 12>]{{.*}}}, %[[W:.*]]: tensor<12x8xf32>
// CHECK-DAG: %[[COLS:.*]] = tp.constant dense<{{.*}}> : tensor<1x12xi1>
// CHECK-DAG: %[[ROWS:.*]] = tp.constant dense<{{.*}}> : tensor<12x1xi1>
// CHECK-DAG: %[[ZERO:.*]] = tp.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[XM:.*]] = tp.where %[[COLS]], %[[X]], %{{.*}} {{.*}}tp.padded_dims
// CHECK: %[[WM:.*]] = tp.where %[[ROWS]], %[[W]], %{{.*}}
// CHECK: tp.matmul %[[XM]], %[[WM]] {{.*}} : tensor<4x12xf32>, tensor<12x8xf32> -> tensor<4x8xf32>
shard.grid @mesh(shape = 3) {tp.axis_names = ["tp"]}
func.func @rowwise_contraction(%x: tensor<4x10xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}, %w: tensor<10x8xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}]>}) -> (tensor<4x8xf32> {tp.sharding = #tp.sharding<[{}, {}]>}) {
  %p = tp.matmul %x, %w {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>, #tp.sharding<[{"tp"}, {}]>], tp.out_shardings = [#tp.sharding<[{}, {}], partial = {"tp"}>]} : tensor<4x10xf32>, tensor<10x8xf32> -> tensor<4x8xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {}]>]} %p : tensor<4x8xf32>
}

// -----

// A mean over a batch of 6 split over dp=4 (2 + 2 + 2 + 0): the padding
// rows zeroed, then (tp-partition, from the recorded padding) each device's
// sum times 1/6, not the mean of 8 places; the partial means all-reduced.
// CHECK-LABEL: func.func @mean_over_padded_batch
// CHECK-SAME: (%[[X:.*]]: tensor<8x5xf32>
// CHECK: %[[XM:.*]] = tp.where %{{.*}}, %[[X]], %{{.*}} : tensor<8x1xi1>, tensor<8x5xf32>, tensor<f32> -> tensor<8x5xf32>
// CHECK: %[[M:.*]] = tp.reduce_mean %[[XM]] {axes = array<i64: 0>, keepdims = false{{.*}}} : tensor<8x5xf32> -> tensor<5xf32>
// CHECK: return {{.*}}%[[M]]
// PART-LABEL: func.func @mean_over_padded_batch
// PART-SAME: (%[[X:.*]]: tensor<2x5xf32>
// PART: %[[XM:.*]] = tp.where %{{.*}}, %[[X]], %{{.*}} : tensor<2x1xi1>, tensor<2x5xf32>, tensor<f32> -> tensor<2x5xf32>
// PART: %[[S:.*]] = tp.reduce_sum %[[XM]] {axes = array<i64: 0>, keepdims = false} : tensor<2x5xf32> -> tensor<5xf32>
// PART: %[[SCALE:.*]] = tp.constant dense<0.166666672> : tensor<f32>
// PART: %[[M:.*]] = tp.mul %[[S]], %[[SCALE]]
// PART: shard.all_reduce %[[M]] on @mesh grid_axes = [0]
shard.grid @mesh(shape = 4) {tp.axis_names = ["dp"]}
func.func @mean_over_padded_batch(%x: tensor<6x5xf32> {tp.sharding = #tp.sharding<[{"dp"}, {}]>}) -> (tensor<5xf32> {tp.sharding = #tp.sharding<[{}]>}) {
  %m = tp.reduce_mean %x {axes = array<i64: 0>, keepdims = false, tp.in_shardings = [#tp.sharding<[{"dp"}, {}]>], tp.out_shardings = [#tp.sharding<[{}], partial = {"dp"}>]} : tensor<6x5xf32> -> tensor<5xf32>
  return {tp.in_shardings = [#tp.sharding<[{}]>]} %m : tensor<5xf32>
}

// -----

// A softmax over a vocabulary of 5 split 2 ways: the padding place gets the
// lowest float, so that it adds nothing to the sum of exponentials; the
// output keeps its padding (the runtime never returns it).
// CHECK-LABEL: func.func @softmax_over_padded_vocab
// CHECK-SAME: (%[[X:.*]]: tensor<2x6xf32> {{.*}}) -> (tensor<2x6xf32>
// CHECK: %[[LOW:.*]] = tp.constant dense<-3.40282347E+38> : tensor<f32>
// CHECK: %[[XM:.*]] = tp.where %{{.*}}, %[[X]], %[[LOW]]
// CHECK: tp.softmax %[[XM]] {{.*}} : tensor<2x6xf32>
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @softmax_over_padded_vocab(%x: tensor<2x5xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> (tensor<2x5xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) {
  %s = tp.softmax %x {axis = 1 : i64, tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]} : tensor<2x5xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>]} %s : tensor<2x5xf32>
}

// -----

// Split 2 ways (padded to 6) and read whole: the padding is cut off (on a
// whole dim); read split 4 ways instead: cut, then zeros appended up to 8.
// (Read split 3 ways it would need nothing: 6 places too, the same padded
// tensor, which tp-partition reshards as any other.)
// CHECK-LABEL: func.func @relayout
// CHECK-SAME: (%[[X:.*]]: tensor<6xf32>
// CHECK: %[[CUT:.*]] = tp.slice %[[X]] {limits = array<i64: 5>{{.*}}tp.in_shardings = [#tp.sharding<[{}]>]{{.*}}} : tensor<6xf32> -> tensor<5xf32>
// CHECK: %[[A:.*]] = tp.neg %[[CUT]] {{.*}} : tensor<5xf32>
// CHECK: %[[Z:.*]] = tp.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: %[[RE:.*]] = tp.concat %[[CUT]], %[[Z]] {{.*}} : tensor<5xf32>, tensor<3xf32> -> tensor<8xf32>
// CHECK: %[[B:.*]] = tp.neg %[[RE]] {{.*}} : tensor<8xf32>
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @relayout(%x: tensor<5xf32> {tp.sharding = #tp.sharding<[{"dp"}]>}) -> (tensor<5xf32> {tp.sharding = #tp.sharding<[{}]>}, tensor<5xf32> {tp.sharding = #tp.sharding<[{"tp"}]>}) {
  %a = tp.neg %x {tp.in_shardings = [#tp.sharding<[{}]>], tp.out_shardings = [#tp.sharding<[{}]>]} : tensor<5xf32>
  %b = tp.neg %x {tp.in_shardings = [#tp.sharding<[{"tp"}]>], tp.out_shardings = [#tp.sharding<[{"tp"}]>]} : tensor<5xf32>
  return {tp.in_shardings = [#tp.sharding<[{}]>, #tp.sharding<[{"tp"}]>]} %a, %b : tensor<5xf32>, tensor<5xf32>
}

// -----

// Padding inside a reshaped dim ([2, 5 padded to 6] -> [2 x 6 places]) that
// a user reads whole cannot be cut by a slice: a clear error.
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @padding_inside_a_dim(%x: tensor<2x5xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> (tensor<10xf32> {tp.sharding = #tp.sharding<[{}]>}) {
  %r = tp.reshape %x {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}]>]} : tensor<2x5xf32> -> tensor<10xf32>
  // expected-error @+1 {{cannot lay out tp.reshape dim 0 (2 x 5 padded to 6) as 10: an uneven split inside a reshaped dim is not supported; make the split even or keep that dim whole in the plan}}
  %n = tp.neg %r {tp.in_shardings = [#tp.sharding<[{}]>], tp.out_shardings = [#tp.sharding<[{}]>]} : tensor<10xf32>
  return {tp.in_shardings = [#tp.sharding<[{}]>]} %n : tensor<10xf32>
}

// -----

// A vocab-parallel lookup in a table of 5 rows split 2 ways (padded to 6):
// negative ids count from the end of the 5 real rows (id + 5), not of the
// 6 places.
// CHECK-LABEL: func.func @lookup_in_padded_table
// CHECK-SAME: tensor<6x4xf32>
// PART-LABEL: func.func @lookup_in_padded_table
// PART: %[[FIVE:.*]] = tp.constant dense<5> : tensor<i64>
// PART: %[[WRAPPED:.*]] = tp.add %{{.*}}, %[[FIVE]]
// PART: tp.masked_gather %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<3x4xf32>
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @lookup_in_padded_table(%table: tensor<5x4xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}]>}, %ids: tensor<3xi64> {tp.sharding = #tp.sharding<[{}]>}) -> (tensor<3x4xf32> {tp.sharding = #tp.sharding<[{}, {}]>}) {
  %e = tp.gather %table, %ids {axis = 0 : i64, tp.in_shardings = [#tp.sharding<[{"tp"}, {}]>, #tp.sharding<[{}]>], tp.out_shardings = [#tp.sharding<[{}, {}], partial = {"tp"}>]} : tensor<5x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {}]>]} %e : tensor<3x4xf32>
}

// -----

// Every split divides: nothing is padded, masked or converted, and the
// function stays as it was.
// CHECK-LABEL: func.func @even_split
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {tp.sharding = #tp.sharding<[{}, {}]>}, %[[W:.*]]: tensor<8x6xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> (tensor<4x6xf32>
// CHECK-NEXT: %[[Y:.*]] = tp.matmul %[[X]], %[[W]] {{{.*}}} : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT: return {{{.*}}} %[[Y]] : tensor<4x6xf32>
// PART-LABEL: func.func @even_split
// PART: tp.matmul {{.*}} : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @even_split(%x: tensor<4x8xf32> {tp.sharding = #tp.sharding<[{}, {}]>}, %w: tensor<8x6xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) -> (tensor<4x6xf32> {tp.sharding = #tp.sharding<[{}, {"tp"}]>}) {
  %y = tp.matmul %x, %w {tp.in_shardings = [#tp.sharding<[{}, {}]>, #tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]} : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  return {tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>]} %y : tensor<4x6xf32>
}

// -----

// An already partitioned program (here a scalar) is not what the pass
// pads: an error that says where the pass belongs, not a crash.
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @scalar_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.constant' op tp-pad-uneven expects ranked tensors on the global program (it runs before tp-partition), not 'f32'}}
  %c = arith.constant 1.0 : f32
  return %x : tensor<4xf32>
}

// -----

// An argument's sharding that does not fit its tensor is an error even
// where nothing is padded.
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
// expected-error @+1 {{sharding has 1 dims for a tensor of rank 2}}
func.func @bad_argument_sharding(%x: tensor<4x8xf32> {tp.sharding = #tp.sharding<[{}]>}) -> tensor<4x8xf32> {
  return {tp.in_shardings = [#tp.sharding<[{}, {}]>]} %x : tensor<4x8xf32>
}
