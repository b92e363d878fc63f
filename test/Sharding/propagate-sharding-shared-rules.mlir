// tp-propagate-sharding shares one rule between ops of the same name,
// attributes, properties and operand and result types; ops that differ in
// any of them keep their own. And tp.sharding_origin is written only when
// asked for (tp-compile asks with --explain-sharding).
// RUN: tp-opt %s -split-input-file --tp-propagate-sharding | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-propagate-sharding=record-origins=false | FileCheck %s --check-prefix=NO-ORIGIN

// Two transposes of the same types and different perms: the split moves to
// dim 1 in the first and to nothing else in the second.
// CHECK-LABEL: func.func @same_types_other_perm
// CHECK: tp.transpose %arg0 {{.*}}tp.out_shardings = [#tp.sharding<[{}, {"tp"}, {}]>]
// CHECK: tp.transpose %arg0 {{.*}}tp.out_shardings = [#tp.sharding<[{"tp"}, {}, {}]>]
// CHECK: tp.transpose %arg0 {{.*}}tp.out_shardings = [#tp.sharding<[{}, {"tp"}, {}]>]
// NO-ORIGIN-LABEL: func.func @same_types_other_perm
// NO-ORIGIN-NOT: tp.sharding_origin
// NO-ORIGIN: return {tp.in_shardings
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @same_types_other_perm(%x: tensor<4x4x4xf32> {tp.sharding = #tp.sharding<[{"tp"}, {}, {}]>}) -> (tensor<4x4x4xf32>, tensor<4x4x4xf32>, tensor<4x4x4xf32>) {
  %0 = tp.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
  %1 = tp.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
  %2 = tp.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
  return %0, %1, %2 : tensor<4x4x4xf32>, tensor<4x4x4xf32>, tensor<4x4x4xf32>
}

// -----

// Two adds with the same result type, one broadcasting a bias: each reads
// its own operands' dims.
// CHECK-LABEL: func.func @same_result_other_operands
// CHECK: tp.add %arg0, %arg1 {{.*}}tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>, #tp.sharding<[{"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]
// CHECK: tp.add %0, %arg2 {{.*}}tp.in_shardings = [#tp.sharding<[{}, {"tp"}]>, #tp.sharding<[{}, {"tp"}]>], tp.out_shardings = [#tp.sharding<[{}, {"tp"}]>]
// NO-ORIGIN-LABEL: func.func @same_result_other_operands
// NO-ORIGIN-NOT: tp.sharding_origin
// NO-ORIGIN: return {tp.in_shardings
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @same_result_other_operands(%x: tensor<8x64xf32>, %b: tensor<64xf32> {tp.param = "m.bias", tp.sharding = #tp.sharding<[{"tp"}]>}, %y: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = tp.add %x, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
  %1 = tp.add %0, %y : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return %0, %1 : tensor<8x64xf32>, tensor<8x64xf32>
}
