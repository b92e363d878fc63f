// tp-apply-plan on Linear layers: colwise splits output features, rowwise
// input features, whatever the weight storage (Gemm transB or [in, out]).
// RUN: tp-opt %s --tp-apply-plan='mesh=tp=2 entry=fc1=colwise,fc2=rowwise' | FileCheck %s

// Gemm form (W [out, in] through tp.transpose) and MatMul with a weight
// stored [in, out]: colwise splits the output features, rowwise the input
// features, whatever the storage.
// CHECK: shard.grid @mesh(shape = 2) {tp.axis_names = ["tp"]}
// CHECK-LABEL: func.func @linear_forms
// CHECK-SAME: tp.input = "x", tp.sharding = #tp.sharding<[{}, {}]>
// CHECK-SAME: tp.param = "fc1.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>, tp.sharding_origin = "plan entry 'fc1=colwise' (--plan-entry)"
// CHECK-SAME: tp.param = "fc1.bias", tp.sharding = #tp.sharding<[{"tp"}]>
// CHECK-SAME: tp.param = "fc2.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>, tp.sharding_origin = "plan entry 'fc2=rowwise' (--plan-entry)"
// CHECK-SAME: tp.param = "fc2.bias", tp.sharding = #tp.sharding<[{}]>
// CHECK-SAME: tp.param = "other.weight", tp.sharding = #tp.sharding<[{}, {}]>, tp.sharding_origin = "not in the plan (replicated)"
// CHECK-SAME: tp.output = "y", tp.sharding = #tp.sharding<[{}, {}]>
func.func @linear_forms(%x: tensor<8x64xf32> {tp.input = "x"},
                        %w1: tensor<256x64xf32> {tp.param = "fc1.weight"},
                        %b1: tensor<256xf32> {tp.param = "fc1.bias"},
                        %w2: tensor<256x64xf32> {tp.param = "fc2.weight"},
                        %b2: tensor<64xf32> {tp.param = "fc2.bias"},
                        %w3: tensor<64x64xf32> {tp.param = "other.weight"}) -> (tensor<8x64xf32> {tp.output = "y"}) {
  %t = tp.transpose %w1 {perm = array<i64: 1, 0>} : tensor<256x64xf32> -> tensor<64x256xf32> loc("/fc1/Gemm")
  %h = tp.matmul %x, %t : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32> loc("/fc1/Gemm")
  %hb = tp.add %h, %b1 : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32> loc("/fc1/Gemm")
  // fc2.weight is stored [in=256, out=64] and used directly.
  %y = tp.matmul %hb, %w2 : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32> loc("/fc2/MatMul")
  %yb = tp.add %y, %b2 : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32> loc("/fc2/Add")
  %z = tp.matmul %yb, %w3 : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32> loc("/other/MatMul")
  return %z : tensor<8x64xf32>
}
