// tp-free-after-last-use: where every call of a private function passes,
// at one argument, the caller's own buffer that the caller frees right
// after the call, the callee frees that argument after its last use there
// (a layer's backward function drops each activation its forward kept once
// it has read it). The planned peak counts the bytes as freed there.
// RUN: tp-opt %s -split-input-file --tp-free-after-last-use --tp-plan-peak-memory | FileCheck %s

// Two calls, each with its own activation: the callee frees it after its
// first op, before it allocates 256 bytes. The step holds %a1 (64 bytes)
// during the first call, whose peak is then 256 on top of the 64-byte
// activation less its own freed 64: 64 + 64 + 256 - 64 = 320 at most.
// Without the callee's dealloc the step would hold %a0 and %a1 with the
// callee's 256 bytes: 384.
// CHECK: module attributes {{.*}}tp.peak_temporary_bytes = 320 : i64}
// CHECK-LABEL: func.func private @layer_backward
// CHECK-SAME: (%[[ACT:.*]]: memref<16xf32>, %[[GRAD:.*]]: memref<16xf32>)
// CHECK-NEXT: memref.copy %[[ACT]], %[[GRAD]]
// CHECK-NEXT: memref.dealloc %[[ACT]]
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<64xf32>
// CHECK-LABEL: func.func @step
// CHECK: %[[A0:.*]] = memref.alloc() : memref<16xf32>
// CHECK: %[[A1:.*]] = memref.alloc() : memref<16xf32>
// CHECK: call @layer_backward(%[[A1]],
// CHECK-NEXT: call @layer_backward(%[[A0]],
// CHECK-NOT: memref.dealloc %[[A0]]
// CHECK-NOT: memref.dealloc %[[A1]]
// CHECK: return
func.func private @layer_backward(%act: memref<16xf32>, %grad: memref<16xf32>) {
  memref.copy %act, %grad : memref<16xf32> to memref<16xf32>
  %t = memref.alloc() : memref<64xf32>
  memref.dealloc %t : memref<64xf32>
  return
}
func.func @step(%x: memref<16xf32>, %g0: memref<16xf32>, %g1: memref<16xf32>) {
  %a0 = memref.alloc() : memref<16xf32>
  memref.copy %x, %a0 : memref<16xf32> to memref<16xf32>
  %a1 = memref.alloc() : memref<16xf32>
  memref.copy %a0, %a1 : memref<16xf32> to memref<16xf32>
  call @layer_backward(%a1, %g1) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %a1 : memref<16xf32>
  call @layer_backward(%a0, %g0) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %a0 : memref<16xf32>
  return
}

// -----

// One caller reads its buffer after the call: no call site gives the
// buffer up, so the callee frees nothing and the callers keep their
// deallocs.
// CHECK-LABEL: func.func private @layer
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK-LABEL: func.func @read_after_call
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK: call @layer(%[[A]],
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK: call @layer(%[[B]],
// CHECK-NEXT: memref.copy %[[B]],
// CHECK-NEXT: memref.dealloc %[[B]]
func.func private @layer(%act: memref<16xf32>, %out: memref<16xf32>) {
  memref.copy %act, %out : memref<16xf32> to memref<16xf32>
  return
}
func.func @read_after_call(%x: memref<16xf32>, %y0: memref<16xf32>, %y1: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  call @layer(%a, %y0) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  memref.copy %x, %b : memref<16xf32> to memref<16xf32>
  call @layer(%b, %y1) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.copy %b, %x : memref<16xf32> to memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

// The caller passes its step's argument, not a buffer of its own: nothing
// to free.
// CHECK-LABEL: func.func private @reads_argument
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func private @reads_argument(%act: memref<16xf32>, %out: memref<16xf32>) {
  memref.copy %act, %out : memref<16xf32> to memref<16xf32>
  return
}
func.func @passes_argument(%x: memref<16xf32>, %y: memref<16xf32>) {
  call @reads_argument(%x, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  return
}
