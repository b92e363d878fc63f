// tp-lower-matmul-to-blas: f32 matmuls on contiguous buffers call the
// runtime's OpenBLAS GEMM (C += A B, or C = A B into a buffer zero-filled
// before it: A, B, C, [batch,] M, N, K, which operands are stored transposed
// and whether C is overwritten); others stay for the loop lowering. With
// target=cuda, f32, f16 and bf16 matmuls call cuBLAS (tprt_cuda_gemm: A, B,
// C, batch, M, N, K, dtype code, transposed operands).
// RUN: tp-opt %s -split-input-file --tp-lower-matmul-to-blas | FileCheck %s
// RUN: tp-opt %s -split-input-file --tp-lower-matmul-to-blas=target=cuda | FileCheck %s --check-prefix=CUDA
// RUN: not tp-opt %s -split-input-file --tp-lower-matmul-to-blas=target=tpu 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: tp-lower-matmul-to-blas: unknown target 'tpu' (cpu or cuda)

// CHECK: func.func private @tprt_sgemm(i64, i64, i64, i64, i64, i64, i32)
// CHECK-LABEL: func.func @gemm
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[AI:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK: %[[M:.*]] = arith.constant 8 : i64
// CHECK: %[[N:.*]] = arith.constant 256 : i64
// CHECK: %[[K:.*]] = arith.constant 64 : i64
// CHECK: call @tprt_sgemm(%[[AI]], %{{.*}}, %{{.*}}, %[[M]], %[[N]], %[[K]], %c0_i32)
// CHECK-NOT: linalg.matmul
// CUDA: func.func private @tprt_cuda_gemm(i64, i64, i64, i64, i64, i64, i64, i32, i32)
// CUDA-LABEL: func.func @gemm
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c8_i64, %c256_i64, %c64_i64, %c0_i32, %c0_i32{{.*}})
// CUDA-NOT: linalg.matmul
func.func @gemm(%a: memref<8x64xf32>, %b: memref<64x256xf32>, %c: memref<8x256xf32>) {
  linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x256xf32>) outs(%c : memref<8x256xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @batched
// CHECK: call @tprt_sgemm_batched(%{{.*}}, %{{.*}}, %{{.*}}, %c16_i64, %c16_i64_{{.*}}, %c8_i64, %c16_i64_{{.*}}, %c0_i32)
// CUDA-LABEL: func.func @batched
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c16_i64, %c16_i64_{{.*}}, %c8_i64, %c16_i64_{{.*}}, %c0_i32, %c0_i32{{.*}})
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

// -----

// f16 and bf16 (dtype codes 1 and 2) go to cuBLAS on the GPU only.
// CHECK-LABEL: func.func @half
// CHECK-COUNT-2: linalg.matmul
// CUDA-LABEL: func.func @half
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c2_i64, %c4_i64, %c3_i64, %c1_i32, %c0_i32)
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c2_i64{{.*}}, %c4_i64{{.*}}, %c3_i64{{.*}}, %c2_i32, %c0_i32{{.*}})
// CUDA-NOT: linalg.matmul
func.func @half(%a: memref<2x3xf16>, %b: memref<3x4xf16>, %c: memref<2x4xf16>, %d: memref<2x3xbf16>, %e: memref<3x4xbf16>, %f: memref<2x4xbf16>) {
  linalg.matmul ins(%a, %b : memref<2x3xf16>, memref<3x4xf16>) outs(%c : memref<2x4xf16>)
  linalg.matmul ins(%d, %e : memref<2x3xbf16>, memref<3x4xbf16>) outs(%f : memref<2x4xbf16>)
  return
}

// -----

// Mixed precision (tp-autocast): bf16 operands summed into an f32 product
// call tprt_gemm_bf16 on the CPU (oneDNN; always with a batch count) and
// tprt_cuda_gemm with the operands' dtype and TPRT_F32_PRODUCT = 8 (plus
// TPRT_TRANS_B = 2 for the transposed B). f16 into f32 has no CPU GEMM.
// CHECK: func.func private @tprt_gemm_bf16(i64, i64, i64, i64, i64, i64, i64, i32)
// CHECK-LABEL: func.func @mixed
// CHECK: call @tprt_gemm_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c2_i64, %c4_i64, %c3_i64, %c8_i32)
// CHECK: call @tprt_gemm_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %c5_i64, %c2_i64{{.*}}, %c4_i64{{.*}}, %c3_i64{{.*}}, %c10_i32)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x3xf16>, memref<3x4xf16>)
// CUDA-LABEL: func.func @mixed
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c2_i64, %c4_i64, %c3_i64, %c2_i32, %c8_i32)
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c5_i64, %c2_i64{{.*}}, %c4_i64{{.*}}, %c3_i64{{.*}}, %c2_i32{{.*}}, %c10_i32)
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c2_i64{{.*}}, %c4_i64{{.*}}, %c3_i64{{.*}}, %c1_i32, %c8_i32{{.*}})
// CUDA-NOT: linalg.matmul
func.func @mixed(%a: memref<2x3xbf16>, %b: memref<3x4xbf16>, %c: memref<2x4xf32>,
                 %ba: memref<5x2x3xbf16>, %bt: memref<5x4x3xbf16>, %bc: memref<5x2x4xf32>,
                 %h: memref<2x3xf16>, %hb: memref<3x4xf16>) {
  linalg.matmul ins(%a, %b : memref<2x3xbf16>, memref<3x4xbf16>) outs(%c : memref<2x4xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%ba, %bt : memref<5x2x3xbf16>, memref<5x4x3xbf16>) outs(%bc : memref<5x2x4xf32>)
  linalg.matmul ins(%h, %hb : memref<2x3xf16>, memref<3x4xf16>) outs(%c : memref<2x4xf32>)
  return
}

// -----

// Operands read transposed (tp-lower-to-linalg's fold of a transpose into the
// GEMM): A as [K, M] is TPRT_TRANS_A = 1 and K comes from its first dim; B as
// [N, K] is TPRT_TRANS_B = 2; both are 3.
// CHECK-LABEL: func.func @transposed
// CHECK: call @tprt_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %c8_i64, %c256_i64, %c64_i64, %c1_i32)
// CHECK: call @tprt_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %c8_i64{{.*}}, %c256_i64{{.*}}, %c64_i64{{.*}}, %c2_i32)
// CHECK: call @tprt_sgemm_batched(%{{.*}}, %{{.*}}, %{{.*}}, %c4_i64, %c8_i64{{.*}}, %c16_i64, %c32_i64, %c3_i32)
// CHECK-NOT: linalg.matmul
// CHECK-NOT: linalg.batch_matmul
// CUDA-LABEL: func.func @transposed
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c8_i64, %c256_i64, %c64_i64, %c0_i32, %c1_i32)
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c8_i64{{.*}}, %c256_i64{{.*}}, %c64_i64{{.*}}, %c0_i32{{.*}}, %c2_i32)
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c4_i64, %c8_i64{{.*}}, %c16_i64, %c32_i64, %c0_i32{{.*}}, %c3_i32)
func.func @transposed(%at: memref<64x8xf32>, %b: memref<64x256xf32>, %a: memref<8x64xf32>, %bt: memref<256x64xf32>, %c: memref<8x256xf32>,
                      %qt: memref<4x32x8xf32>, %kt: memref<4x16x32xf32>, %s: memref<4x8x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%at, %b : memref<64x8xf32>, memref<64x256xf32>) outs(%c : memref<8x256xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %bt : memref<8x64xf32>, memref<256x64xf32>) outs(%c : memref<8x256xf32>)
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%qt, %kt : memref<4x32x8xf32>, memref<4x16x32xf32>) outs(%s : memref<4x8x16xf32>)
  return
}

// -----

// A product into a buffer zero-filled right before it (what bufferization
// makes of tensor.empty + linalg.fill + matmul): the GEMM overwrites the
// buffer (TPRT_OVERWRITE = 4, BLAS's beta 0) and the fill goes: one sweep
// over the product fewer. Ops that touch no memory may stand between.
// A fill of another value, a fill of another buffer, and a fill with a
// write to the buffer after it stay, and the GEMM adds.
// CHECK-LABEL: func.func @zero_filled
// CHECK-NOT: linalg.fill
// CHECK: call @tprt_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %c8_i64, %c256_i64, %c64_i64, %c4_i32)
// CHECK: call @tprt_sgemm(%{{.*}}, %{{.*}}, %{{.*}}, %c8_i64{{.*}}, %c256_i64{{.*}}, %c64_i64{{.*}}, %c6_i32)
// CHECK: return
// CUDA-LABEL: func.func @zero_filled
// CUDA-NOT: linalg.fill
// CUDA: call @tprt_cuda_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c8_i64, %c256_i64, %c64_i64, %c0_i32, %c4_i32)
func.func @zero_filled(%a: memref<8x64xf32>, %b: memref<64x256xf32>, %bt: memref<256x64xf32>) -> (memref<8x256xf32>, memref<8x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x256xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x256xf32>)
  linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x256xf32>) outs(%c : memref<8x256xf32>)
  %d = memref.alloc() : memref<8x256xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<8x256xf32>)
  %one = arith.constant 1.0 : f32
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %bt : memref<8x64xf32>, memref<256x64xf32>) outs(%d : memref<8x256xf32>)
  return %c, %d : memref<8x256xf32>, memref<8x256xf32>
}

// -----

// CHECK-LABEL: func.func @not_zero_filled
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[C:.*]] : memref<8x256xf32>)
// CHECK: call @tprt_sgemm({{.*}}, %c0_i32)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[D:.*]] : memref<8x256xf32>)
// CHECK: call @tprt_sgemm({{.*}}, %c0_i32{{.*}})
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E:.*]] : memref<8x256xf32>)
// CHECK: memref.store
// CHECK: call @tprt_sgemm({{.*}}, %c0_i32{{.*}})
func.func @not_zero_filled(%a: memref<8x64xf32>, %b: memref<64x256xf32>, %c: memref<8x256xf32>, %d: memref<8x256xf32>, %e: memref<8x256xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%one : f32) outs(%c : memref<8x256xf32>)
  linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x256xf32>) outs(%c : memref<8x256xf32>)
  linalg.fill ins(%zero : f32) outs(%e : memref<8x256xf32>)
  linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x256xf32>) outs(%d : memref<8x256xf32>)
  linalg.fill ins(%zero : f32) outs(%e : memref<8x256xf32>)
  memref.store %one, %e[%i, %i] : memref<8x256xf32>
  linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x256xf32>) outs(%e : memref<8x256xf32>)
  return
}
