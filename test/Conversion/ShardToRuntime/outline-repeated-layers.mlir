// tp-outline-repeated-layers: the ops of one layer (ONNX node names under
// one numbered scope, /layers.N/...) that follow one another form a run;
// runs that are the same but for the values they read share one private,
// noinline function, named after every layer (/layers.*/...), and each run
// becomes a call of it. A run that does not repeat min-repeats times (2 by
// default) stays inline; ops outside a layer, and constants, stay where
// they are.
// RUN: tp-opt %s --tp-outline-repeated-layers --mlir-print-debuginfo | FileCheck %s
// RUN: tp-opt %s --tp-outline-repeated-layers="min-repeats=4" --mlir-print-debuginfo | FileCheck %s --check-prefix=FEW

// Three layers of 8 ops reading their input, two weights and a shared
// constant, and a head outside any layer: one function, called three times.
// Three layers are fewer than 4: all stays inline.
// FEW-NOT: func.func private
// FEW: func.func @step
// FEW-NOT: call
// FEW-COUNT-8: arith.{{mulf|addf|subf}} {{.*}}loc({{.*}})
// CHECK: #loc{{[0-9]+}} = loc("/layers.*/Mul")
// CHECK-LABEL: func.func private @step_layer0(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32> loc({{.*}}), %[[W:[a-z0-9]+]]: tensor<4xf32> loc({{.*}}), %[[B:[a-z0-9]+]]: tensor<4xf32> loc({{.*}})) -> tensor<4xf32>
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, no_inline, passthrough = ["noinline"]}
// CHECK: arith.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK-COUNT-8: arith.{{mulf|addf|subf}}
// CHECK: return
// The ops are named after every layer:
// CHECK-NOT: /layers.0/
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X0:[a-z0-9]+]]: tensor<4xf32>
// CHECK: %[[Y0:.*]] = call @step_layer0(%[[X0]], %arg1, %arg2)
// CHECK: %[[Y1:.*]] = call @step_layer0(%[[Y0]], %arg3, %arg4)
// CHECK: %[[Y2:.*]] = call @step_layer0(%[[Y1]], %arg5, %arg6)
// The head is not a layer's: it stays inline.
// CHECK: arith.negf %[[Y2]]
// CHECK: return
// CHECK-NOT: func.func private @step_layer1
// Each call is named after its layer:
// CHECK: loc("/layers.0/Mul")
// CHECK: loc("/layers.1/Mul")
// CHECK: loc("/layers.2/Mul")

module {
  func.func @step(%x: tensor<4xf32>, %w0: tensor<4xf32>, %b0: tensor<4xf32>, %w1: tensor<4xf32>, %b1: tensor<4xf32>, %w2: tensor<4xf32>, %b2: tensor<4xf32>) -> tensor<4xf32> {
    %half = arith.constant dense<0.5> : tensor<4xf32>
    %m0 = arith.mulf %x, %w0 : tensor<4xf32> loc("/layers.0/Mul")
    %a0 = arith.addf %m0, %b0 : tensor<4xf32> loc("/layers.0/Add")
    %h0 = arith.mulf %a0, %half : tensor<4xf32> loc("/layers.0/Mul_1")
    %s0 = arith.subf %h0, %a0 : tensor<4xf32> loc("/layers.0/Sub")
    %q0 = arith.mulf %s0, %s0 : tensor<4xf32> loc("/layers.0/Mul_2")
    %r0 = arith.addf %q0, %h0 : tensor<4xf32> loc("/layers.0/Add_1")
    %t0 = arith.mulf %r0, %w0 : tensor<4xf32> loc("/layers.0/Mul_3")
    %y0 = arith.addf %t0, %x : tensor<4xf32> loc("/layers.0/Add_2")
    %m1 = arith.mulf %y0, %w1 : tensor<4xf32> loc("/layers.1/Mul")
    %a1 = arith.addf %m1, %b1 : tensor<4xf32> loc("/layers.1/Add")
    %h1 = arith.mulf %a1, %half : tensor<4xf32> loc("/layers.1/Mul_1")
    %s1 = arith.subf %h1, %a1 : tensor<4xf32> loc("/layers.1/Sub")
    %q1 = arith.mulf %s1, %s1 : tensor<4xf32> loc("/layers.1/Mul_2")
    %r1 = arith.addf %q1, %h1 : tensor<4xf32> loc("/layers.1/Add_1")
    %t1 = arith.mulf %r1, %w1 : tensor<4xf32> loc("/layers.1/Mul_3")
    %y1 = arith.addf %t1, %y0 : tensor<4xf32> loc("/layers.1/Add_2")
    %m2 = arith.mulf %y1, %w2 : tensor<4xf32> loc("/layers.2/Mul")
    %a2 = arith.addf %m2, %b2 : tensor<4xf32> loc("/layers.2/Add")
    %h2 = arith.mulf %a2, %half : tensor<4xf32> loc("/layers.2/Mul_1")
    %s2 = arith.subf %h2, %a2 : tensor<4xf32> loc("/layers.2/Sub")
    %q2 = arith.mulf %s2, %s2 : tensor<4xf32> loc("/layers.2/Mul_2")
    %r2 = arith.addf %q2, %h2 : tensor<4xf32> loc("/layers.2/Add_1")
    %t2 = arith.mulf %r2, %w2 : tensor<4xf32> loc("/layers.2/Mul_3")
    %y2 = arith.addf %t2, %y1 : tensor<4xf32> loc("/layers.2/Add_2")
    %out = arith.negf %y2 : tensor<4xf32> loc("/head/Neg")
    return %out : tensor<4xf32>
  }
}
