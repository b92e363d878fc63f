// tp-prepare-gpu-buffers (CUDA target, on buffers): copies become
// linalg.copy (a kernel), reductions before parallel dims are interchanged
// so that one kernel covers the parallel dims, and a global is uploaded into
// a fresh (device) buffer by gpu.memcpy once per call, freed at the end of
// its block: host code never reads or writes a buffer.
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
// CHECK: %[[READY:.*]] = gpu.wait async
// CHECK: %[[DONE:.*]] = gpu.memcpy async [%[[READY]]] %[[D]], %[[G]] : memref<4xf32>, memref<4xf32>
// CHECK: gpu.wait [%[[DONE]]]
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%[[D]] : memref<4xf32>) outs(%arg0 : memref<4xf32>)
// CHECK: memref.dealloc %[[D]]
// CHECK-NEXT: return
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @global(%out: memref<4xf32>) {
  %g = memref.get_global @table : memref<4xf32>
  memref.copy %g, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A full reduction has no parallel loop: a unit dim in front of its output
// gives it one (a kernel of one thread) instead of host loops.
// CHECK: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK: #[[S:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @full_sum
// CHECK: %[[UNIT:.*]] = memref.expand_shape %arg1 [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[S]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%arg0 : memref<4x8xf32>) outs(%[[UNIT]] : memref<1xf32>)
// CHECK: arith.addf
#x = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func @full_sum(%x: memref<4x8xf32>, %sum: memref<f32>) {
  linalg.generic {indexing_maps = [#x, #s], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%sum : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// 0-d ops (a scalar fill, a scalar copy) become one-iteration loops too;
// only the first output gains the unit dim.
// CHECK: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK: #[[UNIT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @scalars
// CHECK: %[[A:.*]] = memref.expand_shape %arg0 [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #[[UNIT]]], iterator_types = ["parallel"]} ins(%{{.*}} : f32) outs(%[[A]] : memref<1xf32>)
// CHECK: %[[B:.*]] = memref.expand_shape %arg1 [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #[[UNIT]]], iterator_types = ["parallel"]} ins(%arg0 : memref<f32>) outs(%[[B]] : memref<1xf32>)
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
func.func @scalars(%a: memref<f32>, %b: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<f32>)
  memref.copy %a, %b : memref<f32> to memref<f32>
  return
}

// -----

// linalg.index follows its dim to its new place.
// CHECK-LABEL: func.func @argmax_like
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.index 1 : index
#v = affine_map<(d0) -> (d0)>
#r = affine_map<(d0) -> ()>
func.func @argmax_like(%v: memref<8xf32>, %last: memref<index>) {
  linalg.generic {indexing_maps = [#v, #r], iterator_types = ["reduction"]}
      ins(%v : memref<8xf32>) outs(%last : memref<index>) {
  ^bb0(%a: f32, %acc: index):
    %i = linalg.index 0 : index
    %m = arith.maxui %i, %acc : index
    linalg.yield %m : index
  }
  return
}

// -----

// A kept-dims reduction's output of rank 2 gains the unit dim in front of
// its first dim.
// CHECK: #[[KEPT:.*]] = affine_map<(d0, d1) -> (d0, 0, 0)>
// CHECK-LABEL: func.func @kept_dims_sum
// CHECK: %[[UNIT:.*]] = memref.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [1, 1, 1] : memref<1x1xf32> into memref<1x1x1xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[KEPT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: outs(%[[UNIT]] : memref<1x1x1xf32>)
#in1 = affine_map<(d0) -> (0, d0)>
#kept = affine_map<(d0) -> (0, 0)>
func.func @kept_dims_sum(%x: memref<1x8xf32>, %sum: memref<1x1xf32>) {
  linalg.generic {indexing_maps = [#in1, #kept], iterator_types = ["reduction"]}
      ins(%x : memref<1x8xf32>) outs(%sum : memref<1x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}
