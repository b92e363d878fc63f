// tp-trace-kernel-sites: every call of an outlined loop nest (a private
// `<function>_loop<N>`) gets a site number and is bracketed by
// tprt_kernel_begin / tprt_kernel_end; the sites are named by the call's
// ONNX node (the first of a fused location) in the module attribute
// tp.kernel_sites, with their step phase (tp-autodiff tags the backward
// pass, the loss and the update) and pipeline microbatch (-1: none), which
// the manifest copies for tp-run --trace. OpenBLAS GEMM calls are sites
// too. Each site has a kernel family (tp.kernel_families) for tp-run
// --profile. Other calls are left alone.
// RUN: tp-opt %s -split-input-file --tp-trace-kernel-sites | FileCheck %s

// CHECK: module attributes {tp.kernel_families = ["copy", "copy"], tp.kernel_microbatches = array<i64: -1, -1>, tp.kernel_phases = ["forward", "backward"], tp.kernel_sites = ["/act/Relu", "/fc1/Gemm"]}
// CHECK-DAG: func.func private @tprt_kernel_begin(i64)
// CHECK-DAG: func.func private @tprt_kernel_end(i64)
// CHECK-LABEL: func.func @step
// CHECK: %[[S0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @tprt_kernel_begin(%[[S0]])
// CHECK-NEXT: call @step_loop0(%arg0)
// CHECK-NEXT: call @tprt_kernel_end(%[[S0]])
// CHECK-NEXT: call @helper(%arg0)
// CHECK-NEXT: %[[S1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @tprt_kernel_begin(%[[S1]])
// CHECK-NEXT: call @step_loop0(%arg0)
// CHECK-NEXT: call @tprt_kernel_end(%[[S1]])
// CHECK-NEXT: return
func.func private @step_loop0(%a: memref<8xf32>) attributes {no_inline} {
  return
}
func.func private @helper(%a: memref<8xf32>) {
  return
}
func.func @step(%a: memref<8xf32>) {
  call @step_loop0(%a) : (memref<8xf32>) -> () loc("/act/Relu")
  call @helper(%a) : (memref<8xf32>) -> ()
  call @step_loop0(%a) : (memref<8xf32>) -> () loc(fused["/fc1/Gemm"(fused<"backward">[unknown]), "/fc1/Add"])
  return
}

// -----

// Without loop nests: nothing is declared and no attribute is set.
// RUN: tp-opt %s -split-input-file --tp-trace-kernel-sites | FileCheck %s --check-prefix=NONE
// NONE-LABEL: module {
// NONE-NOT: tprt_kernel
// NONE-LABEL: func.func @no_nests
func.func @no_nests(%a: memref<8xf32>) {
  return
}

// -----

// A pipeline stage's copy for microbatch 2 of a backward op.
// RUN: tp-opt %s -split-input-file --tp-trace-kernel-sites | FileCheck %s --check-prefix=MB
// MB: module attributes {tp.kernel_families = ["copy"], tp.kernel_microbatches = array<i64: 2>, tp.kernel_phases = ["backward"], tp.kernel_sites = ["/fc2/Gemm"]}
func.func private @stage_loop0(%a: memref<8xf32>) attributes {no_inline} {
  return
}
func.func @stage(%a: memref<8xf32>) {
  call @stage_loop0(%a) : (memref<8xf32>) -> () loc(fused<"microbatch 2">["/fc2/Gemm"(fused<"backward">[unknown])])
  return
}

// -----

// A parallel nest (tp-outline-loop-nests' OpenMP team calling the nest per
// chunk): the whole team is timed, on the rank's own thread, not each
// chunk on the team's threads.
// RUN: tp-opt %s -split-input-file --tp-trace-kernel-sites | FileCheck %s --check-prefix=TEAM
// TEAM-LABEL: func.func @team
// TEAM: call @tprt_kernel_begin(%{{.*}})
// TEAM-NEXT: omp.parallel
// TEAM-NOT: tprt_kernel
// TEAM: call @team_loop0(
// TEAM-NOT: tprt_kernel
// TEAM: omp.terminator
// TEAM-NEXT: }
// TEAM-NEXT: call @tprt_kernel_end(%{{.*}})
// TEAM-NEXT: return
func.func private @team_loop0(%a: memref<8xf32>, %lo: index, %hi: index) attributes {no_inline} {
  return
}
func.func @team(%a: memref<8xf32>, %threads: i32, %chunk: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  omp.parallel num_threads(%threads : i32) {
    omp.wsloop {
      omp.loop_nest (%lo) : index = (%c0) to (%c8) step (%chunk) {
        func.call @team_loop0(%a, %lo, %c8) : (memref<8xf32>, index, index) -> ()
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// Kernel families: a nest that carries an accumulator, or stores one
// element on several iterations of a loop around it, is a reduction; one
// that computes on data (a float compare counts) is elementwise; one that
// only loads, selects (padding) and stores is a copy. A GEMM call is a
// site of its own ("gemm"; tprt_gemm_bf16 too), a oneDNN convolution call too
// ("convolution", whatever its location), and anything the convolution
// lowering made (its location tagged "convolution") is the convolution's.
// RUN: tp-opt %s -split-input-file --tp-trace-kernel-sites | FileCheck %s --check-prefix=FAMILY
// FAMILY: module attributes {tp.kernel_families = ["reduction", "reduction", "elementwise", "copy", "convolution", "gemm", "convolution", "gemm", "convolution"]
// FAMILY-SAME: tp.kernel_sites = ["/sum/ReduceSum", "/bn/BatchNormalization", "/relu/Relu_grad", "/t/Transpose", "/conv/Conv", "/fc/MatMul", "/conv/Conv", "/fc2/MatMul", "/layer1/conv1/Conv"]
// FAMILY-LABEL: func.func @families
// FAMILY: %[[G:.*]] = arith.constant 5 : i64
// FAMILY-NEXT: call @tprt_kernel_begin(%[[G]])
// FAMILY-NEXT: call @tprt_sgemm(%arg0)
// FAMILY-NEXT: call @tprt_kernel_end(%[[G]])
// FAMILY: call @tprt_gemm_bf16(%arg0)
// FAMILY: %[[C:.*]] = arith.constant 8 : i64
// FAMILY-NEXT: call @tprt_kernel_begin(%[[C]])
// FAMILY-NEXT: call @tprt_conv(%{{.*}})
// FAMILY-NEXT: call @tprt_kernel_end(%[[C]])
func.func private @tprt_sgemm(memref<8x8xf32>)
func.func private @tprt_gemm_bf16(memref<8x8xf32>)
func.func private @tprt_conv(i32, i64, i64, i64, i64)
func.func private @families_loop0(%a: memref<8x8xf32>, %out: memref<8xf32>) attributes {no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %sum = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %a[%i, %j] : memref<8x8xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %sum, %out[%i] : memref<8xf32>
  }
  return
}
func.func private @families_loop1(%a: memref<8x8xf32>, %out: memref<8xf32>) attributes {no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %a[%i, %j] : memref<8x8xf32>
      %o = memref.load %out[%j] : memref<8xf32>
      %s = arith.addf %o, %v : f32
      memref.store %s, %out[%j] : memref<8xf32>
    }
  }
  return
}
func.func private @families_loop2(%a: memref<8x8xf32>, %g: memref<8x8xf32>) attributes {no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %j] : memref<8x8xf32>
      %d = memref.load %g[%i, %j] : memref<8x8xf32>
      %pos = arith.cmpf ogt, %x, %zero : f32
      %r = arith.select %pos, %d, %zero : f32
      memref.store %r, %g[%i, %j] : memref<8x8xf32>
    }
  }
  return
}
func.func private @families_loop3(%a: memref<8x8xf32>, %t: memref<8x8xf32>) attributes {no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %a[%j, %i] : memref<8x8xf32>
      %inside = arith.cmpi ult, %j, %c8 : index
      %p = arith.select %inside, %v, %zero : f32
      memref.store %p, %t[%i, %j] : memref<8x8xf32>
    }
  }
  return
}
func.func @families(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %v: memref<8xf32>) {
  call @families_loop0(%a, %v) : (memref<8x8xf32>, memref<8xf32>) -> () loc("/sum/ReduceSum")
  call @families_loop1(%a, %v) : (memref<8x8xf32>, memref<8xf32>) -> () loc("/bn/BatchNormalization")
  call @families_loop2(%a, %b) : (memref<8x8xf32>, memref<8x8xf32>) -> () loc("/relu/Relu_grad")
  call @families_loop3(%a, %b) : (memref<8x8xf32>, memref<8x8xf32>) -> () loc("/t/Transpose")
  call @families_loop3(%a, %b) : (memref<8x8xf32>, memref<8x8xf32>) -> () loc("/conv/Conv"(fused<"convolution">[unknown]))
  call @tprt_sgemm(%a) : (memref<8x8xf32>) -> () loc("/fc/MatMul")
  call @tprt_sgemm(%a) : (memref<8x8xf32>) -> () loc("/conv/Conv"(fused<"convolution">[unknown]))
  call @tprt_gemm_bf16(%a) : (memref<8x8xf32>) -> () loc("/fc2/MatMul")
  %k = arith.constant 0 : i32
  %p = arith.constant 0 : i64
  call @tprt_conv(%k, %p, %p, %p, %p) : (i32, i64, i64, i64, i64) -> () loc("/layer1/conv1/Conv")
  return
}
