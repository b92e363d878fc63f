// An op without a sharding rule runs replicated, with a warning that names
// its ONNX node.
// RUN: tp-opt %s --tp-propagate-sharding 2>&1 | FileCheck %s
// CHECK: warning: {{.*}}no sharding rule for 'tensor.empty' (ONNX node '/odd/Op'); it runs replicated
// CHECK-LABEL: func.func @no_rule
// CHECK: tensor.empty() {tp.in_shardings = [], tp.out_shardings = [#tp.sharding<[{}]>]
shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
func.func @no_rule() -> tensor<4xf32> {
  %0 = tensor.empty() : tensor<4xf32> loc("/odd/Op")
  return %0 : tensor<4xf32>
}
