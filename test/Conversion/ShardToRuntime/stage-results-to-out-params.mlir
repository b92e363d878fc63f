// tp-stage-results-to-out-params: a pipeline's dispatch hands each stage
// function the step's output parameters; the stand-ins for results
// another stage writes and the copies after the dispatch go.
// RUN: tp-opt %s -split-input-file --tp-stage-results-to-out-params | FileCheck %s

// Two stages: stage 0 writes the gradient of w0, stage 1 the loss and the
// gradient of w1; the updated w0 is stage 0's (stage 1 passed w0 through).
// CHECK: module attributes {tp.pipeline = {}, tp.stage_buffers_only = array<i64: 2, 3, 4, 5>}
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W0:[^:]*]]: memref<4xf32> {tp.stages = array<i64: 0>}
// CHECK-SAME: %[[LOSS:[^:]*]]: memref<f32>, %[[G0:[^:]*]]: memref<4xf32>, %[[G1:[^:]*]]: memref<4xf32>, %[[NEW0:[^:]*]]: memref<4xf32>,
// CHECK: case 0 {
// CHECK-NEXT: func.call @stage0(%{{.*}}, %[[G0]], %[[NEW0]])
// CHECK-NOT: memref.alloc
// CHECK: default {
// CHECK-NEXT: func.call @stage1(%{{.*}}, %[[LOSS]], %[[G1]])
// CHECK-NOT: memref.alloc
// CHECK: }
// CHECK-NOT: memref.copy
// CHECK: return
module attributes {tp.pipeline = {}} {
  func.func private @stage0(%w0: memref<4xf32>, %w1: memref<4xf32>, %g0: memref<4xf32>, %new0: memref<4xf32>)
  func.func private @stage1(%w0: memref<4xf32>, %w1: memref<4xf32>, %loss: memref<f32>, %g1: memref<4xf32>)
  func.func @step(%w0: memref<4xf32> {tp.stages = array<i64: 0>}, %w1: memref<4xf32> {tp.stages = array<i64: 1>}, %loss: memref<f32>, %g0: memref<4xf32>, %g1: memref<4xf32>, %new0: memref<4xf32>, %stage: index) {
    %r:4 = scf.index_switch %stage -> memref<f32, strided<[], offset: ?>>, memref<4xf32>, memref<4xf32>, memref<4xf32>
    case 0 {
      %a = memref.alloc() : memref<4xf32>
      %b = memref.alloc() : memref<4xf32>
      func.call @stage0(%w0, %w1, %a, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
      %l = memref.alloc() : memref<f32>
      %lc = memref.cast %l : memref<f32> to memref<f32, strided<[], offset: ?>>
      %c = memref.alloc() : memref<4xf32>
      scf.yield %lc, %a, %c, %b : memref<f32, strided<[], offset: ?>>, memref<4xf32>, memref<4xf32>, memref<4xf32>
    }
    default {
      %l = memref.alloc() : memref<f32>
      %c = memref.alloc() : memref<4xf32>
      func.call @stage1(%w0, %w1, %l, %c) : (memref<4xf32>, memref<4xf32>, memref<f32>, memref<4xf32>) -> ()
      %lc = memref.cast %l : memref<f32> to memref<f32, strided<[], offset: ?>>
      %a = memref.alloc() : memref<4xf32>
      scf.yield %lc, %a, %c, %w0 : memref<f32, strided<[], offset: ?>>, memref<4xf32>, memref<4xf32>, memref<4xf32>
    }
    memref.copy %r#0, %loss : memref<f32, strided<[], offset: ?>> to memref<f32>
    memref.copy %r#1, %g0 : memref<4xf32> to memref<4xf32>
    memref.copy %r#2, %g1 : memref<4xf32> to memref<4xf32>
    memref.copy %r#3, %new0 : memref<4xf32> to memref<4xf32>
    return
  }
}

// -----

// A yielded buffer something else also writes (here a fill): the pattern
// differs, so the copy stays, and so does every rank's need for every
// argument (the arguments' tp.stages go).
// CHECK-NOT: tp.stage_buffers_only
// CHECK-LABEL: func.func @other(
// CHECK-NOT: tp.stages
// CHECK: memref.copy
module attributes {tp.pipeline = {}} {
  func.func @other(%w0: memref<4xf32> {tp.stages = array<i64: 0>}, %out: memref<4xf32>, %stage: index) {
    %r = scf.index_switch %stage -> memref<4xf32>
    case 0 {
      %a = memref.alloc() : memref<4xf32>
      %z = arith.constant 0.0 : f32
      linalg.fill ins(%z : f32) outs(%a : memref<4xf32>)
      scf.yield %a : memref<4xf32>
    }
    default {
      scf.yield %w0 : memref<4xf32>
    }
    memref.copy %r, %out : memref<4xf32> to memref<4xf32>
    return
  }
}
