// tp-trace-kernel-sites: every call of an outlined loop nest (a private
// `<function>_loop<N>`) gets a site number and is bracketed by
// tprt_kernel_begin / tprt_kernel_end; the sites are named by the call's
// ONNX node (the first of a fused location) in the module attribute
// tp.kernel_sites, with their step phase (tp-autodiff tags the backward
// pass, the loss and the update) and pipeline microbatch (-1: none), which
// the manifest copies for tp-run --trace. Other calls are left alone.
// RUN: tp-opt %s -split-input-file --tp-trace-kernel-sites | FileCheck %s

// CHECK: module attributes {tp.kernel_microbatches = array<i64: -1, -1>, tp.kernel_phases = ["forward", "backward"], tp.kernel_sites = ["/act/Relu", "/fc1/Gemm"]}
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
// MB: module attributes {tp.kernel_microbatches = array<i64: 2>, tp.kernel_phases = ["backward"], tp.kernel_sites = ["/fc2/Gemm"]}
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
