// tp-free-after-last-use: a public function's buffer whose last use is its
// copy into an output parameter (buffer-results-to-out-params copies a
// result that a call wrote, as a layer's weight gradient) becomes that
// parameter, so the step does not hold both to its end.
// RUN: tp-opt %s -split-input-file --tp-free-after-last-use --tp-plan-peak-memory | FileCheck %s

// The call writes the gradient into the step's output parameter; the copy,
// the buffer and its dealloc are gone, and no temporary bytes remain.
// CHECK: module attributes {{.*}}tp.peak_temporary_bytes = 0 : i64}
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>, %[[GRAD:.*]]: memref<16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: call @layer_backward(%[[X]], %[[GRAD]])
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func private @layer_backward(%x: memref<16xf32>, %g: memref<16xf32>) {
  memref.copy %x, %g : memref<16xf32> to memref<16xf32>
  return
}
func.func @step(%x: memref<16xf32>, %grad: memref<16xf32>) {
  %g = memref.alloc() : memref<16xf32>
  call @layer_backward(%x, %g) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.copy %g, %grad : memref<16xf32> to memref<16xf32>
  memref.dealloc %g : memref<16xf32>
  return
}

// -----

// The buffer is read after the copy: it stays a buffer of its own.
// CHECK-LABEL: func.func @read_after
// CHECK: %[[G:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.copy %[[G]], %{{.*}}
// CHECK-NEXT: call @consume(%[[G]])
// CHECK-NEXT: memref.dealloc %[[G]]
func.func private @consume(memref<16xf32>)
func.func @read_after(%x: memref<16xf32>, %out: memref<16xf32>) {
  %g = memref.alloc() : memref<16xf32>
  memref.copy %x, %g : memref<16xf32> to memref<16xf32>
  memref.copy %g, %out : memref<16xf32> to memref<16xf32>
  call @consume(%g) : (memref<16xf32>) -> ()
  memref.dealloc %g : memref<16xf32>
  return
}

// -----

// The output parameter is written elsewhere too: the buffer must not take
// its place (the other write would land in it).
// CHECK-LABEL: func.func @out_written_twice
// CHECK: %[[G:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.copy %[[G]], %[[OUT:.*]] :
// CHECK-NEXT: memref.dealloc %[[G]]
func.func @out_written_twice(%x: memref<16xf32>, %out: memref<16xf32>) {
  %g = memref.alloc() : memref<16xf32>
  memref.copy %x, %out : memref<16xf32> to memref<16xf32>
  memref.copy %x, %g : memref<16xf32> to memref<16xf32>
  memref.copy %g, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %g : memref<16xf32>
  return
}

// -----

// A private function's parameters are its callers' buffers, not the
// step's results: left as it is.
// CHECK-LABEL: func.func private @helper
// CHECK: %[[G:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.copy %[[G]], %{{.*}}
// CHECK-NEXT: memref.dealloc %[[G]]
func.func private @helper(%x: memref<16xf32>, %out: memref<16xf32>) {
  %g = memref.alloc() : memref<16xf32>
  memref.copy %x, %g : memref<16xf32> to memref<16xf32>
  memref.copy %g, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %g : memref<16xf32>
  return
}
