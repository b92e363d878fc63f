// tp-apply-plan: `*` in a plan entry matches one module path part.
// RUN: tp-opt %s --tp-apply-plan='mesh=tp=4 entry=layers.*.q=colwise' | FileCheck %s

// `*` matches one module path part.
// CHECK-LABEL: func.func @glob
// CHECK-SAME: tp.param = "layers.0.q.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>, tp.sharding_origin = "plan entry 'layers.*.q=colwise' (--plan-entry)"
// CHECK-SAME: tp.param = "layers.1.q.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>
// CHECK-SAME: tp.param = "layers.1.k.weight", tp.sharding = #tp.sharding<[{}, {}]>
func.func @glob(%x: tensor<8x64xf32> {tp.input = "x"},
                %q0: tensor<64x64xf32> {tp.param = "layers.0.q.weight"},
                %q1: tensor<64x64xf32> {tp.param = "layers.1.q.weight"},
                %k1: tensor<64x64xf32> {tp.param = "layers.1.k.weight"}) -> (tensor<8x64xf32> {tp.output = "y"}) {
  %t0 = tp.transpose %q0 {perm = array<i64: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
  %a = tp.matmul %x, %t0 : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %t1 = tp.transpose %q1 {perm = array<i64: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
  %b = tp.matmul %a, %t1 : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %t2 = tp.transpose %k1 {perm = array<i64: 1, 0>} : tensor<64x64xf32> -> tensor<64x64xf32>
  %c = tp.matmul %b, %t2 : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  return %c : tensor<8x64xf32>
}
