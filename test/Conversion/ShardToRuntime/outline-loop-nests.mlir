// tp-outline-loop-nests: every top-level loop nest becomes a private,
// no_inline function called once with the buffers it uses.
// RUN: tp-opt %s --tp-outline-loop-nests | FileCheck %s

// CHECK-LABEL: func.func private @step_loop0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, {{.*}}) attributes {no_inline}
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK-LABEL: func.func private @step_loop1(%{{.*}}: memref<8xf32>, {{.*}}) attributes {no_inline}
// CHECK: scf.for
// CHECK: arith.addf
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>)
// CHECK-NOT: scf.for
// CHECK: call @step_loop0(%[[A]], %[[B]], {{.*}})
// CHECK-NOT: scf.for
// CHECK: call @step_loop1(%[[B]], {{.*}})
// CHECK-NOT: scf.for
// CHECK: return
func.func @step(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %b[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%i] : memref<8xf32>
  }
  return
}
