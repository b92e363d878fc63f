// tp-lower-matmul-to-blas: f32 matmuls on contiguous buffers call the
// runtime's OpenBLAS GEMM (C += A B); others stay for the loop lowering.
// RUN: tp-opt %s -split-input-file --tp-lower-matmul-to-blas | FileCheck %s

// CHECK: func.func private @tprt_sgemm(i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @gemm
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[AI:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK: %[[M:.*]] = arith.constant 8 : i64
// CHECK: %[[N:.*]] = arith.constant 256 : i64
// CHECK: %[[K:.*]] = arith.constant 64 : i64
// CHECK: call @tprt_sgemm(%[[AI]], %{{.*}}, %{{.*}}, %[[M]], %[[N]], %[[K]])
// CHECK-NOT: linalg.matmul
func.func @gemm(%a: memref<8x64xf32>, %b: memref<64x256xf32>, %c: memref<8x256xf32>) {
  linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x256xf32>) outs(%c : memref<8x256xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @batched
// CHECK: call @tprt_sgemm_batched(%{{.*}}, %{{.*}}, %{{.*}}, %c16_i64, %c16_i64_{{.*}}, %c8_i64, %c16_i64_{{.*}})
func.func @batched(%a: memref<16x16x16xf32>, %b: memref<16x16x8xf32>, %c: memref<16x16x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<16x16x16xf32>, memref<16x16x8xf32>) outs(%c : memref<16x16x8xf32>)
  return
}

// -----

// Integer matmuls and strided views are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<2x3xi32>, memref<3x4xi32>)
// CHECK: linalg.matmul ins(%{{.*}}, %arg3 : memref<2x3xf32, strided<[6, 1]>>, memref<3x4xf32>)
// CHECK-NOT: call
func.func @left_alone(%a: memref<2x3xi32>, %b: memref<3x4xi32>, %c: memref<2x4xi32>, %d: memref<3x4xf32>, %e: memref<2x4xf32>, %big: memref<2x6xf32>) {
  linalg.matmul ins(%a, %b : memref<2x3xi32>, memref<3x4xi32>) outs(%c : memref<2x4xi32>)
  %v = memref.subview %big[0, 0] [2, 3] [1, 1] : memref<2x6xf32> to memref<2x3xf32, strided<[6, 1]>>
  linalg.matmul ins(%v, %d : memref<2x3xf32, strided<[6, 1]>>, memref<3x4xf32>) outs(%e : memref<2x4xf32>)
  return
}
