// tp-lower-to-llvm (the CPU pipeline) outlines repeated layers on the
// per-device tp ops, before tp-lower-to-linalg and tp-fuse-elementwise, so
// that the lowering and the fusion see each distinct layer once. After
// tp-fuse-elementwise, the layer's function holds its matmul and its
// elementwise chain fused into one linalg.generic, and the step holds only
// calls. (Without threads, the dumps come in the module's order.)
// RUN: tp-opt %s --tp-lower-to-llvm --mlir-print-ir-after=tp-fuse-elementwise --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s

// CHECK: IR Dump After TPFuseElementwise
// CHECK-LABEL: func.func private @step_layer0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x4xf32>, %[[W:[a-z0-9]+]]: tensor<4x4xf32>, %[[B:[a-z0-9]+]]: tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK: IR Dump After TPFuseElementwise
// CHECK-LABEL: func.func @step(
// CHECK-NOT: linalg.
// CHECK: %[[Y0:.*]] = call @step_layer0(%arg0, %arg1, %arg2)
// CHECK-NOT: linalg.
// CHECK: %[[Y1:.*]] = call @step_layer0(%[[Y0]], %arg3, %arg4)
// CHECK-NOT: linalg.
// CHECK: return %[[Y1]]

module {
  func.func @step(%x: tensor<2x4xf32>, %w0: tensor<4x4xf32>, %b0: tensor<4xf32>, %w1: tensor<4x4xf32>, %b1: tensor<4xf32>) -> tensor<2x4xf32> {
    %half = tp.constant dense<0.5> : tensor<4xf32>
    %m0 = tp.matmul %x, %w0 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32> loc("/layers.0/MatMul")
    %a0 = tp.add %m0, %b0 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32> loc("/layers.0/Add")
    %r0 = tp.relu %a0 : tensor<2x4xf32> loc("/layers.0/Relu")
    %h0 = tp.mul %r0, %half : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32> loc("/layers.0/Mul")
    %s0 = tp.sub %h0, %a0 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32> loc("/layers.0/Sub")
    %q0 = tp.mul %s0, %s0 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32> loc("/layers.0/Mul_1")
    %n0 = tp.neg %q0 : tensor<2x4xf32> loc("/layers.0/Neg")
    %y0 = tp.add %n0, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32> loc("/layers.0/Add_1")
    %m1 = tp.matmul %y0, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32> loc("/layers.1/MatMul")
    %a1 = tp.add %m1, %b1 : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32> loc("/layers.1/Add")
    %r1 = tp.relu %a1 : tensor<2x4xf32> loc("/layers.1/Relu")
    %h1 = tp.mul %r1, %half : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32> loc("/layers.1/Mul")
    %s1 = tp.sub %h1, %a1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32> loc("/layers.1/Sub")
    %q1 = tp.mul %s1, %s1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32> loc("/layers.1/Mul_1")
    %n1 = tp.neg %q1 : tensor<2x4xf32> loc("/layers.1/Neg")
    %y1 = tp.add %n1, %y0 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32> loc("/layers.1/Add_1")
    return %y1 : tensor<2x4xf32>
  }
}
