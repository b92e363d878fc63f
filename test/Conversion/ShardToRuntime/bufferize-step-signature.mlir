// tp-bufferize-step-signature: the public step takes and returns
// identity-layout buffers, reading each argument as a writable tensor of
// its own and returning each result's buffer; private functions (a
// repeated layer, a pipeline stage) keep their tensor signatures for
// one-shot-bufferize's module analysis.
// RUN: tp-opt %s --split-input-file --tp-bufferize-step-signature | FileCheck %s
// One-shot-bufferize then gives the same program as without the pass: the
// update written in place of its weight, the layer called on buffers.
// RUN: tp-opt %s --split-input-file --tp-bufferize-step-signature \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | FileCheck %s --check-prefix=BUF
// RUN: tp-opt %s --split-input-file \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func private @layer(
// CHECK-SAME: %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:.*]]: memref<4xf32>, %[[X:.*]]: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
// CHECK-NEXT: %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict writable : memref<4xf32> to tensor<4xf32>
// CHECK-NEXT: %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict writable : memref<4xf32> to tensor<4xf32>
// CHECK-NEXT: %[[Y:.*]] = call @layer(%[[WT]], %[[XT]])
// CHECK-NEXT: %[[U:.*]] = linalg.map { arith.subf } ins(%[[WT]], %[[Y]] : tensor<4xf32>, tensor<4xf32>) outs(%[[WT]] : tensor<4xf32>)
// CHECK-NEXT: %[[YB:.*]] = bufferization.to_buffer %[[Y]] : tensor<4xf32> to memref<4xf32>
// CHECK-NEXT: %[[UB:.*]] = bufferization.to_buffer %[[U]] : tensor<4xf32> to memref<4xf32>
// CHECK-NEXT: return %[[YB]], %[[UB]] : memref<4xf32>, memref<4xf32>

// BUF-LABEL: func.func private @layer(
// BUF-SAME: %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) -> memref<4xf32>
// BUF-LABEL: func.func @step(
// BUF-SAME: %[[W:.*]]: memref<4xf32>, %[[X:.*]]: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
// BUF: %[[Y:.*]] = call @layer(%[[W]], %[[X]]) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// BUF: linalg.map { arith.subf } ins(%[[W]], %[[Y]] : memref<4xf32>, memref<4xf32>) outs(%[[W]] : memref<4xf32>)
// BUF: return %[[Y]], %[[W]] : memref<4xf32>, memref<4xf32>
func.func private @layer(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.map { arith.mulf } ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>)
  return %y : tensor<4xf32>
}
func.func @step(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = call @layer(%w, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = linalg.map { arith.subf } ins(%w, %y : tensor<4xf32>, tensor<4xf32>) outs(%w : tensor<4xf32>)
  return %y, %u : tensor<4xf32>, tensor<4xf32>
}

// -----

// A function of several blocks is left to one-shot-bufferize as it is.
// CHECK-LABEL: func.func @branchy(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: cf.br ^bb1
// CHECK: return %[[X]] : tensor<4xf32>
// BUF-LABEL: func.func @branchy(
// BUF-SAME: %[[X:.*]]: memref<4xf32>) -> memref<4xf32>
func.func @branchy(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1
^bb1:
  return %x : tensor<4xf32>
}

// -----

// A public function that something calls keeps its tensors: its caller
// bufferizes against its boundary.
// CHECK-LABEL: func.func @check(
// CHECK-SAME: %{{.*}}: tensor<?xf32>) -> tensor<?xf32>
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.*}}: memref<?xf32>) -> memref<?xf32>
// BUF-LABEL: func.func @check(
// BUF-SAME: memref<?xf32>
func.func @check(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = call @check(%x) : (tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
