// tp-fuse-parallel-loops: adjacent 1-D scf.parallel loops over the same
// rows (tp-linalg-to-loops' parallel nests) become one whose iteration runs
// each body on its row in turn, when every buffer one writes and the other
// touches is accessed in both through one view at the row's own indices.
// Allocations between move before the fused loop, frees after it.
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-linalg-to-loops{min-parallel-iterations=1024},tp-fuse-parallel-loops))' | FileCheck %s

// A softmax over rows of 512 (max, exp, sum, divide): one parallel loop over
// the 4x16x64 rows whose body runs the four row loops; each reduction's
// accumulator is set where its row starts (no fill sweeps).
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.*]] = memref.alloc() : memref<4x16x64xf32>
// CHECK: %[[E:.*]] = memref.alloc() : memref<4x16x64x512xf32>
// CHECK: %[[SUM:.*]] = memref.alloc() : memref<4x16x64xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x16x64x512xf32>
// CHECK: scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%[[C4096:.*]]) step
// CHECK-NEXT: %[[R:.*]]:3 = affine.delinearize_index %[[P]] into (4, 16, 64)
// CHECK-NEXT: memref.store %{{.*}}, %[[MAX]][%[[R]]#0, %[[R]]#1, %[[R]]#2]
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.maximumf
// CHECK: scf.for
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %[[E]][%[[R]]#0, %[[R]]#1, %[[R]]#2, %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[SUM]][%[[R]]#0, %[[R]]#1, %[[R]]#2]
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf
// CHECK: scf.for
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[R]]#0, %[[R]]#1, %[[R]]#2, %{{.*}}]
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NOT: scf.parallel
// CHECK-NOT: linalg.fill
// CHECK-DAG: memref.dealloc %[[MAX]]
// CHECK-DAG: memref.dealloc %[[E]]
// CHECK-DAG: memref.dealloc %[[SUM]]
// CHECK: return %[[OUT]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @softmax(%x: memref<4x16x64x512xf32>) -> memref<4x16x64x512xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<4x16x64xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<4x16x64xf32>)
  linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : memref<4x16x64x512xf32>) outs(%max : memref<4x16x64xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %a, %m : f32
    linalg.yield %r : f32
  }
  %e = memref.alloc() : memref<4x16x64x512xf32>
  linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %max : memref<4x16x64x512xf32>, memref<4x16x64xf32>) outs(%e : memref<4x16x64x512xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    %r = math.exp %s : f32
    linalg.yield %r : f32
  }
  memref.dealloc %max : memref<4x16x64xf32>
  %sum = memref.alloc() : memref<4x16x64xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<4x16x64xf32>)
  linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : memref<4x16x64x512xf32>) outs(%sum : memref<4x16x64xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  }
  %out = memref.alloc() : memref<4x16x64x512xf32>
  linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %sum : memref<4x16x64x512xf32>, memref<4x16x64xf32>) outs(%out : memref<4x16x64x512xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.divf %a, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %e : memref<4x16x64x512xf32>
  memref.dealloc %sum : memref<4x16x64xf32>
  return %out : memref<4x16x64x512xf32>
}

// -----

// Not fused: a second nest that reads another row of what the first
// wrote (a transpose), one over other rows, one across a GEMM call, and
// two writing function arguments (which may be views of one another).
// CHECK-LABEL: func.func @kept_apart
// CHECK-COUNT-5: scf.parallel
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
func.func private @gemm()
func.func @kept_apart(%x: memref<64x64xf32>, %y: memref<64x64xf32>, %z: memref<32x128xf32>) {
  %a = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%a : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %v : f32
    linalg.yield %r : f32
  }
  %b = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x64xf32>) outs(%b : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  %c = memref.alloc() : memref<32x128xf32>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<32x128xf32>) outs(%c : memref<32x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  call @gemm() : () -> ()
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<64x64xf32>) outs(%x : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<64x64xf32>) outs(%a : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}
