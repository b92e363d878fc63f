// tp-prepare-gpu-buffers (CUDA target, on buffers): copies become
// linalg.copy (a kernel), reductions before parallel dims are interchanged
// so that one kernel covers the parallel dims, and a global is copied into
// a fresh (device) buffer once per call, freed at the end of its block.
// RUN: tp-opt %s -split-input-file --tp-prepare-gpu-buffers | FileCheck %s

// CHECK-LABEL: func.func @copy
// CHECK: linalg.copy ins(%arg0 : memref<8x64xf32>) outs(%arg1 : memref<8x64xf32>)
// CHECK-NOT: memref.copy
func.func @copy(%a: memref<8x64xf32>, %b: memref<8x64xf32>) {
  memref.copy %a, %b : memref<8x64xf32> to memref<8x64xf32>
  return
}

// -----

// A column sum (reduction over d0, parallel d1) runs d1 outermost.
// CHECK: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%x: memref<128x64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<128x64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @global
// CHECK: %[[G:.*]] = memref.get_global @table : memref<4xf32>
// CHECK: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[G]], %[[D]]
// CHECK: linalg.copy ins(%[[D]] : memref<4xf32>) outs(%arg0 : memref<4xf32>)
// CHECK: memref.dealloc %[[D]]
// CHECK-NEXT: return
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @global(%out: memref<4xf32>) {
  %g = memref.get_global @table : memref<4xf32>
  memref.copy %g, %out : memref<4xf32> to memref<4xf32>
  return
}
