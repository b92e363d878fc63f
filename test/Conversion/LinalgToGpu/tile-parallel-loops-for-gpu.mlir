// tp-tile-parallel-loops-for-gpu: every outermost scf.parallel is collapsed
// to one dim and tiled by the block size with an in-bounds guard, so that
// gpu-map-parallel-loops gives each kernel `block-size` threads per block.
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-tile-parallel-loops-for-gpu{block-size=128}))' | FileCheck %s
// RUN: tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-tile-parallel-loops-for-gpu,gpu-map-parallel-loops,convert-parallel-loops-to-gpu,canonicalize))' | FileCheck %s --check-prefix=LAUNCH
// RUN: not tp-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(tp-tile-parallel-loops-for-gpu{block-size=2048}))' 2>&1 | FileCheck %s --check-prefix=BAD

// An 8x100 loop: 800 (8 * 100) elements in tiles of 128, the last one
// guarded; the 2-D index comes back by rem/div.
// CHECK-LABEL: func.func @two_dims
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %{{.*}}100{{.*}} : index
// CHECK: arith.constant 128 : index
// CHECK: %[[STEP:.*]] = arith.muli
// CHECK: scf.parallel (%[[TILE:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[STEP]])
// CHECK: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[STEP]])
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK: scf.if
// CHECK: arith.remsi
// CHECK: arith.divsi
// CHECK: memref.store
// With the default 256 threads: 4 blocks.
// LAUNCH-LABEL: func.func @two_dims
// LAUNCH: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1)
// BAD: error: tp-tile-parallel-loops-for-gpu: block-size 2048 is not in 1..1024 (CUDA's threads per block)
func.func @two_dims(%out: memref<8x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c100) step (%c1, %c1) {
    memref.store %one, %out[%i, %j] : memref<8x100xf32>
  }
  return
}

// -----

// An scf.for inside stays inside: one thread runs it for its element.
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// LAUNCH-LABEL: func.func @nested
// LAUNCH: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// LAUNCH: scf.for
func.func @nested(%out: memref<300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c300 = arith.constant 300 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c300) step (%c1) {
    scf.for %k = %c0 to %c4 step %c1 {
      memref.store %one, %out[%i] : memref<300xf32>
    }
  }
  return
}
