// tp-bucket-all-reduces{grad-reduce-dtype=bf16} (DDP's bf16_compress_hook):
// the f32 sum all_reduces of weight gradients, those a `grad_*` result
// reads (here through the mean's division and a reshape), move bf16: a cast
// before, the widening after, and they bucket together in bf16. The loss's
// all_reduce and the forward's stay f32; another dtype is an error.
// RUN: tp-opt %s --tp-bucket-all-reduces=grad-reduce-dtype=bf16 | FileCheck %s
// RUN: tp-opt %s --tp-bucket-all-reduces | FileCheck %s --check-prefix=F32
// RUN: not tp-opt %s --tp-bucket-all-reduces=grad-reduce-dtype=f16 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: tp-bucket-all-reduces: grad-reduce-dtype must be f32 or bf16, got 'f16'

// CHECK-LABEL: func.func @step
// CHECK: %[[H:.*]] = shard.all_reduce %arg0 on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: %[[L:.*]] = shard.all_reduce %arg3 on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK-DAG: %[[G1:.*]] = tp.cast %arg1 : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-DAG: %[[G2:.*]] = tp.cast %arg2 : tensor<8xf32> -> tensor<8xbf16>
// CHECK: %[[J:.*]] = tp.concat {{.*}} : tensor<32xbf16>, tensor<8xbf16> -> tensor<40xbf16>
// CHECK: %[[R:.*]] = shard.all_reduce %[[J]] on @mesh grid_axes = [0] : tensor<40xbf16> -> tensor<40xbf16>
// CHECK: tp.cast {{.*}} : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK: tp.cast {{.*}} : tensor<8xbf16> -> tensor<8xf32>
// F32-LABEL: func.func @step
// F32-NOT: bf16
shard.grid @mesh(shape = 2x2) {tp.axis_names = ["dp", "tp"]}
func.func @step(%h: tensor<4x8xf32>, %g1: tensor<4x8xf32>, %g2: tensor<8xf32>, %loss: tensor<f32>)
    -> (tensor<4x8xf32>, tensor<f32> {tp.output = "loss"}, tensor<32xf32> {tp.output = "grad_fc.weight"}, tensor<8xf32> {tp.output = "grad_fc.bias"}) {
  %hr = shard.all_reduce %h on @mesh grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  %l = shard.all_reduce %loss on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
  %r1 = shard.all_reduce %g1 on @mesh grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  %r2 = shard.all_reduce %g2 on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
  %two = tp.constant dense<2.0> : tensor<f32>
  %m1 = tp.div %r1, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %f1 = tp.reshape %m1 : tensor<4x8xf32> -> tensor<32xf32>
  %m2 = tp.div %r2, %two : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %hr, %l, %f1, %m2 : tensor<4x8xf32>, tensor<f32>, tensor<32xf32>, tensor<8xf32>
}
