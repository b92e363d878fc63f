// tp-linalg-to-loops: linalg ops on buffers become scf.for loop nests, as
// upstream's convert-linalg-to-loops makes them; every other op is left
// as it is (no region simplification, no folding of ops it did not make),
// but for copies between strided views, which become loop nests too.
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-linalg-to-loops))' | FileCheck %s

// An elementwise op over a 4x8 buffer: a two-loop nest that loads both
// operands at the same index and stores the sum.
// CHECK-LABEL: func.func @add
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C4]]
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %[[C8]]
// CHECK-NEXT: %[[A:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT: %[[B:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[B]]
// CHECK-NEXT: memref.store %[[S]], %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT: linalg.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @add(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction over a dynamic dimension: the bound is the buffer's
// memref.dim. Ops that are not linalg's stay, even where a canonicalizer
// would fold them (the unused constant, the copy of a buffer into itself).
// CHECK-LABEL: func.func @sum
// CHECK: %[[UNUSED:.*]] = arith.constant 7 : index
// CHECK: memref.copy %[[IN:.*]], %[[IN]]
// CHECK: %[[N:.*]] = memref.dim %[[IN]], %{{.*}}
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]]
// CHECK: memref.load %[[IN]][%[[I]]]
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: memref.store
// CHECK-NOT: linalg.
func.func @sum(%in: memref<?xf32>, %out: memref<f32>) {
  %unused = arith.constant 7 : index
  memref.copy %in, %in : memref<?xf32> to memref<?xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%in : memref<?xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A copy into a strided view (a slice of a bigger buffer, as a gradient
// with zeros between its elements is written) becomes a loop nest of its
// own; a copy between contiguous buffers stays a memref.copy (a memcpy).
// CHECK-LABEL: func.func @strided_copy
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: scf.for %[[J:.*]] =
// CHECK-NEXT: %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<4x4xf32>
// CHECK-NEXT: memref.store %[[V]], %[[VIEW]][%[[I]], %[[J]]] : memref<4x4xf32, strided<[16, 2]>>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<8x8xf32> to memref<8x8xf32>
// CHECK-NOT: linalg.
func.func @strided_copy(%in: memref<4x4xf32>, %wide: memref<8x8xf32>, %same: memref<8x8xf32>) {
  %view = memref.subview %wide[0, 0] [4, 4] [2, 2] : memref<8x8xf32> to memref<4x4xf32, strided<[16, 2]>>
  memref.copy %in, %view : memref<4x4xf32> to memref<4x4xf32, strided<[16, 2]>>
  memref.copy %wide, %same : memref<8x8xf32> to memref<8x8xf32>
  return
}

// -----

// Parallel nests, with the threshold lowered to 64 iterations (default
// 32768): the fewest leading parallel loops that make 16 iterations, never
// the innermost of several, become one scf.parallel over their linearized
// range (delinearized once per iteration); tp-outline-loop-nests splits it
// among threads. A reduction's loop never does (col_sums: its first loop
// adds into every output); a 1-D op's only loop does (the chunk is then
// its contiguous run); a nest under the threshold stays serial (small), as
// every nest does with the default threshold (the CHECK run above).
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-linalg-to-loops{min-parallel-iterations=64}))' | FileCheck %s --check-prefix=PAR
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-linalg-to-loops{min-parallel-iterations=0}))' | FileCheck %s --check-prefix=SERIAL
// SERIAL-NOT: scf.parallel

// PAR-LABEL: func.func @rows
// PAR-DAG: %[[C16:.*]] = arith.constant 16 : index
// PAR-DAG: %[[C32:.*]] = arith.constant 32 : index
// PAR: scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%[[C32]]) step (%{{.*}}) {
// PAR-NEXT: %[[IJ:.*]]:2 = affine.delinearize_index %[[P]] into (4, 8)
// PAR-NEXT: scf.for %[[K:.*]] = %{{.*}} to %[[C16]]
// PAR-NEXT: memref.load %{{.*}}[%[[IJ]]#0, %[[IJ]]#1, %[[K]]]
// PAR: scf.reduce
// A row's sum is carried in a register (iter_args: loaded before the row,
// stored after it) and may be reassociated: LLVM sums it in vector lanes.
// PAR-LABEL: func.func @row_sums
// PAR: scf.parallel (%[[R:.*]]) = (%{{.*}}) to (%{{.*}}) step
// PAR-NEXT: %[[INIT:.*]] = memref.load %[[OUT:.*]][%[[R]]]
// PAR-NEXT: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// PAR-NEXT: %[[X:.*]] = memref.load
// PAR-NEXT: %[[NEXT:.*]] = arith.addf %[[X]], %[[ACC]] fastmath<reassoc> : f32
// PAR-NEXT: scf.yield %[[NEXT]]
// PAR: memref.store %[[SUM]], %[[OUT]][%[[R]]]
// PAR-LABEL: func.func @col_sums
// PAR-NOT: scf.parallel
// PAR: scf.for
// PAR-LABEL: func.func @vector
// PAR: scf.parallel (%[[V:.*]]) = (%{{.*}}) to (%{{.*}}) step
// PAR-NEXT: memref.load %{{.*}}[%[[V]]]
// PAR-LABEL: func.func @small
// PAR-NOT: scf.parallel
// PAR: scf.for
// PAR-NOT: scf.parallel
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @rows(%a: memref<4x8x16xf32>, %out: memref<4x8x16xf32>) {
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<4x8x16xf32>) outs(%out : memref<4x8x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  return
}
func.func @row_sums(%a: memref<32x64xf32>, %out: memref<32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<32x64xf32>) outs(%out : memref<32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @col_sums(%a: memref<32x64xf32>, %out: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<32x64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @vector(%a: memref<128xf32>, %out: memref<128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : memref<128xf32>) outs(%out : memref<128xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  return
}
func.func @small(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  return
}
