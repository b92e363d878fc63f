// tp-expand-arith: what the CPU's LLVM lowering cannot lower itself becomes
// integer arithmetic (ceil division, bf16 conversions, as upstream's
// arith-expand{include-bf16} does), while min and max stay for LLVM's
// maxnum / maximum intrinsics, whose reductions LLVM vectorizes.
// RUN: tp-opt %s --pass-pipeline='builtin.module(func.func(tp-expand-arith))' | FileCheck %s

// CHECK-LABEL: func.func @expand
// CHECK-NOT: arith.ceildivui
// CHECK-NOT: arith.extf
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
func.func @expand(%a: index, %b: index, %h: bf16, %x: f32, %y: f32) -> (index, f32, f32, f32, f32) {
  %q = arith.ceildivui %a, %b : index
  %e = arith.extf %h : bf16 to f32
  %m = arith.maxnumf %x, %y : f32
  %n = arith.maximumf %x, %y : f32
  %o = arith.minimumf %x, %y : f32
  return %q, %e, %m, %n, %o : index, f32, f32, f32, f32
}
