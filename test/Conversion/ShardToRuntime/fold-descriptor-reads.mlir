// tp-fold-descriptor-reads: an extractvalue of a field an insertvalue chain
// wrote reads the inserted value; what is left unused is erased.
// RUN: tp-opt %s -split-input-file --tp-fold-descriptor-reads | FileCheck %s

!desc = !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>

// An allocation's descriptor read for its two pointers only (a bare-pointer
// call and the free): the chain, its poison and its constants go.
// CHECK-LABEL: llvm.func @pointers_only
// CHECK: %[[P:.*]] = llvm.call @aligned_alloc
// CHECK-NEXT: llvm.call @layer(%[[P]])
// CHECK-NEXT: llvm.call @free(%[[P]])
// CHECK-NEXT: llvm.return
llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @layer(!llvm.ptr)
llvm.func @pointers_only() {
  %align = llvm.mlir.constant(64 : index) : i64
  %size = llvm.mlir.constant(1024 : index) : i64
  %p = llvm.call @aligned_alloc(%align, %size) : (i64, i64) -> !llvm.ptr
  %c0 = llvm.mlir.constant(0 : index) : i64
  %c1 = llvm.mlir.constant(1 : index) : i64
  %c16 = llvm.mlir.constant(16 : index) : i64
  %0 = llvm.mlir.poison : !desc
  %1 = llvm.insertvalue %p, %0[0] : !desc
  %2 = llvm.insertvalue %p, %1[1] : !desc
  %3 = llvm.insertvalue %c0, %2[2] : !desc
  %4 = llvm.insertvalue %c16, %3[3, 0] : !desc
  %5 = llvm.insertvalue %c16, %4[3, 1] : !desc
  %6 = llvm.insertvalue %c16, %5[4, 0] : !desc
  %7 = llvm.insertvalue %c1, %6[4, 1] : !desc
  %aligned = llvm.extractvalue %7[1] : !desc
  llvm.call @layer(%aligned) : (!llvm.ptr) -> ()
  %allocated = llvm.extractvalue %7[0] : !desc
  llvm.call @free(%allocated) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

!desc = !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>

// Fields the chain did not write exactly stay extracted: one of a loaded
// descriptor, one under an array the chain wrote whole. A descriptor that
// is passed on whole keeps its chain.
// CHECK-LABEL: llvm.func @kept
// CHECK: %[[D:.*]] = llvm.load
// CHECK: %[[W:.*]] = llvm.insertvalue %{{.*}}, %[[D]][1]
// CHECK: %[[A:.*]] = llvm.insertvalue %{{.*}}, %[[W]][3]
// CHECK: llvm.extractvalue %[[A]][2]
// CHECK: llvm.extractvalue %[[A]][3, 0]
// CHECK: llvm.call @use_desc(%[[A]])
llvm.func @use_i64(i64)
llvm.func @use_desc(!desc)
llvm.func @kept(%slot: !llvm.ptr, %p: !llvm.ptr, %sizes: !llvm.array<2 x i64>) {
  %d = llvm.load %slot : !llvm.ptr -> !desc
  %w = llvm.insertvalue %p, %d[1] : !desc
  %a = llvm.insertvalue %sizes, %w[3] : !desc
  %offset = llvm.extractvalue %a[2] : !desc
  llvm.call @use_i64(%offset) : (i64) -> ()
  %size0 = llvm.extractvalue %a[3, 0] : !desc
  llvm.call @use_i64(%size0) : (i64) -> ()
  llvm.call @use_desc(%a) : (!desc) -> ()
  llvm.return
}
