// tp-free-after-last-use: buffer-deallocation-pipeline frees a block's
// buffers at its end; each dealloc moves to just after the last use of the
// buffer or of a view of it; tp-plan-peak-memory then records the peak of
// temporary bytes (each buffer as the runtime's allocator is asked for it:
// its bytes rounded up to its alignment, as aligned_alloc is called, and
// to the allocator's 64 bytes).
// RUN: tp-opt %s -split-input-file --tp-free-after-last-use --tp-plan-peak-memory | FileCheck %s

// A chain: each buffer is freed once the next one is written, so at most
// two are alive at once instead of three: 64 + 64 bytes. The last
// one, copied to the result last, is the result's own buffer
// (result-copies-to-out-params.mlir).
// CHECK: module attributes {tp.peak_temporary_bytes = 128 : i64}
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%{{.*}}: memref<16xf32>, %[[OUT:.*]]: memref<16xf32>)
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: memref.copy %{{.*}}, %[[A]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.copy %[[B]], %[[OUT]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @chain(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %a, %b : memref<16xf32> to memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  memref.copy %b, %c : memref<16xf32> to memref<16xf32>
  memref.copy %c, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<16xf32>
  return
}

// -----

// A view's uses count (the reshape of %a is read last), so do uses inside
// a loop (the dealloc follows the loop).
// CHECK-LABEL: func.func @views_and_loops
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK: scf.for
// CHECK: memref.load %[[B]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: memref.copy %[[V]], %{{.*}}
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @views_and_loops(%in: memref<4x4xf32>, %out: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %a = memref.alloc() : memref<4x4xf32>
  memref.copy %in, %a : memref<4x4xf32> to memref<4x4xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %v, %b : memref<16xf32> to memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %b[%i] : memref<16xf32>
    memref.store %x, %out[%i] : memref<16xf32>
  }
  memref.copy %v, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// A buffer that flows into an op that may return it (a select) keeps its
// dealloc where the deallocation pipeline put it.
// CHECK-LABEL: func.func @may_alias
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: arith.select
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @may_alias(%in: memref<16xf32>, %out: memref<16xf32>, %p: i1) {
  %a = memref.alloc() : memref<16xf32>
  %s = arith.select %p, %a, %in : memref<16xf32>
  memref.copy %s, %out : memref<16xf32> to memref<16xf32>
  memref.copy %in, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

// The buffer's address, taken for a runtime call (how a collective reads
// its buffer), is in use until the call.
// CHECK-LABEL: func.func @address_taken
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: call @consume
// CHECK-NEXT: memref.dealloc %[[A]]
func.func private @consume(i64)
func.func @address_taken(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index
  %i = arith.index_cast %p : index to i64
  memref.copy %in, %out : memref<16xf32> to memref<16xf32>
  call @consume(%i) : (i64) -> ()
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

// A pipeline's dispatch (tp-split-stages): the step's peak while it calls
// each stage's function, the caller's live buffers plus the callee's own
// peak, for --report's per-stage figure.
// CHECK: module attributes {tp.peak_bytes_at_calls = {stage0 = 192 : i64, stage1 = 128 : i64}, tp.peak_temporary_bytes = 192 : i64}
// CHECK-LABEL: func.func @dispatch
func.func private @stage0(%in: memref<16xf32>) {
  %a = memref.alloc() : memref<32xf32>
  memref.copy %in, %in : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<32xf32>
  return
}
func.func private @stage1(%in: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  return
}
func.func @dispatch(%in: memref<16xf32>, %stage: index) {
  %b = memref.alloc() : memref<16xf32>
  memref.copy %in, %b : memref<16xf32> to memref<16xf32>
  scf.index_switch %stage
  case 0 {
    func.call @stage0(%b) : (memref<16xf32>) -> ()
    scf.yield
  }
  default {
    func.call @stage1(%b) : (memref<16xf32>) -> ()
    scf.yield
  }
  memref.dealloc %b : memref<16xf32>
  return
}
