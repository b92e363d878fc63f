// tp-propagate-sharding reads the global program, all ranked tensors; given
// anything else (tp-opt on an already partitioned or lowered program) it
// says where it belongs instead of crashing.
// RUN: tp-opt %s -split-input-file -verify-diagnostics --tp-propagate-sharding

shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @scalar_operand(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'arith.constant' op tp-propagate-sharding expects ranked tensors on the global program (it runs before tp-partition), not 'f32'}}
  %c = arith.constant 1.0 : f32
  return %x : tensor<4xf32>
}

// -----

shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
// expected-error @+1 {{tp-propagate-sharding expects ranked tensor arguments, not 'memref<4xf32>'}}
func.func @buffer_argument(%x: memref<4xf32>) {
  return
}
