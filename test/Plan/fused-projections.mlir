// tp-split-fused-projections: a weight that the plan splits colwise and
// whose matmul output is only sliced into equal parts of its last dim
// becomes a view with the parts as a dim, read by one matmul per part.
// RUN: tp-opt %s -split-input-file --tp-split-fused-projections="entry=attn.c_attn=colwise,attn.in_proj=colwise" | FileCheck %s

// GPT-2's Conv1D ([in, out]): [8, 24] -> [8, 3, 8], the bias [24] -> [3, 8];
// each part: its slice of the view, a matmul, its bias, the reshape.
// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: %[[W:[^:]*]]: tensor<8x3x8xf32> {tp.fused_view = array<i64: 3, 2, 0>, tp.onnx_shape = array<i64: 8, 24>, tp.param = "attn.c_attn.weight"}
// CHECK-SAME: %[[B:[^:]*]]: tensor<3x8xf32> {tp.fused_view = array<i64: 3, 1, -1>, tp.onnx_shape = array<i64: 24>, tp.param = "attn.c_attn.bias"}
// CHECK: %[[W0:.*]] = tp.slice %[[W]] {limits = array<i64: 8, 1, 8>, starts = array<i64: 0, 0, 0>
// CHECK: %[[W0R:.*]] = tp.reshape %[[W0]] : tensor<8x1x8xf32> -> tensor<8x8xf32>
// CHECK: %[[Y0:.*]] = tp.matmul %{{.*}}, %[[W0R]] : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: tp.slice %[[B]]
// CHECK: %[[Q:.*]] = tp.add %[[Y0]], %{{.*}} : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
// CHECK: %[[QR:.*]] = tp.reshape %[[Q]] : tensor<4x8xf32> -> tensor<2x2x8xf32>
// CHECK: tp.slice %[[W]] {limits = array<i64: 8, 2, 8>, starts = array<i64: 0, 1, 0>
// CHECK: tp.slice %[[W]] {limits = array<i64: 8, 3, 8>, starts = array<i64: 0, 2, 0>
// CHECK: %[[VR:.*]] = tp.reshape %{{.*}} : tensor<4x8xf32> -> tensor<2x2x8xf32>
// CHECK-NOT: tensor<2x2x24xf32>
// CHECK: return %[[QR]], %{{.*}}, %[[VR]]
func.func @conv1d(%x: tensor<4x8xf32> {tp.input = "x"}, %w: tensor<8x24xf32> {tp.param = "attn.c_attn.weight"}, %b: tensor<24xf32> {tp.param = "attn.c_attn.bias"}) -> (tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x8xf32>) {
  %y = tp.matmul %x, %w : tensor<4x8xf32>, tensor<8x24xf32> -> tensor<4x24xf32>
  %z = tp.add %y, %b : tensor<4x24xf32>, tensor<24xf32> -> tensor<4x24xf32>
  %r = tp.reshape %z : tensor<4x24xf32> -> tensor<2x2x24xf32>
  %q = tp.slice %r {limits = array<i64: 2, 2, 8>, starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x2x24xf32> -> tensor<2x2x8xf32>
  %k = tp.slice %r {limits = array<i64: 2, 2, 16>, starts = array<i64: 0, 0, 8>, steps = array<i64: 1, 1, 1>} : tensor<2x2x24xf32> -> tensor<2x2x8xf32>
  %v = tp.slice %r {limits = array<i64: 2, 2, 24>, starts = array<i64: 0, 0, 16>, steps = array<i64: 1, 1, 1>} : tensor<2x2x24xf32> -> tensor<2x2x8xf32>
  return %q, %k, %v : tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x8xf32>
}

// -----

// A Linear's [out, in] weight read transposed, in two parts (a fused
// key-value projection), the bias added first: [16, 8] -> [2, 8, 8], each
// part transposed after its slice.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: %[[W:[^:]*]]: tensor<2x8x8xf32> {tp.fused_view = array<i64: 2, 1, 2>, tp.onnx_shape = array<i64: 16, 8>
// CHECK: %[[W0:.*]] = tp.slice %[[W]] {limits = array<i64: 1, 8, 8>, starts = array<i64: 0, 0, 0>
// CHECK: %[[W0R:.*]] = tp.reshape %[[W0]] : tensor<1x8x8xf32> -> tensor<8x8xf32>
// CHECK: %[[W0T:.*]] = tp.transpose %[[W0R]] {perm = array<i64: 1, 0>}
// CHECK: %[[Y0:.*]] = tp.matmul %{{.*}}, %[[W0T]]
// CHECK: tp.add %{{.*}}, %[[Y0]] : tensor<8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
func.func @linear(%x: tensor<4x8xf32> {tp.input = "x"}, %w: tensor<16x8xf32> {tp.param = "attn.in_proj.weight"}, %b: tensor<16xf32> {tp.param = "attn.in_proj.bias"}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %t = tp.transpose %w {perm = array<i64: 1, 0>} : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = tp.matmul %x, %t : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %z = tp.add %b, %y : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %q = tp.slice %z {limits = array<i64: 4, 8>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x16xf32> -> tensor<4x8xf32>
  %v = tp.slice %z {limits = array<i64: 4, 16>, starts = array<i64: 0, 8>, steps = array<i64: 1, 1>} : tensor<4x16xf32> -> tensor<4x8xf32>
  return %q, %v : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not rewritten: the fused output is also read whole (a neg), so its
// parts are not all it is used for; and a fused projection of a module the
// plan does not split colwise.
// CHECK-LABEL: func.func @read_whole
// CHECK-SAME: tensor<8x24xf32> {tp.param = "attn.c_attn.weight"}
// CHECK-SAME: tensor<8x24xf32> {tp.param = "mlp.c_fc.weight"}
// CHECK-NOT: tp.fused_view
func.func @read_whole(%x: tensor<4x8xf32> {tp.input = "x"}, %w: tensor<8x24xf32> {tp.param = "attn.c_attn.weight"}, %w2: tensor<8x24xf32> {tp.param = "mlp.c_fc.weight"}) -> (tensor<4x8xf32>, tensor<4x24xf32>, tensor<4x12xf32>, tensor<4x12xf32>) {
  %y = tp.matmul %x, %w : tensor<4x8xf32>, tensor<8x24xf32> -> tensor<4x24xf32>
  %q = tp.slice %y {limits = array<i64: 4, 8>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x24xf32> -> tensor<4x8xf32>
  %n = tp.neg %y : tensor<4x24xf32>
  %y2 = tp.matmul %x, %w2 : tensor<4x8xf32>, tensor<8x24xf32> -> tensor<4x24xf32>
  %a = tp.slice %y2 {limits = array<i64: 4, 12>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x24xf32> -> tensor<4x12xf32>
  %c = tp.slice %y2 {limits = array<i64: 4, 24>, starts = array<i64: 0, 12>, steps = array<i64: 1, 1>} : tensor<4x24xf32> -> tensor<4x12xf32>
  return %q, %n, %a, %c : tensor<4x8xf32>, tensor<4x24xf32>, tensor<4x12xf32>, tensor<4x12xf32>
}
