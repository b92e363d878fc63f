// tp-pack-step-arguments: the step takes the runtime's array of memref
// descriptor pointers (tp_entry(void **args)) instead of one argument per
// buffer; private functions keep their signatures.
// RUN: tp-opt %s --split-input-file --tp-pack-step-arguments --verify-diagnostics | FileCheck %s
// After convert-to-llvm the step has one pointer argument and reads each
// descriptor from its slot; no cast is left:
// RUN: tp-opt %s --split-input-file --tp-pack-step-arguments --verify-diagnostics \
// RUN:   --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr) {
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[D0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[X:.*]] = builtin.unrealized_conversion_cast %[[D0]] {{.*}} to memref<4x8xf32>
// CHECK: llvm.getelementptr %[[ARGS]][1]
// CHECK: %[[W:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<8xf32>
// CHECK: llvm.getelementptr %[[ARGS]][2]
// CHECK: %[[OUT:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<4x8xf32>
// CHECK: memref.load %[[W]]
// CHECK: memref.store {{.*}}, %[[OUT]]
// CHECK: call @helper(%[[W]])
// CHECK-LABEL: func.func private @helper(memref<8xf32>)

// LLVM-LABEL: llvm.func @step(
// LLVM-SAME: %{{.*}}: !llvm.ptr) {
// LLVM-NOT: unrealized_conversion_cast
// LLVM: llvm.getelementptr %{{.*}}[2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// LLVM-NOT: unrealized_conversion_cast
// LLVM: llvm.return
func.func @step(%x: memref<4x8xf32>, %w: memref<8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %w[%c0] : memref<8xf32>
  memref.store %v, %out[%c0, %c0] : memref<4x8xf32>
  call @helper(%w) : (memref<8xf32>) -> ()
  return
}
func.func private @helper(%a: memref<8xf32>)

// -----

// A step that still returns a value was not through
// buffer-results-to-out-params.
// expected-error @below {{internal: tp-pack-step-arguments expects the step's results as output parameters}}
func.func @returns(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}
