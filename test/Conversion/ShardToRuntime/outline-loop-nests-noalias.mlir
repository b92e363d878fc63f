// tp-outline-loop-nests marks a nest's buffer argument llvm.noalias where,
// at every call, it views an allocation (or a constant global) that no
// other argument of the call views. The step's own arguments are never
// marked: the caller's buffers may overlap.
// RUN: tp-opt %s -split-input-file --tp-outline-loop-nests | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-outline-loop-nests --tp-bare-pointer-calls --convert-to-llvm | FileCheck %s --check-prefix=LLVM

// A copy from the step's argument into a temporary: only the temporary is
// noalias; the constant table read into the second temporary is too. With
// bare pointers (the CPU pipeline), LLVM sees the flag on the pointer.
// CHECK-LABEL: func.func private @step_loop0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @step_loop1(%{{.*}}: memref<8xf32> {llvm.noalias}, %{{.*}}: memref<8xf32> {llvm.noalias}, %{{.*}}: memref<8xf32> {llvm.noalias})
// LLVM-LABEL: llvm.func internal @step_loop0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias})
memref.global "private" constant @table : memref<8xf32> = dense<1.0>
func.func @step(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloc() : memref<8xf32>
  %u = memref.alloc() : memref<8xf32>
  %table = memref.get_global @table : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %t[%i] : memref<8xf32>
    %w = memref.load %table[%i] : memref<8xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %u[%i] : memref<8xf32>
  }
  memref.dealloc %t : memref<8xf32>
  memref.dealloc %u : memref<8xf32>
  return
}

// -----

// Two views of one temporary (a slice read and written back in place):
// neither is noalias; a view of another temporary is.
// CHECK-LABEL: func.func private @views_loop0(%{{.*}}: memref<4xf32, strided<[1], offset: 4>>, %{{.*}}: memref<4xf32, strided<[1]>>, %{{.*}}: memref<4xf32> {llvm.noalias})
func.func @views() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<8xf32>
  %o = memref.alloc() : memref<4xf32>
  %hi = memref.subview %t[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %lo = memref.subview %t[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %hi[%i] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %v, %lo[%i] : memref<4xf32, strided<[1]>>
    memref.store %v, %o[%i] : memref<4xf32>
  }
  memref.dealloc %t : memref<8xf32>
  memref.dealloc %o : memref<4xf32>
  return
}

// -----

// One nest shared by two calls: its argument is a temporary at the first
// call and the step's argument at the second, so it is not noalias.
// CHECK-LABEL: func.func private @shared_loop0(%{{.*}}: memref<8xf32>)
// CHECK-NOT: llvm.noalias
func.func @shared(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %t[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %t[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%i] : memref<8xf32>
  }
  memref.dealloc %t : memref<8xf32>
  return
}
