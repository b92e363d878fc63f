// The CPU target's lowering (tp-lower-to-llvm): buffers come from the
// runtime's caching allocator (MLIR's generic aligned_alloc, which
// libtprt defines) and go back after their last use, GEMMs call tprt_sgemm, and each distinct loop nest is
// one internal, noinline function that both layers call; the calling
// function, straight-line code, is left unoptimized (optnone).
// RUN: tp-opt %s --tp-lower-to-llvm | FileCheck %s
// Softmax's exp and GELU's erf are arithmetic (tp-approximate-math), not
// libm calls that would keep their loops from vectorizing:
// RUN: tp-opt %s --tp-lower-to-llvm | FileCheck %s --check-prefix=MATH
// MATH-NOT: @expf
// MATH-NOT: @erff
// MATH-NOT: llvm.intr.exp
// MATH-LABEL: llvm.func @softmax_gelu(

// CHECK-NOT: @malloc
// CHECK-NOT: @free
// CHECK-LABEL: llvm.func internal @two_layers_loop0(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-LABEL: llvm.func internal @two_layers_loop1(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-NOT: llvm.func internal
// CHECK-LABEL: llvm.func @two_layers(
// CHECK-SAME: passthrough = ["noinline", "optnone"]
// Each buffer is freed once its last reader ran (tp-free-after-last-use):
// the first GEMM's output after the first ReLU, the first ReLU's after the
// second GEMM.
// The free reads the allocated pointer back from the buffer's descriptor
// (the last insertvalue of its chain, [4, 1] for 2-d).
// CHECK: llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK: %[[H:.*]] = llvm.insertvalue %{{.*}}[4, 1]
// CHECK: llvm.call @two_layers_loop0(
// CHECK: llvm.call @tprt_sgemm(
// CHECK: llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK: %[[R:.*]] = llvm.insertvalue %{{.*}}[4, 1]
// CHECK: llvm.call @two_layers_loop1(
// CHECK-NEXT: %[[HP:.*]] = llvm.extractvalue %[[H]][0]
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[HP]])
// CHECK: llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK: llvm.call @two_layers_loop0(
// CHECK: llvm.call @tprt_sgemm(
// CHECK-NEXT: %[[RP:.*]] = llvm.extractvalue %[[R]][0]
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[RP]])
// CHECK: llvm.call @two_layers_loop1(
func.func @two_layers(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %0 = tp.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %1 = tp.relu %0 : tensor<8x64xf32>
  %2 = tp.matmul %1, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %3 = tp.relu %2 : tensor<8x64xf32>
  return %3 : tensor<8x64xf32>
}

func.func @softmax_gelu(%x: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
  %0 = tp.softmax %x {axis = 2 : i64} : tensor<4x16x64xf32>
  %1 = tp.erf %0 : tensor<4x16x64xf32>
  return %1 : tensor<4x16x64xf32>
}
