// tp-find-in-place-updates: an output buffer written first by one
// elementwise op that reads an argument at the same index (an optimizer's
// `w - lr * g`), after every other read of that argument, may be the
// argument's own buffer. The module lists those (output, argument) pairs,
// as argument numbers.
// RUN: tp-opt %s -split-input-file --tp-find-in-place-updates | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// The weight is read by the forward pass (a copy here), then updated into
// output 3; the gradient, output 2, is written before. Output 3 could take
// the gradient's buffer as well: the manifest keeps the pair whose names
// match (the weight and its update).
// CHECK: module attributes {tp.in_place_updates = [array<i64: 3, 0>, array<i64: 3, 2>]}
// CHECK-LABEL: func.func @sgd
func.func @sgd(%w: memref<16xf32>, %x: memref<16xf32>, %g: memref<16xf32>, %new_w: memref<16xf32>) {
  memref.copy %w, %x : memref<16xf32> to memref<16xf32>
  memref.copy %x, %g : memref<16xf32> to memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : memref<16xf32>, memref<16xf32>) outs(%new_w : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// The old weight is read after the update: the update cannot take its
// buffer (only the gradient's, which the names then rule out).
// CHECK: module attributes {tp.in_place_updates = [array<i64: 2, 1>]}
// CHECK-LABEL: func.func @read_after
func.func @read_after(%w: memref<16xf32>, %g: memref<16xf32>, %new_w: memref<16xf32>, %x: memref<16xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : memref<16xf32>, memref<16xf32>) outs(%new_w : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %w, %x : memref<16xf32> to memref<16xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

// The update reads the weight transposed (another element than it
// writes): not the weight's buffer either.
// CHECK: module attributes {tp.in_place_updates = [array<i64: 2, 1>]}
// CHECK-LABEL: func.func @transposed
func.func @transposed(%w: memref<8x8xf32>, %g: memref<8x8xf32>, %new_w: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#t, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : memref<8x8xf32>, memref<8x8xf32>) outs(%new_w : memref<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// A pipeline's step (tp.stage_buffers_only: its output buffers): the
// stage functions write them. Output 3 (w0's update) is written by stage 0 alone, in
// place from its argument 0: a pair of the step. Output 4 (the tied w1)
// is updated in place by stage 0 but copied in by stage 1 (received from
// stage 0): no pair.
// CHECK: module attributes {tp.in_place_updates = [array<i64: 3, 0>], tp.stage_buffers_only = array<i64: 2, 3, 4>}
// CHECK-LABEL: func.func @step
#id = affine_map<(d0) -> (d0)>
module attributes {tp.stage_buffers_only = array<i64: 2, 3, 4>} {
  func.func private @stage0(%w0: memref<16xf32>, %w1: memref<16xf32>, %g: memref<16xf32>, %new_w0: memref<16xf32>, %new_w1: memref<16xf32>) {
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%w0, %g : memref<16xf32>, memref<16xf32>) outs(%new_w0 : memref<16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    }
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%w1, %g : memref<16xf32>, memref<16xf32>) outs(%new_w1 : memref<16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %d = arith.subf %a, %b : f32
      linalg.yield %d : f32
    }
    return
  }
  func.func private @stage1(%w0: memref<16xf32>, %w1: memref<16xf32>, %g: memref<16xf32>, %new_w1: memref<16xf32>) {
    memref.copy %w1, %g : memref<16xf32> to memref<16xf32>
    memref.copy %g, %new_w1 : memref<16xf32> to memref<16xf32>
    return
  }
  func.func @step(%w0: memref<16xf32>, %w1: memref<16xf32>, %g: memref<16xf32>, %new_w0: memref<16xf32>, %new_w1: memref<16xf32>, %stage: index) {
    scf.index_switch %stage
    case 0 {
      func.call @stage0(%w0, %w1, %g, %new_w0, %new_w1) : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
      scf.yield
    }
    default {
      func.call @stage1(%w0, %w1, %g, %new_w1) : (memref<16xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
      scf.yield
    }
    return
  }
}

// -----

#id = affine_map<(d0) -> (d0)>

// A repeated layer's backward function (tp-outline-repeated-layers) updates
// the weights it is given in place; the step passes its own weight and
// output: the pair holds for the step when nothing reads the weight after
// the call. Layer 1's weight (argument 1) is read again after its call:
// its update (output 4) cannot take its buffer; layer 0's (output 3) can.
// The shared buffer %g is used after either call: no pair with it.
// CHECK: module attributes {tp.in_place_updates = [array<i64: 3, 0>]}
// CHECK-LABEL: func.func private @layer
func.func private @layer(%w: memref<16xf32>, %g: memref<16xf32>, %new_w: memref<16xf32>) {
  memref.copy %w, %g : memref<16xf32> to memref<16xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : memref<16xf32>, memref<16xf32>) outs(%new_w : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  return
}
// CHECK-LABEL: func.func @step
func.func @step(%w0: memref<16xf32>, %w1: memref<16xf32>, %g: memref<16xf32>, %new_w0: memref<16xf32>, %new_w1: memref<16xf32>) {
  call @layer(%w1, %g, %new_w1) : (memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
  call @layer(%w0, %g, %new_w0) : (memref<16xf32>, memref<16xf32>, memref<16xf32>) -> ()
  memref.copy %w1, %g : memref<16xf32> to memref<16xf32>
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// The call is also given a view of the weight, which the callee reads
// after its update: the weight's buffer would have changed under it, so no
// pair with the weight (the callee alone cannot tell its two arguments are
// one buffer); the gradient's pair stays.
// CHECK: module attributes {tp.in_place_updates = [array<i64: 2, 1>]}
// CHECK-LABEL: func.func private @layer_with_view
func.func private @layer_with_view(%w: memref<16xf32>, %v: memref<?xf32>, %g: memref<16xf32>, %new_w: memref<16xf32>, %x: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : memref<16xf32>, memref<16xf32>) outs(%new_w : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %v, %x : memref<?xf32> to memref<?xf32>
  return
}
// CHECK-LABEL: func.func @step_with_view
func.func @step_with_view(%w: memref<16xf32>, %g: memref<16xf32>, %new_w: memref<16xf32>, %x: memref<16xf32>) {
  %v = memref.cast %w : memref<16xf32> to memref<?xf32>
  %xv = memref.cast %x : memref<16xf32> to memref<?xf32>
  call @layer_with_view(%w, %v, %g, %new_w, %xv) : (memref<16xf32>, memref<?xf32>, memref<16xf32>, memref<16xf32>, memref<?xf32>) -> ()
  return
}
