// tp-outline-loop-nests: every top-level loop nest becomes a private,
// no_inline function (internal and noinline for LLVM, which would otherwise
// inline it back) called with the buffers it uses; nests that differ only in
// the buffers they are given share one function. Constants come along into
// the function rather than as arguments.
// RUN: tp-opt %s --tp-outline-loop-nests | FileCheck %s
// RUN: tp-opt %s --tp-outline-loop-nests --convert-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func private @step_loop0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, no_inline, passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 8 : index
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK-LABEL: func.func private @step_loop1(%{{.*}}: memref<8xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, no_inline, passthrough = ["noinline"]}
// CHECK: scf.for
// CHECK: arith.addf
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>) attributes {passthrough = ["noinline", "optnone"]}
// CHECK-NOT: scf.for
// CHECK-NOT: scf.execute_region
// CHECK: call @step_loop0(%[[A]], %[[B]])
// CHECK-NOT: scf.for
// CHECK: call @step_loop1(%[[B]])
// CHECK-NOT: scf.for
// CHECK-NOT: scf.execute_region
// CHECK: return

// LLVM-LABEL: llvm.func internal @step_loop0(
// LLVM-SAME: passthrough = ["noinline"]
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

// Two layers: the same doubling on other buffers reuses @step_loop1, here
// and in the first function; scaling by 3 (a constant from outside the
// loop) and by 4 are two functions.
// CHECK-NOT: func.func private @layers_loop
// CHECK-LABEL: func.func private @layers_loop0(%{{.*}}: memref<8xf32>) attributes
// CHECK: arith.constant 3.0
// CHECK: arith.mulf
// CHECK-LABEL: func.func private @layers_loop1(%{{.*}}: memref<8xf32>) attributes
// CHECK: arith.constant 4.0
// CHECK: arith.mulf
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>)
// CHECK: call @step_loop1(%[[X]])
// CHECK: call @step_loop1(%[[Y]])
// CHECK: call @layers_loop0(%[[Y]])
// CHECK: call @layers_loop1(%[[Y]])
// CHECK: return
func.func @layers(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.mulf %v, %three : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %four = arith.constant 4.0 : f32
    %v = memref.load %y[%i] : memref<8xf32>
    %w = arith.mulf %v, %four : f32
    memref.store %w, %y[%i] : memref<8xf32>
  }
  return
}

// A loop that yields a value stays where it is, and its function keeps
// LLVM's optimizations.
// CHECK-LABEL: func.func @kept_loop(
// CHECK-SAME: %{{.*}}: memref<8xf32>) -> f32 {
// CHECK: call @step_loop1(
// CHECK: scf.for {{.*}} iter_args
func.func @kept_loop(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<8xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %sum : f32
}

// Every nest shared with another function's: still straight-line, optnone.
// CHECK-LABEL: func.func @all_shared(
// CHECK-SAME: attributes {passthrough = ["noinline", "optnone"]}
// CHECK: call @step_loop1(
func.func @all_shared(%x: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<8xf32>
  }
  return
}
