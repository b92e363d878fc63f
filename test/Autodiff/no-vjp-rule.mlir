// An op without a VJP rule on the path from a weight to the loss is an
// error that names the op and its ONNX node; so are the forms of an op
// whose rule does not cover them.
// RUN: not tp-opt %s --split-input-file --tp-autodiff 2>&1 | FileCheck %s

// CHECK: error: {{.*}}no VJP rule for 'tp.reduce_max' (ONNX node '/ReduceMax'): tp cannot differentiate through it
func.func @forward(%x: tensor<4x3xf32> {tp.input = "x"}, %w: tensor<4x3xf32> {tp.param = "w"}) -> (tensor<4xf32> {tp.output = "y"}) {
  %m = tp.mul %x, %w : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %r = tp.reduce_max %m {axes = array<i64: 1>, keepdims = false} : tensor<4x3xf32> -> tensor<4xf32> loc("/ReduceMax")
  return %r : tensor<4xf32>
}

// -----

// CHECK: error: {{.*}}no VJP rule for a strided slice (steps 1, 2) at ONNX node '/Slice'
func.func @forward(%x: tensor<4x2xf32> {tp.input = "x"}, %w: tensor<4x4xf32> {tp.param = "w"}) -> (tensor<4x2xf32> {tp.output = "y"}) {
  %s = tp.slice %w {starts = array<i64: 0, 0>, limits = array<i64: 4, 4>, steps = array<i64: 1, 2>} : tensor<4x4xf32> -> tensor<4x2xf32> loc("/Slice")
  %y = tp.mul %s, %x : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
