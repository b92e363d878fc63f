// tp-approximate-math: f32 exp, expm1, log, log1p, log2, erf and tanh become
// polynomial arithmetic (which LLVM's loop vectorizer widens); other math
// ops and other element types are left to LLVM and libm.
// RUN: tp-opt %s -split-input-file --tp-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @gelu_softmax_loss
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: return
func.func @gelu_softmax_loss(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32) {
  %0 = math.erf %x : f32
  %1 = math.exp %x : f32
  %2 = math.expm1 %x : f32
  %3 = math.log %x : f32
  %4 = math.log1p %x : f32
  %5 = math.log2 %x : f32
  %6 = math.tanh %x : f32
  return %0, %1, %2, %3, %4, %5, %6 : f32, f32, f32, f32, f32, f32, f32
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK: math.sqrt %{{.*}} : f32
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.erf %{{.*}} : f16
func.func @left_alone(%x: f32, %d: f64, %h: f16) -> (f32, f32, f64, f16) {
  %0 = math.sqrt %x : f32
  %1 = math.sin %x : f32
  %2 = math.exp %d : f64
  %3 = math.erf %h : f16
  return %0, %1, %2, %3 : f32, f32, f64, f16
}
