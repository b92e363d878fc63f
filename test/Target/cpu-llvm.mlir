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
// CHECK-NOT: llvm.func internal
// CHECK-LABEL: llvm.func @two_layers(
// CHECK-SAME: passthrough = ["noinline", "optnone"]
// Each buffer is freed once its last reader ran (tp-free-after-last-use):
// the first GEMM's output after the first ReLU, the first ReLU's after the
// second GEMM.
// The free releases the pointer aligned_alloc returned, which is also what
// the loop nests take (tp-fold-descriptor-reads reads both back from the
// buffer's descriptor, whose chain is then gone).
// Each nest's and GEMM's call is bracketed by tp-run --trace's and
// --profile's hooks (tp-trace-kernel-sites), a site per call. The GEMMs
// write their products over their buffers (TPRT_OVERWRITE): no nest
// zero-fills them.
// CHECK-NOT: llvm.insertvalue
// CHECK: %[[H:.*]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK-NOT: two_layers_loop
// CHECK: llvm.call @tprt_kernel_begin(%[[G0:.*]])
// CHECK-NEXT: llvm.call @tprt_sgemm(
// CHECK-NEXT: llvm.call @tprt_kernel_end(%[[G0]])
// CHECK: %[[R:.*]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK-NEXT: llvm.call @tprt_kernel_begin(%[[S0:.*]])
// CHECK-NEXT: llvm.call @two_layers_loop0(%[[H]], %[[R]])
// CHECK-NEXT: llvm.call @tprt_kernel_end(%[[S0]])
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[H]])
// CHECK: %[[O:.*]] = llvm.call @_mlir_memref_to_llvm_aligned_alloc(
// CHECK-NOT: two_layers_loop
// CHECK: llvm.call @tprt_sgemm(
// CHECK-NEXT: llvm.call @tprt_kernel_end(
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[R]])
// CHECK-NEXT: llvm.call @tprt_kernel_begin(
// CHECK-NEXT: llvm.call @two_layers_loop0(%[[O]],
// CHECK-NEXT: llvm.call @tprt_kernel_end(
// CHECK-NEXT: llvm.call @_mlir_memref_to_llvm_free(%[[O]])
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
