// tp-bare-pointer-calls: a private function that only calls use, whose
// buffers all have static shapes, strides and offsets, is marked
// llvm.bareptr; convert-to-llvm then passes each buffer as one pointer
// instead of its descriptor's 5 + 2 x rank scalars, at the function and at
// each call.
// RUN: tp-opt %s -split-input-file --tp-bare-pointer-calls | FileCheck %s
// The lowering a program's pipeline gives them (allocations through
// aligned_alloc, whose pointer is the descriptor's allocated and aligned
// one: a callee frees what the pointer it was given points to).
// RUN: tp-opt %s -split-input-file --tp-bare-pointer-calls \
// RUN:   --finalize-memref-to-llvm="use-generic-functions use-aligned-alloc" \
// RUN:   --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func private @layer
// CHECK-SAME: attributes {llvm.bareptr}
// CHECK-LABEL: func.func @step
// CHECK-NOT: llvm.bareptr
// The callee's descriptor of %act holds the pointer as its allocated
// pointer, which the dealloc frees; the caller's allocation has one
// pointer for both.
// LLVM-LABEL: llvm.func @layer(
// LLVM-SAME: %[[ACT:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr)
// LLVM: %[[D:.*]] = llvm.insertvalue %[[ACT]], %{{.*}}[0]
// LLVM-NEXT: llvm.insertvalue %[[ACT]], %[[D]][1]
// LLVM: llvm.call @_mlir_memref_to_llvm_free(
// LLVM-LABEL: llvm.func @step(
// LLVM: %[[A:.*]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// LLVM: %[[AD:.*]] = llvm.insertvalue %[[A]], %{{.*}}[0]
// LLVM-NEXT: llvm.insertvalue %[[A]], %[[AD]][1]
// LLVM: llvm.call @layer(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
func.func private @layer(%act: memref<4x4xf32>, %out: memref<4x4xf32>) {
  memref.copy %act, %out : memref<4x4xf32> to memref<4x4xf32>
  memref.dealloc %act : memref<4x4xf32>
  return
}
func.func @step(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<4x4xf32>
  memref.copy %x, %a : memref<4x4xf32> to memref<4x4xf32>
  call @layer(%a, %y) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  return
}

// -----

// A view with a static offset and strides is carried by its base's
// aligned pointer; the callee adds the offset its type says.
// CHECK-LABEL: func.func private @row
// CHECK-SAME: attributes {llvm.bareptr}
// LLVM-LABEL: llvm.func @row(
// LLVM-SAME: %{{.*}}: !llvm.ptr)
// LLVM-LABEL: llvm.func @rows(
// LLVM: llvm.call @row(%{{.*}}) : (!llvm.ptr) -> ()
func.func private @row(%r: memref<4xf32, strided<[1], offset: 4>>) {
  return
}
func.func @rows(%m: memref<2x4xf32>) {
  %r = memref.subview %m[1, 0] [1, 4] [1, 1]
      : memref<2x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  call @row(%r) : (memref<4xf32, strided<[1], offset: 4>>) -> ()
  return
}

// -----

// Kept as descriptors: a dynamic shape, a dynamic offset, a function whose
// address is taken, an external declaration. (The public step takes its
// buffers from the runtime as descriptors.)
// CHECK-LABEL: func.func private @dynamic_shape
// CHECK-NOT: llvm.bareptr
// CHECK-LABEL: func.func private @dynamic_offset
// CHECK-NOT: llvm.bareptr
// CHECK-LABEL: func.func private @address_taken
// CHECK-NOT: llvm.bareptr
// CHECK-LABEL: func.func private @external
// CHECK-NOT: llvm.bareptr
// CHECK-LABEL: func.func @caller
// LLVM-LABEL: llvm.func @dynamic_shape(
// LLVM-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
func.func private @dynamic_shape(%m: memref<?xf32>) {
  return
}
func.func private @dynamic_offset(%m: memref<4xf32, strided<[1], offset: ?>>) {
  return
}
func.func private @address_taken(%m: memref<4xf32>) {
  return
}
func.func private @external(%m: memref<4xf32>)
func.func @caller(%d: memref<?xf32>, %o: memref<4xf32, strided<[1], offset: ?>>,
                  %m: memref<4xf32>) {
  call @dynamic_shape(%d) : (memref<?xf32>) -> ()
  call @dynamic_offset(%o) : (memref<4xf32, strided<[1], offset: ?>>) -> ()
  %f = func.constant @address_taken : (memref<4xf32>) -> ()
  call_indirect %f(%m) : (memref<4xf32>) -> ()
  call @external(%m) : (memref<4xf32>) -> ()
  return
}
