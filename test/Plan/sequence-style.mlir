// tp-apply-plan: sequence style, data_parallel, input and output layouts.
// RUN: tp-opt %s --tp-apply-plan='mesh=dp=2,tp=2 data-parallel=dp entry=norm=sequence inputs=x=sequence outputs=y=shard(1)' | FileCheck %s

// Sequence style splits the module's activations on dim 1; data_parallel
// splits every input's and output's batch dim, before the plan's own split.
// CHECK: shard.grid @mesh(shape = 2x2) {tp.axis_names = ["dp", "tp"]}
// CHECK-LABEL: func.func @sequence
// CHECK-SAME: tp.input = "x", tp.sharding = #tp.sharding<[{"dp"}, {"tp"}, {}]>, tp.sharding_origin = "inputs entry 'x=sequence'"
// CHECK-SAME: tp.param = "norm.weight", tp.sharding = #tp.sharding<[{}]>, tp.sharding_origin = "plan entry 'norm=sequence' (--plan-entry)"
// CHECK-SAME: tp.output = "y", tp.sharding = #tp.sharding<[{"dp"}, {"tp"}, {}]>, tp.sharding_origin = "outputs entry 'y=shard(1)'"
// CHECK: tp.layer_norm {{.*}}tp.sharding = #tp.sharding<[{}, {"tp"}, {}]>, tp.sharding_origin = "plan entry 'norm=sequence' (--plan-entry)"
func.func @sequence(%x: tensor<4x16x64xf32> {tp.input = "x"},
                    %g: tensor<64xf32> {tp.param = "norm.weight"},
                    %b: tensor<64xf32> {tp.param = "norm.bias"}) -> (tensor<4x16x64xf32> {tp.output = "y"}) {
  %y = tp.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32> loc("/norm/LayerNormalization")
  return %y : tensor<4x16x64xf32>
}
