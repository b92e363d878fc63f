// tp-plan-peak-memory: the most bytes of a step's allocations live at once,
// walked in program order as the IR stands (each rounded up to 64 bytes,
// the runtime allocator's granule), recorded as tp.peak_temporary_bytes.
// RUN: tp-opt %s -split-input-file --tp-plan-peak-memory | FileCheck %s

// Two loops merged by tp-fuse-parallel-loops: the buffer the second loop
// wrote was allocated between them, and now before the merged loop, and
// the first loop's buffer, freed between them, after it: both are live
// at once (256 + 128 bytes), where the unfused order held one at a time.
// CHECK: module attributes {tp.peak_temporary_bytes = 384 : i64}
// CHECK-LABEL: func.func @fused
func.func @fused(%out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %a = memref.alloc() : memref<64xf32>
  %b = memref.alloc() : memref<32xf32>
  scf.for %i = %c0 to %c32 step %c1 {
    %v = memref.load %out[%i] : memref<32xf32>
    memref.store %v, %a[%i] : memref<64xf32>
    %w = memref.load %a[%i] : memref<64xf32>
    memref.store %w, %b[%i] : memref<32xf32>
  }
  memref.dealloc %a : memref<64xf32>
  memref.copy %b, %out : memref<32xf32> to memref<32xf32>
  memref.dealloc %b : memref<32xf32>
  return
}

// -----

// A layer's function (tp-outline-repeated-layers) adds its own peak at its
// call (64 bytes on the caller's 64), and frees the argument it deallocates
// once it returns: the caller's next buffer (128 bytes) then stands alone;
// the peak at each such call is recorded too (a pipeline stage's, for
// --report).
// CALLS: module attributes {tp.peak_bytes_at_calls = {layer = 128 : i64}, tp.peak_temporary_bytes = 128 : i64}
// RUN: tp-opt %s -split-input-file --tp-plan-peak-memory | FileCheck %s --check-prefix=CALLS
func.func private @layer(%x: memref<16xf32>) {
  %t = memref.alloc() : memref<16xf32>
  memref.copy %x, %t : memref<16xf32> to memref<16xf32>
  memref.dealloc %t : memref<16xf32>
  memref.dealloc %x : memref<16xf32>
  return
}
func.func @step(%out: memref<32xf32>) {
  %x = memref.alloc() : memref<16xf32>
  call @layer(%x) : (memref<16xf32>) -> ()
  %y = memref.alloc() : memref<32xf32>
  memref.copy %y, %out : memref<32xf32> to memref<32xf32>
  memref.dealloc %y : memref<32xf32>
  return
}
