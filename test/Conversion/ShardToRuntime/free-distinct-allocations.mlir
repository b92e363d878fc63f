// tp-free-distinct-allocations: a bufferization.dealloc's unconditionally
// freed allocations of the function, each appearing once, are freed by
// memref.dealloc ops of their own (what buffer-deallocation-simplification
// would conclude, without its pairwise alias questions). Anything that
// needs the alias analysis is left to it.
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-free-distinct-allocations))' | FileCheck %s

// Two allocations, one seen through its base buffer: both freed on their
// own; the op is gone.
// CHECK-LABEL: func.func @distinct
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: memref.dealloc %[[A]] : memref<16xf32>
// CHECK-NEXT: memref.dealloc %[[B]] : memref<4x4xf32>
// CHECK-NEXT: return
// CHECK-NOT: bufferization.dealloc
func.func @distinct() {
  %true = arith.constant true
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<4x4xf32>
  %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %b : memref<4x4xf32> -> memref<f32>, index, index, index, index, index
  bufferization.dealloc (%a, %base : memref<16xf32>, memref<f32>) if (%true, %true)
  return
}

// -----

// A conditionally owned buffer, and an allocation that appears twice (a
// view of it too): they stay in the op; the other allocation is split off.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[COND:.*]]: i1)
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[V:.*]] = memref.subview %[[C]]
// CHECK: memref.dealloc %[[A]] : memref<16xf32>
// CHECK-NEXT: bufferization.dealloc (%[[B]], %[[C]], %[[V]] : {{.*}}) if (%[[COND]], %{{.*}}, %{{.*}})
// CHECK-NEXT: return
func.func @mixed(%cond: i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  %v = memref.subview %c[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  bufferization.dealloc (%a, %b, %c, %v : memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<8xf32, strided<[1]>>) if (%true, %cond, %true, %true)
  return
}

// -----

// A buffer of unknown origin that may be freed (it might be %a): the op is
// left whole. One that is not freed (condition false) does not matter.
// CHECK-LABEL: func.func @unknown_origin
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<16xf32>, memref<16xf32>) if (%{{.*}}, %{{.*}})
// CHECK-NOT: memref.dealloc
// CHECK-LABEL: func.func @not_freed_unknown
// CHECK: memref.dealloc %{{.*}} : memref<16xf32>
// CHECK-NEXT: bufferization.dealloc (%{{.*}} : memref<16xf32>) if (%false)
func.func @unknown_origin(%arg: memref<16xf32>) {
  %true = arith.constant true
  %a = memref.alloc() : memref<16xf32>
  bufferization.dealloc (%a, %arg : memref<16xf32>, memref<16xf32>) if (%true, %true)
  return
}
func.func @not_freed_unknown(%arg: memref<16xf32>) {
  %true = arith.constant true
  %false = arith.constant false
  %a = memref.alloc() : memref<16xf32>
  bufferization.dealloc (%a, %arg : memref<16xf32>, memref<16xf32>) if (%true, %false)
  return
}

// -----

// Retained values: their results need the alias analysis; left whole.
// CHECK-LABEL: func.func @retained
// CHECK: %{{.*}} = bufferization.dealloc (%{{.*}} : memref<16xf32>) if (%{{.*}}) retain (%{{.*}} : memref<16xf32>)
// CHECK-NOT: memref.dealloc
func.func @retained(%arg: memref<16xf32>) -> i1 {
  %true = arith.constant true
  %a = memref.alloc() : memref<16xf32>
  %r = bufferization.dealloc (%a : memref<16xf32>) if (%true) retain (%arg : memref<16xf32>)
  return %r : i1
}
