// tp-outline-loop-nests on a parallel nest (a 1-D scf.parallel, what
// tp-linalg-to-loops makes of a big nest's independent outer loops): an
// OpenMP team of tprt_loop_threads() threads (the rank's share of the
// cores) runs one chunk of the range each, [lo, min(lo + chunk, ub)) with
// chunk = ceil(trip / threads) x step; each chunk is an scf.for that is
// outlined as any nest, with the chunk's bounds as arguments, so its inner
// loop keeps constant bounds and its buffers their noalias. The function
// left is still straight-line code (optnone): the team's region becomes a
// function of its own in LLVM IR, which forks it with __kmpc_fork_call.
// RUN: tp-opt %s --tp-outline-loop-nests | FileCheck %s
// RUN: tp-opt %s --tp-outline-loop-nests --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func private @tprt_loop_threads() -> i64
// CHECK-LABEL: func.func private @scale_loop0(
// CHECK-SAME: %[[IN:.*]]: memref<64x128xf32> {llvm.noalias}, %[[OUT:.*]]: memref<64x128xf32> {llvm.noalias}, %[[LO:.*]]: index, %[[HI:.*]]: index)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %[[HI]] step %[[C1]]
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %[[C128]]
// CHECK-NEXT: memref.load %[[IN]][%[[I]], %[[J]]]
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: attributes {passthrough = ["noinline", "optnone"]}
// CHECK: %[[T:.*]] = call @tprt_loop_threads() : () -> i64
// CHECK: %[[TI:.*]] = arith.index_cast %[[T]] : i64 to index
// CHECK: %[[TRIP:.*]] = arith.ceildivui %{{.*}}, %{{.*}} : index
// CHECK: %[[PER:.*]] = arith.ceildivui %[[TRIP]], %[[TI]] : index
// CHECK: %[[CHUNK:.*]] = arith.muli %[[PER]], %{{.*}} : index
// CHECK: %[[NT:.*]] = arith.trunci %[[T]] : i64 to i32
// CHECK: omp.parallel num_threads(%[[NT]] : i32) {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[CLO:.*]]) : index = (%{{.*}}) to (%[[UB:.*]]) step (%[[CHUNK]]) {
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[CLO]], %[[CHUNK]] : index
// CHECK-NEXT: %[[CHI:.*]] = arith.minsi %[[END]], %[[UB]] : index
// CHECK-NEXT: func.call @scale_loop0(%{{.*}}, %{{.*}}, %[[CLO]], %[[CHI]])
// CHECK-NEXT: omp.yield
// CHECK-NOT: scf.parallel

// LLVM: call void {{.*}}@__kmpc_fork_call(
// LLVM: call void @__kmpc_for_static_init_8u(
// LLVM: call void @scale_loop0(
func.func @scale(%in: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %two = arith.constant 2.0 : f32
  %out = memref.alloc() : memref<64x128xf32>
  %tmp = memref.alloc() : memref<64x128xf32>
  memref.copy %in, %tmp : memref<64x128xf32> to memref<64x128xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %j = %c0 to %c128 step %c1 {
      %v = memref.load %tmp[%i, %j] : memref<64x128xf32>
      %w = arith.mulf %v, %two : f32
      memref.store %w, %out[%i, %j] : memref<64x128xf32>
    }
    scf.reduce
  }
  memref.dealloc %tmp : memref<64x128xf32>
  memref.dealloc %out : memref<64x128xf32>
  return
}
