// tp-split-fused-projections on nn.MultiheadAttention as torch.onnx.export
// writes it: the plan names the module (`attn=colwise`), whose fused
// projection is `in_proj_weight` (folded here into a transposed
// initializer). Each of q, k and v is reshaped from [S, B, heads * d] to
// [S, B * heads, d]; the rewrite keeps B and heads as two dims through the
// transposes, the scaling, both batched matmuls and the softmax, up to the
// reshape that merges the heads back, so that a colwise split of the heads
// never meets the merged dim (nor a data-parallel split of the batch).
// RUN: tp-opt %s -split-input-file --tp-split-fused-projections="entry=attn=colwise" | FileCheck %s

// CHECK-LABEL: func.func @multihead_attention
// CHECK-SAME: tensor<32x3x32xf32> {tp.fused_view = array<i64: 3, 2, 0>, tp.onnx_shape = array<i64: 32, 96>
// CHECK-NOT: tensor<6x8x8xf32>
// CHECK-NOT: tensor<8x6x8xf32>
// CHECK: %[[Q:.*]] = tp.reshape %{{.*}} : tensor<6x2x32xf32> -> tensor<6x2x4x8xf32>
// CHECK: %[[QT:.*]] = tp.transpose %[[Q]] {perm = array<i64: 1, 2, 0, 3>} : tensor<6x2x4x8xf32> -> tensor<2x4x6x8xf32>
// CHECK: %[[K:.*]] = tp.reshape %{{.*}} : tensor<6x2x32xf32> -> tensor<6x2x4x8xf32>
// CHECK: %[[V:.*]] = tp.reshape %{{.*}} : tensor<6x2x32xf32> -> tensor<6x2x4x8xf32>
// CHECK: %[[VT:.*]] = tp.transpose %[[V]] {perm = array<i64: 1, 2, 0, 3>} : tensor<6x2x4x8xf32> -> tensor<2x4x6x8xf32>
// CHECK: %[[QS:.*]] = tp.div %[[QT]], %{{.*}} : tensor<2x4x6x8xf32>, tensor<f32> -> tensor<2x4x6x8xf32>
// CHECK: %[[KT:.*]] = tp.transpose %[[K]] {perm = array<i64: 1, 2, 3, 0>} : tensor<6x2x4x8xf32> -> tensor<2x4x8x6xf32>
// CHECK: %[[S:.*]] = tp.matmul %[[QS]], %[[KT]] : tensor<2x4x6x8xf32>, tensor<2x4x8x6xf32> -> tensor<2x4x6x6xf32>
// CHECK: %[[P:.*]] = tp.softmax %[[S]] {axis = 3 : i64} : tensor<2x4x6x6xf32>
// CHECK: %[[O:.*]] = tp.matmul %[[P]], %[[VT]] : tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32> -> tensor<2x4x6x8xf32>
// CHECK: %[[OT:.*]] = tp.transpose %[[O]] {perm = array<i64: 2, 0, 1, 3>} : tensor<2x4x6x8xf32> -> tensor<6x2x4x8xf32>
// The heads merge back into the hidden dim, and out_proj's Gemm reads
// [S * B, h]: the sequence and the batch stay apart too, up to the reshape
// to [S, B, h] after it.
// CHECK: %[[M:.*]] = tp.reshape %[[OT]] : tensor<6x2x4x8xf32> -> tensor<6x2x32xf32>
// CHECK: %[[Y:.*]] = tp.matmul %[[M]], %{{.*}} : tensor<6x2x32xf32>, tensor<32x32xf32> -> tensor<6x2x32xf32>
// CHECK: %[[YB:.*]] = tp.add %[[Y]], %{{.*}} : tensor<6x2x32xf32>, tensor<32xf32> -> tensor<6x2x32xf32>
// CHECK: %[[R:.*]] = tp.reshape %[[YB]] : tensor<6x2x32xf32> -> tensor<6x2x32xf32>
// CHECK: return %[[R]]
func.func @multihead_attention(%x: tensor<6x2x32xf32> {tp.input = "query"}, %b: tensor<96xf32> {tp.param = "attn.in_proj_bias"}, %w: tensor<32x96xf32> {tp.param = "onnx::MatMul_87", tp.stored_transposed, tp.torch_names = ["attn.in_proj_weight"]}, %ow: tensor<32x32xf32> {tp.param = "attn.out_proj.weight"}, %ob: tensor<32xf32> {tp.param = "attn.out_proj.bias"}) -> tensor<6x2x32xf32> {
  %0 = tp.matmul %x, %w : tensor<6x2x32xf32>, tensor<32x96xf32> -> tensor<6x2x96xf32>
  %1 = tp.add %b, %0 : tensor<96xf32>, tensor<6x2x96xf32> -> tensor<6x2x96xf32>
  %2 = tp.slice %1 {limits = array<i64: 6, 2, 32>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<6x2x96xf32> -> tensor<6x2x32xf32>
  %3 = tp.slice %1 {limits = array<i64: 6, 2, 64>, starts = array<i64: 0, 0, 32>, steps = array<i64: 1, 1, 1>} : tensor<6x2x96xf32> -> tensor<6x2x32xf32>
  %4 = tp.slice %1 {limits = array<i64: 6, 2, 96>, starts = array<i64: 0, 0, 64>, steps = array<i64: 1, 1, 1>} : tensor<6x2x96xf32> -> tensor<6x2x32xf32>
  %5 = tp.reshape %2 : tensor<6x2x32xf32> -> tensor<6x8x8xf32>
  %6 = tp.transpose %5 {perm = array<i64: 1, 0, 2>} : tensor<6x8x8xf32> -> tensor<8x6x8xf32>
  %7 = tp.reshape %3 : tensor<6x2x32xf32> -> tensor<6x8x8xf32>
  %8 = tp.reshape %4 : tensor<6x2x32xf32> -> tensor<6x8x8xf32>
  %9 = tp.transpose %8 {perm = array<i64: 1, 0, 2>} : tensor<6x8x8xf32> -> tensor<8x6x8xf32>
  %10 = tp.constant dense<2.82842708> : tensor<f32>
  %11 = tp.div %6, %10 : tensor<8x6x8xf32>, tensor<f32> -> tensor<8x6x8xf32>
  %12 = tp.transpose %7 {perm = array<i64: 1, 2, 0>} : tensor<6x8x8xf32> -> tensor<8x8x6xf32>
  %13 = tp.matmul %11, %12 : tensor<8x6x8xf32>, tensor<8x8x6xf32> -> tensor<8x6x6xf32>
  %14 = tp.softmax %13 {axis = 2 : i64} : tensor<8x6x6xf32>
  %15 = tp.matmul %14, %9 : tensor<8x6x6xf32>, tensor<8x6x8xf32> -> tensor<8x6x8xf32>
  %16 = tp.transpose %15 {perm = array<i64: 1, 0, 2>} : tensor<8x6x8xf32> -> tensor<6x8x8xf32>
  %17 = tp.reshape %16 : tensor<6x8x8xf32> -> tensor<12x32xf32>
  %18 = tp.transpose %ow {perm = array<i64: 1, 0>} : tensor<32x32xf32> -> tensor<32x32xf32>
  %19 = tp.matmul %17, %18 : tensor<12x32xf32>, tensor<32x32xf32> -> tensor<12x32xf32>
  %20 = tp.add %19, %ob : tensor<12x32xf32>, tensor<32xf32> -> tensor<12x32xf32>
  %21 = tp.reshape %20 : tensor<12x32xf32> -> tensor<6x2x32xf32>
  return %21 : tensor<6x2x32xf32>
}

// -----

// A reader the rewrite does not know (here the function's return, and a
// softmax over the merged dim) reads the merged form again through a
// reshape: what is computed never changes.
// CHECK-LABEL: func.func @unknown_readers
// CHECK: %[[Q:.*]] = tp.reshape %{{.*}} : tensor<6x2x32xf32> -> tensor<6x2x4x8xf32>
// CHECK: %[[QM:.*]] = tp.reshape %[[Q]] : tensor<6x2x4x8xf32> -> tensor<6x8x8xf32>
// CHECK: tp.softmax %[[QM]] {axis = 1 : i64} : tensor<6x8x8xf32>
// CHECK: %[[QM2:.*]] = tp.reshape %[[Q]] : tensor<6x2x4x8xf32> -> tensor<6x8x8xf32>
// CHECK: return %{{.*}}, %[[QM2]]
func.func @unknown_readers(%x: tensor<6x2x32xf32> {tp.input = "query"}, %w: tensor<32x64xf32> {tp.param = "onnx::MatMul_5", tp.stored_transposed, tp.torch_names = ["attn.in_proj_weight"]}) -> (tensor<6x8x8xf32>, tensor<6x8x8xf32>) {
  %0 = tp.matmul %x, %w : tensor<6x2x32xf32>, tensor<32x64xf32> -> tensor<6x2x64xf32>
  %2 = tp.slice %0 {limits = array<i64: 6, 2, 32>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<6x2x64xf32> -> tensor<6x2x32xf32>
  %3 = tp.slice %0 {limits = array<i64: 6, 2, 64>, starts = array<i64: 0, 0, 32>, steps = array<i64: 1, 1, 1>} : tensor<6x2x64xf32> -> tensor<6x2x32xf32>
  %5 = tp.reshape %2 : tensor<6x2x32xf32> -> tensor<6x8x8xf32>
  %6 = tp.softmax %5 {axis = 1 : i64} : tensor<6x8x8xf32>
  return %6, %5 : tensor<6x8x8xf32>, tensor<6x8x8xf32>
}
