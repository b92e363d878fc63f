// An op without a VJP rule on the path from a weight to the loss is an
// error that names the op and its ONNX node.
// RUN: not tp-opt %s --tp-autodiff 2>&1 | FileCheck %s
// CHECK: error: {{.*}}no VJP rule for 'tp.gather' (ONNX node '/embed/Gather'): tp cannot differentiate through it
func.func @forward(%ids: tensor<4xi64> {tp.input = "ids"}, %t: tensor<10x3xf32> {tp.param = "embed.weight"}) -> (tensor<4x3xf32> {tp.output = "y"}) {
  %e = tp.gather %t, %ids {axis = 0 : i64} : tensor<10x3xf32>, tensor<4xi64> -> tensor<4x3xf32> loc("/embed/Gather")
  return %e : tensor<4x3xf32>
}
