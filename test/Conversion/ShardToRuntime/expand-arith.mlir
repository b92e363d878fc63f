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

// f32 -> bf16 rounds to nearest even without a select (LLVM scalarized the
// select upstream's expansion makes on the narrowed lanes): the bias
// 0x7FFF + bit 16 is shifted out for a NaN (by 16 = nan << 4), whose quiet
// bit (1 << 22) is set; the high half is the result. Scalars and vectors.
// CHECK-LABEL: func.func @round_to_bf16
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.select
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : f32 to i32
// CHECK: %[[UNO:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK: %[[NAN:.*]] = arith.extui %[[UNO]] : i1 to i32
// CHECK: %[[SHIFT:.*]] = arith.shli %[[NAN]], %c4_i32 : i32
// CHECK: %[[ROUNDING:.*]] = arith.addi %{{.*}}, %c32767_i32 : i32
// CHECK: %[[BIAS:.*]] = arith.shrui %[[ROUNDING]], %[[SHIFT]] : i32
// CHECK: %[[QBIT:.*]] = arith.shli %[[NAN]], %c22_i32 : i32
// CHECK: %[[QUIET:.*]] = arith.ori %[[BITS]], %[[QBIT]] : i32
// CHECK: %[[SUM:.*]] = arith.addi %[[QUIET]], %[[BIAS]] : i32
// CHECK: %[[HIGH:.*]] = arith.shrui %[[SUM]], %{{.*}} : i32
// CHECK: %[[H16:.*]] = arith.trunci %[[HIGH]] : i32 to i16
// CHECK: arith.bitcast %[[H16]] : i16 to bf16
// CHECK: arith.bitcast %arg1 : vector<8xf32> to vector<8xi32>
// CHECK: arith.bitcast %{{.*}} : vector<8xi16> to vector<8xbf16>
func.func @round_to_bf16(%x: f32, %v: vector<8xf32>) -> (bf16, vector<8xbf16>) {
  %h = arith.truncf %x : f32 to bf16
  %w = arith.truncf %v : vector<8xf32> to vector<8xbf16>
  return %h, %w : bf16, vector<8xbf16>
}
